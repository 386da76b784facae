/* ferrohalide's HalideRuntime.h: the C interface between compiled
 * pipelines, the runtime they link with and the programs that call them.
 *
 * It is binary compatible with Halide 21: the structs have the same layout,
 * the enums the same values and the functions the same names and
 * signatures, so code written against Halide's header works with
 * ferrohalide's objects. Only what ferrohalide implements is declared here.
 *
 * Every function of the runtime is a weak symbol: a program that defines
 * its own halide_malloc, halide_error, halide_do_par_for, ... replaces the
 * runtime's at link time. The set_custom_* functions replace them at run
 * time instead.
 *
 * One difference from Halide: the default error handler never aborts. It
 * writes the message to stderr, keeps it (ferrohalide_last_error_message)
 * and the failing pipeline returns its error code.
 */
#ifndef FERROHALIDE_HALIDE_RUNTIME_H
#define FERROHALIDE_HALIDE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types of values and buffers ------------------------------------ */

/** What kind of number a halide_type_t describes. */
typedef enum halide_type_code_t
#ifdef __cplusplus
    : uint8_t
#endif
{
    halide_type_int = 0,
    halide_type_uint = 1,
    halide_type_float = 2,
    halide_type_handle = 3,
    halide_type_bfloat = 4
} halide_type_code_t;

/** The element type of a buffer or argument: 4 bytes. */
struct halide_type_t {
    uint8_t code;   /* a halide_type_code_t */
    uint8_t bits;   /* bits of one lane */
    uint16_t lanes; /* 1 for scalars */
};

/** One dimension of a buffer: 16 bytes. */
typedef struct halide_dimension_t {
    int32_t min, extent, stride;
    uint32_t flags; /* reserved, 0 */
} halide_dimension_t;

/** Bits of halide_buffer_t.flags. */
typedef enum {
    halide_buffer_flag_host_dirty = 1,
    halide_buffer_flag_device_dirty = 2
} halide_buffer_flags;

struct halide_device_interface_t;

/** A buffer as compiled pipelines see it: 56 bytes on 64-bit targets.
 * `host` points at the element at the min coordinates; `dim` is owned by
 * the caller. A buffer whose host and device are both null is a bounds
 * query: the pipeline fills in the region it would access. */
typedef struct halide_buffer_t {
    uint64_t device;
    const struct halide_device_interface_t *device_interface;
    uint8_t *host;
    uint64_t flags;
    struct halide_type_t type;
    int32_t dimensions;
    halide_dimension_t *dim;
    void *padding;
} halide_buffer_t;

/* ---- metadata of a compiled pipeline ------------------------------- */

/** A scalar of any argument type (which one is told by the argument). */
struct halide_scalar_value_t {
    union {
        bool b;
        int8_t i8;
        int16_t i16;
        int32_t i32;
        int64_t i64;
        uint8_t u8;
        uint16_t u16;
        uint32_t u32;
        uint64_t u64;
        float f32;
        double f64;
        void *handle;
    } u;
};

enum halide_argument_kind_t {
    halide_argument_kind_input_scalar = 0,
    halide_argument_kind_input_buffer = 1,
    halide_argument_kind_output_buffer = 2
};

/** One argument of a pipeline, as NAME_metadata() lists it. The scalar
 * pointers are null for buffers (and may be null for scalars);
 * buffer_estimates is null for scalars, else 2 * dimensions pointers
 * (min, extent per dimension), each possibly null. */
struct halide_filter_argument_t {
    const char *name;
    int32_t kind; /* a halide_argument_kind_t */
    int32_t dimensions;
    struct halide_type_t type;
    const struct halide_scalar_value_t *scalar_def, *scalar_min, *scalar_max, *scalar_estimate;
    int64_t const *const *buffer_estimates;
};

/** What NAME_metadata() returns. */
struct halide_filter_metadata_t {
    int32_t version; /* 1 */
    int32_t num_arguments;
    const struct halide_filter_argument_t *arguments;
    const char *target; /* the target string the pipeline was compiled for */
    const char *name;
};

/* ---- error codes ------------------------------------------------------ */

/** The codes a pipeline returns (0 is success). */
enum halide_error_code_t {
    halide_error_code_success = 0,
    halide_error_code_generic_error = -1,
    halide_error_code_explicit_bounds_too_small = -2,
    halide_error_code_bad_type = -3,
    halide_error_code_access_out_of_bounds = -4,
    halide_error_code_buffer_allocation_too_large = -5,
    halide_error_code_buffer_extents_too_large = -6,
    halide_error_code_constraints_make_required_region_smaller = -7,
    halide_error_code_constraint_violated = -8,
    halide_error_code_param_too_small = -9,
    halide_error_code_param_too_large = -10,
    halide_error_code_out_of_memory = -11,
    halide_error_code_buffer_argument_is_null = -12,
    halide_error_code_debug_to_file_failed = -13,
    halide_error_code_copy_to_host_failed = -14,
    halide_error_code_copy_to_device_failed = -15,
    halide_error_code_device_malloc_failed = -16,
    halide_error_code_device_sync_failed = -17,
    halide_error_code_device_free_failed = -18,
    halide_error_code_no_device_interface = -19,
    halide_error_code_unimplemented = -20,
    halide_error_code_symbol_not_found = -21,
    halide_error_code_internal_error = -22,
    halide_error_code_device_run_failed = -23,
    halide_error_code_unaligned_host_ptr = -24,
    halide_error_code_bad_fold = -25,
    halide_error_code_fold_factor_too_small = -26,
    halide_error_code_requirement_failed = -27,
    halide_error_code_buffer_extents_negative = -28,
    halide_error_code_gpu_device_error = -29,
    halide_error_code_trace_failed = -30,
    halide_error_code_specialize_fail = -31,
    halide_error_code_device_wrap_native_failed = -32,
    halide_error_code_device_detach_native_failed = -33,
    halide_error_code_host_is_null = -34,
    halide_error_code_bad_extern_fold = -35,
    halide_error_code_device_interface_no_device = -36,
    halide_error_code_host_and_device_dirty = -37,
    halide_error_code_buffer_is_null = -38,
    halide_error_code_device_buffer_copy_failed = -39,
    halide_error_code_device_crop_unsupported = -40,
    halide_error_code_device_crop_failed = -41,
    halide_error_code_incompatible_device_interface = -42,
    halide_error_code_bad_dimensions = -43,
    halide_error_code_device_dirty_with_no_device_support = -44,
    halide_error_code_storage_bound_too_small = -45,
    halide_error_code_split_factor_not_positive = -46,
    halide_error_code_vscale_invalid = -47,
    halide_error_code_cannot_profile_pipeline = -48
};

/* ---- errors and printing ----------------------------------------------- */

/** Report an error. Calls the handler set with halide_set_error_handler;
 * the default one writes "Error: <msg>" to stderr and keeps the message
 * for ferrohalide_last_error_message (it does not abort). */
extern void halide_error(void *user_context, const char *msg);
typedef void (*halide_error_handler_t)(void *user_context, const char *msg);
/** Replace the error handler (null restores the default); returns the old one. */
extern halide_error_handler_t halide_set_error_handler(halide_error_handler_t handler);

/** Copy the last message the default error handler received into
 * dst[0 .. size) (NUL-terminated, cut to fit) and return its full length;
 * 0 when no error was reported since the last clear. Thread-safe. */
extern size_t ferrohalide_last_error_message(char *dst, size_t size);
/** Forget the last error message. */
extern void ferrohalide_clear_last_error(void);

/** Print a line (the runtime adds no newline; compiled code's print()
 * lines end with one). The default writes to stdout. */
extern void halide_print(void *user_context, const char *msg);
typedef void (*halide_print_t)(void *user_context, const char *msg);
/** Replace the print function (null restores the default); returns the old one. */
extern halide_print_t halide_set_custom_print(halide_print_t print);

/* ---- tracing ------------------------------------------------------ */

/** What happened (Func.trace_loads / trace_stores / trace_realizations). */
enum halide_trace_event_code_t {
    halide_trace_load = 0,
    halide_trace_store = 1,
    halide_trace_begin_realization = 2,
    halide_trace_end_realization = 3,
    halide_trace_produce = 4,
    halide_trace_end_produce = 5,
    halide_trace_consume = 6,
    halide_trace_end_consume = 7,
    halide_trace_begin_pipeline = 8,
    halide_trace_end_pipeline = 9,
    halide_trace_tag = 10
};

/** One traced event. `value` (loads and stores) holds type.lanes values;
 * `coordinates` holds `dimensions` int32s: for a load or store each
 * coordinate as a vector of type.lanes values, for realization, produce
 * and consume events min0, extent0, min1, extent1, ...; `trace_tag` is
 * the text of a tag event. */
struct halide_trace_event_t {
    const char *func;
    void *value;
    int32_t *coordinates;
    const char *trace_tag;
    struct halide_type_t type;
    enum halide_trace_event_code_t event;
    int32_t parent_id;
    int32_t value_index;
    int32_t dimensions;
};

/** Report an event to the current trace function; returns the event's id
 * (later events of a realization name it as their parent_id). The default
 * prints one line per event with halide_print. */
extern int32_t halide_trace(void *user_context, const struct halide_trace_event_t *event);
extern int32_t halide_default_trace(void *user_context, const struct halide_trace_event_t *event);
typedef int32_t (*halide_trace_t)(void *user_context, const struct halide_trace_event_t *);
/** Replace the trace function (null restores the default); returns the old one. */
extern halide_trace_t halide_set_custom_trace(halide_trace_t trace);

/* ---- memory -------------------------------------------------------- */

/** Allocate `size` bytes aligned to at least 64 bytes; null on failure. */
extern void *halide_malloc(void *user_context, size_t size);
/** Free memory from halide_malloc (null is ignored). */
extern void halide_free(void *user_context, void *ptr);
typedef void *(*halide_malloc_t)(void *user_context, size_t size);
typedef void (*halide_free_t)(void *user_context, void *ptr);
/** Replace the allocator (null restores the default); returns the old one. */
extern halide_malloc_t halide_set_custom_malloc(halide_malloc_t user_malloc);
extern halide_free_t halide_set_custom_free(halide_free_t user_free);

/* ---- parallel loops ------------------------------------------------ */

/** One iteration of a parallel loop; returns 0 or an error code. */
typedef int (*halide_task_t)(void *user_context, int task_number, uint8_t *closure);
/** Run task(user_context, i, closure) for i in [min, min + size), on the
 * thread pool. Returns 0, or the first non-zero code a task returned (the
 * iterations not started by then are skipped). Nested calls are fine. */
extern int halide_do_par_for(void *user_context, halide_task_t task, int min, int size,
                             uint8_t *closure);
typedef int (*halide_do_par_for_t)(void *user_context, halide_task_t task, int min, int size,
                                   uint8_t *closure);
/** Replace what halide_do_par_for calls (null restores the default); returns the old one. */
extern halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t do_par_for);
/** The runtime's own thread pool, for a custom do_par_for to fall back on. */
extern int halide_default_do_par_for(void *user_context, halide_task_t task, int min, int size,
                                     uint8_t *closure);
/** Threads a parallel loop may use (the caller included). Defaults to the
 * environment variable HL_NUM_THREADS, else the number of CPUs. */
extern int halide_get_num_threads(void);
/** Set that number (0: the default; 1: loops run serially); returns the
 * old one. Negative values are an error: nothing changes and the old
 * value is returned. */
extern int halide_set_num_threads(int n);
/** Stop and join the pool's threads. Must not run during a parallel loop;
 * the next parallel loop starts the pool again. */
extern void halide_shutdown_thread_pool(void);

/* ---- debug_to_file --------------------------------------------------- */

/** Write `buf` to `filename` (.npy, .tiff/.tif, .mat, else Halide's tmp
 * format); what Func.debug_to_file calls. Returns 0 or an error code. */
extern int halide_debug_to_file(void *user_context, const char *filename, struct halide_buffer_t *buf);
extern int halide_error_debug_to_file_failed(void *user_context, const char *func, const char *filename,
                                             int error_code);

/* ---- memoization cache ---------------------------------------------- */

/** The cache of Func.memoize(): its size limit in bytes (default 1 MB),
 * emptying it, and dropping what a Func memoized with an EvictionKey
 * stored under that key's value. */
extern void halide_memoization_cache_set_size(int64_t size);
extern void halide_memoization_cache_cleanup(void);
extern void halide_memoization_cache_evict(void *user_context, uint64_t eviction_key);

/* ---- locks --------------------------------------------------------- */

/** A lock: one word, 0 when unlocked. */
struct halide_mutex {
    uintptr_t _private[1];
};
extern void halide_mutex_lock(struct halide_mutex *mutex);
extern void halide_mutex_unlock(struct halide_mutex *mutex);

/** An array of locks (compiled code uses one around atomic updates of
 * Tuples). create returns null when out of memory. */
struct halide_mutex_array;
extern struct halide_mutex_array *halide_mutex_array_create(uint64_t sz);
extern void halide_mutex_array_destroy(void *user_context, void *array);
extern int halide_mutex_array_lock(struct halide_mutex_array *array, int entry);
extern int halide_mutex_array_unlock(struct halide_mutex_array *array, int entry);

/* ---- text -------------------------------------------------------- */

/* Each writes at dst, never past end - 1, always NUL-terminates (when
 * dst < end) and returns the new end of the text. */
extern char *halide_string_to_string(char *dst, char *end, const char *arg);
/** `digits`: at least this many digits, zero-padded. */
extern char *halide_int64_to_string(char *dst, char *end, int64_t arg, int digits);
extern char *halide_uint64_to_string(char *dst, char *end, uint64_t arg, int digits);
/** As printf's %f (scientific == 0) or %e (scientific != 0). */
extern char *halide_double_to_string(char *dst, char *end, double arg, int scientific);
/** 0x followed by the address in hexadecimal. */
extern char *halide_pointer_to_string(char *dst, char *end, const void *arg);

/* ---- errors found by a pipeline's entry checks ----------------------- */

/* Each reports its message with halide_error and returns its code. */
extern int halide_error_bad_type(void *user_context, const char *func_name,
                                 uint32_t type_given_bits, uint32_t correct_type_bits);
extern int halide_error_bad_dimensions(void *user_context, const char *func_name,
                                       int32_t dimensions_given, int32_t correct_dimensions);
extern int halide_error_buffer_argument_is_null(void *user_context, const char *buffer_name);
extern int halide_error_host_is_null(void *user_context, const char *func);
extern int halide_error_extern_stage_failed(void *user_context, const char *extern_stage_name, int result);
extern int halide_error_bounds_inference_call_failed(void *user_context, const char *extern_stage_name,
                                                     int result);
extern int halide_error_device_dirty_with_no_device_support(void *user_context, const char *func);
extern int halide_error_buffer_extents_negative(void *user_context, const char *buffer_name,
                                                int dimension, int extent);
extern int halide_error_buffer_extents_too_large(void *user_context, const char *buffer_name,
                                                 int64_t actual_size, int64_t max_size);
extern int halide_error_buffer_allocation_too_large(void *user_context, const char *buffer_name,
                                                    uint64_t allocation_size, uint64_t max_size);
extern int halide_error_out_of_memory(void *user_context);
extern int halide_error_constraints_make_required_region_smaller(
    void *user_context, const char *buffer_name, int dimension, int constrained_min,
    int constrained_max, int required_min, int required_max);
/** Write a type as Halide names it (int32, uint8, float32x4, ...). */
extern char *halide_type_to_string(char *dst, char *end, const struct halide_type_t *t);

/* ---- devices ----------------------------------------------------------- */

/* ferrohalide compiles for the CPU only: no buffer lives on a device, so
 * these succeed without doing anything (halide_device_free clears the
 * device fields). */
extern int halide_copy_to_host(void *user_context, struct halide_buffer_t *buf);
extern int halide_device_free(void *user_context, struct halide_buffer_t *buf);
extern int halide_device_sync(void *user_context, struct halide_buffer_t *buf);

/* ---- target features and CPU dispatch ---------------------------------- */

/* The features of a Target, numbered as Halide numbers them (a feature's
 * bit in the arrays below is (1 << (f & 63)) in word f >> 6). */
typedef enum halide_target_feature_t {
    halide_target_feature_jit = 0,
    halide_target_feature_debug = 1,
    halide_target_feature_enable_backtraces = 2,
    halide_target_feature_no_asserts = 3,
    halide_target_feature_no_bounds_query = 4,
    halide_target_feature_sse41 = 5,
    halide_target_feature_avx = 6,
    halide_target_feature_avx2 = 7,
    halide_target_feature_avxvnni = 8,
    halide_target_feature_fma = 9,
    halide_target_feature_fma4 = 10,
    halide_target_feature_f16c = 11,
    halide_target_feature_armv7s = 12,
    halide_target_feature_no_neon = 13,
    halide_target_feature_vsx = 14,
    halide_target_feature_power_arch_2_07 = 15,
    halide_target_feature_cuda = 16,
    halide_target_feature_cuda_capability30 = 17,
    halide_target_feature_cuda_capability32 = 18,
    halide_target_feature_cuda_capability35 = 19,
    halide_target_feature_cuda_capability50 = 20,
    halide_target_feature_cuda_capability61 = 21,
    halide_target_feature_cuda_capability70 = 22,
    halide_target_feature_cuda_capability75 = 23,
    halide_target_feature_cuda_capability80 = 24,
    halide_target_feature_cuda_capability86 = 25,
    halide_target_feature_opencl = 26,
    halide_target_feature_cl_doubles = 27,
    halide_target_feature_cl_atomic64 = 28,
    halide_target_feature_user_context = 29,
    halide_target_feature_profile = 30,
    halide_target_feature_no_runtime = 31,
    halide_target_feature_metal = 32,
    halide_target_feature_c_plus_plus_mangling = 33,
    halide_target_feature_large_buffers = 34,
    halide_target_feature_hvx_128 = 35,
    halide_target_feature_hvx_v62 = 36,
    halide_target_feature_fuzz_float_stores = 37,
    halide_target_feature_soft_float_abi = 38,
    halide_target_feature_msan = 39,
    halide_target_feature_avx512 = 40,
    halide_target_feature_avx512_knl = 41,
    halide_target_feature_avx512_skylake = 42,
    halide_target_feature_avx512_cannonlake = 43,
    halide_target_feature_avx512_zen4 = 44,
    halide_target_feature_avx512_zen5 = 45,
    halide_target_feature_avx512_sapphirerapids = 46,
    halide_target_feature_trace_loads = 47,
    halide_target_feature_trace_stores = 48,
    halide_target_feature_trace_realizations = 49,
    halide_target_feature_trace_pipeline = 50,
    halide_target_feature_hvx_v65 = 51,
    halide_target_feature_hvx_v66 = 52,
    halide_target_feature_hvx_v68 = 53,
    halide_target_feature_cl_half = 54,
    halide_target_feature_strict_float = 55,
    halide_target_feature_tsan = 56,
    halide_target_feature_asan = 57,
    halide_target_feature_d3d12compute = 58,
    halide_target_feature_check_unsafe_promises = 59,
    halide_target_feature_hexagon_dma = 60,
    halide_target_feature_embed_bitcode = 61,
    halide_target_feature_enable_llvm_loop_opt = 62,
    halide_target_feature_wasm_mvponly = 63,
    halide_target_feature_wasm_simd128 = 64,
    halide_target_feature_wasm_threads = 65,
    halide_target_feature_wasm_bulk_memory = 66,
    halide_target_feature_webgpu = 67,
    halide_target_feature_sve = 68,
    halide_target_feature_sve2 = 69,
    halide_target_feature_egl = 70,
    halide_target_feature_arm_dot_prod = 71,
    halide_target_feature_arm_fp16 = 72,
    halide_llvm_large_code_model = 73,
    halide_target_feature_rvv = 74,
    halide_target_feature_armv8a = 75,
    halide_target_feature_armv81a = 76,
    halide_target_feature_armv82a = 77,
    halide_target_feature_armv83a = 78,
    halide_target_feature_armv84a = 79,
    halide_target_feature_armv85a = 80,
    halide_target_feature_armv86a = 81,
    halide_target_feature_armv87a = 82,
    halide_target_feature_armv88a = 83,
    halide_target_feature_armv89a = 84,
    halide_target_feature_sanitizer_coverage = 85,
    halide_target_feature_profile_by_timer = 86,
    halide_target_feature_spirv = 87,
    halide_target_feature_vulkan = 88,
    halide_target_feature_vulkan_int8 = 89,
    halide_target_feature_vulkan_int16 = 90,
    halide_target_feature_vulkan_int64 = 91,
    halide_target_feature_vulkan_float16 = 92,
    halide_target_feature_vulkan_float64 = 93,
    halide_target_feature_vulkan_version10 = 94,
    halide_target_feature_vulkan_version12 = 95,
    halide_target_feature_vulkan_version13 = 96,
    halide_target_feature_semihosting = 97,
    halide_target_feature_avx10_1 = 98,
    halide_target_feature_x86_apx = 99,
    halide_target_feature_simulator = 100,
    halide_target_feature_end = 101
} halide_target_feature_t;

/* 1 if code compiled with `features` (an array of `count` words, with
 * count == (halide_target_feature_end + 63) / 64) can run on this CPU, 0
 * if not. The wrapper of a multi-target object asks this to choose which
 * target's code to run; a program may replace it with
 * halide_set_custom_can_use_target_features, and may call the default. */
extern int halide_can_use_target_features(int count, const uint64_t *features);
typedef int (*halide_can_use_target_features_t)(int count, const uint64_t *features);
extern halide_can_use_target_features_t halide_set_custom_can_use_target_features(halide_can_use_target_features_t);
extern int halide_default_can_use_target_features(int count, const uint64_t *features);

/* ---- half floats --------------------------------------------------- */

extern float halide_float16_bits_to_float(uint16_t bits);
extern double halide_float16_bits_to_double(uint16_t bits);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FERROHALIDE_HALIDE_RUNTIME_H */
