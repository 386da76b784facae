/* The host side of Hexagon offload, for targets with `hvx` on arm-64 and
 * arm-32 Linux and Android. Loops scheduled with hexagon() are compiled
 * into a Hexagon shared object embedded in the ARM object; the ARM code
 * hands it to the DSP through these functions (Halide 21's names and
 * signatures), which call Halide's offload support library,
 * libhalide_hexagon_host.so (FastRPC on a device, a simulator elsewhere).
 *
 * This file is its own bitcode module (see build.rs), linked only into
 * objects for hvx targets, so that no other object references dlopen. It
 * uses the main runtime module of the same target (halide_error,
 * halide_print, the halide_mutex functions, ferrohalide_strlen).
 *
 * The one deliberate difference from Halide: ferrohalide has no Hexagon
 * device buffers (Halide's ION-backed halide_hexagon_device_interface).
 * Every buffer argument arrives without a device handle and with the
 * number of bytes the kernel may touch; it is copied into memory shared
 * with the DSP (the library's halide_hexagon_host_malloc) for the call, and
 * back out afterwards if the kernel writes it. */
#include "internal.h"

/* ---- the support library's interface (Halide's hexagon_host.cpp) ----
 * Handles of modules and symbols are 32-bit on both sides of FastRPC
 * (`unsigned long handle_t` in halide_hexagon_remote.idl), so they are
 * int here as in Halide's HalideRuntimeHexagonHost.h; a wider type would
 * misplace the arguments after it on arm-32. */
typedef int halide_hexagon_handle_t;

/* A FastRPC `sequence<octet>`. */
typedef struct remote_buffer {
    unsigned char *data;
    int dataLen;
} remote_buffer;

typedef int (*remote_load_library_fn)(const char *soname, int sonameLen, const unsigned char *code,
                                      int codeLen, halide_hexagon_handle_t *module);
typedef int (*remote_get_symbol_fn)(halide_hexagon_handle_t module, const char *name, int nameLen,
                                    halide_hexagon_handle_t *sym);
/* Resolved as "halide_hexagon_remote_run": the library's adapter that
 * packs the scalars into one array and calls the DSP's run_v2. */
typedef int (*remote_run_fn)(halide_hexagon_handle_t module, int function, const remote_buffer *inputs,
                             int input_count, const remote_buffer *outputs, int output_count,
                             remote_buffer *scalars, int scalar_count);
typedef int (*remote_release_library_fn)(halide_hexagon_handle_t module);
typedef int (*remote_poll_log_fn)(char *log, int logLen, int *read);
typedef int (*remote_power_fn)(void);
typedef int (*remote_power_mode_fn)(int mode);
typedef int (*remote_power_perf_fn)(int set_mips, unsigned int mipsPerThread, unsigned int mipsTotal,
                                    int set_bus_bw, unsigned int bwMegabytesPerSec,
                                    unsigned int busbwUsagePercentage, int set_latency, int latency);
typedef int (*remote_thread_priority_fn)(int priority);
typedef void (*host_malloc_init_fn)(void);
typedef void *(*host_malloc_fn)(size_t size);
typedef void (*host_free_fn)(void *ptr);

/* halide_hexagon_set_performance's settings, laid out as in Halide's
 * HalideRuntimeHexagonHost.h. */
typedef struct {
    bool set_mips;
    unsigned int mipsPerThread;
    unsigned int mipsTotal;
    bool set_bus_bw;
    unsigned int bwMegabytesPerSec;
    unsigned short busbwUsagePercentage;
    bool set_latency;
    int latency;
} halide_hexagon_power_t;

/* ---- loading the library ----
 * The runtime is compiled freestanding, so the loader's functions are
 * declared here. RTLD_NOW is 2 and RTLD_LOCAL 0 in glibc and in 64-bit
 * bionic; 32-bit bionic kept RTLD_NOW = 0 (it always binds immediately). */
void *dlopen(const char *file, int mode);
void *dlsym(void *lib, const char *name);
char *dlerror(void);

#if defined(__ANDROID__) && !defined(__LP64__)
enum { LOADER_NOW = 0 };
#else
enum { LOADER_NOW = 2 };
#endif
enum { LOADER_LOCAL = 0 };

static const char HOST_LIBRARY[] = "libhalide_hexagon_host.so";

/* What was found in the library: all of it is set before `remote_ready`
 * becomes 1 (release), and read only after seeing it 1 (acquire). */
static struct {
    remote_load_library_fn load_library;
    remote_get_symbol_fn get_symbol;
    remote_run_fn run;
    remote_release_library_fn release_library;
    host_malloc_fn host_malloc;
    host_free_fn host_free;
    /* Optional: null when the library lacks them. */
    remote_poll_log_fn poll_log;
    remote_power_fn power_hvx_on;
    remote_power_fn power_hvx_off;
    remote_power_mode_fn set_performance_mode;
    remote_power_perf_fn set_performance;
    remote_thread_priority_fn set_thread_priority;
} remote;
static int32_t remote_ready;

/* Guards loading the library, the shared runtime, the module list, the
 * kernel counter and kernel lookups. Pipeline runs take it only to look a
 * kernel up; otherwise they read handles that
 * halide_hexagon_initialize_kernels set before them. */
static struct halide_mutex hexagon_lock;

/* A kernel looked up in a pipeline's module: `handle` is the pipeline's
 * global holding its handle (0 until looked up, as in Halide), `symbol`
 * and `generation` the handle and the module load it was found in. After
 * halide_hexagon_device_release the module is loaded again and the kernel
 * looked up again: the old handle is an address in the released module.
 * (The pipeline's global itself is not cleared by the release: its code
 * may be unloaded by then.) */
struct function_slot {
    halide_hexagon_handle_t *handle;
    halide_hexagon_handle_t symbol;
    int generation;
    struct function_slot *next;
};

/* One per compiled pipeline (its hexagon_module_state global points at
 * it), allocated on the pipeline's first call and never freed, so that
 * halide_hexagon_device_release can reach every module. `module` is 0
 * while the kernels are not loaded; `generation` counts its loads. Written
 * under hexagon_lock, read by runs without it. */
struct module_state {
    halide_hexagon_handle_t module;
    int generation;
    struct module_state *next;
    struct function_slot *functions;
};
static struct module_state *module_list;
/* The Hexagon runtime every kernels module links against, loaded once. */
static halide_hexagon_handle_t shared_runtime;
/* Numbers the kernel modules' sonames: the loader on the DSP returns an
 * already loaded library for a name it has seen. */
static int kernels_loaded;

int vsnprintf(char *dst, size_t size, const char *format, __builtin_va_list args);

/* halide_error with a printf-formatted message. */
__attribute__((format(printf, 2, 3))) static void report(void *user_context, const char *format, ...) {
    char msg[512];
    __builtin_va_list args;
    __builtin_va_start(args, format);
    vsnprintf(msg, sizeof(msg), format, args);
    __builtin_va_end(args);
    halide_error(user_context, msg);
}

/* The library's symbol `name`; null (reported, once per load attempt)
 * when missing. */
static void *required(void *user_context, void *lib, const char *name, int *missing) {
    void *sym = dlsym(lib, name);
    if (!sym && !*missing) {
        *missing = 1;
        report(user_context, "Hexagon: required symbol %s not found in %s", name, HOST_LIBRARY);
    }
    return sym;
}

/* Open the library and resolve its functions; called under hexagon_lock. */
static int open_library(void *user_context) {
    void *lib = dlopen(HOST_LIBRARY, LOADER_NOW | LOADER_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        report(user_context,
               "Hexagon: cannot load %s (%s); pipelines offloaded to Hexagon need Halide's offload "
               "support library on the library path",
               HOST_LIBRARY, why ? why : "no reason given");
        return halide_error_code_symbol_not_found;
    }
    int missing = 0;
#define REQUIRED(type, name) ((type)required(user_context, lib, name, &missing))
    remote_load_library_fn load_library =
        REQUIRED(remote_load_library_fn, "halide_hexagon_remote_load_library");
    remote_get_symbol_fn get_symbol = REQUIRED(remote_get_symbol_fn, "halide_hexagon_remote_get_symbol_v4");
    remote_run_fn run = REQUIRED(remote_run_fn, "halide_hexagon_remote_run");
    remote_release_library_fn release_library =
        REQUIRED(remote_release_library_fn, "halide_hexagon_remote_release_library");
    host_malloc_init_fn malloc_init = REQUIRED(host_malloc_init_fn, "halide_hexagon_host_malloc_init");
    /* Required as in Halide, though nothing here calls it. */
    (void)REQUIRED(void *, "halide_hexagon_host_malloc_deinit");
    host_malloc_fn host_malloc = REQUIRED(host_malloc_fn, "halide_hexagon_host_malloc");
    host_free_fn host_free = REQUIRED(host_free_fn, "halide_hexagon_host_free");
#undef REQUIRED
    if (missing) {
        return halide_error_code_symbol_not_found;
    }
    remote.load_library = load_library;
    remote.get_symbol = get_symbol;
    remote.run = run;
    remote.release_library = release_library;
    remote.host_malloc = host_malloc;
    remote.host_free = host_free;
    remote.poll_log = (remote_poll_log_fn)dlsym(lib, "halide_hexagon_remote_poll_log");
    /* Without these the library always keeps HVX powered on / has fixed
     * settings, and the functions using them do nothing. */
    remote.power_hvx_on = (remote_power_fn)dlsym(lib, "halide_hexagon_remote_power_hvx_on");
    remote.power_hvx_off = (remote_power_fn)dlsym(lib, "halide_hexagon_remote_power_hvx_off");
    remote.set_performance_mode =
        (remote_power_mode_fn)dlsym(lib, "halide_hexagon_remote_set_performance_mode");
    remote.set_performance = (remote_power_perf_fn)dlsym(lib, "halide_hexagon_remote_set_performance");
    remote.set_thread_priority =
        (remote_thread_priority_fn)dlsym(lib, "halide_hexagon_remote_set_thread_priority");
    malloc_init();
    ATOMIC_STORE(&remote_ready, 1);
    return halide_error_code_success;
}

/* Load the library on first use. A failure is reported and retried on the
 * next call (the library may be installed later, as in Halide). */
static int load_remote(void *user_context) {
    if (ATOMIC_LOAD(&remote_ready)) {
        return halide_error_code_success;
    }
    halide_mutex_lock(&hexagon_lock);
    int result = ATOMIC_LOAD(&remote_ready) ? halide_error_code_success : open_library(user_context);
    halide_mutex_unlock(&hexagon_lock);
    return result;
}

/* Print what code on the DSP logged; called after every remote call. */
static void poll_log(void *user_context) {
    if (!remote.poll_log) {
        return;
    }
    for (;;) {
        char message[1024];
        int read = 0;
        int result = remote.poll_log(message, (int)sizeof(message), &read);
        if (result != 0) {
            /* Not an error: it would hide the error that may follow. */
            char note[96];
            snprintf(note, sizeof(note), "Hexagon: remote_poll_log failed (%d)\n", result);
            halide_print(user_context, note);
            return;
        }
        if (read <= 0) {
            return;
        }
        message[sizeof(message) - 1] = 0;
        halide_print(user_context, message);
    }
}

/* ---- loading kernels ---- */

/* The shared runtime (once) and this pipeline's module (once per state, or
 * again after halide_hexagon_device_release); called under hexagon_lock. */
static int load_modules(void *user_context, struct module_state **state, const uint8_t *code,
                        int code_size, const uint8_t *runtime, int runtime_size) {
    if (!shared_runtime) {
        static const char soname[] = "libhalide_shared_runtime.so";
        halide_hexagon_handle_t module = 0;
        int err = remote.load_library(soname, (int)sizeof(soname), runtime, runtime_size, &module);
        poll_log(user_context);
        if (err || !module) {
            report(user_context, "Hexagon: loading %s on the DSP failed (error %d)", soname, err);
            return halide_error_code_generic_error;
        }
        shared_runtime = module;
    }
    if (!*state) {
        struct module_state *s = (struct module_state *)malloc(sizeof(struct module_state));
        if (!s) {
            halide_error(user_context, "Hexagon: out of memory for a kernels module's state");
            return halide_error_code_out_of_memory;
        }
        s->module = 0;
        s->generation = 0;
        s->functions = 0;
        s->next = module_list;
        module_list = s;
        *state = s;
    }
    if (!(*state)->module) {
        char soname[48];
        int length = snprintf(soname, sizeof(soname), "libhalide_kernels%d.so", kernels_loaded++);
        halide_hexagon_handle_t module = 0;
        int err = remote.load_library(soname, length + 1, code, code_size, &module);
        poll_log(user_context);
        if (err || !module) {
            report(user_context, "Hexagon: loading %s on the DSP failed (error %d)", soname, err);
            return halide_error_code_generic_error;
        }
        __atomic_store_n(&(*state)->module, module, __ATOMIC_RELAXED);
        __atomic_store_n(&(*state)->generation, (*state)->generation + 1, __ATOMIC_RELEASE);
    }
    return halide_error_code_success;
}

WEAK int halide_hexagon_initialize_kernels(void *user_context, void **state_ptr, const uint8_t *code,
                                           uint64_t code_size, const uint8_t *runtime,
                                           uint64_t runtime_size) {
    int result = load_remote(user_context);
    if (result) {
        return result;
    }
    if (!state_ptr) {
        halide_error(user_context, "Hexagon: halide_hexagon_initialize_kernels got no state pointer");
        return halide_error_code_generic_error;
    }
    /* FastRPC sequences hold an int's worth of bytes. */
    if (code_size > INT32_MAX || runtime_size > INT32_MAX) {
        halide_error(user_context, "Hexagon: kernels larger than 2 GB cannot be sent to the DSP");
        return halide_error_code_generic_error;
    }
    halide_mutex_lock(&hexagon_lock);
    result = load_modules(user_context, (struct module_state **)state_ptr, code, (int)code_size, runtime,
                          (int)runtime_size);
    halide_mutex_unlock(&hexagon_lock);
    return result;
}

WEAK void *halide_hexagon_get_module_state(void *user_context, void **host) {
    (void)user_context;
    return host ? *host : 0;
}

/* Modules stay loaded between runs; halide_hexagon_device_release unloads
 * them. */
WEAK void halide_hexagon_finalize_kernels(void *user_context, void *state_ptr) {
    (void)user_context;
    (void)state_ptr;
}

WEAK int halide_hexagon_device_release(void *user_context) {
    (void)user_context;
    halide_mutex_lock(&hexagon_lock);
    if (ATOMIC_LOAD(&remote_ready)) {
        /* The list keeps its nodes (the pipelines' globals point at them),
         * so modules loaded again later are released by the next call too. */
        for (struct module_state *s = module_list; s; s = s->next) {
            if (s->module) {
                (void)remote.release_library(s->module);
                poll_log(user_context);
                __atomic_store_n(&s->module, 0, __ATOMIC_RELAXED);
            }
        }
        if (shared_runtime) {
            (void)remote.release_library(shared_runtime);
            poll_log(user_context);
            shared_runtime = 0;
        }
    }
    halide_mutex_unlock(&hexagon_lock);
    return halide_error_code_success;
}

/* Unload everything when the program exits, as Halide does. */
__attribute__((destructor)) static void release_at_exit(void) {
    (void)halide_hexagon_device_release(0);
}

/* ---- running kernels ---- */

/* How HexagonOffload passes a buffer argument (args[i] points at it). */
struct hexagon_device_pointer {
    uint64_t dev;
    uint8_t *host;
};

/* Kernel `name` of `state`'s module: its handle, looked up on its first
 * run in each load of the module (kept in *function, as in Halide), and
 * in *module the module it is in; 0 on failure (reported). */
static halide_hexagon_handle_t find_function(void *user_context, struct module_state *state,
                                             const char *name, halide_hexagon_handle_t *function,
                                             halide_hexagon_handle_t *module) {
    /* Usually found without the lock: the list only grows (at its head). */
    int generation = __atomic_load_n(&state->generation, __ATOMIC_ACQUIRE);
    *module = __atomic_load_n(&state->module, __ATOMIC_RELAXED);
    if (*module && __atomic_load_n(function, __ATOMIC_RELAXED)) {
        struct function_slot *f = __atomic_load_n(&state->functions, __ATOMIC_ACQUIRE);
        for (; f; f = f->next) {
            if (f->handle == function) {
                if (__atomic_load_n(&f->generation, __ATOMIC_ACQUIRE) == generation) {
                    return __atomic_load_n(&f->symbol, __ATOMIC_RELAXED);
                }
                break;
            }
        }
    }
    halide_mutex_lock(&hexagon_lock);
    halide_hexagon_handle_t fn = 0;
    *module = state->module;
    struct function_slot *f = *module ? state->functions : 0;
    while (f && f->handle != function) {
        f = f->next;
    }
    if (!*module) {
        report(user_context,
               "Hexagon: %s run with its kernels not loaded (halide_hexagon_initialize_kernels)", name);
    } else if (f && f->generation == state->generation) {
        fn = f->symbol; /* Looked up meanwhile by another thread. */
        __atomic_store_n(function, fn, __ATOMIC_RELAXED);
    } else {
        struct function_slot *fresh = 0;
        if (!f) {
            f = fresh = (struct function_slot *)malloc(sizeof(struct function_slot));
        }
        halide_hexagon_handle_t sym = 0;
        int err = f ? remote.get_symbol(*module, name, (int)ferrohalide_strlen(name) + 1, &sym) : 0;
        poll_log(user_context);
        if (!f) {
            halide_error(user_context, "Hexagon: out of memory for a kernel's handle");
        } else if (err || !sym) {
            report(user_context, "Hexagon: no function %s in the kernels module (error %d)", name, err);
            if (fresh) {
                free(fresh);
            }
        } else {
            __atomic_store_n(&f->symbol, sym, __ATOMIC_RELAXED);
            __atomic_store_n(&f->generation, state->generation, __ATOMIC_RELEASE);
            if (fresh) {
                f->handle = function;
                f->next = state->functions;
                __atomic_store_n(&state->functions, f, __ATOMIC_RELEASE);
            }
            __atomic_store_n(function, sym, __ATOMIC_RELAXED);
            fn = sym;
        }
    }
    halide_mutex_unlock(&hexagon_lock);
    return fn;
}

/* Free the shared copies among the first `count` mapped arguments. */
static void free_shared(remote_buffer *mapped, const int *source, const int *arg_flags, int count) {
    for (int k = 0; k < count; k++) {
        if (arg_flags[source[k]] != 0 && mapped[k].data) {
            remote.host_free(mapped[k].data);
        }
    }
}

WEAK int halide_hexagon_run(void *user_context, void *state_ptr, const char *name,
                            halide_hexagon_handle_t *function, uint64_t arg_sizes[], void *args[],
                            int arg_flags[]) {
    if (!state_ptr || !function || !name) {
        halide_error(user_context, "Hexagon: halide_hexagon_run got a null state, name or function");
        return halide_error_code_generic_error;
    }
    int result = load_remote(user_context);
    if (result) {
        return result;
    }
    halide_hexagon_handle_t module = 0;
    struct module_state *state = (struct module_state *)state_ptr;
    halide_hexagon_handle_t fn = find_function(user_context, state, name, function, &module);
    if (!fn) {
        return halide_error_code_generic_error;
    }

    /* The list ends at the first size of 0. */
    int count = 0;
    while (arg_sizes[count] > 0) {
        count++;
    }
    /* Mapped arguments in the order the DSP side takes them: input
     * buffers (read, not written), output buffers (written), scalars;
     * source[k] is the argument mapped[k] comes from. */
    remote_buffer mapped[count + 1];
    int source[count + 1];
    int k = 0;
    for (int i = 0; i < count; i++) {
        if ((arg_flags[i] & 3) == 1) {
            source[k++] = i;
        }
    }
    int inputs = k;
    for (int i = 0; i < count; i++) {
        if (arg_flags[i] & 2) {
            source[k++] = i;
        }
    }
    int outputs = k - inputs;
    for (int i = 0; i < count; i++) {
        if ((arg_flags[i] & 3) == 0) {
            source[k++] = i;
        }
    }
    int scalars = k - inputs - outputs;

    for (k = 0; k < count; k++) {
        mapped[k].data = 0;
        mapped[k].dataLen = 0;
    }
    for (k = 0; k < count; k++) {
        int i = source[k];
        if (arg_sizes[i] > INT32_MAX) {
            report(user_context, "Hexagon: argument %d of %s is larger than 2 GB", i, name);
            result = halide_error_code_generic_error;
            break;
        }
        int size = (int)arg_sizes[i];
        if (arg_flags[i] == 0) {
            /* A scalar: its bytes, where the caller keeps them. */
            mapped[k].data = (unsigned char *)args[i];
            mapped[k].dataLen = size;
            continue;
        }
        const struct hexagon_device_pointer *b = (const struct hexagon_device_pointer *)args[i];
        if (b->dev != 0) {
            report(user_context,
                   "Hexagon: argument %d of %s: buffers that live on a device are not supported by "
                   "ferrohalide's Hexagon offload",
                   i, name);
            result = halide_error_code_generic_error;
            break;
        }
        if (!b->host) {
            report(user_context, "Hexagon: buffer argument %d of %s has no host memory", i, name);
            result = halide_error_code_buffer_argument_is_null;
            break;
        }
        unsigned char *shared = (unsigned char *)remote.host_malloc((size_t)size);
        if (!shared) {
            report(user_context, "Hexagon: out of memory shared with the DSP (%d bytes for %s)", size,
                   name);
            result = halide_error_code_out_of_memory;
            break;
        }
        /* Outputs too: bytes the kernel does not write keep their values. */
        __builtin_memcpy(shared, b->host, (size_t)size);
        mapped[k].data = shared;
        mapped[k].dataLen = size;
    }
    if (result) {
        free_shared(mapped, source, arg_flags, count);
        return result;
    }

    int err = remote.run(module, fn, mapped, inputs, mapped + inputs, outputs, mapped + inputs + outputs,
                         scalars);
    poll_log(user_context);
    if (err) {
        report(user_context, "Hexagon: %s failed on the DSP (error %d)", name, err);
        result = halide_error_code_generic_error;
    } else {
        for (k = inputs; k < inputs + outputs; k++) {
            const struct hexagon_device_pointer *b =
                (const struct hexagon_device_pointer *)args[source[k]];
            __builtin_memcpy(b->host, mapped[k].data, (size_t)mapped[k].dataLen);
        }
    }
    free_shared(mapped, source, arg_flags, count);
    return result;
}

/* ---- power and performance ---- */

/* Call an optional power function of the library, *f once it is loaded
 * (none: success). */
static int call_power(void *user_context, const remote_power_fn *f, const char *what) {
    int result = load_remote(user_context);
    if (result || !*f) {
        return result;
    }
    int err = (*f)();
    poll_log(user_context);
    if (err) {
        report(user_context, "Hexagon: %s failed (error %d)", what, err);
        return halide_error_code_generic_error;
    }
    return halide_error_code_success;
}

WEAK bool halide_is_hexagon_available(void *user_context) { return load_remote(user_context) == 0; }

WEAK int halide_hexagon_power_hvx_on(void *user_context) {
    return call_power(user_context, &remote.power_hvx_on, "remote_power_hvx_on");
}

WEAK int halide_hexagon_power_hvx_off(void *user_context) {
    return call_power(user_context, &remote.power_hvx_off, "remote_power_hvx_off");
}

/* For a pipeline's destructor list: errors are ignored. */
WEAK void halide_hexagon_power_hvx_off_as_destructor(void *user_context, void *obj) {
    (void)obj;
    (void)halide_hexagon_power_hvx_off(user_context);
}

WEAK int halide_hexagon_set_performance_mode(void *user_context, int mode) {
    int result = load_remote(user_context);
    if (result || !remote.set_performance_mode) {
        return result;
    }
    int err = remote.set_performance_mode(mode);
    poll_log(user_context);
    if (err) {
        report(user_context, "Hexagon: remote_set_performance_mode failed (error %d)", err);
        return halide_error_code_generic_error;
    }
    return halide_error_code_success;
}

WEAK int halide_hexagon_set_performance(void *user_context, halide_hexagon_power_t *perf) {
    int result = load_remote(user_context);
    if (result || !remote.set_performance) {
        return result;
    }
    if (!perf) {
        halide_error(user_context, "Hexagon: halide_hexagon_set_performance got no settings");
        return halide_error_code_generic_error;
    }
    int err = remote.set_performance(perf->set_mips, perf->mipsPerThread, perf->mipsTotal, perf->set_bus_bw,
                                     perf->bwMegabytesPerSec, perf->busbwUsagePercentage,
                                     perf->set_latency, perf->latency);
    poll_log(user_context);
    if (err) {
        report(user_context, "Hexagon: remote_set_performance failed (error %d)", err);
        return halide_error_code_generic_error;
    }
    return halide_error_code_success;
}

WEAK int halide_hexagon_set_thread_priority(void *user_context, int priority) {
    int result = load_remote(user_context);
    if (result || !remote.set_thread_priority) {
        return result;
    }
    int err = remote.set_thread_priority(priority);
    poll_log(user_context);
    if (err) {
        report(user_context, "Hexagon: remote_set_thread_priority failed (error %d)", err);
        return halide_error_code_generic_error;
    }
    return halide_error_code_success;
}
