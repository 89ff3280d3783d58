// The worker-thread side of SnapshotCompiler: loads configurations off the thread that
// answers ext_proc. Receives what a provider handed over (told against the last input it took:
// input-crossing.ts), answers the snapshot's plain data
// as CompiledData, its texts packed into buffers that are moved to the service (no resolver:
// a compiled resolver holds closures, which do not cross threads).
// The thread lives as long as the service, so it keeps what it parsed for the next reload,
// and what the service holds of the last table and statuses it sent (piece-list.ts).
import { parentPort } from 'node:worker_threads';
import { IncrementalCompiler, StaleObjectsError } from './incremental-compiler.js';
import { InputReader, StaleInputError } from './input-crossing.js';
import {
  type CompileRequest,
  type CompileResponse,
  CompiledWriter,
  packedCompiledData,
} from './snapshot-compiler.js';
import { epochMs } from './load-times.js';

const compiler = new IncrementalCompiler();
const writer = new CompiledWriter();
const inputs = new InputReader();

parentPort?.on('message', (req: CompileRequest) => {
  let res: CompileResponse;
  let transfer: ArrayBuffer[] = [];
  const at = epochMs();
  try {
    const provided = inputs.read(req.input, req.id);
    const compiled = packedCompiledData(compiler.compile(provided), writer, req.id, req.held);
    res = { id: req.id, ok: true, data: compiled.packed, at, doneAt: epochMs() };
    transfer = compiled.transfer;
  } catch (e) {
    // What the compiler holds may not be what that input left: the next request crosses whole.
    inputs.forget();
    res = {
      id: req.id,
      ok: false,
      message: (e as Error).message,
      ...(e instanceof StaleObjectsError || e instanceof StaleInputError ? { stale: true as const } : {}),
    };
  }
  parentPort?.postMessage(res, transfer);
});
