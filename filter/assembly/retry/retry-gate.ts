// The backoff floor (docs/retries.md): no retry starts earlier than `backoff`
// after the failed attempt ended. Envoy's own backoff is jittered from 0 ms, so the
// filter also runs as an upstream HTTP filter and holds each retry attempt until the
// floor has passed. The floor always comes from the request's policy token
// (`backoffFloorMs`). In attach mode the downstream filter opens a gate per request; the
// upstream filter of every attempt consults it. Both live in the same VM on the same worker
// (docs/architecture.md, Envoy fact 1), so the gates are plain module state keyed by x-request-id.
// Gateway mode needs no gate: its upstream filter sees retries only (steadfast.ts).
import { Policy } from '../policy/token';

/** The floor a rule's retries wait for (ms); 0 when it has none or retries nothing. */
export function backoffFloorMs(policy: Policy): i32 {
  return policy.hasRetry && policy.attempts > 0 ? policy.backoffMs : 0;
}

/** Requests in flight with a backoff floor, per worker. Past this, new ones go without a floor. */
export const MAX_GATES: i32 = 16384;

export class RetryGate {
  /** When the latest attempt was seen to end (ns, host clock); 0 before the first ends. */
  lastEndNs: u64 = 0;
  /** Attempts that have started, the first included. */
  attempts: i32 = 0;
  constructor(public readonly backoffMs: i32) {}

  /** When the next attempt may start (ns), or 0 if now. */
  dueNs(): u64 {
    if (this.attempts == 0 || this.lastEndNs == 0) return 0;
    return this.lastEndNs + <u64>this.backoffMs * 1_000_000;
  }
}

const gates = new Map<string, RetryGate>();

/** Opens the gate of a request; false when the table is full (the request then has no floor). */
export function openGate(requestId: string, backoffMs: i32): bool {
  if (gates.has(requestId)) {
    gates.set(requestId, new RetryGate(backoffMs));
    return true;
  }
  if (gates.size >= MAX_GATES) return false;
  gates.set(requestId, new RetryGate(backoffMs));
  return true;
}

export function closeGate(requestId: string): void {
  gates.delete(requestId);
}

export function findGate(requestId: string): RetryGate | null {
  return gates.has(requestId) ? gates.get(requestId) : null;
}

export function openGateCount(): i32 {
  return gates.size;
}

/** A paused attempt and when it may go. */
class Held {
  constructor(
    public contextId: u32,
    public dueNs: u64,
  ) {}
}

/** Attempts held back, per worker; resumed from the root context's tick. */
export class HeldAttempts {
  private readonly items: Held[] = [];

  get size(): i32 {
    return this.items.length;
  }

  hold(contextId: u32, dueNs: u64): void {
    this.items.push(new Held(contextId, dueNs));
  }

  /** Forgets a held attempt (its stream went away). */
  drop(contextId: u32): void {
    for (let i = 0; i < this.items.length; i++) {
      if (unchecked(this.items[i]).contextId == contextId) {
        this.items.splice(i, 1);
        return;
      }
    }
  }

  /** Removes every attempt due by `nowNs` and returns their context ids. */
  takeDue(nowNs: u64, out: u32[]): void {
    let i = 0;
    while (i < this.items.length) {
      const h = unchecked(this.items[i]);
      if (h.dueNs <= nowNs) {
        out.push(h.contextId);
        this.items.splice(i, 1);
      } else {
        i++;
      }
    }
  }
}
