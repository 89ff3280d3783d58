// The slice of Envoy's ext_proc messages the service reads and writes, as proto-loader
// presents them (keepCase; google.protobuf.Value stays camelCase: DESIGN.md fact 11).

export interface HeaderValue {
  key?: string;
  value?: string;
  raw_value?: Buffer | Uint8Array;
}

export interface HttpHeaders {
  headers?: { headers?: HeaderValue[] };
  end_of_stream?: boolean;
}

export interface ProcessingRequest {
  request?: string;
  request_headers?: HttpHeaders;
  response_headers?: HttpHeaders;
  request_body?: unknown;
  response_body?: unknown;
  request_trailers?: unknown;
  response_trailers?: unknown;
}

export interface StructValue {
  fields: Record<string, { stringValue?: string; structValue?: StructValue }>;
}

export interface ProcessingResponse {
  request_headers?: { response?: Record<string, never> };
  response_headers?: { response?: Record<string, never> };
  request_body?: { response?: Record<string, never> };
  response_body?: { response?: Record<string, never> };
  request_trailers?: Record<string, never>;
  response_trailers?: Record<string, never>;
  dynamic_metadata?: StructValue;
}

/** The phase a ProcessingRequest carries, whichever oneof field proto-loader filled in. */
export type Phase =
  | 'request_headers'
  | 'response_headers'
  | 'request_body'
  | 'response_body'
  | 'request_trailers'
  | 'response_trailers';

const PHASES: readonly Phase[] = [
  'request_headers',
  'response_headers',
  'request_body',
  'response_body',
  'request_trailers',
  'response_trailers',
];

export function phaseOf(req: ProcessingRequest): Phase | undefined {
  if (typeof req.request === 'string' && (PHASES as readonly string[]).includes(req.request)) {
    return req.request as Phase;
  }
  return PHASES.find((p) => req[p] !== undefined);
}

/** A "carry on, change nothing" answer for a phase. */
export function continueResponse(phase: Phase): ProcessingResponse {
  switch (phase) {
    case 'request_trailers':
    case 'response_trailers':
      return { [phase]: {} };
    default:
      return { [phase]: { response: {} } };
  }
}
