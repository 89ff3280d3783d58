// The walking skeleton, end to end: a real Envoy (the pinned one), the real control
// service answering ext_proc, the compiled steadfast.wasm reading what it was given,
// and a backend on loopback. curl through Envoy sees the policy the service returned.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoBackend } from '../../backends/echo/start-echo-backend.js';
import type { RunningBackend } from '../../backends/running-backend.js';
import { REPO_ROOT } from '../support/paths.js';
import {
  envoyBinary,
  envoyVersion,
  pinnedToolVersions,
  validateEnvoyConfig,
} from '../../extproc/src/local/envoy-binary.js';
import { startEnvoy, type EnvoyProcess } from '../../extproc/src/local/envoy-process.js';
import { untilExtProcAnswers } from './support/attach-stack.js';
import { rewriteEnvoyConfig } from './support/envoy-config-rewrite.js';
import { startControlService, type ControlServiceHandle } from './support/control-service.js';
import { curl } from './support/curl.js';

const TOKEN = 'sf1;id=httproute/default/skeleton/rule/0;k=h;ra=2;rc=503';

describe('the Envoy we test against', () => {
  it('is the pinned version unless ENVOY_BIN says otherwise', () => {
    const version = envoyVersion(envoyBinary());
    if (!process.env['ENVOY_BIN']) expect(version).toBe(pinnedToolVersions().envoy);
    expect(version).toMatch(/^1\.\d+\.\d+$/);
  });

  const configs = readdirSync(join(REPO_ROOT, 'envoy')).filter((f) => f.endsWith('.yaml'));
  it('has checked-in configurations to validate', () => expect(configs.length).toBeGreaterThan(0));
  it.each(configs)('accepts envoy/%s in validate mode', (file) => {
    const r = validateEnvoyConfig(join('envoy', file));
    expect(r.output).toContain('OK');
    expect(r.ok).toBe(true);
  });
});

describe('attach mode: ext_proc → steadfast.wasm → router', () => {
  let backend: RunningBackend;
  let control: ControlServiceHandle;
  let envoy: EnvoyProcess;

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.2', name: 'skeleton-backend' });
    control = await startControlService([
      'serve',
      '--ext-proc-address',
      '127.0.0.1:0',
      '--admin-port',
      '0',
      '--policy-token',
      TOKEN,
    ]);
    const config = rewriteEnvoyConfig(readFileSync(join(REPO_ROOT, 'envoy/attach-example.yaml'), 'utf8'), {
      clusters: {
        app: [{ address: backend.address, port: backend.port }],
        steadfast_extproc: [{ address: '127.0.0.1', port: control.grpcPort }],
      },
    });
    envoy = await startEnvoy({ config });
    await untilExtProcAnswers(envoy, envoy.url('ingress'));
  });

  afterAll(async () => {
    await envoy?.stop();
    await control?.stop();
    await backend?.close();
  });

  it('delivers the control service policy to the filter, which shows it in debug mode', async () => {
    const res = await curl(`${envoy.url('ingress')}/hello`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-backend-instance')).toEqual(['skeleton-backend']);
    expect(res.headers.get('x-steadfast-policy')).toEqual([TOKEN]);
  });

  it('counts the exchange in Envoy, the filter and the control service', async () => {
    await curl(`${envoy.url('ingress')}/count`);
    const stats = await envoy.stats();
    expect(stats.get('http.ingress.ext_proc.streams_started')).toBeGreaterThanOrEqual(2);
    expect(stats.get('http.ingress.ext_proc.streams_failed') ?? 0).toBe(0);
    expect(stats.get('wasmcustom.steadfast_policy_applied_total')).toBeGreaterThanOrEqual(2);
    const metrics = await (await fetch(`${control.adminUrl}/metrics`)).text();
    expect(metrics).toMatch(/steadfast_extproc_requests_total\{result="matched"\} [2-9]/);
  });

  it('keeps the router control headers away from the backend', async () => {
    const res = await curl(`${envoy.url('ingress')}/headers`, [
      '-H',
      'x-envoy-max-retries: 10',
      '-H',
      'x-envoy-retry-on: 5xx',
    ]);
    const seen = (JSON.parse(res.body) as { headers: Record<string, string[]> }).headers;
    expect(
      Object.keys(seen).filter((h) => h.startsWith('x-envoy-') && h !== 'x-envoy-expected-rq-timeout-ms'),
    ).toEqual([]);
  });

  it('answers the control service health and readiness', async () => {
    expect((await fetch(`${control.adminUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${control.adminUrl}/readyz`)).status).toBe(200);
  });

  it('stops the control service gracefully with exit code 0', async () => {
    const code = await control.stop();
    expect(code).toBe(0);
    expect(control.output()).toContain('steadfast serve: stopped');
    // Fail open: with the control service gone, requests still succeed, without policy.
    const res = await curl(`${envoy.url('ingress')}/after`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-steadfast-policy')).toBeUndefined();
  });
});

describe('gateway mode wiring: policy from route metadata', () => {
  let backend: RunningBackend;
  let envoy: EnvoyProcess;

  beforeAll(async () => {
    backend = await startEchoBackend({ address: '127.0.0.3', name: 'route-backend' });
    const config = rewriteEnvoyConfig(
      readFileSync(join(REPO_ROOT, 'tests/e2e/testdata/route-metadata.yaml'), 'utf8'),
      {
        clusters: { app: [{ address: backend.address, port: backend.port }] },
      },
    );
    envoy = await startEnvoy({ config });
  });

  afterAll(async () => {
    await envoy?.stop();
    await backend?.close();
  });

  it('reads the token through xds.route_metadata', async () => {
    const res = await curl(`${envoy.url('gateway')}/with-policy`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-steadfast-policy')).toEqual(['sf1;id=httproute/default/meta/rule/0;k=h;ra=1']);
  });

  it('finds no policy on a route without metadata', async () => {
    const missing = async () => (await envoy.stats()).get('wasmcustom.steadfast_policy_missing_total') ?? 0;
    const before = await missing();
    const res = await curl(`${envoy.url('gateway')}/plain`);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-steadfast-policy')).toBeUndefined();
    expect(await missing()).toBe(before + 1);
  });
});
