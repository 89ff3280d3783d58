// Memory shared with the host: the allocator the host calls to hand us data, fixed
// return slots for host calls, and a reusable scratch buffer for outgoing strings.

/** Where the host writes a returned pointer and size (u32 each on wasm32). */
export const RETURN_PTR: usize = memory.data(8);
export const RETURN_SIZE: usize = memory.data(8);
/** Where the host writes a returned 64-bit value (time, metric id). */
export const RETURN_U64: usize = memory.data(8);

let scratchPtr: usize = 0;
let scratchCap: usize = 0;

/** A scratch region of at least `size` bytes, valid until the next call. Grows, never shrinks. */
export function scratch(size: usize): usize {
  if (size > scratchCap) {
    if (scratchPtr != 0) heap.free(scratchPtr);
    let cap: usize = scratchCap == 0 ? 1024 : scratchCap;
    while (cap < size) cap <<= 1;
    scratchPtr = heap.alloc(cap);
    scratchCap = cap;
  }
  return scratchPtr;
}

/** Takes a host-returned region: copies nothing, the caller frees it with `release`. */
export function release(ptr: usize): void {
  if (ptr != 0) heap.free(ptr);
}

/** A string encoded to UTF-8 once, for names passed to the host on every request. */
export class Utf8 {
  readonly buf: ArrayBuffer;
  constructor(s: string) {
    this.buf = String.UTF8.encode(s);
  }
  // @ts-ignore: decorator
  @inline get ptr(): usize {
    return changetype<usize>(this.buf);
  }
  // @ts-ignore: decorator
  @inline get len(): usize {
    return <usize>this.buf.byteLength;
  }
}

/** A property path for `proxy_get_property`: segments joined by NUL (docs/architecture.md, Envoy fact 4). */
export function propertyPath(segments: string[]): Utf8 {
  return new Utf8(segments.join('\0'));
}

/** Encodes `s` into the scratch buffer at `offset`; returns the byte length written. */
export function encodeToScratch(s: string, offset: usize): usize {
  const size = <usize>String.UTF8.byteLength(s);
  const base = scratch(offset + size);
  return String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, base + offset);
}
