// A test-only build of the filter that traps when a request asks it to, so the end-to-end
// tests can show that a trap in the native module never reaches Envoy
// (tests/e2e/native-filter-trap.test.ts), and that keeps the worker busy on demand, so a test can
// make a tick land while the worker is inside one event (tests/e2e/native-tick-lost.test.ts).
// Never shipped: `npm run build` does not build it.
import { RootContext, setRootContextFactory } from '../abi/context';
import { HeaderMapType } from '../abi/enums';
import { proxy_on_request_headers as filterRequestHeaders } from '../abi/exports';
import { getHeader, nowNanos } from '../abi/host';
import { Utf8 } from '../abi/memory';
import '../abi/runtime';
import { SteadfastRoot } from '../steadfast';

export {
  proxy_abi_version_0_2_1,
  proxy_on_memory_allocate,
  proxy_on_context_create,
  proxy_on_vm_start,
  proxy_on_configure,
  proxy_on_tick,
  proxy_on_response_headers,
  proxy_on_done,
  proxy_on_log,
  proxy_on_delete,
} from '../abi/exports';

const H_TRAP = new Utf8('x-steadfast-test-trap');

function deeper(n: u32): u32 {
  return n == u32.MAX_VALUE ? n : deeper(n + 1) + 1;
}

/** How long `x-steadfast-test-trap: busy` keeps the worker thread in this callback: 40 ticks. */
const BUSY_NS: u64 = 200_000_000;

/** The filter's own callback, unless `x-steadfast-test-trap` names a way to trap (or to stay busy first). */
export function proxy_on_request_headers(contextId: u32, headerCount: u32, endOfStream: bool): u32 {
  const how = getHeader(HeaderMapType.RequestHeaders, H_TRAP);
  if (how == 'busy') {
    const start = nowNanos();
    // Spinning on the clock (0: the host has none), so the worker runs nothing else meanwhile.
    while (start != 0 && nowNanos() - start < BUSY_NS) {}
  }
  if (how == 'unreachable') unreachable();
  // Far past the end of linear memory (a few pages).
  if (how == 'out-of-bounds') return load<u32>(<usize>0xfff0_0000);
  if (how == 'stack') return deeper(0);
  return filterRequestHeaders(contextId, headerCount, endOfStream);
}

function createRoot(contextId: u32): RootContext {
  return new SteadfastRoot(contextId);
}

setRootContextFactory(createRoot);
