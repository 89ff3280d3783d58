// A full garbage collection of another Node process's main thread, through the inspector it
// was started with (`--inspect=127.0.0.1:0`): memory compared at two moments is then what is
// alive, not what V8's memory reducer happened to have returned yet.
import WebSocket from 'ws';

/** The inspector's WebSocket URL, from what the process printed (`Debugger listening on ws://…`). */
export function inspectorUrl(output: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
}

/** Asks the process at `url` for a full GC (HeapProfiler.collectGarbage); resolves once done. */
export function collectGarbage(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const fail = (e: Error): void => {
      ws.terminate();
      reject(e);
    };
    ws.once('error', fail);
    ws.once('open', () => ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
    ws.on('message', (data: WebSocket.RawData) => {
      const reply = JSON.parse(data.toString()) as { id?: number; error?: { message: string } };
      if (reply.id !== 1) return;
      ws.close();
      if (reply.error) reject(new Error(`inspector: ${reply.error.message}`));
      else resolve();
    });
  });
}
