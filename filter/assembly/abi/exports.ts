// The functions the host calls (proxy-wasm ABI 0.2.1). Each looks up its context and
// treats an unknown id as a no-op: a stray call must never trap the VM.
import { createContext, deleteContext, httpContext, rootContext } from './context';
import { FilterHeadersStatus } from './enums';

export function proxy_abi_version_0_2_1(): void {}

/** The host's allocator entry: where it copies data it returns to us. */
export function proxy_on_memory_allocate(size: usize): usize {
  return heap.alloc(size);
}

export function proxy_on_context_create(contextId: u32, parentContextId: u32): void {
  createContext(contextId, parentContextId);
}

export function proxy_on_vm_start(rootContextId: u32, vmConfigSize: u32): bool {
  const root = rootContext(rootContextId);
  return root != null ? root.onVmStart(vmConfigSize) : false;
}

export function proxy_on_configure(rootContextId: u32, configSize: u32): bool {
  const root = rootContext(rootContextId);
  return root != null ? root.onConfigure(configSize) : false;
}

export function proxy_on_tick(rootContextId: u32): void {
  const root = rootContext(rootContextId);
  if (root != null) root.onTick();
}

export function proxy_on_request_headers(contextId: u32, headerCount: u32, endOfStream: bool): u32 {
  const ctx = httpContext(contextId);
  return ctx != null ? ctx.onRequestHeaders(headerCount, endOfStream) : FilterHeadersStatus.Continue;
}

export function proxy_on_response_headers(contextId: u32, headerCount: u32, endOfStream: bool): u32 {
  const ctx = httpContext(contextId);
  return ctx != null ? ctx.onResponseHeaders(headerCount, endOfStream) : FilterHeadersStatus.Continue;
}

export function proxy_on_done(contextId: u32): bool {
  const ctx = httpContext(contextId);
  if (ctx != null) {
    ctx.onDone();
    return true;
  }
  const root = rootContext(contextId);
  return root != null ? root.onDone() : true;
}

export function proxy_on_log(contextId: u32): void {
  const ctx = httpContext(contextId);
  if (ctx != null) ctx.onLog();
}

export function proxy_on_delete(contextId: u32): void {
  deleteContext(contextId);
}
