// The host layer of the native filter: Envoy's dynamic-module events drive the filter's
// proxy-wasm exports, and the proxy-wasm imports the filter calls are served by Envoy's
// dynamic-module callbacks. The filter itself is steadfast.wasm compiled to C by wasm2c
// (steadfast.c), so the AssemblyScript stays the one place where session and retry
// behaviour live; this file only translates between the two ABIs.
//
// As with Envoy's wasm runtime: one module instance (one linear memory) per worker thread,
// shared by every filter configuration on it (the instances of `vm_id: steadfast` share a
// VM); one root context per configuration per worker; one HTTP context per stream.
// The module can touch only its own linear memory (wasm2c's explicit bounds checks), and
// every call into it runs under a guard: a trap (unreachable, out of bounds, stack
// exhaustion) lands back here, the request that hit it is answered 503 as the wasm filter
// fails closed, held retries on that worker are released, and the next stream gets a fresh
// instance. Envoy never sees the trap.
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "envoy-abi.h"
#include "steadfast.h"
#include "wasm-runtime.h"

#define EXPORT __attribute__((visibility("default")))

#if defined(__x86_64__) && defined(__GLIBC__)
// The oldest versions of these glibc still provides: the module then needs no newer glibc
// than Envoy's own release binary does (2.30), whatever the machine that built it has. Since
// glibc 2.34 the default versions are new ones (libpthread moved into libc).
__asm__(".symver pthread_create,pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_detach,pthread_detach@GLIBC_2.2.5");
__asm__(".symver pthread_once,pthread_once@GLIBC_2.2.5");
__asm__(".symver pthread_condattr_setclock,pthread_condattr_setclock@GLIBC_2.3.3");
#endif

// proxy-wasm results and enums (ABI 0.2.1).
enum { WASM_OK = 0, WASM_NOT_FOUND = 1, WASM_BAD_ARGUMENT = 2, WASM_INVALID_MEMORY = 6, WASM_UNIMPLEMENTED = 12 };
enum { BUFFER_PLUGIN_CONFIGURATION = 7 };
enum { METRIC_COUNTER = 0 };
enum { STREAM_REQUEST = 0 };

/** The only filter name this module serves (DynamicModuleFilter.filter_name). */
#define FILTER_NAME "steadfast"
/** Filter state a `proxy_set_property(name)` writes, as Envoy's wasm host names it. */
#define FILTER_STATE_PREFIX "wasm."
#define MAX_METRICS 64
#define MAX_PROPERTY_PATH 256
#define MAX_PROPERTY_SEGMENTS 8
#define TICK_EVENT 1
/** Counts traps (each replaced an instance); with the filter's own counters in `wasmcustom.`. */
#define TRAP_COUNTER "steadfast_native_trapped_total"

typedef struct config config_t;
typedef struct root root_t;
typedef struct stream stream_t;
typedef struct worker worker_t;

struct Z_env_instance_t {
  worker_t* worker;
};
struct Z_wasi_snapshot_preview1_instance_t {
  worker_t* worker;
};

typedef struct {
  char name[96];
  size_t name_len;
  size_t envoy_id;
} metric_t;

/** One filter configuration as Envoy loaded it. Counted: Envoy holds it, and every root context made from it. */
struct config {
  filter_config_envoy envoy;
  uint64_t serial;
  atomic_int refs;
  char* plugin;
  size_t plugin_len;
  metric_t metrics[MAX_METRICS];
  uint32_t metric_count;
  /** Only while Envoy creates the configuration: metrics may be defined then and only then. */
  bool defining;
  /** The host layer's own counter: calls into the filter that trapped (and replaced the instance). */
  bool has_trap_counter;
  size_t trap_counter;
  /** Per Envoy worker (and one for the main thread): this configuration's root context there. */
  uint32_t slot_count;
  struct {
    uint64_t worker_serial;
    root_t* root;
  } * slots;
};

/** A configuration's root context inside one instance. */
struct root {
  config_t* config;
  uint32_t context_id;
  uint32_t tick_ms;
  uint64_t next_tick_ns;
};

/** One request (downstream chain) or one attempt (upstream chain). */
struct stream {
  filter_envoy envoy;
  worker_t* worker;
  config_t* config;
  root_t* root;
  uint32_t context_id;
  bool paused;
  stream_t* prev_paused;
  stream_t* next_paused;
  filter_scheduler scheduler;
};

/** One module instance: a worker thread's linear memory and everything it holds. */
struct worker {
  Z_steadfast_instance_t module;
  struct Z_env_instance_t env;
  struct Z_wasi_snapshot_preview1_instance_t wasi;
  uint64_t serial;
  bool broken;
  uint32_t next_context_id;
  uint32_t live_streams;
  /** What runs now: the stream (or none, for a root) and its configuration. */
  stream_t* current;
  config_t* current_config;
  root_t* current_root;
  root_t** roots;
  uint32_t root_count;
  uint32_t root_cap;
  uint64_t retired_seen;
  stream_t* paused;
  envoy_header* headers;
  size_t headers_cap;
  // Ticks (guarded by ticker_lock): the smallest period of its roots, the scheduler of a
  // paused stream that carries tick events to this thread, whether one is in flight on it.
  uint32_t tick_ms;
  filter_scheduler tick_scheduler;
  bool tick_pending;
  uint64_t next_tick_ns;
  worker_t* next_ticking;
  bool in_ticker_list;
};

static __thread worker_t* this_worker;
static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t config_serials;
static atomic_uint_fast64_t worker_serials;

// Configurations Envoy has destroyed: an instance drops its root contexts of them on its next
// stream. A generation counter makes the check one atomic load when nothing changed.
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t* retired_serials;
static size_t retired_count;
static size_t retired_cap;
static atomic_uint_fast64_t retired_generation;

static pthread_mutex_t ticker_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ticker_wake;
static worker_t* ticking;
static bool ticker_started;

// ---- small helpers ------------------------------------------------------------------

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void log_text(int level, const char* text) {
  if (!envoy_dynamic_module_callback_log_enabled(level)) return;
  module_buffer b = {text, strlen(text)};
  envoy_dynamic_module_callback_log(level, b);
}

static module_buffer text_buffer(const char* text) {
  module_buffer b = {text, strlen(text)};
  return b;
}

static void config_release(config_t* c) {
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  free(c->plugin);
  free(c->slots);
  free(c);
}

// ---- linear memory ------------------------------------------------------------------

/** `len` bytes at `ptr` in the instance's memory, or NULL when they are not all inside it. */
static uint8_t* memory_at(worker_t* w, uint32_t ptr, uint64_t len) {
  wasm_rt_memory_t* m = &w->module.w2c_memory;
  if ((uint64_t)ptr + len > m->size) return NULL;
  return m->data + ptr;
}

static bool put_u32(worker_t* w, uint32_t ptr, uint32_t value) {
  uint8_t* p = memory_at(w, ptr, 4);
  if (p == NULL) return false;
  memcpy(p, &value, 4);
  return true;
}

static bool put_u64(worker_t* w, uint32_t ptr, uint64_t value) {
  uint8_t* p = memory_at(w, ptr, 8);
  if (p == NULL) return false;
  memcpy(p, &value, 8);
  return true;
}

/** Space for `len` bytes from the module's own allocator (it may move memory: re-read pointers). */
static uint32_t module_alloc(worker_t* w, uint64_t len) {
  if (len == 0 || len > 0x7fffffffu) return 0;
  return Z_steadfastZ_proxy_on_memory_allocate(&w->module, (uint32_t)len);
}

/** Hands `len` bytes to the module as proxy-wasm does: a fresh allocation it frees itself. */
static uint32_t give_bytes(worker_t* w, const char* data, size_t len, uint32_t ret_ptr, uint32_t ret_size) {
  uint32_t at = 0;
  if (len > 0) {
    at = module_alloc(w, len);
    uint8_t* dest = at == 0 ? NULL : memory_at(w, at, len);
    if (dest == NULL) return WASM_INVALID_MEMORY;
    memcpy(dest, data, len);
  }
  if (!put_u32(w, ret_ptr, at) || !put_u32(w, ret_size, (uint32_t)len)) return WASM_INVALID_MEMORY;
  return WASM_OK;
}

// ---- guarded entry ------------------------------------------------------------------

static void release_paused(worker_t* w);

static void worker_trapped(worker_t* w, int code) {
  config_t* c = w->current_config;
  if (c != NULL && c->has_trap_counter)
    envoy_dynamic_module_callback_http_filter_config_increment_counter(c->envoy, c->trap_counter, NULL, 0, 1);
  if (envoy_dynamic_module_callback_log_enabled(LOG_ERROR)) {
    char message[160];
    snprintf(message, sizeof message, "steadfast: the filter trapped (%s); this worker's instance is replaced",
             wasm_rt_strerror((wasm_rt_trap_t)code));
    log_text(LOG_ERROR, message);
  }
  w->broken = true;
  if (this_worker == w) this_worker = NULL;
  // Attempts it held back would wait for a tick that no longer comes: they go now.
  release_paused(w);
}

// Runs `body` (a call into the module) so that a trap comes back here as `trapped` set,
// with the call depth and the previous guard (a host call re-entering the module) restored.
#define GUARDED(w, trapped, body)                                   \
  do {                                                              \
    jmp_buf guard_;                                                 \
    jmp_buf* previous_ = steadfast_set_trap_target(&guard_);        \
    uint32_t depth_ = steadfast_call_depth;                         \
    int code_ = setjmp(guard_);                                     \
    if (code_ == 0) {                                               \
      body;                                                         \
      steadfast_set_trap_target(previous_);                         \
      (trapped) = false;                                            \
    } else {                                                        \
      steadfast_set_trap_target(previous_);                         \
      steadfast_call_depth = depth_;                                \
      (trapped) = true;                                             \
      worker_trapped((w), code_);                                   \
    }                                                               \
  } while (0)

// ---- instances ------------------------------------------------------------------------

static void init_module_once(void) {
  wasm_rt_init();
  Z_steadfast_init_module();
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&ticker_wake, &attr);
  pthread_condattr_destroy(&attr);
}

static void ticker_forget(worker_t* w);

static void worker_free(worker_t* w) {
  ticker_forget(w);
  for (uint32_t i = 0; i < w->root_count; i++) {
    config_release(w->roots[i]->config);
    free(w->roots[i]);
  }
  free(w->roots);
  free(w->headers);
  Z_steadfast_free(&w->module);
  free(w);
}

/** This thread's instance, made (and its module initialized) on first use or after a trap. */
static worker_t* current_worker(void) {
  worker_t* w = this_worker;
  if (w != NULL) return w;
  pthread_once(&module_once, init_module_once);
  w = calloc(1, sizeof *w);
  if (w == NULL) return NULL;
  w->env.worker = w;
  w->wasi.worker = w;
  w->serial = atomic_fetch_add(&worker_serials, 1) + 1;
  w->next_context_id = 1;
  w->retired_seen = atomic_load(&retired_generation);
  bool trapped;
  volatile bool instantiated = false;
  GUARDED(w, trapped, {
    Z_steadfast_instantiate(&w->module, &w->env, &w->wasi);
    instantiated = true;
    Z_steadfastZ__initialize(&w->module);
  });
  if (trapped) {
    if (instantiated) Z_steadfast_free(&w->module);
    free(w);
    return NULL;
  }
  this_worker = w;
  return w;
}

static void worker_drop_if_done(worker_t* w) {
  if (w->broken && w->live_streams == 0) worker_free(w);
}

// ---- root contexts ----------------------------------------------------------------------

static void root_delete(worker_t* w, uint32_t index) {
  root_t* r = w->roots[index];
  if (!w->broken) {
    bool trapped;
    w->current = NULL;
    w->current_config = r->config;
    w->current_root = r;
    GUARDED(w, trapped, {
      Z_steadfastZ_proxy_on_done(&w->module, r->context_id);
      Z_steadfastZ_proxy_on_delete(&w->module, r->context_id);
    });
    (void)trapped;
  }
  config_release(r->config);
  free(r);
  w->roots[index] = w->roots[--w->root_count];
}

/** Drops the root contexts of configurations Envoy has destroyed since this instance last looked. */
static void sweep_retired(worker_t* w) {
  uint64_t generation = atomic_load(&retired_generation);
  if (generation == w->retired_seen) return;
  w->retired_seen = generation;
  pthread_mutex_lock(&retired_lock);
  for (uint32_t i = 0; i < w->root_count;) {
    uint64_t serial = w->roots[i]->config->serial;
    bool retired = false;
    for (size_t j = 0; j < retired_count && !retired; j++) retired = retired_serials[j] == serial;
    if (retired) {
      pthread_mutex_unlock(&retired_lock);
      root_delete(w, i);
      pthread_mutex_lock(&retired_lock);
    } else {
      i++;
    }
  }
  pthread_mutex_unlock(&retired_lock);
}

/** Creates and configures the root context of `c` in `w`; NULL if the filter refuses the configuration. */
static root_t* root_create(worker_t* w, config_t* c) {
  if (w->root_count == w->root_cap) {
    uint32_t cap = w->root_cap == 0 ? 8 : w->root_cap * 2;
    root_t** roots = realloc(w->roots, cap * sizeof *roots);
    if (roots == NULL) return NULL;
    w->roots = roots;
    w->root_cap = cap;
  }
  root_t* r = calloc(1, sizeof *r);
  if (r == NULL) return NULL;
  r->config = c;
  r->context_id = w->next_context_id++;
  w->current = NULL;
  w->current_config = c;
  w->current_root = r;
  bool trapped;
  volatile uint32_t configured = 0;
  GUARDED(w, trapped, {
    Z_steadfastZ_proxy_on_context_create(&w->module, r->context_id, 0);
    if (Z_steadfastZ_proxy_on_vm_start(&w->module, r->context_id, 0) != 0)
      configured = Z_steadfastZ_proxy_on_configure(&w->module, r->context_id, (uint32_t)c->plugin_len);
  });
  w->current_root = NULL;
  if (trapped || configured == 0) {
    if (!trapped) {
      GUARDED(w, trapped, Z_steadfastZ_proxy_on_delete(&w->module, r->context_id));
    }
    free(r);
    return NULL;
  }
  atomic_fetch_add(&c->refs, 1);
  w->roots[w->root_count++] = r;
  return r;
}

/** The root context of `c` in `w`, made on first use. `slot` is the Envoy worker's index. */
static root_t* root_for(worker_t* w, config_t* c, uint32_t slot) {
  if (slot < c->slot_count && c->slots[slot].worker_serial == w->serial) return c->slots[slot].root;
  root_t* r = NULL;
  for (uint32_t i = 0; i < w->root_count && r == NULL; i++) {
    if (w->roots[i]->config == c) r = w->roots[i];
  }
  if (r == NULL) r = root_create(w, c);
  if (r != NULL && slot < c->slot_count) {
    c->slots[slot].worker_serial = w->serial;
    c->slots[slot].root = r;
  }
  return r;
}

// ---- ticks ------------------------------------------------------------------------------
// Envoy's dynamic modules have no timer: a thread of ours commits a tick event, through the
// scheduler of a stream held on that worker, so the event runs on the worker's own thread.
// The filter ticks only while it holds an attempt, so there is always such a stream.

static void* ticker_main(void* unused) {
  (void)unused;
  pthread_mutex_lock(&ticker_lock);
  for (;;) {
    uint64_t now = monotonic_ns();
    uint64_t next = UINT64_MAX;
    for (worker_t* w = ticking; w != NULL; w = w->next_ticking) {
      if (w->tick_ms == 0 || w->tick_scheduler == NULL) continue;
      if (!w->tick_pending && now >= w->next_tick_ns) {
        envoy_dynamic_module_callback_http_filter_scheduler_commit(w->tick_scheduler, TICK_EVENT);
        w->tick_pending = true;
        w->next_tick_ns = now + (uint64_t)w->tick_ms * 1000000ull;
      }
      // A tick still in flight is looked at again one period later.
      uint64_t due = w->tick_pending ? now + (uint64_t)w->tick_ms * 1000000ull : w->next_tick_ns;
      if (due < next) next = due;
    }
    if (next == UINT64_MAX) {
      pthread_cond_wait(&ticker_wake, &ticker_lock);
    } else {
      struct timespec until = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
      pthread_cond_timedwait(&ticker_wake, &ticker_lock, &until);
    }
  }
  return NULL;
}

/** With ticker_lock held: the scheduler of any paused stream, for ticks to ride on. */
static filter_scheduler any_paused_scheduler(worker_t* w) {
  for (stream_t* s = w->paused; s != NULL; s = s->next_paused) {
    if (s->scheduler != NULL) return s->scheduler;
  }
  return NULL;
}

static void ticker_update(worker_t* w) {
  uint32_t smallest = 0;
  for (uint32_t i = 0; i < w->root_count; i++) {
    uint32_t ms = w->roots[i]->tick_ms;
    if (ms != 0 && (smallest == 0 || ms < smallest)) smallest = ms;
  }
  pthread_mutex_lock(&ticker_lock);
  w->tick_ms = smallest;
  if (w->tick_scheduler == NULL) w->tick_scheduler = any_paused_scheduler(w);
  if (smallest != 0 && !w->in_ticker_list) {
    w->next_ticking = ticking;
    ticking = w;
    w->in_ticker_list = true;
    w->next_tick_ns = monotonic_ns() + (uint64_t)smallest * 1000000ull;
  }
  if (smallest != 0 && !ticker_started) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, ticker_main, NULL) == 0) {
      pthread_detach(thread);
      ticker_started = true;
    } else {
      log_text(LOG_ERROR, "steadfast: could not start the tick thread; held retries go without a floor");
    }
  }
  pthread_cond_signal(&ticker_wake);
  pthread_mutex_unlock(&ticker_lock);
}

static void ticker_forget(worker_t* w) {
  pthread_mutex_lock(&ticker_lock);
  if (w->in_ticker_list) {
    for (worker_t** p = &ticking; *p != NULL; p = &(*p)->next_ticking) {
      if (*p == w) {
        *p = w->next_ticking;
        break;
      }
    }
    w->in_ticker_list = false;
  }
  w->tick_scheduler = NULL;
  pthread_mutex_unlock(&ticker_lock);
}

static void stream_pause(stream_t* s) {
  worker_t* w = s->worker;
  if (s->paused) return;
  if (s->scheduler == NULL) s->scheduler = envoy_dynamic_module_callback_http_filter_scheduler_new(s->envoy);
  s->paused = true;
  s->prev_paused = NULL;
  s->next_paused = w->paused;
  if (w->paused != NULL) w->paused->prev_paused = s;
  w->paused = s;
  pthread_mutex_lock(&ticker_lock);
  if (w->tick_scheduler == NULL && s->scheduler != NULL) {
    w->tick_scheduler = s->scheduler;
    pthread_cond_signal(&ticker_wake);
  }
  pthread_mutex_unlock(&ticker_lock);
}

static void stream_unpause(stream_t* s) {
  worker_t* w = s->worker;
  if (!s->paused) return;
  s->paused = false;
  if (s->prev_paused != NULL) s->prev_paused->next_paused = s->next_paused;
  else w->paused = s->next_paused;
  if (s->next_paused != NULL) s->next_paused->prev_paused = s->prev_paused;
  s->prev_paused = s->next_paused = NULL;
  pthread_mutex_lock(&ticker_lock);
  if (w->tick_scheduler == s->scheduler) {
    w->tick_scheduler = any_paused_scheduler(w);
    // A tick in flight on this stream's scheduler is dropped by Envoy if the stream is destroyed
    // before it runs: count it as lost, or the ticker would wait for it forever. At worst the
    // tick arrives too, and run_ticks skips the roots that are not due.
    w->tick_pending = false;
  }
  pthread_mutex_unlock(&ticker_lock);
}

static void release_paused(worker_t* w) {
  while (w->paused != NULL) {
    stream_t* s = w->paused;
    stream_unpause(s);
    envoy_dynamic_module_callback_http_filter_continue_decoding(s->envoy);
  }
}

static void run_ticks(worker_t* w) {
  pthread_mutex_lock(&ticker_lock);
  w->tick_pending = false;
  pthread_mutex_unlock(&ticker_lock);
  uint64_t now = monotonic_ns();
  for (uint32_t i = 0; i < w->root_count && !w->broken; i++) {
    root_t* r = w->roots[i];
    if (r->tick_ms == 0 || now < r->next_tick_ns) continue;
    r->next_tick_ns = now + (uint64_t)r->tick_ms * 1000000ull;
    w->current = NULL;
    w->current_config = r->config;
    w->current_root = r;
    bool trapped;
    GUARDED(w, trapped, Z_steadfastZ_proxy_on_tick(&w->module, r->context_id));
    (void)trapped;
  }
  w->current_root = NULL;
}

// ---- proxy-wasm imports: env ------------------------------------------------------------

#define WORKER(env) ((env)->worker)

u32 Z_envZ_proxy_log(struct Z_env_instance_t* env, u32 level, u32 ptr, u32 len) {
  worker_t* w = WORKER(env);
  uint8_t* text = memory_at(w, ptr, len);
  if (text == NULL) return WASM_INVALID_MEMORY;
  if (level > LOG_CRITICAL) return WASM_BAD_ARGUMENT;
  module_buffer b = {(const char*)text, len};
  envoy_dynamic_module_callback_log((int)level, b);
  return WASM_OK;
}

u32 Z_envZ_proxy_get_log_level(struct Z_env_instance_t* env, u32 ret) {
  return put_u32(WORKER(env), ret, (uint32_t)envoy_dynamic_module_callback_get_log_level()) ? WASM_OK
                                                                                           : WASM_INVALID_MEMORY;
}

u32 Z_envZ_proxy_get_current_time_nanoseconds(struct Z_env_instance_t* env, u32 ret) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
  return put_u64(WORKER(env), ret, ns) ? WASM_OK : WASM_INVALID_MEMORY;
}

u32 Z_envZ_proxy_get_buffer_bytes(struct Z_env_instance_t* env, u32 type, u32 start, u32 max, u32 ret_ptr,
                                  u32 ret_size) {
  worker_t* w = WORKER(env);
  config_t* c = w->current_config;
  if (type != BUFFER_PLUGIN_CONFIGURATION || c == NULL) return WASM_NOT_FOUND;
  if (start > c->plugin_len) return WASM_BAD_ARGUMENT;
  size_t len = c->plugin_len - start;
  if (len > max) len = max;
  return give_bytes(w, c->plugin + start, len, ret_ptr, ret_size);
}

/**
 * What every header call starts with: the stream it is about and the header's name in the
 * module's memory. WASM_OK, or the result the call returns at once.
 */
static u32 header_call(worker_t* w, u32 key_ptr, u32 key_len, stream_t** s, module_buffer* key) {
  uint8_t* name = memory_at(w, key_ptr, key_len);
  if (name == NULL) return WASM_INVALID_MEMORY;
  *s = w->current;
  if (*s == NULL) return WASM_NOT_FOUND;
  key->ptr = (const char*)name;
  key->length = key_len;
  return WASM_OK;
}

u32 Z_envZ_proxy_get_header_map_value(struct Z_env_instance_t* env, u32 map, u32 key_ptr, u32 key_len, u32 ret_ptr,
                                      u32 ret_size) {
  worker_t* w = WORKER(env);
  stream_t* s;
  module_buffer k;
  u32 r = header_call(w, key_ptr, key_len, &s, &k);
  if (r != WASM_OK) return r;
  envoy_buffer value = {NULL, 0};
  if (!envoy_dynamic_module_callback_http_get_header(s->envoy, (int)map, k, &value, 0, NULL)) return WASM_NOT_FOUND;
  return give_bytes(w, value.ptr, value.length, ret_ptr, ret_size);
}

u32 Z_envZ_proxy_get_header_map_pairs(struct Z_env_instance_t* env, u32 map, u32 ret_ptr, u32 ret_size) {
  worker_t* w = WORKER(env);
  stream_t* s = w->current;
  if (s == NULL) return WASM_NOT_FOUND;
  size_t count = envoy_dynamic_module_callback_http_get_headers_size(s->envoy, (int)map);
  if (count > w->headers_cap) {
    envoy_header* grown = realloc(w->headers, count * sizeof *grown);
    if (grown == NULL) return WASM_INVALID_MEMORY;
    w->headers = grown;
    w->headers_cap = count;
  }
  if (count > 0 && !envoy_dynamic_module_callback_http_get_headers(s->envoy, (int)map, w->headers)) count = 0;
  // proxy-wasm's serialization: a u32 count, a u32 key size and value size per pair, then
  // each key and value followed by a NUL.
  uint64_t size = 4 + 8 * (uint64_t)count;
  for (size_t i = 0; i < count; i++) size += w->headers[i].key_length + w->headers[i].value_length + 2;
  uint32_t at = module_alloc(w, size);
  uint8_t* out = at == 0 ? NULL : memory_at(w, at, size);
  if (out == NULL) return WASM_INVALID_MEMORY;
  uint32_t n = (uint32_t)count;
  memcpy(out, &n, 4);
  uint8_t* sizes = out + 4;
  uint8_t* data = sizes + 8 * count;
  for (size_t i = 0; i < count; i++) {
    envoy_header* h = &w->headers[i];
    uint32_t kl = (uint32_t)h->key_length, vl = (uint32_t)h->value_length;
    memcpy(sizes, &kl, 4);
    memcpy(sizes + 4, &vl, 4);
    sizes += 8;
    memcpy(data, h->key_ptr, kl);
    data[kl] = 0;
    data += kl + 1;
    memcpy(data, h->value_ptr, vl);
    data[vl] = 0;
    data += vl + 1;
  }
  if (!put_u32(w, ret_ptr, at) || !put_u32(w, ret_size, (uint32_t)size)) return WASM_INVALID_MEMORY;
  return WASM_OK;
}

static u32 write_header(struct Z_env_instance_t* env, u32 map, u32 key_ptr, u32 key_len, u32 value_ptr, u32 value_len,
                        bool add) {
  worker_t* w = WORKER(env);
  uint8_t* value = memory_at(w, value_ptr, value_len);
  if (value == NULL) return WASM_INVALID_MEMORY;
  stream_t* s;
  module_buffer k;
  u32 r = header_call(w, key_ptr, key_len, &s, &k);
  if (r != WASM_OK) return r;
  module_buffer v = {(const char*)value, value_len};
  bool ok = add ? envoy_dynamic_module_callback_http_add_header(s->envoy, (int)map, k, v)
                : envoy_dynamic_module_callback_http_set_header(s->envoy, (int)map, k, v);
  return ok ? WASM_OK : WASM_NOT_FOUND;
}

u32 Z_envZ_proxy_add_header_map_value(struct Z_env_instance_t* env, u32 map, u32 key_ptr, u32 key_len, u32 value_ptr,
                                      u32 value_len) {
  return write_header(env, map, key_ptr, key_len, value_ptr, value_len, true);
}

u32 Z_envZ_proxy_replace_header_map_value(struct Z_env_instance_t* env, u32 map, u32 key_ptr, u32 key_len,
                                          u32 value_ptr, u32 value_len) {
  return write_header(env, map, key_ptr, key_len, value_ptr, value_len, false);
}

u32 Z_envZ_proxy_remove_header_map_value(struct Z_env_instance_t* env, u32 map, u32 key_ptr, u32 key_len) {
  stream_t* s;
  module_buffer k;
  u32 r = header_call(WORKER(env), key_ptr, key_len, &s, &k);
  if (r != WASM_OK) return r;
  // Envoy's set_header with no value removes the header.
  module_buffer none = {NULL, 0};
  return envoy_dynamic_module_callback_http_set_header(s->envoy, (int)map, k, none) ? WASM_OK : WASM_NOT_FOUND;
}

/** Splits a NUL-joined property path into at most MAX_PROPERTY_SEGMENTS segments. */
static size_t split_path(const char* path, size_t len, module_buffer* out) {
  size_t n = 0, start = 0;
  for (size_t i = 0; i <= len; i++) {
    if (i == len || path[i] == '\0') {
      if (n == MAX_PROPERTY_SEGMENTS) return 0;
      out[n].ptr = path + start;
      out[n].length = i - start;
      n++;
      start = i + 1;
    }
  }
  return n;
}

static bool segment_is(module_buffer segment, const char* text) {
  size_t len = strlen(text);
  return segment.length == len && memcmp(segment.ptr, text, len) == 0;
}

/** The property paths the filter reads (filter/assembly/properties.ts), served natively. */
static u32 get_property(worker_t* w, stream_t* s, const char* path, size_t len, u32 ret_ptr, u32 ret_size) {
  module_buffer seg[MAX_PROPERTY_SEGMENTS];
  size_t n = split_path(path, len, seg);
  envoy_buffer value = {NULL, 0};
  bool found = false;
  if (n == 4 && segment_is(seg[0], "metadata") && segment_is(seg[1], "filter_metadata")) {
    found = envoy_dynamic_module_callback_http_get_metadata_string(s->envoy, METADATA_DYNAMIC, seg[2], seg[3], &value);
  } else if (n == 5 && segment_is(seg[0], "xds") && segment_is(seg[1], "route_metadata") &&
             segment_is(seg[2], "filter_metadata")) {
    found = envoy_dynamic_module_callback_http_get_metadata_string(s->envoy, METADATA_ROUTE, seg[3], seg[4], &value);
  } else if (n == 5 && segment_is(seg[0], "xds") && segment_is(seg[1], "listener_metadata") &&
             segment_is(seg[2], "filter_metadata") && segment_is(seg[3], "steadfast") &&
             segment_is(seg[4], "gateway_port")) {
    // A dynamic module cannot read the listener's metadata. The filter reads this value only to
    // tell listeners apart in the answer cache's keys (one value, one Gateway port); the
    // connection's local address ("ip:port") tells them apart as well, so it stands in.
    found = envoy_dynamic_module_callback_http_filter_get_attribute_string(s->envoy, ATTRIBUTE_DESTINATION_ADDRESS,
                                                                           &value);
  } else if (n == 2 && segment_is(seg[0], "destination") && segment_is(seg[1], "port")) {
    uint64_t port = 0;
    if (!envoy_dynamic_module_callback_http_filter_get_attribute_int(s->envoy, ATTRIBUTE_DESTINATION_PORT, &port))
      return WASM_NOT_FOUND;
    // As Envoy's wasm host hands an integer property over: eight little-endian bytes.
    return give_bytes(w, (const char*)&port, 8, ret_ptr, ret_size);
  } else if (n == 2 && segment_is(seg[0], "upstream") && segment_is(seg[1], "address")) {
    found = envoy_dynamic_module_callback_http_filter_get_attribute_string(s->envoy, ATTRIBUTE_UPSTREAM_ADDRESS, &value);
  } else if (n == 2 && segment_is(seg[0], "connection") && segment_is(seg[1], "tls_version")) {
    found = envoy_dynamic_module_callback_http_filter_get_attribute_string(s->envoy, ATTRIBUTE_CONNECTION_TLS_VERSION,
                                                                           &value);
  } else if (n == 1 && seg[0].length > 0 && seg[0].length <= MAX_PROPERTY_PATH - sizeof FILTER_STATE_PREFIX) {
    char key[MAX_PROPERTY_PATH];
    size_t prefix = sizeof FILTER_STATE_PREFIX - 1;
    memcpy(key, FILTER_STATE_PREFIX, prefix);
    memcpy(key + prefix, seg[0].ptr, seg[0].length);
    module_buffer k = {key, prefix + seg[0].length};
    found = envoy_dynamic_module_callback_http_get_filter_state_bytes(s->envoy, k, &value);
  }
  // An absent value is NotFound, as in Envoy's wasm host (e.g. no TLS version on plain HTTP).
  if (!found || value.ptr == NULL || value.length == 0) return WASM_NOT_FOUND;
  return give_bytes(w, value.ptr, value.length, ret_ptr, ret_size);
}

u32 Z_envZ_proxy_get_property(struct Z_env_instance_t* env, u32 path_ptr, u32 path_len, u32 ret_ptr, u32 ret_size) {
  worker_t* w = WORKER(env);
  uint8_t* path = memory_at(w, path_ptr, path_len);
  if (path == NULL) return WASM_INVALID_MEMORY;
  if (w->current == NULL || path_len > MAX_PROPERTY_PATH) return WASM_NOT_FOUND;
  // The path is copied out: answering may allocate in the module, which can move its memory.
  char copy[MAX_PROPERTY_PATH];
  memcpy(copy, path, path_len);
  return get_property(w, w->current, copy, path_len, ret_ptr, ret_size);
}

u32 Z_envZ_proxy_set_property(struct Z_env_instance_t* env, u32 path_ptr, u32 path_len, u32 value_ptr, u32 value_len) {
  worker_t* w = WORKER(env);
  uint8_t* path = memory_at(w, path_ptr, path_len);
  uint8_t* value = memory_at(w, value_ptr, value_len);
  if (path == NULL || value == NULL) return WASM_INVALID_MEMORY;
  stream_t* s = w->current;
  size_t prefix = sizeof FILTER_STATE_PREFIX - 1;
  if (s == NULL || path_len == 0 || path_len + prefix > MAX_PROPERTY_PATH || memchr(path, 0, path_len) != NULL)
    return WASM_NOT_FOUND;
  char key[MAX_PROPERTY_PATH];
  memcpy(key, FILTER_STATE_PREFIX, prefix);
  memcpy(key + prefix, path, path_len);
  module_buffer k = {key, prefix + path_len};
  module_buffer v = {(const char*)value, value_len};
  return envoy_dynamic_module_callback_http_set_filter_state_bytes(s->envoy, k, v) ? WASM_OK : WASM_NOT_FOUND;
}

u32 Z_envZ_proxy_define_metric(struct Z_env_instance_t* env, u32 type, u32 name_ptr, u32 name_len, u32 ret_id) {
  worker_t* w = WORKER(env);
  config_t* c = w->current_config;
  uint8_t* name = memory_at(w, name_ptr, name_len);
  if (name == NULL) return WASM_INVALID_MEMORY;
  if (type != METRIC_COUNTER || c == NULL) return WASM_UNIMPLEMENTED;
  if (name_len == 0 || name_len >= sizeof c->metrics[0].name) return WASM_BAD_ARGUMENT;
  for (uint32_t i = 0; i < c->metric_count; i++) {
    metric_t* m = &c->metrics[i];
    if (m->name_len == name_len && memcmp(m->name, name, name_len) == 0)
      return put_u32(w, ret_id, i) ? WASM_OK : WASM_INVALID_MEMORY;
  }
  // Envoy takes new metrics only while it creates the configuration; every instance's root
  // context defines the same ones, which the first configure (on the main thread) defined.
  if (!c->defining || c->metric_count == MAX_METRICS) return WASM_BAD_ARGUMENT;
  metric_t* m = &c->metrics[c->metric_count];
  memcpy(m->name, name, name_len);
  m->name_len = name_len;
  module_buffer b = {m->name, name_len};
  if (envoy_dynamic_module_callback_http_filter_config_define_counter(c->envoy, b, NULL, 0, &m->envoy_id) !=
      METRICS_SUCCESS)
    return WASM_BAD_ARGUMENT;
  return put_u32(w, ret_id, c->metric_count++) ? WASM_OK : WASM_INVALID_MEMORY;
}

u32 Z_envZ_proxy_increment_metric(struct Z_env_instance_t* env, u32 id, u64 offset) {
  worker_t* w = WORKER(env);
  config_t* c = w->current_config;
  if (c == NULL || id >= c->metric_count) return WASM_NOT_FOUND;
  if ((int64_t)offset <= 0) return WASM_OK;  // counters only go up
  size_t envoy_id = c->metrics[id].envoy_id;
  if (w->current != NULL)
    envoy_dynamic_module_callback_http_filter_increment_counter(w->current->envoy, envoy_id, NULL, 0, offset);
  else
    envoy_dynamic_module_callback_http_filter_config_increment_counter(c->envoy, envoy_id, NULL, 0, offset);
  return WASM_OK;
}

u32 Z_envZ_proxy_set_tick_period_milliseconds(struct Z_env_instance_t* env, u32 period_ms) {
  worker_t* w = WORKER(env);
  // As in Envoy's wasm host, the period is the root context's, also when a stream asks.
  root_t* r = w->current != NULL ? w->current->root : w->current_root;
  if (r == NULL) return WASM_NOT_FOUND;
  r->tick_ms = period_ms;
  r->next_tick_ns = monotonic_ns() + (uint64_t)period_ms * 1000000ull;
  ticker_update(w);
  return WASM_OK;
}

u32 Z_envZ_proxy_set_effective_context(struct Z_env_instance_t* env, u32 context_id) {
  worker_t* w = WORKER(env);
  // The filter switches only to streams it holds back, to resume them.
  for (stream_t* s = w->paused; s != NULL; s = s->next_paused) {
    if (s->context_id == context_id) {
      w->current = s;
      return WASM_OK;
    }
  }
  return WASM_NOT_FOUND;
}

u32 Z_envZ_proxy_continue_stream(struct Z_env_instance_t* env, u32 stream_type) {
  worker_t* w = WORKER(env);
  stream_t* s = w->current;
  if (stream_type != STREAM_REQUEST) return WASM_UNIMPLEMENTED;
  if (s == NULL || !s->paused) return WASM_NOT_FOUND;
  stream_unpause(s);
  envoy_dynamic_module_callback_http_filter_continue_decoding(s->envoy);
  return WASM_OK;
}

// ---- proxy-wasm imports: WASI -----------------------------------------------------------

u32 Z_wasi_snapshot_preview1Z_random_get(struct Z_wasi_snapshot_preview1_instance_t* wasi, u32 ptr, u32 len) {
  uint8_t* out = memory_at(wasi->worker, ptr, len);
  if (out == NULL) return 21;  // WASI EFAULT
  size_t done = 0;
  while (done < len) {
    ssize_t got = getrandom(out + done, len - done, 0);
    if (got <= 0) return 29;  // WASI EIO
    done += (size_t)got;
  }
  return 0;
}

void Z_wasi_snapshot_preview1Z_proc_exit(struct Z_wasi_snapshot_preview1_instance_t* wasi, u32 code) {
  (void)wasi;
  (void)code;
  // The filter's abort: the instance cannot go on.
  wasm_rt_trap(WASM_RT_TRAP_UNREACHABLE);
}

// ---- Envoy events -----------------------------------------------------------------------

EXPORT const char* envoy_dynamic_module_on_program_init(void) {
  pthread_once(&module_once, init_module_once);
  return STEADFAST_ENVOY_ABI_VERSION;
}

EXPORT const void* envoy_dynamic_module_on_http_filter_config_new(filter_config_envoy envoy, envoy_buffer name,
                                                                  envoy_buffer configuration) {
  if (name.length != strlen(FILTER_NAME) || memcmp(name.ptr, FILTER_NAME, name.length) != 0) {
    log_text(LOG_ERROR, "steadfast: unknown filter_name (this module serves \"" FILTER_NAME "\")");
    return NULL;
  }
  config_t* c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->envoy = envoy;
  c->serial = atomic_fetch_add(&config_serials, 1) + 1;
  atomic_init(&c->refs, 1);
  c->plugin = malloc(configuration.length + 1);
  // One slot per worker, and one for this (the main) thread.
  c->slot_count = envoy_dynamic_module_callback_get_concurrency() + 1;
  c->slots = calloc(c->slot_count, sizeof *c->slots);
  worker_t* w = current_worker();
  if (c->plugin == NULL || c->slots == NULL || w == NULL) {
    config_release(c);
    return NULL;
  }
  if (configuration.length > 0) memcpy(c->plugin, configuration.ptr, configuration.length);
  c->plugin_len = configuration.length;
  c->has_trap_counter = envoy_dynamic_module_callback_http_filter_config_define_counter(
                            envoy, text_buffer(TRAP_COUNTER), NULL, 0, &c->trap_counter) == METRICS_SUCCESS;
  sweep_retired(w);
  // Configure once here, on the main thread, as Envoy's wasm filter does: a configuration the
  // filter refuses is refused now, and its metrics are defined while Envoy allows it.
  c->defining = true;
  root_t* r = root_for(w, c, c->slot_count - 1);
  c->defining = false;
  if (r == NULL) {
    log_text(LOG_ERROR, "steadfast: the filter refused its configuration (see the message before this one)");
    config_release(c);
    // A trap while configuring leaves an instance no stream will ever free.
    worker_drop_if_done(w);
    return NULL;
  }
  return c;
}

EXPORT void envoy_dynamic_module_on_http_filter_config_destroy(const void* module_config) {
  config_t* c = (config_t*)module_config;
  pthread_mutex_lock(&retired_lock);
  if (retired_count == retired_cap) {
    size_t cap = retired_cap == 0 ? 16 : retired_cap * 2;
    uint64_t* grown = realloc(retired_serials, cap * sizeof *grown);
    if (grown != NULL) {
      retired_serials = grown;
      retired_cap = cap;
    }
  }
  if (retired_count < retired_cap) retired_serials[retired_count++] = c->serial;
  pthread_mutex_unlock(&retired_lock);
  atomic_fetch_add(&retired_generation, 1);
  config_release(c);
}

EXPORT const void* envoy_dynamic_module_on_http_filter_per_route_config_new(envoy_buffer name, envoy_buffer config) {
  (void)name;
  (void)config;
  // Routes switch the filter on with an empty FilterConfig; there is nothing to configure.
  static const int nothing = 0;
  return &nothing;
}

EXPORT void envoy_dynamic_module_on_http_filter_per_route_config_destroy(const void* per_route) { (void)per_route; }

EXPORT const void* envoy_dynamic_module_on_http_filter_new(const void* module_config, filter_envoy envoy) {
  config_t* c = (config_t*)module_config;
  stream_t* s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->envoy = envoy;
  s->config = c;
  worker_t* w = current_worker();
  if (w != NULL) {
    sweep_retired(w);
    s->root = root_for(w, c, envoy_dynamic_module_callback_http_filter_get_worker_index(envoy));
  }
  if (w == NULL || s->root == NULL) {
    // No instance: the stream goes on without the filter, which must not be mistaken for
    // one that ran (the 503 below says so when its request headers arrive).
    s->worker = NULL;
    return s;
  }
  s->worker = w;
  s->context_id = w->next_context_id++;
  w->live_streams++;
  bool trapped;
  w->current = s;
  w->current_config = c;
  GUARDED(w, trapped, Z_steadfastZ_proxy_on_context_create(&w->module, s->context_id, s->root->context_id));
  w->current = NULL;
  (void)trapped;
  return s;
}

static void fail_closed(stream_t* s) {
  module_buffer body = text_buffer("steadfast filter failed\n");
  module_buffer details = text_buffer("steadfast_filter_failed");
  envoy_dynamic_module_callback_http_send_response(s->envoy, 503, NULL, 0, body, details);
}

/** Runs a header event of the filter for `s`; Envoy's and proxy-wasm's statuses have the same numbers. */
static int header_event(stream_t* s, bool request, bool end_of_stream) {
  worker_t* w = s->worker;
  if (w == NULL || w->broken) {
    fail_closed(s);
    return HEADERS_STOP_ITERATION;
  }
  int map = request ? HEADERS_REQUEST : HEADERS_RESPONSE;
  uint32_t count = (uint32_t)envoy_dynamic_module_callback_http_get_headers_size(s->envoy, map);
  w->current = s;
  w->current_config = s->config;
  bool trapped;
  volatile uint32_t status = HEADERS_CONTINUE;
  GUARDED(w, trapped, {
    status = request ? Z_steadfastZ_proxy_on_request_headers(&w->module, s->context_id, count, end_of_stream)
                     : Z_steadfastZ_proxy_on_response_headers(&w->module, s->context_id, count, end_of_stream);
  });
  w->current = NULL;
  if (trapped) {
    fail_closed(s);
    return HEADERS_STOP_ITERATION;
  }
  switch (status) {
    case HEADERS_STOP_ITERATION:
    case HEADERS_STOP_ALL_AND_BUFFER:
    case HEADERS_STOP_ALL_AND_WATERMARK:
      // Held (a retry waiting for its floor): resumed by a tick through continue_stream.
      if (request) stream_pause(s);
      return (int)status;
    default:
      return HEADERS_CONTINUE;
  }
}

EXPORT int envoy_dynamic_module_on_http_filter_request_headers(filter_envoy envoy, const void* module_stream,
                                                               bool end_of_stream) {
  (void)envoy;
  return header_event((stream_t*)module_stream, true, end_of_stream);
}

EXPORT int envoy_dynamic_module_on_http_filter_response_headers(filter_envoy envoy, const void* module_stream,
                                                                bool end_of_stream) {
  (void)envoy;
  return header_event((stream_t*)module_stream, false, end_of_stream);
}

// The filter has no body or trailer callbacks: these go on at once.
EXPORT int envoy_dynamic_module_on_http_filter_request_body(filter_envoy e, const void* m, bool end) {
  (void)e, (void)m, (void)end;
  return 0;
}
EXPORT int envoy_dynamic_module_on_http_filter_response_body(filter_envoy e, const void* m, bool end) {
  (void)e, (void)m, (void)end;
  return 0;
}
EXPORT int envoy_dynamic_module_on_http_filter_request_trailers(filter_envoy e, const void* m) {
  (void)e, (void)m;
  return 0;
}
EXPORT int envoy_dynamic_module_on_http_filter_response_trailers(filter_envoy e, const void* m) {
  (void)e, (void)m;
  return 0;
}

EXPORT void envoy_dynamic_module_on_http_filter_stream_complete(filter_envoy envoy, const void* module_stream) {
  (void)envoy;
  stream_t* s = (stream_t*)module_stream;
  worker_t* w = s->worker;
  if (w == NULL || w->broken) return;
  stream_unpause(s);
  stream_t* outer = w->current;
  config_t* outer_config = w->current_config;
  w->current = s;
  w->current_config = s->config;
  bool trapped;
  GUARDED(w, trapped, {
    Z_steadfastZ_proxy_on_done(&w->module, s->context_id);
    Z_steadfastZ_proxy_on_log(&w->module, s->context_id);
  });
  (void)trapped;
  // Envoy may complete a stream from inside another event (a resumed attempt that ends at once).
  w->current = outer;
  w->current_config = outer_config;
}

EXPORT void envoy_dynamic_module_on_http_filter_destroy(const void* module_stream) {
  stream_t* s = (stream_t*)module_stream;
  worker_t* w = s->worker;
  if (w != NULL) {
    stream_unpause(s);
    if (!w->broken) {
      bool trapped;
      GUARDED(w, trapped, Z_steadfastZ_proxy_on_delete(&w->module, s->context_id));
      (void)trapped;
    }
    w->live_streams--;
  }
  if (s->scheduler != NULL) envoy_dynamic_module_callback_http_filter_scheduler_delete(s->scheduler);
  free(s);
  if (w != NULL) worker_drop_if_done(w);
}

EXPORT void envoy_dynamic_module_on_http_filter_scheduled(filter_envoy envoy, const void* module_stream,
                                                          uint64_t event_id) {
  (void)envoy;
  stream_t* s = (stream_t*)module_stream;
  worker_t* w = s->worker;
  if (w == NULL || w->broken || event_id != TICK_EVENT) return;
  run_ticks(w);
}

// Events the filter does not use; Envoy requires a module to export them.
EXPORT void envoy_dynamic_module_on_http_filter_http_callout_done(filter_envoy e, const void* m, uint64_t id, int result,
                                                                   envoy_header* headers, size_t headers_size,
                                                                   envoy_buffer* chunks, size_t chunks_size) {
  (void)e, (void)m, (void)id, (void)result, (void)headers, (void)headers_size, (void)chunks, (void)chunks_size;
}
EXPORT void envoy_dynamic_module_on_http_filter_http_stream_headers(filter_envoy e, const void* m, uint64_t id,
                                                                     envoy_header* headers, size_t size, bool end) {
  (void)e, (void)m, (void)id, (void)headers, (void)size, (void)end;
}
EXPORT void envoy_dynamic_module_on_http_filter_http_stream_data(filter_envoy e, const void* m, uint64_t id,
                                                                  const envoy_buffer* data, size_t count, bool end) {
  (void)e, (void)m, (void)id, (void)data, (void)count, (void)end;
}
EXPORT void envoy_dynamic_module_on_http_filter_http_stream_trailers(filter_envoy e, const void* m, uint64_t id,
                                                                      envoy_header* trailers, size_t size) {
  (void)e, (void)m, (void)id, (void)trailers, (void)size;
}
EXPORT void envoy_dynamic_module_on_http_filter_http_stream_complete(filter_envoy e, const void* m, uint64_t id) {
  (void)e, (void)m, (void)id;
}
EXPORT void envoy_dynamic_module_on_http_filter_http_stream_reset(filter_envoy e, const void* m, uint64_t id,
                                                                   int reason) {
  (void)e, (void)m, (void)id, (void)reason;
}
EXPORT void envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(filter_envoy e,
                                                                                            const void* m) {
  (void)e, (void)m;
}
EXPORT void envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(filter_envoy e,
                                                                                           const void* m) {
  (void)e, (void)m;
}
