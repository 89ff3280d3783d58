// Contexts as the host sees them: one root context per plugin (configuration parsed
// once, in onConfigure) and one HTTP context per request. Defaults do nothing.
import { FilterHeadersStatus } from './enums';

export class RootContext {
  constructor(public readonly contextId: u32) {}

  /** Called once per VM; `vmConfigSize` bytes of VM configuration are readable. */
  onVmStart(_vmConfigSize: u32): bool {
    return true;
  }

  /** Called when the plugin configuration (`configSize` bytes) is set or changed. */
  onConfigure(_configSize: u32): bool {
    return true;
  }

  /** Creates the context of one request. */
  createHttpContext(contextId: u32): HttpContext {
    return new HttpContext(contextId, this);
  }

  onTick(): void {}

  onDone(): bool {
    return true;
  }
}

export class HttpContext {
  constructor(
    public readonly contextId: u32,
    public readonly root: RootContext,
  ) {}

  onRequestHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    return FilterHeadersStatus.Continue;
  }

  onResponseHeaders(_headerCount: u32, _endOfStream: bool): FilterHeadersStatus {
    return FilterHeadersStatus.Continue;
  }

  /** The stream is complete; the host may still call onLog. */
  onDone(): void {}

  onLog(): void {}
}

/** Makes the plugin's root context; set once from the module's entry file. */
export type RootContextFactory = (contextId: u32) => RootContext;

let rootFactory: RootContextFactory | null = null;

export function setRootContextFactory(factory: RootContextFactory): void {
  rootFactory = factory;
}

// The registries. AssemblyScript's Map.get aborts on a missing key: always `has` first.
const roots = new Map<u32, RootContext>();
const streams = new Map<u32, HttpContext>();

export function createContext(contextId: u32, parentId: u32): void {
  if (parentId == 0) {
    const factory = rootFactory;
    roots.set(contextId, factory != null ? factory(contextId) : new RootContext(contextId));
    return;
  }
  if (!roots.has(parentId)) return;
  streams.set(contextId, roots.get(parentId).createHttpContext(contextId));
}

export function rootContext(contextId: u32): RootContext | null {
  return roots.has(contextId) ? roots.get(contextId) : null;
}

export function httpContext(contextId: u32): HttpContext | null {
  return streams.has(contextId) ? streams.get(contextId) : null;
}

export function deleteContext(contextId: u32): void {
  if (streams.has(contextId)) {
    streams.delete(contextId);
  } else if (roots.has(contextId)) {
    roots.delete(contextId);
  }
}
