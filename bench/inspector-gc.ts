// A full garbage collection of another Node process's main thread, through the inspector it
// was started with (`--inspect=127.0.0.1:0`), and what its main thread then holds: memory
// compared at two moments is what is alive, not what V8's memory reducer happened to have
// returned yet.
import WebSocket from 'ws';

/** The inspector's WebSocket URL, from what the process printed (`Debugger listening on ws://…`). */
export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/** The main thread's memory (process.memoryUsage()), in bytes. */
export interface LiveMemory {
  readonly heapUsed: number;
  readonly external: number;
}

/** Sends each command in turn on one inspector session; resolves to their results. */
function session(url: string, commands: readonly { method: string; params?: object }[]): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const results: unknown[] = [];
    const fail = (e: Error): void => {
      ws.terminate();
      reject(e);
    };
    const send = (i: number): void => ws.send(JSON.stringify({ id: i + 1, ...commands[i] }));
    ws.once('error', fail);
    ws.once('open', () => send(0));
    ws.on('message', (data: WebSocket.RawData) => {
      const reply = JSON.parse(data.toString()) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      if (reply.id !== results.length + 1) return;
      if (reply.error) return fail(new Error(`inspector: ${reply.error.message}`));
      results.push(reply.result);
      if (results.length < commands.length) return send(results.length);
      ws.close();
      resolve(results);
    });
  });
}

/** A full GC of the process at `url` (HeapProfiler.collectGarbage). */
export async function collectGarbage(url: string): Promise<void> {
  await session(url, [{ method: 'HeapProfiler.collectGarbage' }]);
}

interface InspectorMessage {
  readonly id?: number;
  readonly method?: string;
  readonly params?: { sessionId?: string; workerInfo?: unknown; message?: string };
  readonly result?: unknown;
  readonly error?: { message: string };
}

/**
 * One inspector command on each worker thread of the process at `url`, through the main
 * inspector's NodeWorker domain (the workers already running are announced, attachedToWorker,
 * before `NodeWorker.enable` is answered). Resolves to each worker's result.
 */
function inWorkers(url: string, method: string, params: object = {}): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const workers: string[] = [];
    const results: unknown[] = [];
    const fail = (e: Error): void => {
      ws.terminate();
      reject(e);
    };
    const done = (): void => {
      ws.close();
      resolve(results);
    };
    ws.once('error', fail);
    ws.once('open', () =>
      ws.send(
        JSON.stringify({ id: 1, method: 'NodeWorker.enable', params: { waitForDebuggerOnStart: false } }),
      ),
    );
    ws.on('message', (data: WebSocket.RawData) => {
      const m = JSON.parse(data.toString()) as InspectorMessage;
      if (m.error) return fail(new Error(`inspector: ${m.error.message}`));
      if (m.method === 'NodeWorker.attachedToWorker' && m.params?.sessionId) workers.push(m.params.sessionId);
      if (m.id === 1) {
        if (workers.length === 0) return done();
        for (const sessionId of workers) {
          const message = JSON.stringify({ id: 1, method, params });
          ws.send(
            JSON.stringify({
              id: 2,
              method: 'NodeWorker.sendMessageToWorker',
              params: { sessionId, message },
            }),
          );
        }
      }
      if (m.method !== 'NodeWorker.receivedMessageFromWorker') return;
      const reply = JSON.parse(m.params?.message ?? '{}') as InspectorMessage;
      if (reply.error) return fail(new Error(`inspector (worker): ${reply.error.message}`));
      if (reply.id !== 1) return;
      results.push(reply.result);
      if (results.length === workers.length) done();
    });
  });
}

/** A full GC of each worker thread of the process at `url` (its compiler thread: RSS counts its heap too); how many. */
export async function collectWorkersGarbage(url: string): Promise<number> {
  return (await inWorkers(url, 'HeapProfiler.collectGarbage')).length;
}

/** One thread's V8 heap: each space's size and what is used of it, and memoryUsage's external, in bytes. */
export interface ThreadHeap {
  readonly spaces: readonly { readonly name: string; readonly size: number; readonly used: number }[];
  readonly external: number;
}

// Evaluated in the inspected thread (no imports there: process.getBuiltinModule, Node 20.16 on).
const HEAP_EXPRESSION = `JSON.stringify({
  spaces: process.getBuiltinModule('node:v8').getHeapSpaceStatistics()
    .map((s) => ({ name: s.space_name, size: s.space_size, used: s.space_used_size })),
  external: process.memoryUsage().external,
})`;

const valueOf = (result: unknown): unknown =>
  JSON.parse((result as { result: { value: string } }).result.value) as unknown;

/**
 * `expression` (one that returns a JSON text, or a promise of one) evaluated on the main thread, then on each worker
 * thread: the values it gave, parsed, in that order.
 */
export async function inThreads(url: string, expression: string): Promise<unknown[]> {
  // A promise is waited for: its value is the JSON text.
  const evaluate = { expression, returnByValue: true, awaitPromise: true };
  const [main] = await session(url, [{ method: 'Runtime.evaluate', params: evaluate }]);
  const workers = await inWorkers(url, 'Runtime.evaluate', evaluate);
  return [valueOf(main), ...workers.map(valueOf)];
}

/** The main thread's heap, then each worker thread's, as they are now (no GC first). */
export async function threadHeaps(url: string): Promise<ThreadHeap[]> {
  return (await inThreads(url, HEAP_EXPRESSION)) as ThreadHeap[];
}

/**
 * The main thread's memoryUsage(). Read it a moment after a GC, not at once: V8 frees the
 * backing stores of dead Buffers in a task after the GC, and `external` counts them until then.
 */
export async function memoryUsage(url: string): Promise<LiveMemory> {
  const [evaluated] = await session(url, [
    {
      method: 'Runtime.evaluate',
      params: { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true },
    },
  ]);
  return JSON.parse((evaluated as { result: { value: string } }).result.value) as LiveMemory;
}
