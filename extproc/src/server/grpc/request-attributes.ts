// What the resolver sees of a request: taken from ext_proc's request headers.
import type { HttpHeaders, ProcessingAttributes } from './ext-proc-messages.js';
import type { RequestListener } from '../../resolve/request.js';
import { ATTRIBUTE_DESTINATION_PORT, ATTRIBUTE_GATEWAY_PORT } from '../../ir/listener-ports.js';

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
  /** What Envoy's `request_attributes` say of the listener; absent when they say nothing. */
  readonly listener?: RequestListener;
}

/** Longest text of an invalid `gateway_port` kept for the report. */
const MAX_REPORTED_ATTRIBUTE = 64;

/** A TCP port from an attribute's number or text ("80"); undefined for anything else. */
function portOf(value: number | string | undefined): number | undefined {
  const n = typeof value === 'string' ? (/^\d{1,5}$/.test(value) ? Number(value) : NaN) : value;
  return n !== undefined && Number.isInteger(n) && n >= 1 && n <= 65535 ? n : undefined;
}

/**
 * The listener from the attribute values Envoy sent (by attribute name; any ext_proc filter
 * name): undefined when neither attribute came.
 */
export function listenerFrom(
  gatewayPort: number | string | undefined,
  destinationPort: number | string | undefined,
): RequestListener | undefined {
  if (gatewayPort === undefined && destinationPort === undefined) return undefined;
  const declared = portOf(gatewayPort);
  const local = portOf(destinationPort);
  return {
    ...(declared !== undefined ? { gatewayPort: declared } : {}),
    ...(gatewayPort !== undefined && declared === undefined
      ? { invalidGatewayPort: String(gatewayPort).slice(0, MAX_REPORTED_ATTRIBUTE) }
      : {}),
    ...(local !== undefined ? { destinationPort: local } : {}),
  };
}

/** The listener from ProcessingRequest.attributes as proto-loader gives them. */
export function requestListener(attributes: ProcessingAttributes | undefined): RequestListener | undefined {
  let gatewayPort: number | string | undefined;
  let destinationPort: number | string | undefined;
  for (const struct of Object.values(attributes ?? {})) {
    const fields = struct?.fields ?? {};
    const read = (name: string): number | string | undefined => {
      const v = Object.hasOwn(fields, name) ? fields[name] : undefined;
      return v?.stringValue ?? v?.numberValue;
    };
    gatewayPort = read(ATTRIBUTE_GATEWAY_PORT) ?? gatewayPort;
    destinationPort = read(ATTRIBUTE_DESTINATION_PORT) ?? destinationPort;
  }
  return listenerFrom(gatewayPort, destinationPort);
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
