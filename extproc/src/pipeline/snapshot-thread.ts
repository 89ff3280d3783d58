// The worker-thread side of SnapshotCompiler: loads configurations off the thread that
// answers ext_proc. Receives what a provider handed over, answers the snapshot's plain data
// as CompiledData, its texts packed into buffers that are moved to the service (no resolver:
// a compiled resolver holds closures, which do not cross threads).
// The thread lives as long as the service, so it keeps what it parsed for the next reload,
// and what the service holds of the last table and statuses it sent (piece-list.ts).
import { parentPort } from 'node:worker_threads';
import { IncrementalCompiler, StaleObjectsError } from './incremental-compiler.js';
import {
  type CompileRequest,
  type CompileResponse,
  CompiledWriter,
  packedCompiledData,
} from './snapshot-compiler.js';
import { epochMs } from './load-times.js';

const compiler = new IncrementalCompiler();
const writer = new CompiledWriter();

parentPort?.on('message', (req: CompileRequest) => {
  let res: CompileResponse;
  let transfer: ArrayBuffer[] = [];
  const at = epochMs();
  try {
    const compiled = packedCompiledData(compiler.compile(req.provided), writer, req.id, req.held);
    res = { id: req.id, ok: true, data: compiled.packed, at, doneAt: epochMs() };
    transfer = compiled.transfer;
  } catch (e) {
    res = {
      id: req.id,
      ok: false,
      message: (e as Error).message,
      ...(e instanceof StaleObjectsError ? { staleObjects: true as const } : {}),
    };
  }
  parentPort?.postMessage(res, transfer);
});
