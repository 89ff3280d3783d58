// Splits the emulator's time between the filter and the host: wraps the host functions
// the filter imports and the exports the host calls with a clock, so time inside the
// filter's own code is (time in outermost exports) − (time in host calls made from them).
// It reaches into the emulator's private imports and exports, which is fine for a
// measurement and nothing else; the clock reads themselves are calibrated away.
import { ProxyWasmHost, type HostOptions } from '../tests/emulator/proxy-wasm-host.js';

type Fn = (...args: unknown[]) => unknown;
type Imports = Record<string, Record<string, Fn>>;

export class WasmClock {
  /** Nanoseconds in the outermost export calls (filter code plus the host calls it made). */
  exportNs = 0;
  /** Nanoseconds in host calls made from inside an export. */
  hostNs = 0;
  exportCalls = 0;
  hostCalls = 0;
  enabled = false;
  private depth = 0;

  reset(): void {
    this.exportNs = this.hostNs = this.exportCalls = this.hostCalls = 0;
  }

  /** Time inside filter code, with the clock's own cost taken out. */
  filterNs(clockReadNs: number): number {
    // Each timed interval holds about one clock read of its own, and each host call adds two
    // reads to the export around it: export − host leaves one read per interval of either kind.
    return this.exportNs - this.hostNs - (this.exportCalls + this.hostCalls) * clockReadNs;
  }

  timeExport(f: Fn): Fn {
    return (...args) => {
      if (!this.enabled || this.depth > 0) return f(...args);
      this.depth++;
      const t = process.hrtime.bigint();
      try {
        return f(...args);
      } finally {
        this.exportNs += Number(process.hrtime.bigint() - t);
        this.exportCalls++;
        this.depth--;
      }
    };
  }

  timeHost(f: Fn): Fn {
    return (...args) => {
      if (!this.enabled || this.depth !== 1) return f(...args);
      this.depth++;
      const t = process.hrtime.bigint();
      try {
        return f(...args);
      } finally {
        this.hostNs += Number(process.hrtime.bigint() - t);
        this.hostCalls++;
        this.depth--;
      }
    };
  }
}

/** The cost of one `process.hrtime.bigint()` read, median of many. */
export function clockReadNs(): number {
  const samples: number[] = [];
  for (let i = 0; i < 2000; i++) {
    const a = process.hrtime.bigint();
    for (let j = 0; j < 10; j++) process.hrtime.bigint();
    samples.push(Number(process.hrtime.bigint() - a) / 11);
  }
  samples.sort((x, y) => x - y);
  return samples[samples.length >> 1] as number;
}

/** Loads the filter in the emulator with every import and export going through `clock`. */
export async function loadTimedHost(
  wasmPath: string,
  options: HostOptions,
  clock: WasmClock,
): Promise<ProxyWasmHost> {
  const proto = ProxyWasmHost.prototype as unknown as { importObject(this: ProxyWasmHost): Imports };
  const original = proto.importObject;
  proto.importObject = function (this: ProxyWasmHost): Imports {
    const imports = original.call(this);
    const timed: Imports = {};
    for (const [module, fns] of Object.entries(imports)) {
      timed[module] = {};
      for (const [name, f] of Object.entries(fns))
        (timed[module] as Record<string, Fn>)[name] = clock.timeHost(f);
    }
    return timed;
  };
  let host: ProxyWasmHost;
  try {
    host = await ProxyWasmHost.load(wasmPath, options);
  } finally {
    proto.importObject = original;
  }
  const inner = host as unknown as { exports: Record<string, unknown> };
  const exports: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(inner.exports))
    exports[name] = typeof v === 'function' ? clock.timeExport(v as Fn) : v;
  inner.exports = exports;
  return host;
}
