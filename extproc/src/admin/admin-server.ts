// The admin API (fastify): liveness, readiness and Prometheus metrics. Built by a
// factory so tests use inject() without opening a port.
import Fastify, { type FastifyInstance } from 'fastify';
import type { ServiceMetrics } from '../runtime/metrics.js';

export interface AdminDeps {
  readonly metrics: ServiceMetrics;
  /** Ready to serve traffic: null when ready, else the reason it is not. */
  readonly notReadyReason: () => string | null;
}

export function buildAdminServer(deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logger: false });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const reason = deps.notReadyReason();
    if (reason !== null) return reply.code(503).send({ status: 'not ready', reason });
    return { status: 'ready' };
  });

  app.get('/metrics', async (_req, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });

  return app;
}
