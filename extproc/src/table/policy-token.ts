// The policy token: the one encoding of a Policy that reaches the filter, in route
// metadata (gateway mode) or ext_proc dynamic metadata (attach mode). The filter's
// decoder (filter/assembly/policy/token.ts) reads exactly this; docs/policy-token.md
// describes the format. Strings, not numbers: Envoy hands metadata numbers to wasm
// as 8-byte doubles.
import type { Policy } from './policy.js';

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

export class PolicyTokenError extends Error {
  override name = 'PolicyTokenError';
}

/** Percent-encodes every byte outside printable ASCII, and `%`, `;`, `=` and `,`. */
export function escapeTokenValue(value: string): string {
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
