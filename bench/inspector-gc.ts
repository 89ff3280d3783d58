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
