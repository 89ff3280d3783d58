// Attach mode honours Gateway listeners: a request is matched only against the routes of
// the Gateway port its Envoy listener stands for (as gateway mode gives each port its own
// Envoy listener), told from the listener's metadata or the connection's destination port;
// where neither tells, only an answer every port agrees on is given.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { RequestListener } from '../../extproc/src/resolve/request.js';
import { compileSnapshot } from '../../extproc/src/pipeline/snapshot.js';
import { REPO_ROOT } from '../support/paths.js';
import { prefix, route, table } from './table-builder.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

/** Two listeners of one Gateway on ports 8080 and 9090, the same host and path on both. */
const TWO_LISTENERS = readFileSync(join(REPO_ROOT, 'tests/resolve/testdata/two-listeners.yaml'), 'utf8');

const WEB = 'httproute/default/web/rule/0';
const RPC = 'httproute/default/rpc/rule/0';
const BOTH = 'httproute/default/both/rule/0';

function resolverOf(yaml: string) {
  return compileResolver(compileSnapshot([{ path: 'config.yaml', text: yaml }]).ir);
}

describe('a request is matched only against the routes of its Gateway port', () => {
  const resolver = resolverOf(TWO_LISTENERS);
  const rule = (path: string, listener?: RequestListener) =>
    resolver.resolve({ method: 'GET', authority: 'shop.example', path, ...(listener ? { listener } : {}) })
      ?.routeRuleId;

  it('has one index per port', () => {
    expect(resolver.ports).toEqual([8080, 9090]);
    // /api once on each port, /shared on both.
    expect(resolver.size).toBe(4);
  });

  const cases: [string, RequestListener | undefined, string, string | undefined, string][] = [
    ['the port the connection arrived on', { destinationPort: 8080 }, '/api', WEB, 'destination_port'],
    ['the other port', { destinationPort: 9090 }, '/api/x', RPC, 'destination_port'],
    [
      'the listener metadata, over the port',
      { gatewayPort: 9090, destinationPort: 8080 },
      '/api',
      RPC,
      'metadata',
    ],
    [
      'metadata naming a port without routes: nothing',
      { gatewayPort: 7070, destinationPort: 8080 },
      '/api',
      undefined,
      'metadata',
    ],
    ['a route on both ports, from either', { destinationPort: 9090 }, '/shared', BOTH, 'destination_port'],
    // Neither tells: only what every port answers alike.
    [
      'an unknown port where the ports disagree: nothing',
      { destinationPort: 10080 },
      '/api',
      undefined,
      'unknown',
    ],
    ['an unknown port where every port agrees', { destinationPort: 10080 }, '/shared', BOTH, 'unknown'],
    ['no attributes at all, ports disagreeing', undefined, '/api', undefined, 'unknown'],
    ['no attributes at all, no port matching', undefined, '/other', undefined, 'unknown'],
    [
      'invalid metadata is ignored',
      { invalidGatewayPort: 'eighty', destinationPort: 8080 },
      '/api',
      WEB,
      'destination_port',
    ],
  ];
  it.each(cases)('%s', (_what, listener, path, expected, by) => {
    expect(resolver.listenerOf(listener).by).toBe(by);
    expect(rule(path, listener)).toBe(expected);
  });

  it('tells a known port without allocating (the same choice every time)', () => {
    expect(resolver.listenerOf({ destinationPort: 8080 })).toBe(
      resolver.listenerOf({ destinationPort: 8080 }),
    );
    expect(resolver.listenerOf({ gatewayPort: 9090 })).toBe(resolver.listenerOf({ gatewayPort: 9090 }));
    expect(resolver.listenerOf(undefined)).toBe(resolver.listenerOf({ destinationPort: 1 }));
  });
});

describe('one Gateway port: nothing to tell apart', () => {
  const resolver = resolverOf(
    TWO_LISTENERS.replace(
      '- { name: rpc, protocol: HTTP, port: 9090 }',
      '- { name: rpc, protocol: HTTP, port: 8080, hostname: other.example }',
    ),
  );

  it('serves the port its routes attach to, whatever port Envoy binds', () => {
    expect(resolver.ports).toEqual([8080]);
    const choice = resolver.listenerOf({ destinationPort: 10080 });
    expect(choice).toEqual({ port: 8080, by: 'single_port' });
    expect(resolver.listenerOf(undefined)).toBe(choice);
    const r = resolver.resolve({
      method: 'GET',
      authority: 'shop.example',
      path: '/api',
      listener: { destinationPort: 10080 },
    });
    expect(r?.routeRuleId).toBe(WEB);
  });

  it('still takes an Envoy listener at its word when its metadata names another port', () => {
    const listener = { gatewayPort: 443, destinationPort: 8080 };
    expect(resolver.listenerOf(listener)).toEqual({ port: 443, by: 'metadata' });
    expect(
      resolver.resolve({ method: 'GET', authority: 'shop.example', path: '/api', listener }),
    ).toBeUndefined();
  });
});

describe('a table without listeners (built by hand)', () => {
  it('resolves among all its routes, whatever the listener', () => {
    const resolver = compileResolver(buildIr(table(route({ name: 'a', rules: [[{ path: prefix('/') }]] }))));
    expect(resolver.ports).toEqual([]);
    for (const listener of [undefined, { destinationPort: 1 }, { gatewayPort: 80 }]) {
      expect(resolver.listenerOf(listener).by).toBe('single_port');
      expect(
        resolver.resolve({ method: 'GET', authority: 'x', path: '/', ...(listener ? { listener } : {}) })
          ?.routeRuleId,
      ).toBe('httproute/default/a/rule/0');
    }
  });
});
