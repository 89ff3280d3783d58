// Builds and instantiates the test-only wasm (filter/assembly/testing/crypto-kat.ts) for the
// known-answer and session-token suites. The build is kept in memory so two suites never
// race on a file. The module's only import is `env.abort`; it records calls so every
// suite can assert that nothing ever aborted.
import asc from 'assemblyscript/asc';

const ENTRY = 'filter/assembly/testing/crypto-kat.ts';
const CONFIG = 'filter/assembly/testing/kat.asconfig.json';

// @types/node 20 does not declare the WebAssembly global; this is the part the suites use.
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
type WasmExportValue = WasmMemory | ((...args: never[]) => unknown);
interface WasmModule {
  readonly __brand?: 'WasmModule';
}
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  instantiate(
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ): Promise<{ exports: Record<string, WasmExportValue> }>;
  Module: { imports(module: WasmModule): { module: string; name: string; kind: string }[] };
}
const WebAssembly = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export interface AbortCall {
  message: string;
  file: string;
  line: number;
  column: number;
}

export interface KatWasm {
  exports: Record<string, WasmExportValue>;
  fn<T = number>(name: string): (...args: (number | bigint)[]) => T;
  memory: WasmMemory;
  aborts: AbortCall[];
  importNames: string[];
  /** Bump allocator over the module's 64 KiB scratch buffer; `reset()` starts again at its base. */
  reset(): void;
  alloc(length: number): number;
  put(bytes: Uint8Array): number;
  read(ptr: number, length: number): Buffer;
}

let cached: Promise<WasmModule> | undefined;

async function build(): Promise<WasmModule> {
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const { error } = await asc.main(
    [ENTRY, '--config', CONFIG, '--target', 'kat', '--outFile', 'crypto-kat.wasm'],
    {
      writeFile(name, contents) {
        if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
      },
      stderr: { write: (chunk: string | Uint8Array) => stderr.push(String(chunk)) > 0 },
      stdout: { write: () => true },
    },
  );
  if (error || !binary) throw new Error(`asc failed: ${error?.message ?? 'no output'}\n${stderr.join('')}`);
  return WebAssembly.compile(binary);
}

/**
 * The test module as unoptimized WebAssembly text: every function stays a function, so
 * a suite can walk the call graph (e.g. to prove a path never reaches the allocator).
 */
export async function katWasmText(): Promise<string> {
  let text: string | undefined;
  const { error } = await asc.main(
    [
      ENTRY,
      '--config',
      CONFIG,
      '--target',
      'kat',
      '-O0',
      '--outFile',
      'crypto-kat-O0.wasm',
      '--textFile',
      'crypto-kat.wat',
    ],
    {
      writeFile(name, contents) {
        if (name.endsWith('.wat')) text = String(contents);
      },
      stderr: { write: () => true },
      stdout: { write: () => true },
    },
  );
  if (error || text === undefined) throw new Error(`asc failed: ${error?.message ?? 'no text output'}`);
  return text;
}

/** Direct calls between functions of a module's text: name → callees. */
export function callGraph(wat: string): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  let current: Set<string> | undefined;
  for (const line of wat.split('\n')) {
    const fn = /^ {1,2}\(func \$(\S+)/.exec(line);
    if (fn) {
      current = new Set();
      graph.set(fn[1]!, current);
      continue;
    }
    for (const call of line.matchAll(/\bcall \$([^\s)]+)/g)) current?.add(call[1]!);
    if (current && /call_indirect/.test(line)) current.add('<indirect>');
  }
  return graph;
}

export async function loadKatWasm(): Promise<KatWasm> {
  cached ??= build();
  const module = await cached;
  const aborts: AbortCall[] = [];
  const instanceMemory: { current?: WasmMemory } = {};
  const readString = (ptr: number): string => {
    const memory = instanceMemory.current;
    if (!memory || ptr === 0) return '';
    const length = new DataView(memory.buffer).getUint32(ptr - 4, true);
    return Buffer.from(memory.buffer, ptr, length).toString('utf16le');
  };
  const instance = await WebAssembly.instantiate(module, {
    env: {
      abort(message: number, file: number, line: number, column: number) {
        aborts.push({ message: readString(message), file: readString(file), line, column });
        throw new Error(`wasm abort: ${readString(message)} at ${readString(file)}:${line}:${column}`);
      },
    },
  });
  const memory = instance.exports.memory as WasmMemory;
  instanceMemory.current = memory;
  const exports = instance.exports;
  const fn = <T = number>(name: string) => {
    const f = exports[name];
    if (typeof f !== 'function') throw new Error(`crypto-kat.wasm has no export ${name}`);
    return f as (...args: (number | bigint)[]) => T;
  };
  const base = fn('scratch')();
  const size = fn('scratchBytes')();
  let next = base;
  const wasm: KatWasm = {
    exports,
    fn,
    memory,
    aborts,
    importNames: WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`),
    reset() {
      next = base;
    },
    alloc(length) {
      const ptr = (next + 15) & ~15;
      if (ptr + length > base + size) throw new Error('kat scratch exhausted');
      next = ptr + length;
      return ptr;
    },
    put(bytes) {
      const ptr = wasm.alloc(bytes.length);
      new Uint8Array(memory.buffer, ptr, bytes.length).set(bytes);
      return ptr;
    },
    read(ptr, length) {
      return Buffer.from(new Uint8Array(memory.buffer, ptr, length).slice());
    },
  };
  return wasm;
}

export function hex(text: string): Buffer {
  return Buffer.from(text.replace(/[\s:]/g, ''), 'hex');
}
