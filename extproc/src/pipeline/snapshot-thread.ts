// The worker-thread side of SnapshotCompiler: loads configurations off the thread that
// answers ext_proc. Receives what a provider handed over, answers the snapshot's plain data
// as CompiledData (no resolver: a compiled resolver holds closures, which do not cross threads).
// The thread lives as long as the service, so it keeps what it parsed for the next reload.
import { parentPort } from 'node:worker_threads';
import { IncrementalCompiler, StaleObjectsError } from './incremental-compiler.js';
import { fingerprintOf } from './snapshot.js';
import type { CompileRequest, CompileResponse } from './snapshot-compiler.js';

const compiler = new IncrementalCompiler();

parentPort?.on('message', (req: CompileRequest) => {
  let res: CompileResponse;
  try {
    const { table, tls, statuses, diagnostics, errors, warnings } = compiler.compile(req.provided);
    const tableJson = JSON.stringify(table);
    const statusesJson = JSON.stringify(statuses);
    const data = {
      tableJson,
      statusesJson,
      tls,
      diagnostics,
      errors,
      warnings,
      fingerprint: fingerprintOf(tableJson, tls, statusesJson, diagnostics),
    };
    res = { id: req.id, ok: true, data };
  } catch (e) {
    res = {
      id: req.id,
      ok: false,
      message: (e as Error).message,
      ...(e instanceof StaleObjectsError ? { staleObjects: true as const } : {}),
    };
  }
  parentPort?.postMessage(res);
});
