// The worker-thread side of SnapshotCompiler: loads configurations off the thread that
// answers ext_proc. Receives what a provider handed over, answers the snapshot's plain data
// as CompiledData (no resolver: a compiled resolver holds closures, which do not cross threads).
// The thread lives as long as the service, so it keeps what it parsed for the next reload.
import { parentPort } from 'node:worker_threads';
import { IncrementalCompiler, StaleObjectsError } from './incremental-compiler.js';
import type { TableRoute } from '../table/policy-table.js';
import { type CompileRequest, type CompileResponse, compiledData } from './snapshot-compiler.js';

const compiler = new IncrementalCompiler();
/** Each route's JSON while translation keeps the route's object (translate/translate-memo.ts). */
const routeText = new WeakMap<TableRoute, string>();
const routeJson = (route: TableRoute): string => {
  let text = routeText.get(route);
  if (text === undefined) {
    text = JSON.stringify(route);
    routeText.set(route, text);
  }
  return text;
};

parentPort?.on('message', (req: CompileRequest) => {
  let res: CompileResponse;
  try {
    res = { id: req.id, ok: true, data: compiledData(compiler.compile(req.provided), routeJson) };
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
