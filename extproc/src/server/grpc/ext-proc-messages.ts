// The slice of Envoy's ext_proc messages the service reads, as proto-loader presents them
// (keepCase): the shape requestAttributes() reads. The service itself reads and writes the
// wire format with ext-proc-codec.ts.

export interface HeaderValue {
  key?: string;
  value?: string;
  raw_value?: Buffer | Uint8Array;
}

export interface HttpHeaders {
  headers?: { headers?: HeaderValue[] };
  end_of_stream?: boolean;
}

/** A google.protobuf.Value, for the kinds an attribute takes. */
export interface AttributeValue {
  numberValue?: number;
  stringValue?: string;
}

/** ProcessingRequest.attributes: by ext_proc filter name, the attribute values by attribute name. */
export type ProcessingAttributes = Record<string, { fields?: Record<string, AttributeValue> } | undefined>;

/** The phase a ProcessingRequest carries: the name of its `request` oneof field. */
export type Phase =
  | 'request_headers'
  | 'response_headers'
  | 'request_body'
  | 'response_body'
  | 'request_trailers'
  | 'response_trailers';
