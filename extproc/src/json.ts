// A JSON object as the Envoy generators build it: plain data that serializes as written.
export type Json = Record<string, unknown>;
