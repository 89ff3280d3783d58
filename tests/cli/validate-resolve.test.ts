// `steadfast validate` and `steadfast resolve`, through run() with captured output.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandIO } from '../../extproc/src/cli/command.js';
import { quickstartHttps } from '../../extproc/src/cli/commands/quickstart.js';
import { run } from '../../extproc/src/cli/main.js';

function capture(): CommandIO & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
    stdout: () => out,
    stderr: () => err,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'steadfast-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const good = join(dir, 'good');
mkdirSync(join(good, 'routes'), { recursive: true });
writeFileSync(
  join(good, 'gateway.yaml'),
  `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 80 }]
---
apiVersion: v1
kind: Service
metadata: { name: echo }
spec:
  ports: [{ port: 80 }]
`,
);
writeFileSync(
  join(good, 'routes', 'shop.yml'),
  `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  hostnames: [shop.example.com]
  rules:
    - matches: [{ path: { value: /cart } }]
      retry: { codes: [503], attempts: 2, backoff: 50ms }
      timeouts: { request: 1s }
      sessionPersistence: { cookie: { name: cart } }
      backendRefs: [{ name: echo, port: 80 }]
`,
);

const bad = join(dir, 'bad');
mkdirSync(join(bad, 'routes'), { recursive: true });
writeFileSync(
  join(bad, 'routes', 'shop.yaml'),
  `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: echo, port: 80 }]
    - retry:
        codes: [600]
`,
);

describe('steadfast validate', () => {
  it('exits 0 and prints every object when everything is accepted and resolved', async () => {
    const io = capture();
    expect(await run(['validate', good], io)).toBe(0);
    expect(io.stdout()).toContain('ok   HTTPRoute default/shop  (routes/shop.yml:1)');
    expect(io.stdout()).toContain('Accepted=True (Accepted)');
    // The Service has no EndpointSlice: a warning, not a failure.
    expect(io.stdout()).toContain(
      'warning: routes/shop.yml:12 spec.rules[0].backendRefs[0]: Service default/echo port 80 has no endpoints: ' +
        'requests sent to this backend are answered 503',
    );
    expect(io.stdout().trim().split('\n').pop()).toBe(
      'ok: 3 object(s) in 2 file(s), all accepted and resolved, 1 warning(s)',
    );
  });

  it('counts what is wrong in the summary and never says all accepted when a file failed', async () => {
    const broken = join(dir, 'broken');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'two-errors.yaml'), 'a: [1, 2\n---\nb: {c: 1\n');
    const io = capture();
    expect(await run(['validate', broken], io)).toBe(1);
    const lines = io.stdout().trim().split('\n');
    expect(lines.filter((l) => l.startsWith('FAIL two-errors.yaml:'))).toHaveLength(2);
    expect(lines.pop()).toBe('FAIL: 0 object(s) with problems, 2 file error(s) (0 object(s) in 1 file(s))');
    expect(io.stdout()).not.toContain('all accepted');
    const bad1 = capture();
    expect(await run(['validate', bad], bad1)).toBe(1);
    expect(bad1.stdout().trim().split('\n').pop()).toBe(
      'FAIL: 1 object(s) with problems, 0 file error(s) (1 object(s) in 1 file(s))',
    );
  });

  it('accepts empty documents and comment-only files, as kubectl does', async () => {
    const empties = join(dir, 'empties');
    mkdirSync(empties, { recursive: true });
    writeFileSync(
      join(empties, 'svc.yaml'),
      '---\napiVersion: v1\nkind: Service\nmetadata: { name: a }\nspec: { ports: [{ port: 80 }] }\n---\n---\n# the end\n',
    );
    writeFileSync(join(empties, 'notes.yaml'), '# nothing here yet\n');
    writeFileSync(join(empties, 'blank.yml'), '');
    const io = capture();
    expect(await run(['validate', empties], io)).toBe(0);
    expect(io.stdout().trim().split('\n').pop()).toBe(
      'ok: 1 object(s) in 3 file(s), all accepted and resolved',
    );
  });

  it('exits 1 and shows located errors with paths relative to the root', async () => {
    const io = capture();
    expect(await run(['validate', bad], io)).toBe(1);
    expect(io.stdout()).toContain('routes/shop.yaml:9 spec.rules[1].retry.codes[0]: 600 is not in 400-599');
    expect(io.stdout()).toContain('Accepted=False (NoMatchingParent): Gateway default/gw not found');
  });

  it('prints one JSON document: summary, objects with source, errors and status, file diagnostics', async () => {
    const withBroken = join(dir, 'json');
    mkdirSync(withBroken, { recursive: true });
    writeFileSync(join(withBroken, 'broken.yaml'), 'a: [1\n');
    const mixed = capture();
    expect(await run(['validate', bad, withBroken, '--output', 'json'], mixed)).toBe(1);
    const doc = JSON.parse(mixed.stdout()) as {
      summary: unknown;
      diagnostics: unknown[];
      objects: unknown[];
    };
    expect(Object.keys(doc)).toEqual(['summary', 'objects', 'diagnostics']);
    expect(doc.summary).toEqual({
      files: 2,
      objects: 1,
      objectsWithProblems: 1,
      fileErrors: 1,
      warnings: 0,
      ok: false,
    });
    expect(doc.diagnostics).toEqual([
      {
        severity: 'error',
        code: 'yaml-syntax',
        file: expect.stringMatching(/broken\.yaml$/),
        line: 2,
        field: '',
        message: expect.any(String),
      },
    ]);
    expect(mixed.stderr()).toBe('');
    const io = capture();
    expect(await run(['validate', bad, '--output', 'json'], io)).toBe(1);
    const objects = (JSON.parse(io.stdout()) as { objects: unknown }).objects as {
      kind: string;
      metadata: { namespace: string; name: string };
      source: { file: string; line: number };
      errors: { field: string; message: string }[];
      status: { parents: unknown[] };
    }[];
    expect(objects).toHaveLength(1);
    expect(objects[0]).toMatchObject({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace: 'default', name: 'shop' },
      source: { file: 'routes/shop.yaml', line: 1 },
      errors: [{ field: 'spec.rules[1].retry.codes[0]', message: '600 is not in 400-599' }],
    });
  });

  it('exits 2 on usage and I/O errors', async () => {
    const a = capture();
    expect(await run(['validate'], a)).toBe(2);
    const b = capture();
    expect(await run(['validate', join(dir, 'missing')], b)).toBe(2);
    expect(b.stderr()).toContain('missing');
    const c = capture();
    expect(await run(['validate', good, '--output', 'xml'], c)).toBe(2);
  });

  it('validates the quickstart example cleanly, alone and with the HTTPS Gateway quickstart adds', async () => {
    const io = capture();
    expect(await run(['validate', 'examples/quickstart'], io)).toBe(0);
    const https = join(dir, 'https.yaml');
    writeFileSync(https, quickstartHttps('127.0.0.1').yaml);
    const withTls = capture();
    expect(await run(['validate', 'examples/quickstart', https], withTls)).toBe(0);
    expect(withTls.stdout()).toContain('ok   Gateway default/quickstart-https');
  });
});

describe('steadfast resolve', () => {
  it('explains the matched rule and its policy', async () => {
    const io = capture();
    expect(
      await run(['resolve', good, '--host', 'shop.example.com', '--path', '/cart/1', '--method', 'post'], io),
    ).toBe(0);
    const out = io.stdout();
    expect(out).toContain('rule:     httproute/default/shop/rule/0');
    expect(out).toContain(
      'retry: up to 2 retries after the first try, on connection failures; status 503, at least 50 ms apart',
    );
    expect(out).toContain('timeouts: request: 1000 ms; per try: Envoy default');
    expect(out).toContain('session persistence: cookie cart (Path=/, session lifetime)');
    expect(out).toContain(
      'token:    sf1;id=httproute/default/shop/rule/0;k=h;ra=2;rc=503;rb=50;tr=1000;st=c;sn=cart;sp=/;sl=s',
    );
  });

  it('prints JSON and exits 1 when nothing matches', async () => {
    const a = capture();
    expect(
      await run(['resolve', good, '--host', 'shop.example.com', '--path', '/cart', '--output', 'json'], a),
    ).toBe(0);
    expect(JSON.parse(a.stdout())).toMatchObject({ matched: true, rule: 'httproute/default/shop/rule/0' });
    const b = capture();
    expect(
      await run(['resolve', good, '--host', 'other.example.com', '--path', '/cart', '--output', 'json'], b),
    ).toBe(1);
    expect(JSON.parse(b.stdout())).toEqual({ matched: false });
  });

  it('reads --header name=value', async () => {
    const io = capture();
    expect(
      await run(
        ['resolve', 'examples/quickstart', '--host', 'x', '--path', '/api', '--header', 'X-Shop-Session=abc'],
        io,
      ),
    ).toBe(0);
    expect(io.stdout()).toContain('session persistence: header x-shop-session');
  });

  it('resolves on one Gateway port with --port, and names the port it matched on', async () => {
    const two = 'tests/resolve/testdata/two-listeners.yaml';
    const ask = async (...more: string[]) => {
      const io = capture();
      const code = await run(['resolve', two, '--host', 'shop.example', '--path', '/api', ...more], io);
      return { code, out: io.stdout() };
    };
    expect((await ask()).out).toContain(
      'route:    httproute/default/web (hostname shop.example, Gateway port 8080)',
    );
    const rpc = await ask('--port', '9090', '--output', 'json');
    expect(JSON.parse(rpc.out)).toMatchObject({
      matched: true,
      port: 9090,
      rule: 'httproute/default/rpc/rule/0',
    });
    expect(await ask('--port', '7070')).toEqual({
      code: 1,
      out: expect.stringContaining('no route matches GET shop.example/api on Gateway port 7070'),
    });
    expect((await ask('--port', 'http')).code).toBe(2);
  });

  it('exits 2 on usage errors', async () => {
    expect(await run(['resolve', good, '--path', '/'], capture())).toBe(2);
    expect(await run(['resolve', good, '--host', 'x', '--path', 'nope'], capture())).toBe(2);
    expect(await run(['resolve', good, '--host', 'x', '--path', '/', '--header', 'novalue'], capture())).toBe(
      2,
    );
  });
});
