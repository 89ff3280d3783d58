// The runtime wasm2c's output links against (the functions wasm-rt.h declares), written
// for steadfast's use of it: one module instance per Envoy worker thread, explicit bounds
// checks (no signal handler for Envoy's own handlers to fight), and a trap that unwinds
// to the host layer's guard on the same thread. wabt's own wasm-rt-impl keeps its jump
// buffer and call depth in process globals, which two workers would share; here both are
// thread-local.
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wasm-rt.h"
#include "wasm-runtime.h"

#define PAGE_SIZE 65536u

__thread uint32_t steadfast_call_depth __attribute__((tls_model("initial-exec")));
static __thread jmp_buf* trap_target __attribute__((tls_model("initial-exec")));
static bool initialized;

void wasm_rt_init(void) { initialized = true; }

bool wasm_rt_is_initialized(void) { return initialized; }

void wasm_rt_free(void) {}

jmp_buf* steadfast_set_trap_target(jmp_buf* target) {
  jmp_buf* previous = trap_target;
  trap_target = target;
  return previous;
}

void wasm_rt_trap(wasm_rt_trap_t code) {
  jmp_buf* target = trap_target;
  // Every entry into the module runs under a guard; a trap outside one is a bug in the host
  // layer, and continuing would run on memory in an unknown state.
  if (target == NULL) abort();
  longjmp(*target, (int)code == 0 ? (int)WASM_RT_TRAP_UNREACHABLE : (int)code);
}

const char* wasm_rt_strerror(wasm_rt_trap_t trap) {
  switch (trap) {
    case WASM_RT_TRAP_NONE: return "no trap";
    case WASM_RT_TRAP_OOB: return "out-of-bounds memory or table access";
    case WASM_RT_TRAP_INT_OVERFLOW: return "integer overflow";
    case WASM_RT_TRAP_DIV_BY_ZERO: return "integer division by zero";
    case WASM_RT_TRAP_INVALID_CONVERSION: return "invalid conversion to integer";
    case WASM_RT_TRAP_UNREACHABLE: return "unreachable executed (an abort in the filter)";
    case WASM_RT_TRAP_CALL_INDIRECT: return "invalid indirect call";
    case WASM_RT_TRAP_UNCAUGHT_EXCEPTION: return "uncaught exception";
    case WASM_RT_TRAP_EXHAUSTION: return "call stack exhausted";
  }
  return "unknown trap";
}

// Function types are registered once, when the module is initialized (under pthread_once in
// the host layer), and only read after that: an index per distinct signature.
typedef struct {
  uint32_t params;
  uint32_t results;
  wasm_rt_type_t types[16];
} func_type_t;

#define MAX_FUNC_TYPES 256
static func_type_t func_types[MAX_FUNC_TYPES];
static uint32_t func_type_count;

uint32_t wasm_rt_register_func_type(uint32_t params, uint32_t results, ...) {
  func_type_t t;
  memset(&t, 0, sizeof t);
  t.params = params;
  t.results = results;
  // A signature wider than we record would make two different types look alike: refuse it
  // (index 0 matches no function, so an indirect call through it traps).
  if (params + results > 16) return 0;
  va_list args;
  va_start(args, results);
  for (uint32_t i = 0; i < params + results; i++) t.types[i] = (wasm_rt_type_t)va_arg(args, int);
  va_end(args);
  for (uint32_t i = 0; i < func_type_count; i++) {
    if (memcmp(&func_types[i], &t, sizeof t) == 0) return i + 1;
  }
  if (func_type_count == MAX_FUNC_TYPES) return 0;
  func_types[func_type_count] = t;
  return ++func_type_count;
}

void wasm_rt_allocate_memory(wasm_rt_memory_t* memory, uint32_t initial_pages, uint32_t max_pages) {
  uint32_t cap = max_pages < STEADFAST_MAX_PAGES ? max_pages : STEADFAST_MAX_PAGES;
  memory->pages = initial_pages;
  memory->max_pages = cap;
  memory->size = initial_pages * PAGE_SIZE;
  memory->data = initial_pages == 0 ? NULL : calloc(initial_pages, PAGE_SIZE);
  if (initial_pages != 0 && memory->data == NULL) wasm_rt_trap(WASM_RT_TRAP_OOB);
}

uint32_t wasm_rt_grow_memory(wasm_rt_memory_t* memory, uint32_t delta) {
  uint32_t old_pages = memory->pages;
  if (delta == 0) return old_pages;
  if (delta > memory->max_pages - old_pages) return UINT32_MAX;
  uint32_t new_pages = old_pages + delta;
  uint8_t* data = realloc(memory->data, (size_t)new_pages * PAGE_SIZE);
  if (data == NULL) return UINT32_MAX;
  memset(data + (size_t)old_pages * PAGE_SIZE, 0, (size_t)delta * PAGE_SIZE);
  memory->data = data;
  memory->pages = new_pages;
  memory->size = new_pages * PAGE_SIZE;
  return old_pages;
}

void wasm_rt_free_memory(wasm_rt_memory_t* memory) {
  free(memory->data);
  memory->data = NULL;
  memory->size = 0;
  memory->pages = 0;
}

void wasm_rt_allocate_funcref_table(wasm_rt_funcref_table_t* table, uint32_t elements, uint32_t max_elements) {
  table->size = elements;
  table->max_size = max_elements;
  table->data = elements == 0 ? NULL : calloc(elements, sizeof(wasm_rt_funcref_t));
  if (elements != 0 && table->data == NULL) wasm_rt_trap(WASM_RT_TRAP_OOB);
}

void wasm_rt_free_funcref_table(wasm_rt_funcref_table_t* table) {
  free(table->data);
  table->data = NULL;
  table->size = 0;
}
