// The admin API through fastify's inject(): no port is opened.
import { describe, expect, it } from 'vitest';
import { buildAdminServer } from '../../extproc/src/admin/admin-server.js';
import { ServiceMetrics } from '../../extproc/src/runtime/metrics.js';

describe('admin API', () => {
  it('answers /healthz', async () => {
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => null });
    const res = await app.inject({ url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('answers /readyz with 503 and the reason until ready', async () => {
    let reason: string | null = 'no configuration loaded yet';
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => reason });
    const before = await app.inject({ url: '/readyz' });
    expect(before.statusCode).toBe(503);
    expect(before.json()).toEqual({ status: 'not ready', reason: 'no configuration loaded yet' });
    reason = null;
    expect((await app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('serves steadfast_ metrics in the Prometheus text format', async () => {
    const metrics = new ServiceMetrics();
    metrics.extProcRequests.inc({ result: 'matched' });
    const app = buildAdminServer({ metrics, notReadyReason: () => null });
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE steadfast_extproc_requests_total counter');
    expect(res.body).toContain('steadfast_extproc_requests_total{result="matched"} 1');
    // Every metric is ours: nothing leaks in from the global registry.
    const names = res.body
      .split('\n')
      .filter((l) => l.startsWith('# TYPE '))
      .map((l) => l.split(' ')[2]);
    expect(names.every((n) => n?.startsWith('steadfast_'))).toBe(true);
  });

  it('answers 404 for unknown paths', async () => {
    const app = buildAdminServer({ metrics: new ServiceMetrics(), notReadyReason: () => null });
    expect((await app.inject({ url: '/nope' })).statusCode).toBe(404);
  });
});
