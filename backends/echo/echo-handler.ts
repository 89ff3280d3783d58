// What the echo backend answers: the request as it arrived (so tests see what the gateway forwarded),
// slowed or failed on demand through the query parameters of echo-query.ts.
import { finishAttempt, type AttemptLedger, type AttemptRecord } from '../attempt-ledger.js';
import { failsAttempt } from '../retry-simulation.js';
import { parseEchoQuery, type FailurePlan } from './echo-query.js';
import type { Exchange } from './exchange.js';

/** Largest request body read; a bigger one is answered 413. */
export const maxBodyBytes = 1 << 20;

export const instanceHeader = 'x-backend-instance';
export const attemptHeader = 'x-backend-attempt';

export interface EchoContext {
  readonly instance: string;
  readonly address: string;
  readonly port: number;
  readonly ledger: AttemptLedger;
}

export interface EchoReport {
  readonly instance: string;
  readonly address: string;
  readonly port: number;
  readonly protocol: string;
  readonly method: string;
  readonly path: string;
  readonly host: string;
  readonly headers: Readonly<Record<string, string[]>>;
  readonly uuid: string | null;
  readonly attempt: number | null;
  readonly failed: boolean;
  readonly bodyLength: number;
  readonly body: string;
}

function json(ex: Exchange, context: EchoContext, status: number, value: unknown, attempt?: number): void {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    [instanceHeader]: context.instance,
  };
  if (attempt !== undefined) headers[attemptHeader] = String(attempt);
  ex.respond(status, headers, `${JSON.stringify(value, null, 2)}\n`);
}

function fail(ex: Exchange, context: EchoContext, status: number, message: string): void {
  json(ex, context, status, { instance: context.instance, error: message });
}

/** Resolves after `ms`, or as soon as the exchange closes. */
function pause(ex: Exchange, ms: number): Promise<void> {
  if (ms <= 0 || ex.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    ex.onClose(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function answerAttempts(ex: Exchange, context: EchoContext, params: URLSearchParams): void {
  const uuid = params.get('uuid');
  if (uuid === null || uuid.length === 0 || uuid.length > 128) {
    fail(ex, context, 400, '/__attempts needs ?uuid= (1-128 characters)');
    return;
  }
  json(ex, context, 200, {
    uuid,
    count: context.ledger.count(uuid),
    attempts: context.ledger.attempts(uuid),
  });
}

async function answerEcho(ex: Exchange, context: EchoContext, url: URL): Promise<void> {
  const parsed = parseEchoQuery(url.searchParams, ex.protocol);
  if (!parsed.ok) {
    fail(ex, context, 400, parsed.message);
    return;
  }
  const { plan } = parsed;
  const body = await ex.readBody(maxBodyBytes);
  if (body === null) {
    fail(ex, context, 413, `request body is larger than ${maxBodyBytes} bytes`);
    return;
  }
  const record: AttemptRecord | null =
    plan.uuid === null
      ? null
      : context.ledger.begin(plan.uuid, {
          instance: context.instance,
          protocol: ex.protocol,
          method: ex.method,
          target: ex.target,
          host: ex.host,
        });
  if (record !== null) ex.onClose(() => finishAttempt(record, 'aborted', null));
  const failure: FailurePlan | null =
    plan.failure !== null && record !== null && failsAttempt(record.attempt, plan.failure.succeedAfter)
      ? plan.failure
      : null;
  if (record !== null) record.failed = failure !== null;

  await pause(ex, plan.delayMs + (failure?.delayRetryMs ?? 0));
  if (ex.closed) return;

  if (failure !== null && failure.mode !== 'status') {
    if (record !== null) finishAttempt(record, failure.mode === 'refuse' ? 'refused' : 'reset', null);
    ex.reset(failure.mode);
    return;
  }
  const status = failure?.responseCode ?? 200;
  const report: EchoReport = {
    instance: context.instance,
    address: context.address,
    port: context.port,
    protocol: ex.protocol,
    method: ex.method,
    path: ex.target,
    host: ex.host,
    headers: ex.headers,
    uuid: plan.uuid,
    attempt: record?.attempt ?? null,
    failed: failure !== null,
    bodyLength: body.length,
    body: body.toString('utf8'),
  };
  if (record !== null) finishAttempt(record, 'response', status);
  json(ex, context, status, report, record?.attempt);
}

/** Answers one exchange; never throws: an unexpected error becomes a 500 naming it. */
export async function handleEcho(ex: Exchange, context: EchoContext): Promise<void> {
  try {
    let url: URL;
    try {
      url = new URL(ex.target, 'http://backend.invalid');
    } catch {
      fail(ex, context, 400, `request target ${JSON.stringify(ex.target.slice(0, 200))} is not a valid path`);
      return;
    }
    if (url.pathname === '/healthz') {
      ex.respond(200, { 'content-type': 'text/plain', [instanceHeader]: context.instance }, 'ok\n');
    } else if (url.pathname === '/__attempts') {
      answerAttempts(ex, context, url.searchParams);
    } else {
      await answerEcho(ex, context, url);
    }
  } catch (error) {
    fail(ex, context, 500, `echo backend error: ${error instanceof Error ? error.message : String(error)}`);
  }
}
