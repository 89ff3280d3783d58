import { Utf8 } from '../abi/memory';
import { RouterValues } from './router-values';

// Reads the policy token written by extproc/src/policy/policy-token.ts (the one
// encoder; format in docs/policy-token.md). Total: anything malformed is null.

export const POLICY_TOKEN_MAX_BYTES = 4096;
const VERSION = 'sf1';

const NO_ROUTER_VALUES = new RouterValues(false, 0, false, 0, -1, -1);

/** One rule's policy, decoded. Unset numbers are -1. */
export class Policy {
  rule: string = '';
  grpc: bool = false;
  hasRetry: bool = false;
  /** Retries after the first try. */
  attempts: i32 = 0;
  /** Retriable status codes as Envoy's header wants them, e.g. `500,503`; empty for none. */
  codes: string = '';
  backoffMs: i32 = 0;
  /** GRPCRoute retry reasons as `x-envoy-retry-grpc-on` wants them; empty for none. */
  grpcReasons: string = '';
  requestMs: i32 = -1;
  backendRequestMs: i32 = -1;
  hasSession: bool = false;
  sessionIsHeader: bool = false;
  sessionName: string = '';
  sessionPath: string = '/';
  permanent: bool = false;
  absoluteTimeoutS: i32 = -1;
  idleTimeoutS: i32 = -1;
  private nameUtf8: Utf8 | null = null;
  /** The router header values, built once at decode. */
  router: RouterValues = NO_ROUTER_VALUES;

  /** The session header name, encoded once per cached policy rather than per request. */
  sessionNameUtf8(): Utf8 {
    let n = this.nameUtf8;
    if (n == null) {
      n = new Utf8(this.sessionName);
      this.nameUtf8 = n;
    }
    return n;
  }
}

/** An RFC 7230 token: what both a cookie name and a header name must be. */
function isToken(s: string): bool {
  if (s.length == 0 || s.length > 256) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const alnum = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    if (alnum) continue;
    // ! # $ % & ' * + - . ^ _ ` | ~
    if (
      c == 0x21 ||
      c == 0x23 ||
      c == 0x24 ||
      c == 0x25 ||
      c == 0x26 ||
      c == 0x27 ||
      c == 0x2a ||
      c == 0x2b ||
      c == 0x2d ||
      c == 0x2e ||
      c == 0x5e ||
      c == 0x5f ||
      c == 0x60 ||
      c == 0x7c ||
      c == 0x7e
    ) {
      continue;
    }
    return false;
  }
  return true;
}

/** A cookie Path attribute value: starts with `/`, printable ASCII, no `;` (RFC 6265 §4.1.1). */
function isCookiePath(s: string): bool {
  if (s.length == 0 || s.length > 1024 || s.charCodeAt(0) != 0x2f) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f || c == 0x3b) return false;
  }
  return true;
}

function isDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x39;
}

/** A decimal in 0..i32.MAX over s[from, to), or -1. */
function parseNumber(s: string, from: i32, to: i32): i32 {
  const n = to - from;
  if (n < 1 || n > 10) return -1;
  let v: i64 = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (!isDigit(c)) return -1;
    v = v * 10 + (c - 0x30);
  }
  return v > i32.MAX_VALUE ? -1 : <i32>v;
}

/** Checks a comma list of status codes in 100..599; returns it unchanged or null. */
function parseCodes(s: string, from: i32, to: i32): string | null {
  if (from >= to) return null;
  let start = from;
  for (let i = from; i <= to; i++) {
    if (i == to || s.charCodeAt(i) == 0x2c) {
      const code = parseNumber(s, start, i);
      if (code < 100 || code > 599) return null;
      start = i + 1;
    }
  }
  return s.substring(from, to);
}

function isGrpcReason(s: string): bool {
  return (
    s == 'cancelled' ||
    s == 'deadline-exceeded' ||
    s == 'internal' ||
    s == 'resource-exhausted' ||
    s == 'unavailable'
  );
}

function parseReasons(s: string, from: i32, to: i32): string | null {
  if (from >= to) return null;
  let start = from;
  for (let i = from; i <= to; i++) {
    if (i == to || s.charCodeAt(i) == 0x2c) {
      if (!isGrpcReason(s.substring(start, i))) return null;
      start = i + 1;
    }
  }
  return s.substring(from, to);
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}

/** Undoes the encoder's percent-escaping; null on a bad escape or a raw byte it never writes. */
function unescape(s: string, from: i32, to: i32): string | null {
  if (from >= to) return null;
  let plain = true;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return null;
    if (c == 0x25) plain = false;
  }
  if (plain) return s.substring(from, to);
  const bytes = new Uint8Array(to - from);
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c != 0x25) {
      bytes[n++] = <u8>c;
      continue;
    }
    if (i + 2 >= to) return null;
    const hi = hexValue(s.charCodeAt(i + 1));
    const lo = hexValue(s.charCodeAt(i + 2));
    if (hi < 0 || lo < 0) return null;
    bytes[n++] = <u8>((hi << 4) | lo);
    i += 2;
  }
  return String.UTF8.decodeUnsafe(bytes.dataStart, <usize>n);
}

/** Applies one `key=value` field; false if the value is malformed. Unknown keys are ignored. */
function applyField(p: Policy, s: string, from: i32, eq: i32, to: i32): bool {
  const key = s.substring(from, eq);
  const v = eq + 1;
  if (key == 'id') {
    const rule = unescape(s, v, to);
    if (rule == null) return false;
    p.rule = rule;
  } else if (key == 'k') {
    const kind = s.substring(v, to);
    if (kind != 'h' && kind != 'g') return false;
    p.grpc = kind == 'g';
  } else if (key == 'ra') {
    p.attempts = parseNumber(s, v, to);
    p.hasRetry = true;
    if (p.attempts < 0) return false;
  } else if (key == 'rc') {
    const codes = parseCodes(s, v, to);
    if (codes == null) return false;
    p.codes = codes;
  } else if (key == 'rb') {
    p.backoffMs = parseNumber(s, v, to);
    if (p.backoffMs < 0) return false;
  } else if (key == 'rg') {
    const reasons = parseReasons(s, v, to);
    if (reasons == null) return false;
    p.grpcReasons = reasons;
  } else if (key == 'tr') {
    p.requestMs = parseNumber(s, v, to);
    if (p.requestMs < 0) return false;
  } else if (key == 'tb') {
    p.backendRequestMs = parseNumber(s, v, to);
    if (p.backendRequestMs < 0) return false;
  } else if (key == 'st') {
    const t = s.substring(v, to);
    if (t != 'c' && t != 'h') return false;
    p.hasSession = true;
    p.sessionIsHeader = t == 'h';
  } else if (key == 'sn') {
    const name = unescape(s, v, to);
    if (name == null) return false;
    p.sessionName = name;
  } else if (key == 'sp') {
    const path = unescape(s, v, to);
    if (path == null) return false;
    p.sessionPath = path;
  } else if (key == 'sl') {
    const l = s.substring(v, to);
    if (l != 's' && l != 'p') return false;
    p.permanent = l == 'p';
  } else if (key == 'sa') {
    p.absoluteTimeoutS = parseNumber(s, v, to);
    if (p.absoluteTimeoutS < 0) return false;
  } else if (key == 'si') {
    p.idleTimeoutS = parseNumber(s, v, to);
    if (p.idleTimeoutS < 0) return false;
  }
  return true;
}

/** Decodes a policy token; null when it is oversized, of another version or malformed. */
export function decodePolicy(token: string): Policy | null {
  const len = token.length;
  if (len == 0 || len > POLICY_TOKEN_MAX_BYTES) return null;
  const firstEnd = token.indexOf(';');
  const versionEnd = firstEnd < 0 ? len : firstEnd;
  if (token.substring(0, versionEnd) != VERSION) return null;
  const p = new Policy();
  let start = versionEnd + 1;
  while (start < len) {
    let end = token.indexOf(';', start);
    if (end < 0) end = len;
    const eq = token.indexOf('=', start);
    if (eq <= start || eq >= end) return null;
    if (!applyField(p, token, start, eq, end)) return null;
    start = end + 1;
  }
  if (p.hasSession && !isToken(p.sessionName)) return null;
  if (p.hasSession && !isCookiePath(p.sessionPath)) return null;
  p.router = new RouterValues(
    p.hasRetry,
    p.attempts,
    p.codes.length > 0,
    p.backoffMs,
    p.requestMs,
    p.backendRequestMs,
  );
  return p;
}

/**
 * Decoded policies by token text. Tokens repeat (one per rule), so each is parsed
 * once per VM; the cache is bounded and simply emptied when full.
 */
export class PolicyCache {
  private readonly byToken: Map<string, Policy> = new Map();
  private readonly invalid: Map<string, bool> = new Map();
  constructor(private readonly capacity: i32) {}

  /** The decoded policy, or null for a malformed token (remembered too). */
  get(token: string): Policy | null {
    if (this.byToken.has(token)) return this.byToken.get(token);
    if (this.invalid.has(token)) return null;
    const p = decodePolicy(token);
    if (this.byToken.size + this.invalid.size >= this.capacity) {
      this.byToken.clear();
      this.invalid.clear();
    }
    if (p == null) this.invalid.set(token, true);
    else this.byToken.set(token, p);
    return p;
  }
}
