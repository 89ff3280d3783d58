// A provider with a real provider's settle, for timing the store's reads with fake timers: it
// says it changed when told and records when it was read.
import type { ProvidedConfig, Provider } from '../../extproc/src/provider/provider.js';

export type SettleProbe = Provider & { change(): void; readAt: number[] };

/** `settle`'s timings; the n-th read (from 1) gives `text(n)` as one document. */
export function settleProbe(
  settle: {
    readonly settleMs?: number | undefined;
    readonly maxWaitMs?: number | undefined;
    readonly readsEarly?: boolean | undefined;
  },
  text: (n: number) => string,
): SettleProbe {
  let changed: ((what: string) => void) | undefined;
  const readAt: number[] = [];
  return {
    description: 'test',
    ...(settle.settleMs !== undefined ? { settleMs: settle.settleMs } : {}),
    ...(settle.maxWaitMs !== undefined ? { maxWaitMs: settle.maxWaitMs } : {}),
    ...(settle.readsEarly !== undefined ? { readsEarly: settle.readsEarly } : {}),
    readAt,
    change: () => changed?.('x'),
    read: (): Promise<ProvidedConfig> => {
      readAt.push(performance.now());
      return Promise.resolve({
        documents: [{ path: 'c.yaml', text: text(readAt.length) }],
        objects: [],
        diagnostics: [],
      });
    },
    watch: (c) => {
      changed = c;
      return () => (changed = undefined);
    },
    report: () => undefined,
    start: () => Promise.resolve(),
    close: () => undefined,
  };
}
