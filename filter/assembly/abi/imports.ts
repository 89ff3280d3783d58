// The host functions of proxy-wasm ABI 0.2.1 that steadfast imports. Every import
// here must be one Envoy provides: the emulator in tests/emulator refuses others.
// The declarations look alike and stay so: AssemblyScript takes a wasm import only as one
// `@external` declaration per function, with its own name and signature, and a duplicate
// scan's same-shape rows between them are that rule, not repeated logic.

// @ts-ignore: decorator
@external("env", "proxy_log")
export declare function proxy_log(level: i32, messagePtr: usize, messageSize: usize): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_log_level")
export declare function proxy_get_log_level(returnLevel: usize): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_current_time_nanoseconds")
export declare function proxy_get_current_time_nanoseconds(returnTime: usize): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_buffer_bytes")
export declare function proxy_get_buffer_bytes(
  bufferType: i32,
  start: i32,
  maxSize: i32,
  returnData: usize,
  returnSize: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_header_map_value")
export declare function proxy_get_header_map_value(
  mapType: i32,
  keyPtr: usize,
  keySize: usize,
  returnData: usize,
  returnSize: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_header_map_pairs")
export declare function proxy_get_header_map_pairs(mapType: i32, returnData: usize, returnSize: usize): i32;

// @ts-ignore: decorator
@external("env", "proxy_add_header_map_value")
export declare function proxy_add_header_map_value(
  mapType: i32,
  keyPtr: usize,
  keySize: usize,
  valuePtr: usize,
  valueSize: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_replace_header_map_value")
export declare function proxy_replace_header_map_value(
  mapType: i32,
  keyPtr: usize,
  keySize: usize,
  valuePtr: usize,
  valueSize: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_remove_header_map_value")
export declare function proxy_remove_header_map_value(mapType: i32, keyPtr: usize, keySize: usize): i32;

// @ts-ignore: decorator
@external("env", "proxy_get_property")
export declare function proxy_get_property(
  pathPtr: usize,
  pathSize: usize,
  returnData: usize,
  returnSize: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_send_local_response")
export declare function proxy_send_local_response(
  statusCode: i32,
  detailsPtr: usize,
  detailsSize: usize,
  bodyPtr: usize,
  bodySize: usize,
  headersPtr: usize,
  headersSize: usize,
  grpcStatus: i32,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_define_metric")
export declare function proxy_define_metric(
  metricType: i32,
  namePtr: usize,
  nameSize: usize,
  returnId: usize,
): i32;

// @ts-ignore: decorator
@external("env", "proxy_increment_metric")
export declare function proxy_increment_metric(metricId: u32, offset: i64): i32;

// @ts-ignore: decorator
@external("env", "proxy_record_metric")
export declare function proxy_record_metric(metricId: u32, value: u64): i32;

// WASI: Envoy implements proc_exit; `abort` is routed to it (docs/architecture.md, Envoy fact 3).
// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "proc_exit")
export declare function wasi_proc_exit(code: u32): void;

// @ts-ignore: decorator
@external("wasi_snapshot_preview1", "random_get")
export declare function wasi_random_get(buf: usize, len: usize): u16;

// @ts-ignore: decorator
@external("env", "proxy_set_tick_period_milliseconds")
export declare function proxy_set_tick_period_milliseconds(periodMs: u32): i32;

// @ts-ignore: decorator
@external("env", "proxy_set_effective_context")
export declare function proxy_set_effective_context(contextId: u32): i32;

// @ts-ignore: decorator
@external("env", "proxy_continue_stream")
export declare function proxy_continue_stream(streamType: i32): i32;

// @ts-ignore: decorator
@external("env", "proxy_set_property")
export declare function proxy_set_property(
  pathPtr: usize,
  pathSize: usize,
  valuePtr: usize,
  valueSize: usize,
): i32;
