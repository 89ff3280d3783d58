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

  it("gives no scope where the hostname's matches read headers, and to every host when a catch-all does", () => {
    expect(resolver.scope('h.example.com')).toBeUndefined();
    const anyHost = route({
      name: 'any',
      rules: [[{ headers: [{ type: 'Exact', name: 'x-v', value: '1' }] }]],
    });
    const withAny = compileResolver(buildIr(table(plain, anyHost)));
    expect(withAny.scope('a.example.com')).toBeUndefined();
    expect(withAny.scope('nobody.example')).toBeUndefined();
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
