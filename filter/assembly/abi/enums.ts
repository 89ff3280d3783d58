// Constants of the proxy-wasm ABI 0.2.1, as the host and the module exchange them.

export enum WasmResult {
  Ok = 0,
  NotFound = 1,
  BadArgument = 2,
  SerializationFailure = 3,
  ParseFailure = 4,
  BadExpression = 5,
  InvalidMemoryAccess = 6,
  Empty = 7,
  CasMismatch = 8,
  ResultMismatch = 9,
  InternalFailure = 10,
  BrokenConnection = 11,
  Unimplemented = 12,
}

export enum LogLevel {
  Trace = 0,
  Debug = 1,
  Info = 2,
  Warn = 3,
  Error = 4,
  Critical = 5,
}

export enum HeaderMapType {
  RequestHeaders = 0,
  RequestTrailers = 1,
  ResponseHeaders = 2,
  ResponseTrailers = 3,
}

export enum BufferType {
  HttpRequestBody = 0,
  HttpResponseBody = 1,
  VmConfiguration = 6,
  PluginConfiguration = 7,
}

export enum MetricType {
  Counter = 0,
  Gauge = 1,
  Histogram = 2,
}

/** What a header callback tells the host to do next. */
export enum FilterHeadersStatus {
  Continue = 0,
  StopIteration = 1,
  /** Stops this and every later callback (body too, buffered) until the stream is resumed. */
  StopAllIterationAndBuffer = 3,
}

export enum StreamType {
  HttpRequest = 0,
  HttpResponse = 1,
}
