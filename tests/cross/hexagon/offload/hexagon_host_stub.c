/* libhalide_hexagon_host.so for tests: the host side of Halide's Hexagon
 * offload (what Qualcomm's FastRPC bridge is on a phone), for an ARM
 * program run under qemu-aarch64. It implements the remote API that
 * Halide's offload runtime (hexagon_host.cpp) finds with dlsym; each run
 * plays the DSP by writing the shared runtime, the kernels and the
 * arguments into a fresh directory and running
 *
 *     $FERROHALIDE_TEST_QEMU_HEXAGON $FERROHALIDE_TEST_DSP_RUNNER DIR
 *
 * (dsp_runner.c, whose header describes request.bin and reply.bin), then
 * copying the output buffers back. QEMU's user mode hands an execve to the
 * host's kernel, so the x86-64 qemu-hexagon runs natively.
 * The directories are made in $FERROHALIDE_TEST_OFFLOAD_DIR (else $TMPDIR,
 * else /tmp) and removed after a successful call;
 * FERROHALIDE_TEST_KEEP_OFFLOAD=1 keeps them, and a failed call leaves its
 * directory (its path is printed).
 *
 * aarch64-linux-gnu-gcc -shared -fPIC -O2 hexagon_host_stub.c -o libhalide_hexagon_host.so */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* Halide's remote_buffer (hexagon_host.cpp): a pointer and a length. */
struct remote_buffer {
    unsigned char *data;
    int dataLen;
};

struct library {
    char *soname;
    unsigned char *code;
    int size;
};
struct symbol {
    uint64_t module;
    char *name;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct library libraries[256]; /* module handle h is libraries[h - 1] */
static int library_count;
static struct symbol symbols[4096]; /* symbol handle h is symbols[h - 1] */
static int symbol_count;

static const char shared_runtime_name[] = "libhalide_shared_runtime.so";

static void complain(const char *fmt, const char *detail) {
    fprintf(stderr, "libhalide_hexagon_host (test stub): ");
    fprintf(stderr, fmt, detail);
    fputc('\n', stderr);
}

EXPORT int halide_hexagon_remote_load_library(const char *soname, int sonameLen, const unsigned char *code,
                                              int codeLen, uint64_t *module) {
    if (!soname || !code || codeLen <= 0 || !module) return -1;
    pthread_mutex_lock(&lock);
    int index = library_count;
    if (index == (int)(sizeof(libraries) / sizeof(libraries[0]))) {
        pthread_mutex_unlock(&lock);
        complain("%s", "too many libraries");
        return -1;
    }
    struct library *l = &libraries[index];
    l->soname = strndup(soname, sonameLen > 0 ? (size_t)sonameLen : strlen(soname));
    l->code = malloc(codeLen);
    if (!l->soname || !l->code) {
        pthread_mutex_unlock(&lock);
        return -1;
    }
    memcpy(l->code, code, codeLen);
    l->size = codeLen;
    library_count++;
    pthread_mutex_unlock(&lock);
    *module = (uint64_t)(index + 1);
    return 0;
}

EXPORT int halide_hexagon_remote_get_symbol_v4(uint64_t module, const char *name, int nameLen, uint64_t *sym) {
    if (!name || !sym || module == 0 || module > (uint64_t)library_count) return -1;
    pthread_mutex_lock(&lock);
    int index = symbol_count;
    if (index == (int)(sizeof(symbols) / sizeof(symbols[0]))) {
        pthread_mutex_unlock(&lock);
        complain("%s", "too many symbols");
        return -1;
    }
    symbols[index].module = module;
    symbols[index].name = strndup(name, nameLen > 0 ? (size_t)nameLen : strlen(name));
    symbol_count++;
    pthread_mutex_unlock(&lock);
    *sym = (uint64_t)(index + 1);
    return 0;
}

EXPORT int halide_hexagon_remote_release_library(uint64_t module) {
    (void)module;
    return 0;
}

EXPORT void halide_hexagon_host_malloc_init(void) {}
EXPORT void halide_hexagon_host_malloc_deinit(void) {}

EXPORT void *halide_hexagon_host_malloc(size_t size) {
    void *p = NULL;
    size_t rounded = (size + 127) & ~(size_t)127;
    return posix_memalign(&p, 128, rounded ? rounded : 128) == 0 ? p : NULL;
}

EXPORT void halide_hexagon_host_free(void *p) { free(p); }

EXPORT int halide_hexagon_remote_power_hvx_on(void) { return 0; }
EXPORT int halide_hexagon_remote_power_hvx_off(void) { return 0; }
EXPORT int halide_hexagon_remote_set_performance_mode(int mode) {
    (void)mode;
    return 0;
}
EXPORT int halide_hexagon_remote_set_performance(int set_mips, unsigned mips_per_thread, unsigned mips_total,
                                                 int set_bus_bw, unsigned bw_megabytes_per_sec,
                                                 unsigned busbw_usage_percentage, int set_latency, int latency) {
    (void)set_mips, (void)mips_per_thread, (void)mips_total, (void)set_bus_bw, (void)bw_megabytes_per_sec;
    (void)busbw_usage_percentage, (void)set_latency, (void)latency;
    return 0;
}
EXPORT int halide_hexagon_remote_set_thread_priority(int priority) {
    (void)priority;
    return 0;
}

/* ---- one run ---- */
static int write_file(const char *dir, const char *name, const void *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = size ? fwrite(data, 1, size, f) : 0;
    return (fclose(f) == 0 && put == size) ? 0 : -1;
}

static void put_u32(FILE *f, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    fwrite(b, 1, 4, f);
}

static int write_request(const char *dir, const char *name, const struct remote_buffer *in, int nin,
                         const struct remote_buffer *out, int nout, const struct remote_buffer *scalars,
                         int nscalars) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/request.bin", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    put_u32(f, (uint32_t)strlen(name));
    fwrite(name, 1, strlen(name), f);
    const struct remote_buffer *groups[3] = {in, out, scalars};
    int counts[3] = {nin, nout, nscalars};
    for (int g = 0; g < 3; g++) {
        put_u32(f, (uint32_t)counts[g]);
        for (int i = 0; i < counts[g]; i++) {
            int n = groups[g][i].dataLen;
            if (n < 0 || (g == 2 && n > 8)) {
                fclose(f);
                complain("%s", g == 2 ? "a scalar argument is larger than 8 bytes" : "a negative buffer size");
                return -1;
            }
            put_u32(f, (uint32_t)n);
            if (n) fwrite(groups[g][i].data, 1, (size_t)n, f);
        }
    }
    return (ferror(f) | fclose(f)) ? -1 : 0;
}

static int read_u32(FILE *f, uint32_t *v) {
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) return -1;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 0;
}

static int read_reply(const char *dir, const struct remote_buffer *out, int nout, int *result) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/reply.bin", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    uint32_t r, n;
    int ok = read_u32(f, &r) == 0 && read_u32(f, &n) == 0 && n == (uint32_t)nout;
    for (int i = 0; ok && i < nout; i++) {
        uint32_t len;
        ok = read_u32(f, &len) == 0 && len == (uint32_t)out[i].dataLen &&
             (len == 0 || fread(out[i].data, 1, len, f) == len);
    }
    fclose(f);
    *result = (int)r;
    return ok ? 0 : -1;
}

/* Runs the DSP; its exit status, or -1 if it did not exit normally. */
static int run_dsp(const char *dir) {
    const char *qemu = getenv("FERROHALIDE_TEST_QEMU_HEXAGON");
    const char *runner = getenv("FERROHALIDE_TEST_DSP_RUNNER");
    if (!qemu || !*qemu || !runner || !*runner) {
        complain("%s", "FERROHALIDE_TEST_QEMU_HEXAGON and FERROHALIDE_TEST_DSP_RUNNER must be set");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        char *argv[] = {(char *)qemu, (char *)runner, (char *)dir, NULL};
        execv(qemu, argv);
        fprintf(stderr, "libhalide_hexagon_host (test stub): cannot run %s: %s\n", qemu, strerror(errno));
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void remove_dir(const char *dir) {
    static const char *const names[] = {"runtime.so", "kernel.so", "request.bin", "reply.bin"};
    char path[4096];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Halide's remote_run_fn passes the function handle as an int: only its
 * low 32 bits are meaningful. */
EXPORT int halide_hexagon_remote_run(uint64_t module, uint64_t function_arg, const struct remote_buffer *in,
                                     int nin, const struct remote_buffer *out, int nout,
                                     const struct remote_buffer *scalars, int nscalars) {
    uint32_t function = (uint32_t)function_arg;
    pthread_mutex_lock(&lock);
    int libs = library_count, syms = symbol_count;
    pthread_mutex_unlock(&lock);
    if (module == 0 || module > (uint64_t)libs || function == 0 || function > (uint32_t)syms) {
        complain("%s", "halide_hexagon_remote_run: bad module or function handle");
        return -1;
    }
    const struct library *kernel = &libraries[module - 1];
    const struct symbol *sym = &symbols[function - 1];
    /* The shared runtime: the library so named (the last one loaded), else
     * the first library loaded, unless that is the kernels themselves. */
    const struct library *runtime = NULL;
    for (int i = 0; i < libs; i++)
        if (strcmp(libraries[i].soname, shared_runtime_name) == 0) runtime = &libraries[i];
    if (!runtime && libs > 0 && &libraries[0] != kernel) runtime = &libraries[0];

    if (!getenv("FERROHALIDE_TEST_QEMU_HEXAGON") || !getenv("FERROHALIDE_TEST_DSP_RUNNER")) {
        complain("%s", "FERROHALIDE_TEST_QEMU_HEXAGON and FERROHALIDE_TEST_DSP_RUNNER must be set");
        return -1;
    }
    const char *tmp = getenv("FERROHALIDE_TEST_OFFLOAD_DIR");
    if (!tmp || !*tmp) tmp = getenv("TMPDIR");
    char dir[2048];
    snprintf(dir, sizeof(dir), "%s/fh_hexagon_offload_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        complain("cannot create a directory in %s", tmp && *tmp ? tmp : "/tmp");
        return -1;
    }
    int result = -1;
    if ((runtime && write_file(dir, "runtime.so", runtime->code, runtime->size) != 0) ||
        write_file(dir, "kernel.so", kernel->code, kernel->size) != 0 ||
        write_request(dir, sym->name, in, nin, out, nout, scalars, nscalars) != 0) {
        complain("cannot write the request into %s", dir);
        return -1;
    }
    int status = run_dsp(dir);
    if (status != 0) {
        fprintf(stderr, "libhalide_hexagon_host (test stub): the DSP run failed (status %d); request left in %s\n",
                status, dir);
        return -1;
    }
    if (read_reply(dir, out, nout, &result) != 0) {
        complain("bad or missing reply.bin in %s", dir);
        return -1;
    }
    const char *keep = getenv("FERROHALIDE_TEST_KEEP_OFFLOAD");
    if (!keep || !*keep || strcmp(keep, "0") == 0) remove_dir(dir);
    return result;
}
