// Kinds of Envoy (the listener address each binds) share a generation: only their listeners
// differ, so what onAddress makes of one generation is exactly what generating for the address
// makes, and the ADS server encodes every shared list once per generation, whichever kinds of
// Envoy take it, each kind getting its own listeners.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TYPE_CLUSTER, TYPE_LISTENER } from '../../extproc/src/envoy/envoy-names.js';
import { GenerationMemo } from '../../extproc/src/envoy/generation-memo.js';
import { onAddress, xdsResources } from '../../extproc/src/envoy/xds-resources.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { AdsServer } from '../../extproc/src/xds/ads-server.js';
import { decodeAny } from '../../extproc/src/xds/envoy-protos.js';
import { RouteFileEncoder } from '../../extproc/src/xds/route-files.js';
import { AdsClient } from '../support/ads-delta-client.js';

const DIR = join(import.meta.dirname, '../../examples/quickstart');
const snapshot = compileSnapshot(
  readdirSync(DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => ({ path: f, text: readFileSync(join(DIR, f), 'utf8') })),
);
const options = (address: string) => ({ wasmPath: '/x/steadfast.wasm', sessionKeys: ['k'], address });

describe('kinds of Envoy share a generation', () => {
  let server: AdsServer | undefined;
  const clients: AdsClient[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server?.stop();
    vi.restoreAllMocks();
  });

  it('onAddress gives what generating for the address gives', () => {
    const any = xdsResources(snapshot.ir, options('0.0.0.0'), snapshot.tls);
    expect(any.listeners.length).toBeGreaterThan(0);
    for (const address of ['0.0.0.0', '127.0.0.9', '::1']) {
      const fresh = xdsResources(snapshot.ir, options(address), snapshot.tls);
      expect(JSON.stringify(onAddress(any, address))).toBe(JSON.stringify(fresh));
    }
  });

  it('encodes the shared resources once per generation, and each kind its own listeners', async () => {
    const opts = options('0.0.0.0');
    const memo = new GenerationMemo(opts);
    let shared = xdsResources(snapshot.ir, opts, snapshot.tls, memo);
    const parts = vi.spyOn(RouteFileEncoder.prototype, 'parts');
    server = new AdsServer({ resources: (kind) => onAddress(shared, kind), log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    server.update('1');
    const kinds = ['127.0.0.9', '127.0.0.10'];
    for (const [i, kind] of kinds.entries()) {
      const c = new AdsClient(address, server, 'DeltaAggregatedResources');
      clients.push(c);
      c.call.write({
        node: { id: `e${i}`, metadata: { fields: { steadfast_node_kind: { stringValue: kind } } } },
        type_url: TYPE_LISTENER,
      });
    }
    for (const [i, kind] of kinds.entries()) {
      const lds = await (clients[i] as AdsClient).next(TYPE_LISTENER, 0);
      for (const r of lds.resources ?? []) {
        const listener = decodeAny(r.resource as { type_url: string; value: Buffer });
        expect((listener['address'] as { socket_address: { address: string } }).socket_address.address).toBe(
          kind,
        );
      }
    }
    const configurations = shared.routeConfigurations.length;
    expect(parts).toHaveBeenCalledTimes(configurations);
    // The next generation: again once for both kinds, and each stream holds the same cluster map.
    shared = xdsResources(snapshot.ir, opts, snapshot.tls, memo);
    server.update('2');
    for (const c of clients) c.call.write({ type_url: TYPE_CLUSTER });
    await Promise.all(clients.map((c) => c.next(TYPE_CLUSTER, 0)));
    expect(parts).toHaveBeenCalledTimes(2 * configurations);
  });

  it('keeps the virtual hosts encoded when another kind asks first in the next generation', async () => {
    const opts = options('0.0.0.0');
    const memo = new GenerationMemo(opts);
    let shared = xdsResources(snapshot.ir, opts, snapshot.tls, memo);
    // What each generation's encoder had to write out and hash (the rest it knew by object).
    const hashed: number[] = [];
    const end = RouteFileEncoder.prototype.end;
    vi.spyOn(RouteFileEncoder.prototype, 'end').mockImplementation(function (this: RouteFileEncoder) {
      hashed.push(this.hashedHosts);
      end.call(this);
    });
    server = new AdsServer({ resources: (kind) => onAddress(shared, kind), log: () => undefined });
    const address = await server.start('127.0.0.1:0');
    const open = (i: number, kind: string): AdsClient => {
      const c = new AdsClient(address, server as AdsServer, 'DeltaAggregatedResources');
      clients.push(c);
      c.call.write({
        node: { id: `e${i}`, metadata: { fields: { steadfast_node_kind: { stringValue: kind } } } },
        type_url: TYPE_LISTENER,
      });
      return c;
    };
    // Pushed generation 1 and never answering it: generation 2 is not pushed to it at once.
    const first = open(0, '127.0.0.9');
    await vi.waitFor(() => expect(server?.status().envoys).toHaveLength(1));
    server.update('1');
    await first.next(TYPE_LISTENER, 0);
    const hosts = hashed[0] ?? 0;
    expect(hosts).toBeGreaterThan(0);
    // Generation 2 changes nothing, and a kind that never asked before is the first to take it.
    shared = xdsResources(snapshot.ir, opts, snapshot.tls, memo);
    server.update('2');
    await open(1, '127.0.0.10').next(TYPE_LISTENER, 0);
    expect(hashed).toEqual([hosts, 0]);
  });
});
