// The resolver's precedence, one table row per Gateway API rule (HTTPRoute and GRPCRoute
// matching: hostnames, path kinds, method, headers, query params, route age, rule order).
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import type { ResolveRequest } from '../../extproc/src/resolve/request.js';
import { exact, header, prefix, regex, route, table } from './table-builder.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

const req = (path: string, more: Partial<ResolveRequest> = {}): ResolveRequest => ({
  method: 'GET',
  authority: 'example.com',
  path,
  ...more,
});

describe('path precedence', () => {
  const resolver = compileResolver(
    buildIr(
      table(
        route({
          name: 'a',
          rules: [[{ path: prefix('/') }], [{ path: prefix('/shop') }], [{ path: prefix('/shop/cart/') }]],
        }),
        route({
          name: 'b',
          rules: [[{ path: exact('/shop/cart') }], [{ path: regex('/shop/item/[0-9]+') }]],
        }),
      ),
    ),
  );
  const cases: [string, string | undefined][] = [
    ['/', 'httproute/default/a/rule/0'],
    ['/anything', 'httproute/default/a/rule/0'],
    ['/shop', 'httproute/default/a/rule/1'],
    ['/shop/', 'httproute/default/a/rule/1'],
    ['/shop/list', 'httproute/default/a/rule/1'],
    // PathPrefix is element-wise: /shop does not match /shopping.
    ['/shopping', 'httproute/default/a/rule/0'],
    // Exact beats the longest prefix; a trailing slash in a prefix is ignored.
    ['/shop/cart', 'httproute/default/b/rule/0'],
    ['/shop/cart/', 'httproute/default/a/rule/2'],
    ['/shop/cart/items', 'httproute/default/a/rule/2'],
    // RegularExpression (implementation-specific): below Exact, above every prefix; whole-path match.
    ['/shop/item/42', 'httproute/default/b/rule/1'],
    ['/shop/item/42x', 'httproute/default/a/rule/1'],
    ['/shop/list?x=1', 'httproute/default/a/rule/1'],
  ];
  it.each(cases)('%s → %s', (path, want) => {
    expect(resolver.resolve(req(path))?.routeRuleId).toBe(want);
  });
});

describe('method, headers, query params, then route age and rule order', () => {
  const resolver = compileResolver(
    buildIr(
      table(
        // Oldest route first.
        route({
          name: 'old',
          rules: [[{ path: prefix('/api') }], [{ path: prefix('/api'), queryParams: [header('v', '2')] }]],
        }),
        route({
          name: 'new',
          rules: [
            [{ path: prefix('/api'), method: 'POST' }],
            [{ path: prefix('/api'), headers: [header('x-a', '1')] }],
            [
              {
                path: prefix('/api'),
                headers: [header('X-A', '1'), header('x-b', 'b[0-9]', 'RegularExpression')],
              },
            ],
            [{ path: prefix('/api'), queryParams: [header('v', '2'), header('w', '3')] }],
            [{ path: prefix('/api') }],
          ],
        }),
      ),
    ),
  );
  const cases: [string, Partial<ResolveRequest>, string][] = [
    ['/api', {}, 'httproute/default/old/rule/0'],
    // A method match beats header matches.
    ['/api', { method: 'POST', headers: { 'x-a': '1', 'x-b': 'b1' } }, 'httproute/default/new/rule/0'],
    // More header matches win; header names are case-insensitive; regex values match whole.
    ['/api', { headers: { 'x-a': '1', 'x-b': 'b1' } }, 'httproute/default/new/rule/2'],
    ['/api', { headers: { 'x-a': '1', 'x-b': 'b12' } }, 'httproute/default/new/rule/1'],
    ['/api', { headers: { 'x-a': '2' } }, 'httproute/default/old/rule/0'],
    // More query-param matches win over fewer; the first value of a repeated name counts.
    ['/api?v=2&w=3', {}, 'httproute/default/new/rule/3'],
    ['/api?v=2', {}, 'httproute/default/old/rule/1'],
    ['/api?v=1&v=2', {}, 'httproute/default/old/rule/0'],
    ['/api?w=3&v=%32', {}, 'httproute/default/new/rule/3'],
    // Headers outrank query params.
    ['/api?v=2&w=3', { headers: { 'x-a': '1' } }, 'httproute/default/new/rule/1'],
  ];
  it.each(cases)('%s %j → %s', (path, more, want) => {
    expect(resolver.resolve(req(path, more))?.routeRuleId).toBe(want);
  });

  it('gives a tie to the first rule, then the first match, of the same route', () => {
    const r = compileResolver(
      buildIr(
        table(
          route({
            name: 'r',
            rules: [[{ path: prefix('/x') }, { path: prefix('/y') }], [{ path: prefix('/x') }]],
          }),
        ),
      ),
    );
    expect(r.resolve(req('/x'))?.match.id).toBe('httproute/default/r/rule/0/match/0');
    expect(r.resolve(req('/y'))?.match.id).toBe('httproute/default/r/rule/0/match/1');
  });
});

describe('hostnames', () => {
  const resolver = compileResolver(
    buildIr(
      table(
        route({ name: 'exact', hostnames: ['shop.example.com'], rules: [[{ path: prefix('/only') }]] }),
        route({ name: 'wild', hostnames: ['*.example.com'], rules: [[{ path: prefix('/') }]] }),
        route({ name: 'deeper', hostnames: ['*.eu.example.com'], rules: [[{ path: prefix('/') }]] }),
        route({ name: 'any', rules: [[{ path: prefix('/') }]] }),
      ),
    ),
  );
  const cases: [string, string, string, string][] = [
    ['shop.example.com', '/only', 'httproute/default/exact/rule/0', 'shop.example.com'],
    ['SHOP.example.com:8080', '/only', 'httproute/default/exact/rule/0', 'shop.example.com'],
    // The exact host's routes come first; a request none of them matches falls to less specific hostnames.
    ['shop.example.com', '/other', 'httproute/default/wild/rule/0', '*.example.com'],
    ['a.b.example.com', '/', 'httproute/default/wild/rule/0', '*.example.com'],
    ['a.eu.example.com', '/', 'httproute/default/deeper/rule/0', '*.eu.example.com'],
    // A wildcard never matches its own apex.
    ['example.com', '/', 'httproute/default/any/rule/0', '*'],
    ['[::1]:10000', '/', 'httproute/default/any/rule/0', '*'],
  ];
  it.each(cases)('%s%s → %s', (authority, path, want, hostname) => {
    const r = resolver.resolve(req(path, { authority }));
    expect(r?.routeRuleId).toBe(want);
    expect(r?.hostname).toBe(hostname);
  });

  it('answers nothing when no hostname matches', () => {
    const r = compileResolver(
      buildIr(table(route({ name: 'x', hostnames: ['a.example.com'], rules: [[{}]] }))),
    );
    expect(r.resolve(req('/', { authority: 'b.example.com' }))).toBeUndefined();
  });
});

describe('GRPCRoute: service characters, then method characters, then headers', () => {
  const grpc = 'grpc' as const;
  const resolver = compileResolver(
    buildIr(
      table(
        route({
          name: 'g',
          kind: grpc,
          rules: [
            [{ path: prefix('/'), method: 'POST' }],
            [{ path: regex('^/[^/]+/Ping$'), method: 'POST', grpc: { type: 'Exact', method: 'Ping' } }],
            [{ path: prefix('/pkg.Svc'), method: 'POST', grpc: { type: 'Exact', service: 'pkg.Svc' } }],
            [
              {
                path: exact('/pkg.Svc/Ping'),
                method: 'POST',
                grpc: { type: 'Exact', service: 'pkg.Svc', method: 'Ping' },
              },
            ],
            [
              {
                path: exact('/pkg.Svc/Ping'),
                method: 'POST',
                headers: [header('x-canary', 'yes')],
                grpc: { type: 'Exact', service: 'pkg.Svc', method: 'Ping' },
              },
            ],
          ],
        }),
      ),
    ),
  );
  const cases: [string, Record<string, string>, string][] = [
    ['/pkg.Svc/Ping', {}, 'grpcroute/default/g/rule/3'],
    ['/pkg.Svc/Ping', { 'x-canary': 'yes' }, 'grpcroute/default/g/rule/4'],
    ['/pkg.Svc/Other', {}, 'grpcroute/default/g/rule/2'],
    ['/other.Svc/Ping', {}, 'grpcroute/default/g/rule/1'],
    ['/other.Svc/Other', {}, 'grpcroute/default/g/rule/0'],
  ];
  it.each(cases)('%s %j → %s', (path, headers, want) => {
    expect(resolver.resolve(req(path, { method: 'POST', headers }))?.routeRuleId).toBe(want);
  });
});

describe('fail closed', () => {
  it('resolves an invalid rule and says so (the caller answers 500)', () => {
    const r = compileResolver(
      buildIr(table(route({ name: 'x', rules: [[{ path: prefix('/bad') }], [{}]], invalidRules: [0] }))),
    );
    expect(r.resolve(req('/bad/1'))?.invalid?.reason).toBe('UnsupportedValue');
    expect(r.resolve(req('/good'))?.invalid).toBeUndefined();
  });

  it('never matches a regular expression the table holds but cannot compile', () => {
    const r = compileResolver(
      buildIr(table(route({ name: 'x', rules: [[{ path: regex('(') }], [{ path: prefix('/') }]] }))),
    );
    expect(r.resolve(req('/('))?.routeRuleId).toBe('httproute/default/x/rule/1');
  });
});
