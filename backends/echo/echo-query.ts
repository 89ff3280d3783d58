// The query parameters that turn the echo backend into a slow or flaky one. Parsed strictly: a value the
// backend cannot honour is a 400 naming the parameter, never a guess.
import { parseGoDuration } from '../go-duration.js';
import { maxSucceedAfter } from '../retry-simulation.js';
import type { HttpProtocol } from './exchange.js';

/** How a failing attempt fails: with a status code, a transport reset, or (HTTP/2) a refused stream. */
export type FailureMode = 'status' | 'reset' | 'refuse';

export interface FailurePlan {
  readonly succeedAfter: number;
  readonly mode: FailureMode;
  /** The status a failing attempt answers with when `mode` is `status`. */
  readonly responseCode: number;
  /** Extra wait before a failing attempt fails. */
  readonly delayRetryMs: number;
}

export interface EchoPlan {
  readonly uuid: string | null;
  /** Wait before every answer, failing or not. */
  readonly delayMs: number;
  readonly failure: FailurePlan | null;
}

export type EchoPlanResult = { ok: true; plan: EchoPlan } | { ok: false; message: string };

const known = ['uuid', 'succeedAfter', 'responseCode', 'delayRetry', 'mode', 'delay'] as const;
const uuidPattern = /^[A-Za-z0-9._~:-]{1,128}$/;

class QueryError extends Error {}

function single(params: URLSearchParams, name: string): string | null {
  const values = params.getAll(name);
  if (values.length > 1) throw new QueryError(`${name} is given ${values.length} times; give it once`);
  return values[0] ?? null;
}

function integer(name: string, text: string, min: number, max: number): number {
  if (!/^[0-9]{1,4}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new QueryError(`${name}=${JSON.stringify(text)} is not an integer in ${min}-${max}`);
  }
  return Number(text);
}

function duration(name: string, text: string): number {
  const parsed = parseGoDuration(text);
  if (!parsed.ok) throw new QueryError(`${name}: ${parsed.message}`);
  return parsed.ms;
}

function needs(params: Record<string, string | null>, name: string, required: string): void {
  if (params[name] !== null && params[required] === null) {
    throw new QueryError(`${name} needs ${required}`);
  }
}

function failureMode(text: string | null, responseCode: string | null, protocol: HttpProtocol): FailureMode {
  // Like the conformance backend: without a responseCode a failing attempt resets the connection.
  if (text === null) return responseCode === null ? 'reset' : 'status';
  if (text !== 'status' && text !== 'reset' && text !== 'refuse') {
    throw new QueryError(`mode=${JSON.stringify(text)} is not one of status, reset, refuse`);
  }
  if (text !== 'status' && responseCode !== null) {
    throw new QueryError(`responseCode cannot be combined with mode=${text}`);
  }
  if (text === 'refuse' && protocol !== 'HTTP/2') {
    throw new QueryError('mode=refuse needs HTTP/2: only an HTTP/2 stream can be refused');
  }
  return text;
}

export function parseEchoQuery(params: URLSearchParams, protocol: HttpProtocol): EchoPlanResult {
  try {
    const raw: Record<string, string | null> = {};
    for (const name of known) raw[name] = single(params, name);
    const uuid = raw['uuid'] ?? null;
    if (uuid !== null && !uuidPattern.test(uuid)) {
      throw new QueryError('uuid must be 1-128 characters from A-Z a-z 0-9 . _ ~ : -');
    }
    needs(raw, 'succeedAfter', 'uuid');
    for (const name of ['responseCode', 'delayRetry', 'mode']) needs(raw, name, 'succeedAfter');
    const delayMs = raw['delay'] == null ? 0 : duration('delay', raw['delay']);
    const succeedAfter = raw['succeedAfter'] ?? null;
    if (succeedAfter === null) return { ok: true, plan: { uuid, delayMs, failure: null } };
    const responseCode = raw['responseCode'] ?? null;
    const maxCode = protocol === 'HTTP/2' ? 599 : 999;
    const failure: FailurePlan = {
      succeedAfter: integer('succeedAfter', succeedAfter, 0, maxSucceedAfter),
      mode: failureMode(raw['mode'] ?? null, responseCode, protocol),
      responseCode: responseCode === null ? 500 : integer('responseCode', responseCode, 200, maxCode),
      delayRetryMs: raw['delayRetry'] == null ? 0 : duration('delayRetry', raw['delayRetry']),
    };
    return { ok: true, plan: { uuid, delayMs, failure } };
  } catch (error) {
    if (error instanceof QueryError) return { ok: false, message: error.message };
    throw error;
  }
}
