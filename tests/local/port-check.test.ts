// The port check every listening command runs first, and the listeners `steadfast dev`
// generates: bound without SO_REUSEPORT so a second Envoy cannot share them.
import { readFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateGatewayResources } from '../../extproc/src/envoy/gateway-config.js';
import { gatewayPortNeeds } from '../../extproc/src/local/local-gateway.js';
import { PortUnavailableError, checkPortsFree, splitHostPort } from '../../extproc/src/local/port-check.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../support/paths.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

function quickstartTable() {
  const dir = join(REPO_ROOT, 'examples', 'quickstart');
  const files = ['gateway.yaml', 'routes.yaml', 'services.yaml'].map((f) => ({
    path: f,
    text: readFileSync(join(dir, f), 'utf8'),
  }));
  return compileSnapshot(files).table;
}

describe('checkPortsFree', () => {
  it('passes free ports and port 0, and names a held port with what wanted it and what to do', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      await expect(
        checkPortsFree([{ address: '127.0.0.1', port: 0, what: 'x', remedy: 'y' }]),
      ).resolves.toBeUndefined();
      const err = await checkPortsFree([
        { address: '127.0.0.1', port, what: 'the admin API', remedy: 'use --admin-port N' },
      ]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(PortUnavailableError);
      expect((err as Error).message).toBe(
        `127.0.0.1:${port} is in use by another process (the admin API): use --admin-port N`,
      );
    } finally {
      holder.close();
    }
  });

  it('refuses one port wanted twice, and an address that is not this machine', async () => {
    const twice = await checkPortsFree([
      { address: '127.0.0.1', port: 1, what: 'a', remedy: 'r' },
      { address: '127.0.0.1', port: 1, what: 'b', remedy: 'r' },
    ]).catch((e: unknown) => e);
    // Port 1 needs privileges (or is free for root): either way the message names it.
    expect((twice as Error).message).toMatch(/^127\.0\.0\.1:1 (needs privileges|is also wanted by a)/);
    const foreign = await checkPortsFree([
      { address: '192.0.2.1', port: 8080, what: 'a', remedy: 'r' },
    ]).catch((e: unknown) => e);
    expect((foreign as Error).message).toContain('192.0.2.1:8080 is not an address of this machine');
  });

  it('splits HOST:PORT and [v6]:PORT', () => {
    expect(splitHostPort('127.0.0.1:50051')).toEqual({ address: '127.0.0.1', port: 50051 });
    expect(splitHostPort('[::1]:9')).toEqual({ address: '::1', port: 9 });
    expect(splitHostPort('nope')).toBeUndefined();
  });
});

describe('the local gateway', () => {
  it('checks every port it will listen on: one per Gateway listener port, both admins, ext_proc', () => {
    const needs = gatewayPortNeeds(quickstartTable(), {
      address: '127.0.0.1',
      adminPort: 9902,
      envoyAdminPort: 9901,
    });
    expect(needs.map((n) => `${n.address}:${n.port} ${n.what}`)).toEqual([
      '127.0.0.1:10000 Gateway listener gateway/default/quickstart/listener/http',
      '127.0.0.1:10001 Gateway listener gateway/default/quickstart/listener/grpc',
      "127.0.0.1:9901 Envoy's admin interface",
      "127.0.0.1:9902 the control service's admin API",
      "127.0.0.1:0 the control service's ext_proc server",
    ]);
    expect(needs[2]?.remedy).toContain('--envoy-admin-port');
  });

  it('generates listeners without SO_REUSEPORT when asked (dev, quickstart), unchanged otherwise', () => {
    const table = quickstartTable();
    const exclusive = generateGatewayResources(buildIr(table), {
      wasmPath: 'f.wasm',
      sessionKeys: [],
      exclusiveListeners: true,
    });
    expect(exclusive.listeners.map((l) => l.enable_reuse_port)).toEqual([false, false]);
    const shared = generateGatewayResources(buildIr(table), { wasmPath: 'f.wasm', sessionKeys: [] });
    expect(shared.listeners.map((l) => 'enable_reuse_port' in l)).toEqual([false, false]);
  });
});
