// The path modifiers of RequestRedirect and URLRewrite as Envoy regex rewrites, checked
// against the spec's ReplacePrefixMatch table (trailing slashes on either side), and the
// redirect port rules. The regular expressions are plain RE2 that JavaScript runs the same.
import { describe, expect, it } from 'vitest';
import { pathRewrite, redirectAction, redirectRoutes } from '../../extproc/src/envoy/path-filters.js';
import type { TableMatch } from '../../extproc/src/policy/policy-table.js';

function prefixMatch(value: string): TableMatch {
  return { id: 'm', path: { type: 'PathPrefix', value }, headers: [], queryParams: [] };
}

/** Applies an Envoy regex_rewrite ({pattern, substitution} with \1 references) to a path. */
function apply(rewrite: unknown, path: string): string {
  const r = rewrite as { pattern: { regex: string }; substitution: string };
  const js = r.substitution.replace(/\\\\|\\(\d)/g, (m, d: string | undefined) => (d ? `$${d}` : '\\'));
  return path.replace(new RegExp(r.pattern.regex), js);
}

describe('ReplacePrefixMatch: the spec table', () => {
  const table: [string, string, string, string][] = [
    ['/foo/bar', '/foo', '/xyz', '/xyz/bar'],
    ['/foo/bar', '/foo', '/xyz/', '/xyz/bar'],
    ['/foo/bar', '/foo/', '/xyz', '/xyz/bar'],
    ['/foo/bar', '/foo/', '/xyz/', '/xyz/bar'],
    ['/foo', '/foo', '/xyz', '/xyz'],
    ['/foo/', '/foo', '/xyz', '/xyz/'],
    ['/foo/bar', '/foo', '', '/bar'],
    ['/foo/', '/foo', '', '/'],
    ['/foo', '/foo', '', '/'],
    ['/foo/', '/foo', '/', '/'],
    ['/foo', '/foo', '/', '/'],
    // A prefix of "/" and characters RE2 would read as syntax.
    ['/a/b', '/', '/x', '/x/a/b'],
    ['/v1.0/a', '/v1.0', '/v2', '/v2/a'],
  ];
  for (const [path, prefix, replacement, want] of table) {
    it(`${path} with prefix ${prefix} → ${JSON.stringify(replacement)} is ${want}`, () => {
      const rw = pathRewrite({ type: 'ReplacePrefixMatch', value: replacement }, prefixMatch(prefix));
      expect(apply(rw, path)).toBe(want);
    });
  }

  it('escapes a prefix so "." matches only itself', () => {
    const rw = pathRewrite({ type: 'ReplacePrefixMatch', value: '/x' }, prefixMatch('/v1.0'));
    expect(apply(rw, '/v1x0/a')).toBe('/v1x0/a');
  });

  it('ReplaceFullPath replaces the whole path', () => {
    const rw = pathRewrite({ type: 'ReplaceFullPath', value: '/one' }, prefixMatch('/full'));
    expect(apply(rw, '/full/one/two')).toBe('/one');
  });
});

describe('RequestRedirect: the port rules', () => {
  const m = prefixMatch('/');
  const http8080 = { port: 8080, https: false };
  const https443 = { port: 443, https: true };
  const cases: [string, Parameters<typeof redirectAction>[0], typeof http8080, string, number | undefined][] =
    [
      ['no scheme, no port: the listener port', { statusCode: 302 }, http8080, 'http', 8080],
      ['no scheme, port 80 on http: none', { port: 80, statusCode: 302 }, http8080, 'http', undefined],
      ['https, no port: 443, not shown', { scheme: 'https', statusCode: 302 }, http8080, 'https', undefined],
      ['https, 8443', { scheme: 'https', port: 8443, statusCode: 302 }, http8080, 'https', 8443],
      ['no scheme on https 443: none', { statusCode: 302 }, https443, 'https', undefined],
      ['http from https: 80, not shown', { scheme: 'http', statusCode: 302 }, https443, 'http', undefined],
      ['no scheme, 8443 on https', { port: 8443, statusCode: 302 }, https443, 'https', 8443],
    ];
  for (const [name, redirect, listener, scheme, port] of cases) {
    it(name, () => {
      const action = redirectAction(redirect, m, listener);
      expect(action['scheme_redirect']).toBe(scheme);
      expect(action['port_redirect']).toBe(port);
    });
  }
});

describe("RequestRedirect: a port in the request's Host", () => {
  const m = prefixMatch('/');
  const http8080 = { port: 8080, https: false };
  it('gets a route of its own naming the port when Location would carry none', () => {
    const routes = redirectRoutes({ scheme: 'https', statusCode: 302 }, m, http8080);
    expect(routes).toHaveLength(2);
    // Envoy keeps a Host's port unless port_redirect replaces it.
    expect(routes[0]?.headers).toEqual([
      { name: ':authority', string_match: { safe_regex: { regex: '.*:[0-9]+' } } },
    ]);
    expect(routes[0]?.redirect['port_redirect']).toBe(443);
    expect(routes[1]?.headers).toEqual([]);
    expect(routes[1]?.redirect['port_redirect']).toBeUndefined();
  });
  it('needs no second route when the port is named anyway, or the hostname is given', () => {
    expect(redirectRoutes({ statusCode: 302 }, m, http8080)).toHaveLength(1);
    expect(
      redirectRoutes({ scheme: 'https', hostname: 'a.example', statusCode: 302 }, m, http8080),
    ).toHaveLength(1);
  });
});
