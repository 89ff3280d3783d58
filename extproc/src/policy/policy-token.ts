// The policy token: the one encoding of a Policy that reaches the filter, in route
// metadata (gateway mode) or ext_proc dynamic metadata (attach mode). The filter's
// decoder (filter/assembly/policy/token.ts) reads exactly this, and a test holds its
// constants to these; docs/policy-token.md describes the format. Strings, not numbers:
// Envoy hands metadata numbers to wasm as 8-byte doubles. The reader below takes a token a
// person typed (`steadfast serve --policy-token`) back to its Policy, so a garbled one is
// refused at start instead of being ignored by the filter; a round-trip test keeps the two
// equal.
import {
  GRPC_RETRY_REASONS,
  type GrpcRetryReason,
  type Policy,
  type RetryPolicy,
  type SessionPolicy,
  type TimeoutPolicy,
} from './policy.js';

export const POLICY_TOKEN_VERSION = 'sf1';
/**
 * Where the token travels: this metadata namespace and key, in route metadata (gateway mode)
 * or ext_proc dynamic metadata (attach mode, which Envoy must list in
 * `receiving_namespaces.untyped`). The filter reads it through `xds.route_metadata` or the
 * request's dynamic metadata.
 */
export const METADATA_NAMESPACE = 'steadfast';
export const METADATA_POLICY_KEY = 'policy';
/** The filter refuses longer tokens; the encoder never produces one. */
export const POLICY_TOKEN_MAX_BYTES = 4096;
/** Largest millisecond or second value a token carries (fits the filter's i32 parse). */
export const POLICY_TOKEN_MAX_NUMBER = 2_147_483_647;

/** Every key the encoder writes, in the order it writes them. */
export const POLICY_TOKEN_KEYS = [
  'id',
  'k',
  'ra',
  'rc',
  'rb',
  'rg',
  'tr',
  'tb',
  'st',
  'sn',
  'sp',
  'sl',
  'sa',
  'si',
] as const;

export class PolicyTokenError extends Error {
  override name = 'PolicyTokenError';
}

/** Percent-encodes every byte outside printable ASCII, and `%`, `;`, `=` and `,`. */
function escapeTokenValue(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const safe =
      byte > 0x20 && byte < 0x7f && byte !== 0x25 && byte !== 0x3b && byte !== 0x3d && byte !== 0x2c;
    out += safe ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function num(field: string, value: number): string {
  if (!Number.isInteger(value) || value < 0 || value > POLICY_TOKEN_MAX_NUMBER) {
    throw new PolicyTokenError(`${field}: ${value} is not an integer in 0-${POLICY_TOKEN_MAX_NUMBER}`);
  }
  return String(value);
}

/** Encodes a policy as `sf1;key=value;...`. Fields appear in a fixed order. */
export function encodePolicyToken(policy: Policy): string {
  const fields: string[] = [POLICY_TOKEN_VERSION, `id=${escapeTokenValue(policy.rule)}`];
  fields.push(`k=${policy.kind === 'grpc' ? 'g' : 'h'}`);
  const { retry, timeouts, session } = policy;
  if (retry) {
    fields.push(`ra=${num('retry.attempts', retry.attempts)}`);
    if (retry.codes.length > 0) {
      fields.push(`rc=${retry.codes.map((c) => num('retry.codes', c)).join(',')}`);
    }
    if (retry.backoffMs > 0) fields.push(`rb=${num('retry.backoff', retry.backoffMs)}`);
    if (retry.grpcReasons.length > 0) fields.push(`rg=${retry.grpcReasons.join(',')}`);
  }
  if (timeouts?.requestMs !== undefined) fields.push(`tr=${num('timeouts.request', timeouts.requestMs)}`);
  if (timeouts?.backendRequestMs !== undefined) {
    fields.push(`tb=${num('timeouts.backendRequest', timeouts.backendRequestMs)}`);
  }
  if (session) {
    fields.push(`st=${session.type === 'header' ? 'h' : 'c'}`);
    fields.push(`sn=${escapeTokenValue(session.name)}`);
    fields.push(`sp=${escapeTokenValue(session.path)}`);
    fields.push(`sl=${session.lifetime === 'permanent' ? 'p' : 's'}`);
    if (session.absoluteTimeoutS !== undefined) {
      fields.push(`sa=${num('session.absoluteTimeout', session.absoluteTimeoutS)}`);
    }
    if (session.idleTimeoutS !== undefined) {
      fields.push(`si=${num('session.idleTimeout', session.idleTimeoutS)}`);
    }
  }
  const token = fields.join(';');
  if (Buffer.byteLength(token) > POLICY_TOKEN_MAX_BYTES) {
    throw new PolicyTokenError(`policy token for ${policy.rule} exceeds ${POLICY_TOKEN_MAX_BYTES} bytes`);
  }
  return token;
}

export interface CheckedPolicyToken {
  readonly policy: Policy;
  /** Keys this version does not know (the filter ignores them too): likely a typo. */
  readonly unknownKeys: readonly string[];
}

/** The token's policy, or a PolicyTokenError that says what is wrong. */
export function checkPolicyToken(token: string): CheckedPolicyToken {
  const { fields, unknownKeys } = splitFields(token);
  const id = fields.get('id');
  if (id === undefined || id === '') throw new PolicyTokenError('id= (the rule) is missing');
  const kind = oneOf('k', fields.get('k') ?? 'h', { h: 'http', g: 'grpc' } as const);
  const retry = retryOf(fields);
  const timeouts = timeoutsOf(fields);
  const session = sessionOf(fields);
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

type Fields = ReadonlyMap<string, string>;

/** The token's `key=value` fields after its version, each key once. */
function splitFields(token: string): { fields: Fields; unknownKeys: string[] } {
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
    if (!(POLICY_TOKEN_KEYS as readonly string[]).includes(key)) unknownKeys.push(key);
  }
  return { fields, unknownKeys };
}

function retryOf(fields: Fields): RetryPolicy | undefined {
  const ra = fields.get('ra');
  if (ra === undefined) {
    requireAbsent(fields, ['rc', 'rb', 'rg'], 'ra= (retry attempts)');
    return undefined;
  }
  const list = (key: string) => (fields.get(key) ?? '').split(',').filter((s) => s !== '');
  const codes = list('rc').map((c) => number('rc', c));
  for (const c of codes) if (c < 100 || c > 599) throw new PolicyTokenError(`rc: ${c} is not an HTTP status`);
  const grpcReasons = list('rg').map((r) => {
    if (!(GRPC_RETRY_REASONS as readonly string[]).includes(r)) {
      throw new PolicyTokenError(`rg: ${r} is not one of ${GRPC_RETRY_REASONS.join(', ')}`);
    }
    return r as GrpcRetryReason;
  });
  const rb = fields.get('rb');
  return {
    attempts: number('ra', ra),
    codes,
    backoffMs: rb !== undefined ? number('rb', rb) : 0,
    grpcReasons,
  };
}

function timeoutsOf(fields: Fields): TimeoutPolicy | undefined {
  const tr = fields.get('tr');
  const tb = fields.get('tb');
  if (tr === undefined && tb === undefined) return undefined;
  return {
    ...(tr !== undefined ? { requestMs: number('tr', tr) } : {}),
    ...(tb !== undefined ? { backendRequestMs: number('tb', tb) } : {}),
  };
}

function sessionOf(fields: Fields): SessionPolicy | undefined {
  const st = fields.get('st');
  if (st === undefined) {
    requireAbsent(fields, ['sn', 'sp', 'sl', 'sa', 'si'], 'st= (session type)');
    return undefined;
  }
  const name = unescape('sn', fields.get('sn') ?? '');
  if (name === '') throw new PolicyTokenError('sn= (the cookie or header name) is missing');
  const sa = fields.get('sa');
  const si = fields.get('si');
  return {
    type: oneOf('st', st, { c: 'cookie', h: 'header' } as const),
    name,
    path: unescape('sp', fields.get('sp') ?? '/'),
    lifetime: oneOf('sl', fields.get('sl') ?? 's', { s: 'session', p: 'permanent' } as const),
    ...(sa !== undefined ? { absoluteTimeoutS: number('sa', sa) } : {}),
    ...(si !== undefined ? { idleTimeoutS: number('si', si) } : {}),
  };
}

/** Keys that mean something only beside another one. */
function requireAbsent(fields: Fields, keys: readonly string[], needs: string): void {
  for (const k of keys) if (fields.has(k)) throw new PolicyTokenError(`${k} needs ${needs}`);
}

/** Undoes the encoder's percent-escaping; a raw byte it never writes is refused. */
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
