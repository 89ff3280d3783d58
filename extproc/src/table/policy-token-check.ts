// Reads a policy token a person typed (`steadfast serve --policy-token`) back into a Policy,
// so a garbled token is refused at start instead of being served and silently ignored by
// the filter. The format is docs/policy-token.md; a round-trip test keeps this reader equal
// to the one encoder (policy-token.ts). The filter's own decoder stays the one on the
// request path.
import type { GrpcRetryReason, Policy, RetryPolicy, SessionPolicy, TimeoutPolicy } from './policy.js';
import {
  POLICY_TOKEN_MAX_BYTES,
  POLICY_TOKEN_MAX_NUMBER,
  POLICY_TOKEN_VERSION,
  PolicyTokenError,
} from './policy-token.js';

const GRPC_REASONS: readonly GrpcRetryReason[] = [
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
];

const KNOWN = new Set(['id', 'k', 'ra', 'rc', 'rb', 'rg', 'tr', 'tb', 'st', 'sn', 'sp', 'sl', 'sa', 'si']);

function unescape(key: string, value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 0x25) {
      const hex = value.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex))
        throw new PolicyTokenError(`${key}: bad percent escape at "${value.slice(i)}"`);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c <= 0x20 || c >= 0x7f) {
      throw new PolicyTokenError(`${key}: byte 0x${c.toString(16)} must be percent-encoded`);
    } else {
      bytes.push(c);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

function number(key: string, value: string): number {
  if (!/^\d{1,10}$/.test(value) || Number(value) > POLICY_TOKEN_MAX_NUMBER) {
    throw new PolicyTokenError(`${key}=${value}: not an integer in 0-${POLICY_TOKEN_MAX_NUMBER}`);
  }
  return Number(value);
}

function oneOf<T extends string>(key: string, value: string, map: Readonly<Record<string, T>>): T {
  const v = map[value];
  if (v === undefined)
    throw new PolicyTokenError(`${key}=${value}: expected ${Object.keys(map).join(' or ')}`);
  return v;
}

export interface CheckedPolicyToken {
  readonly policy: Policy;
  /** Keys this version does not know (the filter ignores them too): likely a typo. */
  readonly unknownKeys: readonly string[];
}

/** The token's policy, or a PolicyTokenError that says what is wrong. */
export function checkPolicyToken(token: string): CheckedPolicyToken {
  if (Buffer.byteLength(token) > POLICY_TOKEN_MAX_BYTES) {
    throw new PolicyTokenError(`longer than ${POLICY_TOKEN_MAX_BYTES} bytes`);
  }
  const [version, ...parts] = token.split(';');
  if (version !== POLICY_TOKEN_VERSION) {
    throw new PolicyTokenError(`must start with "${POLICY_TOKEN_VERSION};", not "${version ?? ''}"`);
  }
  const fields = new Map<string, string>();
  const unknownKeys: string[] = [];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new PolicyTokenError(`"${part}" is not key=value`);
    const key = part.slice(0, eq);
    if (fields.has(key)) throw new PolicyTokenError(`${key} appears twice`);
    fields.set(key, part.slice(eq + 1));
    if (!KNOWN.has(key)) unknownKeys.push(key);
  }
  const get = (key: string): string | undefined => fields.get(key);
  const id = get('id');
  if (id === undefined || id === '') throw new PolicyTokenError('id= (the rule) is missing');
  const kind = oneOf('k', get('k') ?? 'h', { h: 'http', g: 'grpc' } as const);
  let retry: RetryPolicy | undefined;
  const ra = get('ra');
  if (ra !== undefined) {
    const list = (key: string) => (get(key) ?? '').split(',').filter((s) => s !== '');
    const codes = list('rc').map((c) => number('rc', c));
    for (const c of codes)
      if (c < 100 || c > 599) throw new PolicyTokenError(`rc: ${c} is not an HTTP status`);
    const grpcReasons = list('rg').map((r) => {
      if (!(GRPC_REASONS as readonly string[]).includes(r)) {
        throw new PolicyTokenError(`rg: ${r} is not one of ${GRPC_REASONS.join(', ')}`);
      }
      return r as GrpcRetryReason;
    });
    const rb = get('rb');
    retry = {
      attempts: number('ra', ra),
      codes,
      backoffMs: rb !== undefined ? number('rb', rb) : 0,
      grpcReasons,
    };
  } else {
    for (const k of ['rc', 'rb', 'rg'])
      if (fields.has(k)) throw new PolicyTokenError(`${k} needs ra= (retry attempts)`);
  }
  const tr = get('tr');
  const tb = get('tb');
  const timeouts: TimeoutPolicy | undefined =
    tr !== undefined || tb !== undefined
      ? {
          ...(tr !== undefined ? { requestMs: number('tr', tr) } : {}),
          ...(tb !== undefined ? { backendRequestMs: number('tb', tb) } : {}),
        }
      : undefined;
  let session: SessionPolicy | undefined;
  const st = get('st');
  if (st !== undefined) {
    const name = unescape('sn', get('sn') ?? '');
    if (name === '') throw new PolicyTokenError('sn= (the cookie or header name) is missing');
    const sa = get('sa');
    const si = get('si');
    session = {
      type: oneOf('st', st, { c: 'cookie', h: 'header' } as const),
      name,
      path: unescape('sp', get('sp') ?? '/'),
      lifetime: oneOf('sl', get('sl') ?? 's', { s: 'session', p: 'permanent' } as const),
      ...(sa !== undefined ? { absoluteTimeoutS: number('sa', sa) } : {}),
      ...(si !== undefined ? { idleTimeoutS: number('si', si) } : {}),
    };
  } else {
    for (const k of ['sn', 'sp', 'sl', 'sa', 'si'])
      if (fields.has(k)) throw new PolicyTokenError(`${k} needs st= (session type)`);
  }
  return {
    policy: {
      rule: unescape('id', id),
      kind,
      ...(retry ? { retry } : {}),
      ...(timeouts ? { timeouts } : {}),
      ...(session ? { session } : {}),
    },
    unknownKeys,
  };
}
