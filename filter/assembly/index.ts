// The steadfast proxy-wasm module. Top-level code only wires the factory: it must not
// call the host (docs/architecture.md, Envoy fact 3).
import { RootContext, setRootContextFactory } from './abi/context';
import { SteadfastRoot } from './steadfast';
// Brings in the abort handler that asconfig.json routes `abort` to.
import './abi/runtime';

export * from './abi/exports';

function createRoot(contextId: u32): RootContext {
  return new SteadfastRoot(contextId);
}

setRootContextFactory(createRoot);
