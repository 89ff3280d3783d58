// A proxy-wasm (ABI 0.2.1) host emulator: loads the compiled filter, implements the
// host calls Envoy provides that the filter imports, serves properties, and drives
// the header callbacks. An import it does not implement fails the load, loudly.
import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';

export enum WasmResult {
  Ok = 0,
  NotFound = 1,
  BadArgument = 2,
  InvalidMemoryAccess = 6,
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

const BUFFER_VM_CONFIGURATION = 6;
const BUFFER_PLUGIN_CONFIGURATION = 7;

export type Headers = Array<[string, string]>;

/**
 * A header map in the proxy-wasm serialization `proxy_get_header_map_pairs` returns: a u32
 * count, then each pair's u32 key and value sizes, then each key and value with a NUL after
 * it (little-endian, as proxy-wasm-cpp-host's PairsUtil writes for wasm).
 */
export function serializePairs(pairs: Headers): Uint8Array {
  const encoded = pairs.map(([k, v]) => [encoder.encode(k), encoder.encode(v)] as const);
  const size = 4 + encoded.reduce((n, [k, v]) => n + 8 + k.length + 1 + v.length + 1, 0);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, encoded.length, true);
  let pos = 4;
  for (const [k, v] of encoded) {
    view.setUint32(pos, k.length, true);
    view.setUint32(pos + 4, v.length, true);
    pos += 8;
  }
  for (const [k, v] of encoded) {
    out.set(k, pos);
    pos += k.length + 1;
    out.set(v, pos);
    pos += v.length + 1;
  }
  return out;
}

export interface LogEntry {
  readonly level: LogLevel;
  readonly message: string;
}

export interface LocalResponse {
  readonly status: number;
  readonly details: string;
  readonly body: string;
}

/** The filter ended the VM through WASI proc_exit (AssemblyScript's abort). */
export class ProcExit extends Error {
  constructor(readonly code: number) {
    super(`the filter called proc_exit(${code}): it aborted`);
  }
}

export interface HostOptions {
  readonly pluginConfig?: string;
  readonly vmConfig?: string;
  readonly logLevel?: LogLevel;
  /** Host-wide properties by NUL-joined path; a stream may override them. */
  readonly properties?: Record<string, string | Uint8Array>;
  /** Wall clock in nanoseconds; defaults to the real clock. */
  readonly now?: () => bigint;
}

interface Metric {
  readonly name: string;
  readonly type: number;
  value: bigint;
}

const ROOT_CONTEXT_ID = 1;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

function bytes(v: string | Uint8Array): Uint8Array {
  return typeof v === 'string' ? encoder.encode(v) : v;
}

/** Joins property path segments the way the filter sends them. */
export function propertyKey(...segments: string[]): string {
  return segments.join('\0');
}

export class ProxyWasmHost {
  readonly logs: LogEntry[] = [];
  readonly properties = new Map<string, Uint8Array>();
  logLevel: LogLevel;
  now: () => bigint;
  /** Host calls made, by name: a cheap way to see what a request costs. */
  readonly calls = new Map<string, number>();
  /** How proxy_get_header_map_pairs serializes a map: a test may swap in malformed bytes. */
  serializeHeaderPairs: (pairs: Headers) => Uint8Array = serializePairs;

  private readonly metrics = new Map<number, Metric>();
  private readonly metricIds = new Map<string, number>();
  private nextMetricId = 0;
  private nextContextId = ROOT_CONTEXT_ID + 1;
  private current: HttpStream | undefined;
  private readonly streams = new Map<number, HttpStream>();
  /** The tick period the filter asked for, in ms (0: no tick). */
  tickPeriodMs = 0;
  private effective: HttpStream | undefined;
  private exports!: Record<string, WebAssembly.ExportValue>;
  private memory!: WebAssembly.Memory;

  private constructor(
    private readonly options: HostOptions,
    readonly imports: readonly WebAssembly.ModuleImportDescriptor[],
  ) {
    this.logLevel = options.logLevel ?? LogLevel.Info;
    this.now = options.now ?? (() => BigInt(Date.now()) * 1_000_000n);
    for (const [k, v] of Object.entries(options.properties ?? {})) this.properties.set(k, bytes(v));
  }

  /** Loads and instantiates the filter; throws if it imports anything we do not provide. */
  static async load(wasmPath: string, options: HostOptions = {}): Promise<ProxyWasmHost> {
    const module = await WebAssembly.compile(readFileSync(wasmPath));
    const imports = WebAssembly.Module.imports(module);
    const host = new ProxyWasmHost(options, imports);
    const provided = host.importObject();
    const missing = imports.filter(
      (i) => i.kind !== 'function' || typeof provided[i.module]?.[i.name] !== 'function',
    );
    if (missing.length > 0) {
      throw new Error(
        `the filter imports ${missing.map((i) => `${i.module}.${i.name}`).join(', ')}, ` +
          'which this emulator does not implement (and Envoy may not provide)',
      );
    }
    const used: WebAssembly.Imports = {};
    for (const i of imports) {
      const mod = (used[i.module] ??= {});
      mod[i.name] = provided[i.module]![i.name]!;
    }
    const instance = await WebAssembly.instantiate(module, used);
    host.exports = instance.exports;
    host.memory = instance.exports['memory'] as WebAssembly.Memory;
    const init = instance.exports['_initialize'];
    if (typeof init === 'function') init();
    return host;
  }

  // ---- driving the filter ------------------------------------------------------------

  private fn(name: string): (...args: Array<number | bigint>) => number {
    const f = this.exports[name];
    if (typeof f !== 'function') throw new Error(`the filter does not export ${name}`);
    return f as (...args: Array<number | bigint>) => number;
  }

  hasExport(name: string): boolean {
    return typeof this.exports[name] === 'function';
  }

  /** Creates the root context, starts the VM and configures the plugin, as Envoy does. */
  start(): boolean {
    this.fn('proxy_on_context_create')(ROOT_CONTEXT_ID, 0);
    const vmSize = bytes(this.options.vmConfig ?? '').length;
    if (this.fn('proxy_on_vm_start')(ROOT_CONTEXT_ID, vmSize) === 0) return false;
    return this.configure(this.options.pluginConfig ?? '');
  }

  /** (Re)configures the plugin with `config`; returns what the filter answered. */
  configure(config: string): boolean {
    return this.configureRoot(ROOT_CONTEXT_ID, config);
  }

  private pluginConfig = '';

  /**
   * Adds a second plugin to the same VM, as Envoy does when two filters share a vm_id
   * (the downstream and the upstream steadfast filter): a root context of its own.
   */
  startPlugin(rootContextId: number, config: string): boolean {
    this.fn('proxy_on_context_create')(rootContextId, 0);
    return this.configureRoot(rootContextId, config);
  }

  private configureRoot(rootContextId: number, config: string): boolean {
    this.pluginConfig = config;
    return this.fn('proxy_on_configure')(rootContextId, bytes(config).length) !== 0;
  }

  /** Opens a request stream (an HTTP context) under a plugin's root context. */
  newStream(
    properties: Record<string, string | Uint8Array> = {},
    rootContextId = ROOT_CONTEXT_ID,
  ): HttpStream {
    const stream = new HttpStream(this, this.nextContextId++, properties);
    this.streams.set(stream.id, stream);
    this.fn('proxy_on_context_create')(stream.id, rootContextId);
    return stream;
  }

  /** Runs the root context's tick, as the host does every `tickPeriodMs`. */
  tick(rootContextId = ROOT_CONTEXT_ID): void {
    this.call(undefined, 'proxy_on_tick', rootContextId);
  }

  forget(stream: HttpStream): void {
    this.streams.delete(stream.id);
  }

  /** Calls an export with `stream` as the current context. */
  call(stream: HttpStream | undefined, name: string, ...args: Array<number | bigint>): number {
    const previous = this.current;
    this.current = stream;
    try {
      return this.fn(name)(...args);
    } finally {
      this.current = previous;
    }
  }

  // ---- observing ------------------------------------------------------------------

  metric(name: string): bigint | undefined {
    const id = this.metricIds.get(name);
    return id === undefined ? undefined : this.metrics.get(id)?.value;
  }

  metricNames(): string[] {
    return [...this.metricIds.keys()];
  }

  logged(level: LogLevel): string[] {
    return this.logs.filter((l) => l.level === level).map((l) => l.message);
  }

  memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  // ---- memory helpers ---------------------------------------------------------------

  private view(): DataView {
    return new DataView(this.memory.buffer);
  }

  private read(ptr: number, size: number): Uint8Array | undefined {
    if (ptr < 0 || size < 0 || ptr + size > this.memory.buffer.byteLength) return undefined;
    return new Uint8Array(this.memory.buffer, ptr, size).slice();
  }

  private readString(ptr: number, size: number): string | undefined {
    const b = this.read(ptr, size);
    return b === undefined ? undefined : decoder.decode(b);
  }

  /** Hands `data` to the filter the ABI way: allocate in its memory, write pointer and size. */
  private give(data: Uint8Array, ptrOut: number, sizeOut: number): WasmResult {
    const ptr = data.length === 0 ? 0 : this.fn('proxy_on_memory_allocate')(data.length);
    if (data.length > 0) {
      if (ptr === 0) return WasmResult.InvalidMemoryAccess;
      new Uint8Array(this.memory.buffer, ptr, data.length).set(data);
    }
    const v = this.view();
    if (ptrOut + 4 > v.byteLength || sizeOut + 4 > v.byteLength) return WasmResult.InvalidMemoryAccess;
    v.setUint32(ptrOut, ptr, true);
    v.setUint32(sizeOut, data.length, true);
    return WasmResult.Ok;
  }

  private count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }

  private headerMap(type: number): Headers | undefined {
    const s = this.current;
    if (!s) return undefined;
    if (type === HeaderMapType.RequestHeaders) return s.requestHeaders;
    if (type === HeaderMapType.ResponseHeaders) return s.responseHeaders;
    if (type === HeaderMapType.RequestTrailers) return s.requestTrailers;
    if (type === HeaderMapType.ResponseTrailers) return s.responseTrailers;
    return undefined;
  }

  // ---- the host functions ----------------------------------------------------------

  private importObject(): Record<string, Record<string, (...args: never[]) => unknown>> {
    const env = {
      proxy_log: (level: number, ptr: number, size: number): number => {
        this.count('proxy_log');
        const message = this.readString(ptr, size);
        if (message === undefined) return WasmResult.InvalidMemoryAccess;
        this.logs.push({ level, message });
        return WasmResult.Ok;
      },
      proxy_get_log_level: (out: number): number => {
        this.count('proxy_get_log_level');
        this.view().setUint32(out, this.logLevel, true);
        return WasmResult.Ok;
      },
      proxy_get_current_time_nanoseconds: (out: number): number => {
        this.count('proxy_get_current_time_nanoseconds');
        this.view().setBigUint64(out, this.now(), true);
        return WasmResult.Ok;
      },
      proxy_get_buffer_bytes: (type: number, start: number, max: number, ptrOut: number, sizeOut: number) => {
        this.count('proxy_get_buffer_bytes');
        let data: Uint8Array;
        if (type === BUFFER_PLUGIN_CONFIGURATION) data = bytes(this.pluginConfig);
        else if (type === BUFFER_VM_CONFIGURATION) data = bytes(this.options.vmConfig ?? '');
        else return WasmResult.NotFound;
        return this.give(data.subarray(start, start + max), ptrOut, sizeOut);
      },
      proxy_get_header_map_value: (
        type: number,
        kPtr: number,
        kSize: number,
        ptrOut: number,
        sizeOut: number,
      ) => {
        this.count('proxy_get_header_map_value');
        const map = this.headerMap(type);
        const key = this.readString(kPtr, kSize);
        if (!map || key === undefined) return WasmResult.BadArgument;
        const hit = map.find(([k]) => k === key.toLowerCase());
        if (!hit) return WasmResult.NotFound;
        return this.give(encoder.encode(hit[1]), ptrOut, sizeOut);
      },
      proxy_get_header_map_pairs: (type: number, ptrOut: number, sizeOut: number) => {
        this.count('proxy_get_header_map_pairs');
        const map = this.headerMap(type);
        if (!map) return WasmResult.BadArgument;
        // As Envoy (proxy-wasm-cpp-host): an empty map is an empty region, not a zero count.
        return this.give(
          map.length === 0 ? new Uint8Array(0) : this.serializeHeaderPairs(map),
          ptrOut,
          sizeOut,
        );
      },
      proxy_add_header_map_value: (
        type: number,
        kPtr: number,
        kSize: number,
        vPtr: number,
        vSize: number,
      ) => {
        this.count('proxy_add_header_map_value');
        const map = this.headerMap(type);
        const key = this.readString(kPtr, kSize);
        const value = this.readString(vPtr, vSize);
        if (!map || key === undefined || value === undefined) return WasmResult.BadArgument;
        map.push([key.toLowerCase(), value]);
        return WasmResult.Ok;
      },
      proxy_replace_header_map_value: (
        type: number,
        kPtr: number,
        kSize: number,
        vPtr: number,
        vSize: number,
      ) => {
        this.count('proxy_replace_header_map_value');
        const map = this.headerMap(type);
        const key = this.readString(kPtr, kSize);
        const value = this.readString(vPtr, vSize);
        if (!map || key === undefined || value === undefined) return WasmResult.BadArgument;
        const k = key.toLowerCase();
        const kept = map.filter(([n]) => n !== k);
        map.length = 0;
        map.push(...kept, [k, value]);
        return WasmResult.Ok;
      },
      proxy_remove_header_map_value: (type: number, kPtr: number, kSize: number) => {
        this.count('proxy_remove_header_map_value');
        const map = this.headerMap(type);
        const key = this.readString(kPtr, kSize);
        if (!map || key === undefined) return WasmResult.BadArgument;
        const k = key.toLowerCase();
        const kept = map.filter(([n]) => n !== k);
        map.length = 0;
        map.push(...kept);
        return WasmResult.Ok;
      },
      proxy_get_property: (pPtr: number, pSize: number, ptrOut: number, sizeOut: number) => {
        this.count('proxy_get_property');
        const path = this.readString(pPtr, pSize);
        if (path === undefined) return WasmResult.InvalidMemoryAccess;
        const value = this.current?.properties.get(path) ?? this.properties.get(path);
        if (value === undefined) return WasmResult.NotFound;
        return this.give(value, ptrOut, sizeOut);
      },
      // Envoy keeps the value as filter state `wasm.<path>` of the current request, which
      // get_property `<path>` reads back; here it is the stream's property under `path`.
      proxy_set_property: (pPtr: number, pSize: number, vPtr: number, vSize: number): number => {
        this.count('proxy_set_property');
        const path = this.readString(pPtr, pSize);
        const value = this.read(vPtr, vSize);
        const s = this.current;
        if (path === undefined || value === undefined) return WasmResult.InvalidMemoryAccess;
        if (!s) return WasmResult.NotFound;
        s.properties.set(path, value);
        return WasmResult.Ok;
      },
      proxy_set_tick_period_milliseconds: (period: number): number => {
        this.count('proxy_set_tick_period_milliseconds');
        this.tickPeriodMs = period;
        return WasmResult.Ok;
      },
      proxy_set_effective_context: (contextId: number): number => {
        this.count('proxy_set_effective_context');
        const s = this.streams.get(contextId);
        if (!s) return WasmResult.BadArgument;
        this.effective = s;
        return WasmResult.Ok;
      },
      proxy_continue_stream: (streamType: number): number => {
        this.count('proxy_continue_stream');
        const s = this.effective ?? this.current;
        if (!s) return WasmResult.NotFound;
        if (streamType === 0) s.resumedRequests++;
        return WasmResult.Ok;
      },
      proxy_send_local_response: (
        status: number,
        dPtr: number,
        dSize: number,
        bPtr: number,
        bSize: number,
        _hPtr: number,
        _hSize: number,
        _grpcStatus: number,
      ) => {
        this.count('proxy_send_local_response');
        const s = this.current;
        if (!s) return WasmResult.BadArgument;
        s.localResponse = {
          status,
          details: this.readString(dPtr, dSize) ?? '',
          body: this.readString(bPtr, bSize) ?? '',
        };
        return WasmResult.Ok;
      },
      proxy_define_metric: (type: number, nPtr: number, nSize: number, idOut: number) => {
        this.count('proxy_define_metric');
        const name = this.readString(nPtr, nSize);
        if (name === undefined) return WasmResult.InvalidMemoryAccess;
        let id = this.metricIds.get(name);
        if (id === undefined) {
          // Like Envoy, the first counter's id is 0: 0 is a valid id.
          id = this.nextMetricId;
          this.nextMetricId += 4;
          this.metricIds.set(name, id);
          this.metrics.set(id, { name, type, value: 0n });
        }
        this.view().setUint32(idOut, id, true);
        return WasmResult.Ok;
      },
      proxy_increment_metric: (id: number, offset: bigint) => {
        this.count('proxy_increment_metric');
        const m = this.metrics.get(id);
        if (!m) return WasmResult.NotFound;
        m.value += offset;
        return WasmResult.Ok;
      },
      proxy_record_metric: (id: number, value: bigint) => {
        this.count('proxy_record_metric');
        const m = this.metrics.get(id);
        if (!m) return WasmResult.NotFound;
        m.value = value;
        return WasmResult.Ok;
      },
    };
    const wasi = {
      proc_exit: (code: number): never => {
        throw new ProcExit(code);
      },
      random_get: (ptr: number, len: number): number => {
        this.count('random_get');
        if (ptr + len > this.memory.buffer.byteLength) return 28; // EINVAL
        randomFillSync(new Uint8Array(this.memory.buffer, ptr, len));
        return 0;
      },
    };
    return { env, wasi_snapshot_preview1: wasi } as unknown as Record<
      string,
      Record<string, (...args: never[]) => unknown>
    >;
  }
}

/** One request through the filter. */
export class HttpStream {
  readonly requestHeaders: Headers = [];
  readonly responseHeaders: Headers = [];
  readonly requestTrailers: Headers = [];
  readonly responseTrailers: Headers = [];
  readonly properties = new Map<string, Uint8Array>();
  localResponse: LocalResponse | undefined;
  /** How many times the filter resumed this stream's request with proxy_continue_stream. */
  resumedRequests = 0;

  constructor(
    private readonly host: ProxyWasmHost,
    readonly id: number,
    properties: Record<string, string | Uint8Array>,
  ) {
    for (const [k, v] of Object.entries(properties)) this.properties.set(k, bytes(v));
  }

  setProperty(key: string, value: string | Uint8Array): void {
    this.properties.set(key, bytes(value));
  }

  /** Runs proxy_on_request_headers; returns the filter's action (0 continue, 1 stop). */
  sendRequestHeaders(headers: Headers, endOfStream = true): number {
    this.requestHeaders.push(...headers.map(([k, v]): [string, string] => [k.toLowerCase(), v]));
    return this.host.call(
      this,
      'proxy_on_request_headers',
      this.id,
      this.requestHeaders.length,
      endOfStream ? 1 : 0,
    );
  }

  sendResponseHeaders(headers: Headers, endOfStream = true): number {
    this.responseHeaders.push(...headers.map(([k, v]): [string, string] => [k.toLowerCase(), v]));
    return this.host.call(
      this,
      'proxy_on_response_headers',
      this.id,
      this.responseHeaders.length,
      endOfStream ? 1 : 0,
    );
  }

  /** Ends the stream as Envoy does: done, log, delete. */
  complete(): void {
    this.host.call(this, 'proxy_on_done', this.id);
    this.host.call(this, 'proxy_on_log', this.id);
    this.host.call(this, 'proxy_on_delete', this.id);
    this.host.forget(this);
  }

  requestHeader(name: string): string | undefined {
    return this.requestHeaders.find(([k]) => k === name)?.[1];
  }

  responseHeader(name: string): string | undefined {
    return this.responseHeaders.find(([k]) => k === name)?.[1];
  }

  responseHeaderValues(name: string): string[] {
    return this.responseHeaders.filter(([k]) => k === name).map(([, v]) => v);
  }
}
