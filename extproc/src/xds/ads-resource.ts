// A resource as the ADS server sends it: encoded once, and kept for later generations while
// its content is the same, with a hash of its encoding (its version on a delta stream).
import { createHash } from 'node:crypto';

/** google.protobuf.Any: the type URL and the encoded message. */
export interface Any {
  readonly type_url: string;
  readonly value: Buffer;
}

export interface Resource {
  readonly name: string;
  readonly any: Any;
  readonly hash: string;
}

export function resource(name: string, any: Any): Resource {
  return { name, any, hash: createHash('sha256').update(any.value).digest('base64url').slice(0, 22) };
}
