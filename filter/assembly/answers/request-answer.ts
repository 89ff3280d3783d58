// The answer cache at work on one request (attach mode, docs/attach.md): the lookup
// instance before ext_proc finds a known answer and hands it on as filter state, which
// ext_proc's matcher skips on and the applying instance after it reads; the applying
// instance stores each fresh answer that carries a scope.
import { HeaderMapType } from '../abi/enums';
import {
  getHeader,
  getNamedHeaderValues,
  getProperty,
  getPropertyString,
  nowNanos,
  setProperty,
} from '../abi/host';
import { Utf8 } from '../abi/memory';
import { H_AUTHORITY, H_METHOD, H_PATH } from '../headers';
import {
  P_CACHED_ANSWER,
  P_DESTINATION_PORT,
  P_GATEWAY_PORT,
  P_METADATA_POLICY,
  P_METADATA_SCOPE,
} from '../properties';
import { ANSWERS, NO_POLICY } from './answer-cache';
import {
  MAX_HEADER_PAIRS,
  MAX_HEADER_VALUE_BYTES,
  baseKey,
  fullKey,
  headersKey,
  listenerKey,
} from './answer-key';
import { MAX_SCOPE_HEADERS, parseAnswerScope } from './answer-scope';

/** The filter state name (Envoy prefixes it: `wasm.steadfast_answer`) the lookup sets. */
const N_CACHED_ANSWER = new Utf8('steadfast_answer');

class RequestKey {
  constructor(
    public readonly base: string,
    public readonly path: string,
  ) {}
}

function requestKey(): RequestKey | null {
  const authority = getHeader(HeaderMapType.RequestHeaders, H_AUTHORITY);
  if (authority == null) return null;
  const path = getHeader(HeaderMapType.RequestHeaders, H_PATH);
  const base = baseKey(authority, getHeader(HeaderMapType.RequestHeaders, H_METHOD), path);
  return base == null || path == null ? null : new RequestKey(base, path);
}

/**
 * The request's listener as the resolver tells it: the listener's metadata
 * `steadfast.gateway_port` (absent, or its raw value) and the connection's local port —
 * the two attributes the snippet's ext_proc sends. Null when the port cannot be read.
 */
function requestListener(): string | null {
  const port = getProperty(P_DESTINATION_PORT);
  // Envoy hands an integer property over as its 8 bytes, little-endian.
  if (port == null || port.byteLength != 8) return null;
  return listenerKey(getProperty(P_GATEWAY_PORT), load<u64>(changetype<usize>(port)));
}

/** Reused for each request's named header values (a scope names at most MAX_SCOPE_HEADERS). */
const HEADER_VALUES: string[][] = [];
for (let i = 0; i < MAX_SCOPE_HEADERS; i++) HEADER_VALUES.push([]);

/**
 * Every value of each named request header, keyed (answer-key.ts headersKey), from one read
 * of the header map; null when the request has too many headers or too long or odd values.
 */
function requestHeaders(names: string[]): string | null {
  if (names.length > MAX_SCOPE_HEADERS) return null;
  const pairs = getNamedHeaderValues(
    HeaderMapType.RequestHeaders,
    names,
    HEADER_VALUES,
    MAX_HEADER_PAIRS,
    MAX_HEADER_VALUE_BYTES,
  );
  if (pairs < 0) return null;
  return headersKey(HEADER_VALUES, names.length);
}

/** The key with what the marker (or scope) adds; null when the listener or headers cannot be keyed. */
function longerKey(key: RequestKey, query: bool, listener: bool, headers: string[] | null): string | null {
  let l: string | null = null;
  if (listener) {
    l = requestListener();
    if (l == null) return null;
  }
  let h: string | null = null;
  if (headers != null) {
    h = requestHeaders(headers);
    if (h == null) return null;
  }
  return fullKey(key.base, key.path, query, l, h);
}

/** Before ext_proc: true when the answer was found and handed on (ext_proc is skipped). */
export function lookUpAnswer(): bool {
  if (ANSWERS.size == 0) return false;
  const key = requestKey();
  if (key == null) return false;
  const now = nowNanos();
  let e = ANSWERS.find(key.base, now);
  if (e != null && e.marker) {
    const full = longerKey(key, e.byQuery, e.byListener, e.byHeaders);
    e = full != null ? ANSWERS.find(full, now) : null;
  }
  if (e == null || ANSWERS.claimRefresh(e, now)) return false;
  return setProperty(N_CACHED_ANSWER, e.token);
}

/** What the applying instance found: the token (null: no policy) and where it came from. */
export class FoundAnswer {
  constructor(
    public readonly token: string | null,
    public readonly cached: bool,
    public readonly stored: bool,
  ) {}
}

/**
 * After ext_proc: the answer the lookup handed on, else ext_proc's (stored when it says
 * for which requests it holds). Call before the request's headers are changed.
 */
export function takeAnswer(ttlMs: u32): FoundAnswer {
  const cached = getPropertyString(P_CACHED_ANSWER);
  if (cached != null) return new FoundAnswer(cached == NO_POLICY ? null : cached, true, false);
  const token = getPropertyString(P_METADATA_POLICY);
  const scopeText = getPropertyString(P_METADATA_SCOPE);
  if (scopeText == null) return new FoundAnswer(token, false, false);
  const scope = parseAnswerScope(scopeText);
  // The lookup's value must never be mistaken for a token: such a token is not stored.
  if (scope == null || (token != null && token == NO_POLICY)) return new FoundAnswer(token, false, false);
  const key = requestKey();
  if (key == null) return new FoundAnswer(token, false, false);
  const longer = scope.query || scope.listener || scope.headers != null;
  const full = longer ? longerKey(key, scope.query, scope.listener, scope.headers) : null;
  if (full == null && longer) return new FoundAnswer(token, false, false);
  ANSWERS.store(scope, key.base, full, token != null ? token : NO_POLICY, nowNanos(), ttlMs);
  return new FoundAnswer(token, false, true);
}
