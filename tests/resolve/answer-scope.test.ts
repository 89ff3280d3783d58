// The scope the control service sends with each answer (resolve/answer-scope.ts): what a
// hostname's matches read beyond host, method and path, and the table's generation.
import { describe, expect, it } from 'vitest';
import { compileResolver } from '../../extproc/src/resolve/compile.js';
import { outcomeOf } from '../../extproc/src/server/served-config.js';
import { route, table } from './table-builder.js';
import { buildIr } from '../../extproc/src/ir/build-ir.js';

const plain = route({
  name: 'plain',
  hostnames: ['a.example.com'],
  rules: [[{ path: { type: 'PathPrefix', value: '/a' } }]],
});
const query = route({
  name: 'query',
  hostnames: ['*.q.example.com'],
  rules: [[{ queryParams: [{ type: 'Exact', name: 'v', value: '1' }] }]],
});
const headers = route({
  name: 'headers',
  hostnames: ['h.example.com'],
  rules: [[{ headers: [{ type: 'Exact', name: 'x-v', value: '1' }] }]],
});

describe('answer scopes', () => {
  const resolver = compileResolver(buildIr(table(plain, query, headers)));
  const g = resolver.generation;

  it("names the generation, and the query only where the hostname's matches read it", () => {
    expect(g).toMatch(/^[0-9a-f]{16}$/);
    expect(resolver.scope('a.example.com')).toBe(`sc1;g=${g}`);
    expect(resolver.scope('A.Example.COM:8443')).toBe(`sc1;g=${g}`);
    expect(resolver.scope('x.q.example.com')).toBe(`sc1;g=${g};q=1`);
    expect(resolver.scope('nobody.example')).toBe(`sc1;g=${g}`);
  });

  it("names the headers the hostname's matches read, sorted and lower-case, and every host's when a catch-all reads them", () => {
    expect(resolver.scope('h.example.com')).toBe(`sc1;g=${g};h=x-v`);
    const several = route({
      name: 'several',
      hostnames: ['s.example.com', '*.w.example.com'],
      rules: [
        [{ headers: [{ type: 'Exact', name: 'X-Zeta', value: '1' }] }],
        [
          {
            headers: [
              { type: 'RegularExpression', name: 'x-alpha', value: 'a.*' },
              { type: 'Exact', name: 'X-V', value: '2' },
            ],
            queryParams: [{ type: 'Exact', name: 'v', value: '1' }],
          },
        ],
      ],
    });
    const wildcard = route({
      name: 'wildcard',
      hostnames: ['*.example.com'],
      rules: [[{ headers: [{ type: 'Exact', name: 'x-beta', value: 'on' }] }]],
    });
    const withSeveral = compileResolver(buildIr(table(plain, headers, several, wildcard)));
    const gs = withSeveral.generation;
    expect(withSeveral.scope('s.example.com')).toBe(`sc1;g=${gs};q=1;h=x-alpha,x-beta,x-v,x-zeta`);
    // A covering wildcard's names are read too; the exact hostname's own and the wildcard's.
    expect(withSeveral.scope('h.example.com')).toBe(`sc1;g=${gs};h=x-beta,x-v`);
    expect(withSeveral.scope('a.example.com')).toBe(`sc1;g=${gs};h=x-beta`);
    expect(withSeveral.scope('b.w.example.com')).toBe(`sc1;g=${gs};q=1;h=x-alpha,x-beta,x-v,x-zeta`);
    expect(withSeveral.scope('other.org')).toBe(`sc1;g=${gs}`);

    const anyHost = route({
      name: 'any',
      rules: [
        [{ headers: [{ type: 'Exact', name: 'x-v', value: '1' }] }],
        [{ headers: [{ type: 'Exact', name: 'X-Any', value: '1' }] }],
      ],
    });
    const withAny = compileResolver(buildIr(table(plain, anyHost, headers)));
    const ga = withAny.generation;
    expect(withAny.scope('a.example.com')).toBe(`sc1;g=${ga};h=x-any,x-v`);
    expect(withAny.scope('h.example.com')).toBe(`sc1;g=${ga};h=x-any,x-v`);
    expect(withAny.scope('nobody.example')).toBe(`sc1;g=${ga};h=x-any,x-v`);
  });

  it("gives no scope where the headers cannot be named within the filter's bounds", () => {
    const many = route({
      name: 'many',
      hostnames: ['m.example.com'],
      rules: Array.from({ length: 9 }, (_, i) => [
        { headers: [{ type: 'Exact' as const, name: `x-h${i}`, value: '1' }] },
      ]),
    });
    const eight = route({
      name: 'eight',
      hostnames: ['e.example.com'],
      rules: Array.from({ length: 8 }, (_, i) => [
        { headers: [{ type: 'Exact' as const, name: `x-h${i}`, value: '1' }] },
      ]),
    });
    const long = route({
      name: 'long',
      hostnames: ['l.example.com'],
      rules: [[{ headers: [{ type: 'Exact', name: `x-${'l'.repeat(600)}`, value: '1' }] }]],
    });
    const bounded = compileResolver(buildIr(table(many, eight, long)));
    expect(bounded.scope('m.example.com')).toBeUndefined();
    expect(bounded.scope('l.example.com')).toBeUndefined();
    expect(bounded.scope('e.example.com')).toBe(
      `sc1;g=${bounded.generation};h=${Array.from({ length: 8 }, (_, i) => `x-h${i}`).join(',')}`,
    );
  });

  it('sends the scope with matched and unmatched answers, never with one that fails closed', () => {
    expect(
      outcomeOf(resolver, { method: 'GET', authority: 'a.example.com', path: '/a/1', headers: {} }),
    ).toEqual({
      result: 'matched',
      token: 'sf1;id=httproute/default/plain/rule/0',
      listener: 'single_port',
      scope: `sc1;g=${g}`,
    });
    expect(
      outcomeOf(resolver, { method: 'GET', authority: 'a.example.com', path: '/b', headers: {} }),
    ).toEqual({
      result: 'unmatched',
      listener: 'single_port',
      scope: `sc1;g=${g}`,
    });
    const broken = route({ name: 'broken', hostnames: ['b.example.com'], rules: [[{}]], invalidRules: [0] });
    expect(
      outcomeOf(compileResolver(buildIr(table(broken))), {
        method: 'GET',
        authority: 'b.example.com',
        path: '/',
        headers: {},
      }),
    ).toEqual({
      result: 'invalid',
      listener: 'single_port',
    });
  });

  it('has equal generations for equal tables and another for any change', () => {
    expect(compileResolver(buildIr(table(plain, query, headers))).generation).toBe(g);
    expect(compileResolver(buildIr(table(plain, query))).generation).not.toBe(g);
  });
});
