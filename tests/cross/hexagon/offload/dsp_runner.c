/* The DSP side of the emulated Hexagon offload: a bare-metal Hexagon
 * program (linked with ../harness.c and so_loader.c, run under
 * qemu-hexagon) that does what QuRT's halide_hexagon_remote_run_v2 does
 * for one call.
 *
 *   dsp_runner DIR
 *
 * DIR holds runtime.so (optional: the shared runtime), kernel.so (the
 * kernels) and request.bin; the runner loads runtime.so, then kernel.so,
 * looks up the kernel, calls it as `int NAME(void **args)` with the
 * arguments Halide's remote side builds, and writes DIR/reply.bin.
 *
 * All integers are 32-bit little-endian.
 *   request.bin: u32 name length, name bytes (no NUL);
 *                u32 input count,  then per input buffer:  u32 length, bytes;
 *                u32 output count, then per output buffer: u32 length, bytes;
 *                u32 scalar count, then per scalar:        u32 length (<= 8), bytes.
 *   reply.bin:   i32 the kernel's result; u32 output count, then per output
 *                buffer: u32 length, bytes (its contents after the call).
 * Exit status: 0 when the kernel was called (whatever it returned), 2 when
 * the request could not be carried out (the reason is on stderr). */
#include <stddef.h>
#include <stdint.h>

#include "so_loader.h"
#include "stdio.h"
#include "stdlib.h"
#include "string.h"

enum { SYS_openat = 56, SYS_close = 57, SYS_llseek = 62, SYS_read = 63, SYS_write = 64 };
enum { AT_FDCWD = -100, O_RDONLY = 0, O_WRONLY_CREAT_TRUNC = 01 | 0100 | 01000, SEEK_SET = 0, SEEK_END = 2 };

static void die(const char *what, const char *detail) {
    fprintf(stderr, "dsp_runner: %s%s\n", what, detail ? detail : "");
    exit(2);
}

static char *join(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = (char *)malloc(a + b + 2);
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* The whole file, in 128-byte aligned memory; 0 if it cannot be opened. */
static uint8_t *read_file(const char *path, uint32_t *size) {
    long fd = hx_syscall(SYS_openat, AT_FDCWD, (long)path, O_RDONLY, 0, 0, 0);
    if (fd < 0) return 0;
    /* _llseek(fd, offset_high, offset_low, loff_t *result, whence) */
    int64_t end = 0, start = 0;
    if (hx_syscall(SYS_llseek, fd, 0, 0, (long)&end, SEEK_END, 0) < 0 ||
        hx_syscall(SYS_llseek, fd, 0, 0, (long)&start, SEEK_SET, 0) < 0 || end < 0 || end > 0x7fffffff)
        die("cannot find the size of ", path);
    uint8_t *data = (uint8_t *)malloc((size_t)end + 1);
    if (!data) die("out of memory reading ", path);
    uint32_t got = 0;
    while (got < (uint32_t)end) {
        long n = hx_syscall(SYS_read, fd, (long)(data + got), (long)((uint32_t)end - got), 0, 0, 0);
        if (n <= 0) die("cannot read ", path);
        got += (uint32_t)n;
    }
    hx_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    *size = got;
    return data;
}

static void write_all(long fd, const void *data, uint32_t n, const char *path) {
    uint32_t put = 0;
    while (put < n) {
        long w = hx_syscall(SYS_write, fd, (long)((const uint8_t *)data + put), (long)(n - put), 0, 0, 0);
        if (w <= 0) die("cannot write ", path);
        put += (uint32_t)w;
    }
}

/* A reader of request.bin that checks it never runs past the end. */
struct cursor {
    const uint8_t *p, *end;
};
static uint32_t take_u32(struct cursor *c) {
    if (c->end - c->p < 4) die("request.bin is truncated", 0);
    uint32_t v = (uint32_t)c->p[0] | (uint32_t)c->p[1] << 8 | (uint32_t)c->p[2] << 16 | (uint32_t)c->p[3] << 24;
    c->p += 4;
    return v;
}
static const uint8_t *take(struct cursor *c, uint32_t n) {
    if ((uint32_t)(c->end - c->p) < n) die("request.bin is truncated", 0);
    const uint8_t *p = c->p;
    c->p += n;
    return p;
}

/* What Halide's device code expects each buffer argument to point at
 * (HexagonOffload packs it so): 16 bytes on 32-bit Hexagon, host at 8. */
struct hexagon_device_pointer {
    uint64_t dev;
    uint8_t *host;
};
_Static_assert(offsetof(struct hexagon_device_pointer, host) == 8, "host at offset 8");
_Static_assert(sizeof(struct hexagon_device_pointer) == 16, "16 bytes");

struct buffer {
    uint8_t *data;
    uint32_t size;
};

/* Each buffer in its own 128-byte aligned memory (HVX's vector size),
 * padded to whole vectors: an unaligned vector access reads or writes the
 * aligned vectors around it. */
static void read_buffers(struct cursor *c, uint32_t count, struct buffer *out) {
    for (uint32_t i = 0; i < count; i++) {
        uint32_t n = take_u32(c);
        const uint8_t *src = take(c, n);
        uint32_t padded = ((n + 127u) & ~127u) + 128u;
        out[i].data = (uint8_t *)malloc(padded);
        if (!out[i].data || ((uintptr_t)out[i].data & 127)) die("cannot allocate a buffer", 0);
        memcpy(out[i].data, src, n);
        memset(out[i].data + n, 0, padded - n);
        out[i].size = n;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) die("usage: dsp_runner DIR", 0);
    const char *dir = argv[1];

    uint32_t request_size, runtime_size, kernel_size;
    const uint8_t *request = read_file(join(dir, "request.bin"), &request_size);
    if (!request) die("cannot open request.bin in ", dir);
    const uint8_t *runtime = read_file(join(dir, "runtime.so"), &runtime_size);
    const uint8_t *kernel = read_file(join(dir, "kernel.so"), &kernel_size);
    if (!kernel) die("cannot open kernel.so in ", dir);

    struct cursor c = {request, request + request_size};
    uint32_t name_len = take_u32(&c);
    char *name = (char *)malloc(name_len + 1);
    memcpy(name, take(&c, name_len), name_len);
    name[name_len] = 0;
    uint32_t n_in = take_u32(&c);
    struct buffer *in = (struct buffer *)malloc((n_in + 1) * sizeof(struct buffer));
    read_buffers(&c, n_in, in);
    uint32_t n_out = take_u32(&c);
    struct buffer *out = (struct buffer *)malloc((n_out + 1) * sizeof(struct buffer));
    read_buffers(&c, n_out, out);
    uint32_t n_scalars = take_u32(&c);
    /* Like halide_hexagon_remote_run (v2): each scalar in its own 8-byte slot. */
    uint64_t *scalars = (uint64_t *)calloc(n_scalars + 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < n_scalars; i++) {
        uint32_t n = take_u32(&c);
        if (n > sizeof(uint64_t)) die("a scalar argument is larger than 8 bytes", 0);
        memcpy(&scalars[i], take(&c, n), n);
    }
    if (c.p != c.end) die("request.bin has trailing bytes", 0);

    if (runtime && !hx_load("libhalide_shared_runtime.so", runtime, (int)runtime_size))
        die("cannot load runtime.so", 0);
    void *module = hx_load("libhalide_kernels.so", kernel, (int)kernel_size);
    if (!module) die("cannot load kernel.so", 0);
    int (*pipeline)(void **) = (int (*)(void **))hx_sym(module, name);
    if (!pipeline) die("kernel.so defines no symbol ", name);

    /* The arguments as halide_hexagon_remote_run_v2 builds them: input
     * buffers, output buffers (each a pointer to a {dev, host} pair with
     * dev 0), then scalars (each a pointer to its slot). */
    uint32_t n_buffers = n_in + n_out;
    void **args = (void **)malloc((n_buffers + n_scalars + 1) * sizeof(void *));
    struct hexagon_device_pointer *dp =
        (struct hexagon_device_pointer *)calloc(n_buffers + 1, sizeof(struct hexagon_device_pointer));
    uint32_t a = 0;
    for (uint32_t i = 0; i < n_in; i++, a++) {
        dp[a].host = in[i].data;
        args[a] = &dp[a];
    }
    for (uint32_t i = 0; i < n_out; i++, a++) {
        dp[a].host = out[i].data;
        args[a] = &dp[a];
    }
    for (uint32_t i = 0; i < n_scalars; i++, a++) args[a] = &scalars[i];

    int32_t result = pipeline(args);

    char *reply_path = join(dir, "reply.bin");
    long fd = hx_syscall(SYS_openat, AT_FDCWD, (long)reply_path, O_WRONLY_CREAT_TRUNC, 0644, 0, 0);
    if (fd < 0) die("cannot create ", reply_path);
    write_all(fd, &result, 4, reply_path);
    write_all(fd, &n_out, 4, reply_path);
    for (uint32_t i = 0; i < n_out; i++) {
        write_all(fd, &out[i].size, 4, reply_path);
        write_all(fd, out[i].data, out[i].size, reply_path);
    }
    hx_syscall(SYS_close, fd, 0, 0, 0, 0, 0);
    return 0;
}
