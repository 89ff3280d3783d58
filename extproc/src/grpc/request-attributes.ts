// What the resolver sees of a request: taken from ext_proc's request headers.
import type { HttpHeaders } from './ext-proc-messages.js';

/** Bounds on client input: a header list longer than this is cut, values are capped. */
export const MAX_HEADERS = 256;
export const MAX_HEADER_VALUE_BYTES = 16 * 1024;

export interface RequestAttributes {
  readonly method: string;
  readonly authority: string;
  /** The path including any query string, as `:path` carries it. */
  readonly path: string;
  /**
   * Lower-case names; repeated headers joined with `,` as HTTP allows. A null-prototype
   * record, so a header named `constructor` or `__proto__` is only ever a header.
   */
  readonly headers: Readonly<Record<string, string>>;
}

function valueOf(h: { value?: string; raw_value?: Buffer | Uint8Array }): string {
  if (h.raw_value && h.raw_value.length > 0) {
    const raw =
      h.raw_value.length > MAX_HEADER_VALUE_BYTES
        ? h.raw_value.subarray(0, MAX_HEADER_VALUE_BYTES)
        : h.raw_value;
    return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('latin1');
  }
  const v = h.value ?? '';
  return v.length > MAX_HEADER_VALUE_BYTES ? v.slice(0, MAX_HEADER_VALUE_BYTES) : v;
}

/** Total: any shape of input gives attributes, missing pseudo-headers become empty. */
export function requestAttributes(msg: HttpHeaders | undefined): RequestAttributes {
  const headers = Object.create(null) as Record<string, string>;
  const list = Array.isArray(msg?.headers?.headers) ? msg.headers.headers : [];
  for (const h of list.slice(0, MAX_HEADERS)) {
    if (!h || typeof h.key !== 'string' || h.key.length === 0) continue;
    const key = h.key.toLowerCase();
    const value = valueOf(h);
    const seen = headers[key];
    headers[key] = seen === undefined ? value : `${seen},${value}`;
  }
  return {
    method: headers[':method'] ?? '',
    authority: headers[':authority'] ?? headers['host'] ?? '',
    path: headers[':path'] ?? '',
    headers,
  };
}
