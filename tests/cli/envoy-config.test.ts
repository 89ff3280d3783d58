// `steadfast envoy-config` says only what is really wrong: nothing for a clean configuration,
// a warning (not a problem) for an ignored kind, each failing rule by name.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../extproc/src/cli/main.js';

const dir = mkdtempSync(join(tmpdir(), 'steadfast-envoy-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const KEY = Buffer.alloc(32, 7).toString('base64');

async function envoyConfig(...args: string[]) {
  let out = '';
  let err = '';
  const code = await run(['envoy-config', ...args], {
    out: (t) => (out += t),
    err: (t) => (err += `${t}\n`),
  });
  return { code, out, err };
}

describe('steadfast envoy-config', () => {
  it('prints nothing on stderr for the quickstart, in both modes', async () => {
    const gw = await envoyConfig('--config', 'examples/quickstart', '--session-key', KEY);
    expect(gw).toMatchObject({ code: 0, err: '' });
    const attach = await envoyConfig(
      '--config',
      'examples/quickstart',
      '--mode',
      'attach',
      '--session-key',
      KEY,
    );
    expect(attach).toMatchObject({ code: 0, err: '' });
  });

  it('does not ask for a session key when no rule uses session persistence', async () => {
    writeFileSync(
      join(dir, 'plain.yaml'),
      `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw }
spec:
  gatewayClassName: steadfast
  listeners: [{ name: http, protocol: HTTP, port: 10000 }]
---
apiVersion: v1
kind: Pod
metadata: { name: unrelated }
`,
    );
    const r = await envoyConfig('--config', dir);
    expect(r.code).toBe(0);
    expect(r.err.trim().split('\n')).toEqual([
      'steadfast envoy-config: warning: plain.yaml:8: kind Pod (v1) is not read by steadfast; ignored',
    ]);
  });

  it('names each rule that fails closed', async () => {
    writeFileSync(
      join(dir, 'route.yaml'),
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: shop }
spec:
  parentRefs: [{ name: gw }]
  rules:
    - backendRefs: [{ name: missing, port: 80 }]
`,
    );
    const r = await envoyConfig('--config', dir);
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      'steadfast envoy-config: 1 rule(s) fail closed and answer 500: httproute/default/shop/rule/0',
    );
    expect(r.err).not.toContain('problem(s) in the configuration');
  });
});
