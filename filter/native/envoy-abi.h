// The part of Envoy's dynamic-module ABI (v0.2.0, Envoy 1.40) that the host layer uses:
// the HTTP filter's events (exported by the module) and the callbacks Envoy exports. Written
// from reading Envoy's source/extensions/dynamic_modules/abi/abi.h; the names, argument
// order and enum numbering are Envoy's and must stay exactly as they are. An enum passed
// across the boundary is a C int.
#ifndef STEADFAST_ENVOY_ABI_H
#define STEADFAST_ENVOY_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STEADFAST_ENVOY_ABI_VERSION "v0.2.0"

/** Bytes Envoy owns; valid only as long as the callback or event that handed them over. */
typedef struct {
  const char* ptr;
  size_t length;
} envoy_buffer;

/** Bytes the module owns; Envoy copies what it keeps. */
typedef struct {
  const char* ptr;
  size_t length;
} module_buffer;

typedef struct {
  const char* key_ptr;
  size_t key_length;
  const char* value_ptr;
  size_t value_length;
} envoy_header;

typedef struct {
  const char* key_ptr;
  size_t key_length;
  const char* value_ptr;
  size_t value_length;
} module_header;

typedef void* filter_config_envoy;
typedef void* filter_envoy;
typedef void* filter_scheduler;

// Same numbering as proxy-wasm's header map types.
enum { HEADERS_REQUEST = 0, TRAILERS_REQUEST = 1, HEADERS_RESPONSE = 2, TRAILERS_RESPONSE = 3 };
// Same numbering as proxy-wasm's (and spdlog's) log levels.
enum { LOG_TRACE = 0, LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_CRITICAL, LOG_OFF };
enum { METADATA_DYNAMIC = 0, METADATA_ROUTE = 1, METADATA_CLUSTER = 2, METADATA_HOST = 3 };
enum {
  ATTRIBUTE_DESTINATION_ADDRESS = 26,
  ATTRIBUTE_DESTINATION_PORT = 27,
  ATTRIBUTE_CONNECTION_TLS_VERSION = 31,
  ATTRIBUTE_UPSTREAM_ADDRESS = 41,
};
// What a header event returns (Envoy's FilterHeadersStatus; proxy-wasm uses the same numbers).
enum {
  HEADERS_CONTINUE = 0,
  HEADERS_STOP_ITERATION = 1,
  HEADERS_STOP_ALL_AND_BUFFER = 3,
  HEADERS_STOP_ALL_AND_WATERMARK = 4,
};
enum { METRICS_SUCCESS = 0 };

// ---- callbacks (Envoy exports them; resolved when Envoy loads the module) ----

void envoy_dynamic_module_callback_log(int level, module_buffer message);
bool envoy_dynamic_module_callback_log_enabled(int level);
int envoy_dynamic_module_callback_get_log_level(void);
uint32_t envoy_dynamic_module_callback_get_concurrency(void);

bool envoy_dynamic_module_callback_http_get_header(filter_envoy filter, int map, module_buffer key,
                                                   envoy_buffer* value, size_t index, size_t* count);
size_t envoy_dynamic_module_callback_http_get_headers_size(filter_envoy filter, int map);
bool envoy_dynamic_module_callback_http_get_headers(filter_envoy filter, int map, envoy_header* out);
bool envoy_dynamic_module_callback_http_set_header(filter_envoy filter, int map, module_buffer key,
                                                   module_buffer value);
bool envoy_dynamic_module_callback_http_add_header(filter_envoy filter, int map, module_buffer key,
                                                   module_buffer value);

bool envoy_dynamic_module_callback_http_get_metadata_string(filter_envoy filter, int source, module_buffer ns,
                                                            module_buffer key, envoy_buffer* value);
bool envoy_dynamic_module_callback_http_filter_get_attribute_string(filter_envoy filter, int id,
                                                                    envoy_buffer* value);
bool envoy_dynamic_module_callback_http_filter_get_attribute_int(filter_envoy filter, int id, uint64_t* value);
bool envoy_dynamic_module_callback_http_set_filter_state_bytes(filter_envoy filter, module_buffer key,
                                                               module_buffer value);
bool envoy_dynamic_module_callback_http_get_filter_state_bytes(filter_envoy filter, module_buffer key,
                                                               envoy_buffer* value);

int envoy_dynamic_module_callback_http_filter_config_define_counter(filter_config_envoy config, module_buffer name,
                                                                    module_buffer* labels, size_t label_count,
                                                                    size_t* id);
int envoy_dynamic_module_callback_http_filter_increment_counter(filter_envoy filter, size_t id,
                                                                module_buffer* labels, size_t label_count,
                                                                uint64_t value);
int envoy_dynamic_module_callback_http_filter_config_increment_counter(filter_config_envoy config, size_t id,
                                                                       module_buffer* labels,
                                                                       size_t label_count, uint64_t value);

filter_scheduler envoy_dynamic_module_callback_http_filter_scheduler_new(filter_envoy filter);
void envoy_dynamic_module_callback_http_filter_scheduler_commit(filter_scheduler scheduler, uint64_t event_id);
void envoy_dynamic_module_callback_http_filter_scheduler_delete(filter_scheduler scheduler);
void envoy_dynamic_module_callback_http_filter_continue_decoding(filter_envoy filter);
void envoy_dynamic_module_callback_http_send_response(filter_envoy filter, uint32_t status, module_header* headers,
                                                      size_t header_count, module_buffer body,
                                                      module_buffer details);
uint32_t envoy_dynamic_module_callback_http_filter_get_worker_index(filter_envoy filter);

#endif
