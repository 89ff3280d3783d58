// Attach mode, end to end: `steadfast serve --config <dir>` resolves each request Envoy
// sends over ext_proc against the HTTPRoute rules, and steadfast.wasm applies what it got.
// Unmatched requests get no policy; the config dir reloads without restarting anything.
import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grpcurlBinary } from '../../extproc/src/local/envoy-binary.js';
import { run } from '../../extproc/src/cli/main.js';
import type { AttachRoute } from './support/attach-config.js';
import { type AttachStack, startAttachStack, within } from './support/attach-stack.js';
import { getOnce, startBoundedLoad } from './support/bounded-load.js';
import { type CurlResponse, curl } from './support/curl.js';
import { POLICY_HEADER, oneWithPolicy } from './support/with-policy.js';

const SHOP: AttachRoute = {
  name: 'shop',
  hostnames: ['shop.example'],
  rules: [
    { path: '/retry', retry: { attempts: 2, codes: [503] } },
    { path: '/exact', pathType: 'Exact', timeouts: { request: '3s' } },
  ],
};
const SHOP_V2: AttachRoute = {
  ...SHOP,
  rules: [{ path: '/retry', retry: { attempts: 3, codes: [500, 503] } }, ...SHOP.rules.slice(1)],
};

let stack: AttachStack;

async function resolveViaAdmin(host: string, path: string): Promise<Record<string, unknown>> {
  const q = new URLSearchParams({ host, path, method: 'GET' });
  const res = await fetch(`${stack.control.adminUrl}/v1/resolve?${q}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

async function resolveViaCli(host: string, path: string): Promise<Record<string, unknown>> {
  let out = '';
  await run(['resolve', stack.config.path, '--host', host, '--path', path, '--output', 'json'], {
    out: (t) => (out += t),
    err: () => undefined,
  });
  return JSON.parse(out) as Record<string, unknown>;
}

/**
 * A curl exchange that had a policy: one whose ext_proc answer came too late went on without
 * any, and is sent again (support/with-policy.ts); which policy it got is what is checked.
 */
const withAPolicy = (exchange: () => Promise<CurlResponse>): Promise<CurlResponse> =>
  oneWithPolicy({ mode: 'attach', envoy: stack.envoy }, exchange, (r) => r.headers.has(POLICY_HEADER));

beforeAll(async () => {
  stack = await startAttachStack({ routes: [SHOP] });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('attach mode: policy from the config directory', () => {
  it('is ready once the configuration loaded', async () => {
    const res = await fetch(`${stack.control.adminUrl}/readyz`);
    expect(res.status).toBe(200);
  });

  it('hands a matching request the policy of its rule, which the filter applies', async () => {
    const before = (await stack.envoy.stats()).get('wasmcustom.steadfast_policy_applied_total') ?? 0;
    const res = await withAPolicy(() => curl(`${stack.url}/retry/a`, ['-H', 'Host: shop.example']));
    expect(res.status).toBe(200);
    const token = res.headers.get(POLICY_HEADER)?.[0];
    expect(token).toMatch(/^sf1;id=httproute\/default\/shop\/rule\/0;k=h;ra=2;rc=503/);
    expect(token).toBe((await resolveViaAdmin('shop.example', '/retry/a'))['token']);
    const after = (await stack.envoy.stats()).get('wasmcustom.steadfast_policy_applied_total') ?? 0;
    expect(after).toBeGreaterThan(before);
  });

  it('matches exact paths and ports in :authority like the resolver does', async () => {
    const exact = await withAPolicy(() => curl(`${stack.url}/exact`, ['-H', 'Host: shop.example:8080']));
    expect(exact.headers.get(POLICY_HEADER)?.[0]).toMatch(/^sf1;id=httproute\/default\/shop\/rule\/1;/);
    const notExact = await curl(`${stack.url}/exact/more`, ['-H', 'Host: shop.example']);
    expect(notExact.status).toBe(200);
    expect(notExact.headers.get(POLICY_HEADER)).toBeUndefined();
  });

  it('gives an unmatched request no policy, and the request still succeeds', async () => {
    const res = await curl(`${stack.url}/retry/a`, ['-H', 'Host: other.example']);
    expect(res.status).toBe(200);
    expect(res.headers.get(POLICY_HEADER)).toBeUndefined();
    const metrics = await (await fetch(`${stack.control.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/steadfast_extproc_requests_total\{result="unmatched"\} [1-9]/);
    const stats = await stack.envoy.stats();
    expect(stats.get('http.ingress.ext_proc.streams_failed') ?? 0).toBe(0);
  });

  it('makes Envoy retry as the rule says (2 retries on 503)', async () => {
    const uuid = `attach-${Date.now()}`;
    // A new uuid for each one sent, so a resent exchange again needs both retries.
    let sent = 0;
    const res = await withAPolicy(() =>
      curl(`${stack.url}/retry/flaky?uuid=${uuid}-${sent++}&succeedAfter=2&responseCode=503`, [
        '-H',
        'Host: shop.example',
      ]),
    );
    expect(res.status).toBe(200);
    const without = await curl(`${stack.url}/other?uuid=${uuid}-x&succeedAfter=1&responseCode=503`, [
      '-H',
      'Host: shop.example',
    ]);
    expect(without.status).toBe(503);
  });

  it('answers /v1/resolve exactly as `steadfast resolve --output json` does', async () => {
    for (const [host, path] of [
      ['shop.example', '/retry/x?y=1'],
      ['shop.example', '/exact'],
      ['nobody.example', '/'],
    ] as const) {
      expect(await resolveViaAdmin(host, path)).toEqual(await resolveViaCli(host, path));
    }
  });

  it('lists its gRPC services through server reflection (grpcurl)', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(grpcurlBinary(), ['-plaintext', stack.control.grpcAddress, 'list'], (e, stdout, stderr) =>
        e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(out.split('\n')).toEqual(
      expect.arrayContaining(['envoy.service.ext_proc.v3.ExternalProcessor', 'grpc.health.v1.Health']),
    );
  });
});

describe('attach mode: a sustained load', () => {
  it('keeps the ext_proc connection: streams close gracefully, none is reset', async () => {
    // Past nghttp2's rapid-reset allowance (1000 resets, then 33 a second), which would make
    // the control service's HTTP/2 server drop the connection if Envoy reset each stream.
    const load = startBoundedLoad({
      url: `${stack.url}/retry/sustained`,
      headers: { host: 'shop.example' },
      ratePerSecond: 250,
      durationMs: 6000,
      maxRequests: 1500,
    });
    const { failed, samples } = await load.done;
    expect(failed).toEqual([]);
    expect(samples.length).toBeGreaterThan(1200);
    const stats = await stack.envoy.stats();
    const c = (name: string) => stats.get(`cluster.steadfast_extproc.${name}`) ?? 0;
    // Envoy resets only streams it gave up on (message_timeout, on a busy machine).
    expect(c('upstream_rq_tx_reset')).toBeLessThanOrEqual(
      stats.get('http.ingress.ext_proc.message_timeouts') ?? 0,
    );
    expect(c('upstream_cx_close_notify')).toBe(0);
    expect(c('upstream_cx_protocol_error')).toBe(0);
    expect(c('upstream_cx_total')).toBe(c('upstream_cx_active'));
    expect(stats.get('http.ingress.ext_proc.streams_failed') ?? 0).toBe(0);
    // Every stream the service opened for those requests is closed again.
    await within(2000, async () =>
      /^steadfast_extproc_streams 0$/m.test(await (await fetch(`${stack.control.adminUrl}/metrics`)).text()),
    );
  }, 30_000);
});

describe('attach mode: hot reload of the config directory', () => {
  const policyOf = async (host: string, path: string) =>
    (await getOnce(`${stack.url}${path}`, { host })).policy;

  it('changes the answer without restarting anything', async () => {
    const pid = stack.control.process.pid;
    const status = async () =>
      (await (await fetch(`${stack.control.adminUrl}/v1/status`)).json()) as {
        generation: number;
        lastReloadError: unknown;
      };
    const before = (await status()).generation;
    stack.writeRoutes([SHOP_V2]);
    await within(5000, async () =>
      ((await policyOf('shop.example', '/retry/b')) ?? '').includes(';ra=3;rc=500,503'),
    );
    expect(stack.control.process.pid).toBe(pid);
    // One write, one reload: exactly one generation more.
    expect(await status()).toEqual(
      expect.objectContaining({ generation: before + 1, lastReloadError: null }),
    );
  });

  it('keeps the last good configuration when a reload is broken, and says why', async () => {
    stack.writeRoutes('apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: [oops\n');
    await within(5000, async () => {
      const s = (await (await fetch(`${stack.control.adminUrl}/v1/status`)).json()) as {
        lastReloadError: { message: string } | null;
      };
      return s.lastReloadError !== null;
    });
    const status = (await (await fetch(`${stack.control.adminUrl}/v1/status`)).json()) as {
      lastReloadError: { message: string; errors: { file: string; line: number }[] };
    };
    expect(status.lastReloadError.message).toContain('routes.yaml');
    expect(status.lastReloadError.errors[0]?.file).toBe('routes.yaml');
    // Still served: the previous rules, and ready.
    const kept = await withAPolicy(() => curl(`${stack.url}/retry/c`, ['-H', 'Host: shop.example']));
    expect(kept.headers.get(POLICY_HEADER)?.[0]).toContain(';ra=3;');
    expect((await fetch(`${stack.control.adminUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${stack.control.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/steadfast_config_reload_errors_total [1-9]/);
    // Fixing the file brings reloads back.
    stack.writeRoutes([SHOP]);
    await within(5000, async () => ((await policyOf('shop.example', '/retry/d')) ?? '').includes(';ra=2;'));
  });

  it('serves the compiled table at /v1/policy', async () => {
    const body = (await (await fetch(`${stack.control.adminUrl}/v1/policy`)).json()) as {
      table: { routes: { id: string }[] };
    };
    expect(body.table.routes.map((r) => r.id)).toEqual(['httproute/default/shop']);
  });
});
