// The admin API (fastify): liveness, readiness, Prometheus metrics, and read-only views of
// the configuration being served — status conditions, the compiled PolicyTable, and a
// resolve endpoint that answers like `steadfast resolve --output json`. Built by a
// factory so tests use inject() without opening a port. Errors are JSON {code, message}.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';
import { diagnosticView } from '../../gatewayapi/diagnostic.js';
import { resolveAnswer, resolveOnPort } from '../../resolve/resolve-answer.js';
import { objectStatusView } from '../../translate/status.js';
import { AdminError, type AdminErrorCode } from './admin-errors.js';
import type { ConfigView } from './config-view.js';
import { parseResolvePort, parseResolveQuery } from './resolve-query.js';

export interface AdminDeps {
  /** The registry /metrics shows (the service's own, never prom-client's global one). */
  readonly metrics: { readonly registry: Registry };
  /** Ready to serve traffic: null when ready, else the reason it is not. */
  readonly notReadyReason: () => string | null;
  /** The configuration being served; absent when serving a fixed `--policy-token`. */
  readonly config?: ConfigView;
  /** Prometheus text for /metrics when it is gathered from several processes (--workers). */
  readonly metricsText?: () => Promise<string>;
  /** The Envoys the ADS server feeds (`serve --xds`): what each took and refused. */
  readonly xds?: () => unknown;
}

function sendError(reply: FastifyReply, status: number, code: AdminErrorCode, message: string) {
  return reply.code(status).send({ code, message });
}

/** Every error, a 404 included, as JSON {code, message}. */
function answerErrorsAsJson(app: FastifyInstance): void {
  app.setNotFoundHandler((req, reply) =>
    sendError(reply, 404, 'not-found', `no such endpoint: ${req.method} ${req.url.split('?')[0] ?? ''}`),
  );
  app.setErrorHandler((error, _req, reply) => {
    if (error instanceof AdminError) return sendError(reply, error.status, error.code, error.message);
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return sendError(reply, status, 'bad-request', (error as Error).message);
    }
    return sendError(reply, 500, 'internal', (error as Error).message);
  });
}

/** /v1/status: the generation, the last failures, the listeners, every object's status. */
function statusView(config: ConfigView, snap: NonNullable<ConfigView['snapshot']>): Record<string, unknown> {
  const failure = config.lastFailure;
  const rejection = config.lastEnvoyRejection;
  return {
    generation: config.generation,
    loadedAt: config.loadedAt?.toISOString() ?? null,
    lastReloadError: failure
      ? { at: failure.at.toISOString(), message: failure.message, errors: failure.errors }
      : null,
    lastEnvoyRejection: rejection
      ? { at: rejection.at.toISOString(), generation: rejection.generation, message: rejection.message }
      : null,
    // Attach mode matches a request only against the routes of its Gateway port.
    listeners: { ports: snap.resolver.ports, problems: config.listenerProblems ?? [] },
    objects: snap.statuses.map(objectStatusView),
    diagnostics: snap.diagnostics.map(diagnosticView),
  };
}

/** The admin API: one route after another, each a few lines. */
export function buildAdminServer(deps: AdminDeps): FastifyInstance {
  const app = Fastify({ logger: false });

  answerErrorsAsJson(app);

  const snapshot = () => {
    const snap = deps.config?.snapshot;
    if (!deps.config) {
      throw new AdminError(
        404,
        'no-configuration',
        'this service answers a fixed --policy-token; start it with --config <dir> for status, policy and resolve',
      );
    }
    if (!snap) throw new AdminError(503, 'not-loaded', 'no configuration loaded yet');
    return snap;
  };

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const reason = deps.notReadyReason();
    // Every replica serves; the one holding the Lease also writes status: a detail, not readiness.
    const leadership = deps.config?.leadership?.();
    const detail = leadership ? { leadership } : {};
    if (reason !== null) return reply.code(503).send({ status: 'not ready', reason, ...detail });
    return { status: 'ready', ...detail };
  });

  app.get('/metrics', async (_req, reply) => {
    const text = deps.metricsText ? await deps.metricsText() : await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });

  app.get('/v1/status', async () => statusView(deps.config as ConfigView, snapshot()));

  app.get('/v1/policy', async () => {
    const snap = snapshot();
    return { generation: (deps.config as ConfigView).generation, table: snap.table };
  });

  app.get('/v1/xds', async () => {
    if (!deps.xds) {
      throw new AdminError(404, 'no-xds', 'this service runs no ADS server; start it with --xds HOST:PORT');
    }
    return deps.xds();
  });

  app.get('/v1/resolve', async (req) => {
    const q = req.query as Record<string, string | string[] | undefined>;
    const query = parseResolveQuery(q);
    const port = parseResolvePort(q);
    const snap = snapshot();
    const { result, port: on } = resolveOnPort(snap.resolver, query, port);
    return resolveAnswer(result, on);
  });

  return app;
}
