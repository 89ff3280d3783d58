// What the host layer and the generated module share about the runtime (wasm-runtime.c).
// The build force-includes this file ahead of the generated C, so that wasm-rt.h's call
// depth counter, a process global there, becomes a per-thread one: the macro below turns
// wasm-rt.h's `extern uint32_t wasm_rt_call_stack_depth;` into a declaration of the
// accessor, and every use in the generated code into a thread-local access.
#ifndef STEADFAST_WASM_RUNTIME_H
#define STEADFAST_WASM_RUNTIME_H

#include <setjmp.h>
#include <stdint.h>

// Explicit bounds checks in the generated code, and call depth counted (not a guard page).
#define WASM_RT_MEMCHECK_SIGNAL_HANDLER 0
// Deep enough for any legitimate call chain in the filter; far below the worker's stack.
#define WASM_RT_MAX_CALL_STACK_DEPTH 2000
// A worker's linear memory never grows past this (64 MiB): the filter's caches are bounded
// far below it, so reaching it means a bug, and the allocation fails (a trap) instead.
#define STEADFAST_MAX_PAGES 1024u

extern __thread uint32_t steadfast_call_depth __attribute__((tls_model("initial-exec")));
static inline uint32_t* steadfast_call_depth_slot(void) { return &steadfast_call_depth; }
#define wasm_rt_call_stack_depth (*steadfast_call_depth_slot())

/** Makes `target` where this thread's next trap lands; returns the previous target. */
jmp_buf* steadfast_set_trap_target(jmp_buf* target);

#endif
