// AssemblyScript's `abort` lands here (asconfig.json `use`): Envoy has no `env.abort`,
// so a failed assertion ends the VM through WASI proc_exit. Reaching it is a bug.
import { wasi_proc_exit } from './imports';

export function abortToProcExit(
  _message: string | null,
  _fileName: string | null,
  _lineNumber: u32,
  _columnNumber: u32,
): void {
  wasi_proc_exit(255);
  unreachable();
}
