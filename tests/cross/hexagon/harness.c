/* A bare-metal harness for hexagon-32-noos objects, run under
 * qemu-hexagon's user mode: no C library, its own `_start`, Linux system
 * calls through `trap0(#1)` (number in r6, arguments in r0-r3), a bump
 * allocator, the C library functions the test program and a Halide-style
 * runtime call, and the `__hexagon_*` arithmetic helpers LLVM calls for
 * what Hexagon has no instruction for (integer division, double division,
 * float square root; double add and multiply are v67 instructions).
 *
 * Built with clang --target=hexagon-unknown-linux-musl -mv67 -ffreestanding
 * -fno-builtin (so no loop here is turned back into a call of itself). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "stdio.h"
#include "stdlib.h"
#include "string.h"
#include "time.h"

/* ---- system calls ---- */
enum { SYS_openat = 56, SYS_close = 57, SYS_read = 63, SYS_write = 64, SYS_exit_group = 94,
       SYS_clock_gettime64 = 403 };

static long syscall4(long n, long a, long b, long c, long d) {
    register long r0 __asm__("r0") = a;
    register long r1 __asm__("r1") = b;
    register long r2 __asm__("r2") = c;
    register long r3 __asm__("r3") = d;
    register long r6 __asm__("r6") = n;
    __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r6) : "memory");
    return r0;
}

int main(int argc, char **argv);

void exit(int status) {
    for (;;) syscall4(SYS_exit_group, status, 0, 0, 0);
}

void abort(void) {
    static const char msg[] = "abort\n";
    syscall4(SYS_write, 2, (long)msg, sizeof(msg) - 1, 0);
    exit(134);
}

/* The kernel's initial stack: argc, then argv. */
void start_c(long *sp) { exit(main((int)sp[0], (char **)(sp + 1))); }

__asm__(".text\n"
        ".globl _start\n"
        "_start:\n"
        "  r0 = r29\n"
        "  r29 = and(r29, #-8)\n"
        "  call start_c\n");

/* ---- integer division (shift and subtract) ---- */
static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t *rem) {
    uint64_t q = 0, r = 0;
    for (int i = 63; i >= 0; i--) {
        r = (r << 1) | ((n >> i) & 1);
        if (r >= d) {
            r -= d;
            q |= (uint64_t)1 << i;
        }
    }
    *rem = r;
    return q;
}
uint64_t __hexagon_udivdi3(uint64_t n, uint64_t d) { uint64_t r; return udivmod64(n, d, &r); }
uint64_t __hexagon_umoddi3(uint64_t n, uint64_t d) { uint64_t r; udivmod64(n, d, &r); return r; }
int64_t __hexagon_divdi3(int64_t n, int64_t d) {
    uint64_t r, q = udivmod64(n < 0 ? 0 - (uint64_t)n : (uint64_t)n, d < 0 ? 0 - (uint64_t)d : (uint64_t)d, &r);
    return (n < 0) != (d < 0) ? (int64_t)(0 - q) : (int64_t)q;
}
int64_t __hexagon_moddi3(int64_t n, int64_t d) {
    uint64_t r;
    udivmod64(n < 0 ? 0 - (uint64_t)n : (uint64_t)n, d < 0 ? 0 - (uint64_t)d : (uint64_t)d, &r);
    return n < 0 ? (int64_t)(0 - r) : (int64_t)r;
}
uint32_t __hexagon_udivsi3(uint32_t n, uint32_t d) { return (uint32_t)__hexagon_udivdi3(n, d); }
uint32_t __hexagon_umodsi3(uint32_t n, uint32_t d) { return (uint32_t)__hexagon_umoddi3(n, d); }
int32_t __hexagon_divsi3(int32_t n, int32_t d) { return (int32_t)__hexagon_divdi3(n, d); }
int32_t __hexagon_modsi3(int32_t n, int32_t d) { return (int32_t)__hexagon_moddi3(n, d); }

/* ---- floating point ---- */
double __hexagon_adddf3(double a, double b) { return a + b; }
double __hexagon_subdf3(double a, double b) { return a - b; }
double __hexagon_muldf3(double a, double b) { return a * b; }

typedef union {
    double d;
    uint64_t u;
} bits64;

/* Round the positive value q * 2^(e - 1075 - drop) (q's low `drop` bits
 * are below the result; `sticky`: nonzero bits below q) to a double, to
 * nearest even, with subnormals and overflow. q < 2^(53 + drop + 1). */
static double round_double(uint64_t sign, uint64_t q, int drop, int sticky, int e) {
    if (e < 1) { /* subnormal: drop the bits below 2^-1074 too */
        int extra = 1 - e;
        if (extra > 60) extra = 60;
        sticky |= (q & (((uint64_t)1 << extra) - 1)) != 0;
        q >>= extra;
        e = 0;
    }
    uint64_t mant = q >> drop;
    uint64_t half = (uint64_t)1 << (drop - 1);
    uint64_t below = q & ((half << 1) - 1);
    if (below > half || (below == half && (sticky || (mant & 1)))) {
        mant++;
    }
    if (e == 0) { /* subnormal (or rounded up into the smallest normal) */
        bits64 r = {.u = (sign << 63) | mant};
        return r.d;
    }
    if (mant >> 53) {
        mant >>= 1;
        e++;
    }
    if (e >= 0x7ff) {
        bits64 r = {.u = (sign << 63) | ((uint64_t)0x7ff << 52)};
        return r.d;
    }
    bits64 r = {.u = (sign << 63) | ((uint64_t)e << 52) | (mant & (((uint64_t)1 << 52) - 1))};
    return r.d;
}

double __hexagon_divdf3(double a, double b) {
    bits64 ua = {.d = a}, ub = {.d = b};
    uint64_t sign = (ua.u >> 63) ^ (ub.u >> 63);
    int ea = (int)((ua.u >> 52) & 0x7ff), eb = (int)((ub.u >> 52) & 0x7ff);
    uint64_t ma = ua.u & (((uint64_t)1 << 52) - 1), mb = ub.u & (((uint64_t)1 << 52) - 1);
    bits64 nan = {.u = 0x7ff8000000000000ull}, inf = {.u = (sign << 63) | 0x7ff0000000000000ull},
           zero = {.u = sign << 63};
    if ((ea == 0x7ff && ma) || (eb == 0x7ff && mb)) return nan.d;
    if (ea == 0x7ff) return eb == 0x7ff ? nan.d : inf.d;
    if (eb == 0x7ff) return zero.d;
    if (eb == 0 && mb == 0) return (ea == 0 && ma == 0) ? nan.d : inf.d;
    if (ea == 0 && ma == 0) return zero.d;
    if (ea == 0) { while (!(ma >> 52)) { ma <<= 1; ea--; } ea++; } else ma |= (uint64_t)1 << 52;
    if (eb == 0) { while (!(mb >> 52)) { mb <<= 1; eb--; } eb++; } else mb |= (uint64_t)1 << 52;
    int e = ea - eb + 1023;
    if (ma < mb) {
        ma <<= 1;
        e--;
    }
    /* ma / mb in [1, 2): 55 quotient bits (1 integer, 54 fraction). */
    uint64_t q = 0, r = ma;
    for (int i = 0; i < 55; i++) {
        q <<= 1;
        if (r >= mb) {
            r -= mb;
            q |= 1;
        }
        r <<= 1;
    }
    return round_double(sign, q, 2, r != 0, e);
}

static uint64_t isqrt64(uint64_t n, uint64_t *rem) {
    uint64_t res = 0, bit = (uint64_t)1 << 62;
    while (bit > n) bit >>= 2;
    while (bit) {
        if (n >= res + bit) {
            n -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    *rem = n;
    return res;
}

float __hexagon_sqrtf(float x) {
    union {
        float f;
        uint32_t u;
    } v = {.f = x};
    uint32_t u = v.u;
    if ((u & 0x7fffffffu) == 0) return x;      /* +-0 */
    if (u >> 31) { v.u = 0x7fc00000u; return v.f; } /* negative: NaN */
    int e = (int)((u >> 23) & 0xff);
    uint32_t m = u & 0x7fffffu;
    if (e == 0xff) return x; /* +inf, NaN */
    if (e == 0) { while (!(m & 0x800000u)) { m <<= 1; e--; } e++; } else m |= 0x800000u;
    int E = e - 150; /* x = m * 2^E */
    if (E & 1) {
        m <<= 1;
        E -= 1;
    }
    uint64_t rem, r = isqrt64((uint64_t)m << 26, &rem); /* sqrt(x) = r * 2^(E/2 - 13) */
    int s = (r >> 25) ? 2 : 1;
    uint32_t mant = (uint32_t)(r >> s);
    uint32_t below = (uint32_t)(r & ((1u << s) - 1)), half = 1u << (s - 1);
    int sticky = rem != 0;
    if (below > half || (below == half && (sticky || (mant & 1)))) mant++;
    int exponent = (E >> 1) - 13 + s + 23 + 127;
    if (mant >> 24) {
        mant >>= 1;
        exponent++;
    }
    v.u = ((uint32_t)exponent << 23) | (mant & 0x7fffffu);
    return v.f;
}

/* ---- memory ---- */
static _Alignas(128) uint8_t arena[256u << 20];
static size_t arena_used;

void *malloc(size_t size) {
    size_t at = (arena_used + 127) & ~(size_t)127;
    if (size > sizeof(arena) - at) return 0;
    arena_used = at + size;
    return arena + at;
}
void *calloc(size_t count, size_t size) {
    if (size && count > ((size_t)-1) / size) return 0;
    uint8_t *p = (uint8_t *)malloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}
void free(void *p) { (void)p; }

void *memcpy(void *dst, const void *src, size_t n) {
    volatile uint8_t *d = (volatile uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    for (size_t i = 0; i < n; i++) d[i] = s[i];
    return dst;
}
void *memmove(void *dst, const void *src, size_t n) {
    volatile uint8_t *d = (volatile uint8_t *)dst;
    const uint8_t *s = (const uint8_t *)src;
    if (d < s) {
        for (size_t i = 0; i < n; i++) d[i] = s[i];
    } else {
        for (size_t i = n; i > 0; i--) d[i - 1] = s[i - 1];
    }
    return dst;
}
void *memset(void *dst, int c, size_t n) {
    volatile uint8_t *d = (volatile uint8_t *)dst;
    for (size_t i = 0; i < n; i++) d[i] = (uint8_t)c;
    return dst;
}
int memcmp(const void *a, const void *b, size_t n) {
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}
size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
int strcmp(const char *a, const char *b) {
    while (*a && *a == *b) a++, b++;
    return (unsigned char)*a - (unsigned char)*b;
}
int atoi(const char *s) {
    int sign = 1, v = 0;
    if (*s == '-') sign = -1, s++;
    while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
    return sign * v;
}
char *getenv(const char *name) {
    (void)name;
    return 0;
}

/* ---- files ---- */
struct harness_file {
    int fd;
};
static FILE std_files[3] = {{0}, {1}, {2}};
FILE *stdout = &std_files[1], *stderr = &std_files[2];
static FILE open_files[16];
static int open_count;

FILE *fopen(const char *path, const char *mode) {
    const long AT_FDCWD = -100;
    long flags = mode[0] == 'r' ? 0 : (1 | 0100 | 01000); /* O_WRONLY | O_CREAT | O_TRUNC */
    long fd = syscall4(SYS_openat, AT_FDCWD, (long)path, flags, 0644);
    if (fd < 0 || open_count >= 16) return 0;
    open_files[open_count].fd = (int)fd;
    return &open_files[open_count++];
}
size_t fread(void *data, size_t size, size_t count, FILE *f) {
    size_t want = size * count, got = 0;
    while (got < want) {
        long n = syscall4(SYS_read, f->fd, (long)((uint8_t *)data + got), (long)(want - got), 0);
        if (n <= 0) break;
        got += (size_t)n;
    }
    return size ? got / size : 0;
}
size_t fwrite(const void *data, size_t size, size_t count, FILE *f) {
    size_t want = size * count, put = 0;
    while (put < want) {
        long n = syscall4(SYS_write, f->fd, (long)((const uint8_t *)data + put), (long)(want - put), 0);
        if (n <= 0) break;
        put += (size_t)n;
    }
    return size ? put / size : 0;
}
int fclose(FILE *f) { return (int)syscall4(SYS_close, f->fd, 0, 0, 0); }

int clock_gettime(int clock, struct timespec *ts) {
    int64_t t[2] = {0, 0};
    long r = syscall4(SYS_clock_gettime64, clock, (long)t, 0, 0);
    ts->tv_sec = (long)t[0];
    ts->tv_nsec = (long)t[1];
    return r < 0 ? -1 : 0;
}

/* ---- printf: %s %d %u %c %% and %.Nf ---- */
static void put(char **p, char *end, char c) {
    if (*p < end) *(*p)++ = c;
}
static void put_uint(char **p, char *end, uint64_t v) {
    char digits[24];
    int n = 0;
    do { uint64_t r; v = udivmod64(v, 10, &r); digits[n++] = (char)('0' + r); } while (v);
    while (n) put(p, end, digits[--n]);
}
static int vformat(char *buf, size_t size, const char *f, va_list ap) {
    char *p = buf, *end = buf + size - 1;
    for (; *f; f++) {
        if (*f != '%') { put(&p, end, *f); continue; }
        f++;
        int precision = 6;
        if (*f == '.') { precision = 0; f++; while (*f >= '0' && *f <= '9') precision = precision * 10 + (*f++ - '0'); }
        switch (*f) {
        case 's': { const char *s = va_arg(ap, const char *); while (*s) put(&p, end, *s++); break; }
        case 'd': { int v = va_arg(ap, int); if (v < 0) { put(&p, end, '-'); put_uint(&p, end, 0 - (uint64_t)(int64_t)v); } else put_uint(&p, end, (uint64_t)v); break; }
        case 'u': put_uint(&p, end, va_arg(ap, unsigned)); break;
        case 'c': put(&p, end, (char)va_arg(ap, int)); break;
        case 'f': {
            double v = va_arg(ap, double);
            if (v < 0) { put(&p, end, '-'); v = -v; }
            uint64_t scale = 1;
            for (int i = 0; i < precision; i++) scale *= 10;
            uint64_t all = (uint64_t)(v * (double)scale + 0.5), frac;
            put_uint(&p, end, udivmod64(all, scale, &frac));
            if (precision) {
                put(&p, end, '.');
                for (uint64_t d = scale; d > 1;) { uint64_t r; d = udivmod64(d, 10, &r); uint64_t digit = udivmod64(frac, d, &frac); put(&p, end, (char)('0' + digit)); }
            }
            break;
        }
        default: put(&p, end, *f);
        }
    }
    *p = 0;
    return (int)(p - buf);
}
static int vfprint(FILE *f, const char *format, va_list ap) {
    char buf[512];
    int n = vformat(buf, sizeof(buf), format, ap);
    fwrite(buf, 1, (size_t)n, f);
    return n;
}
int fprintf(FILE *f, const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vfprint(f, format, ap);
    va_end(ap);
    return n;
}
int printf(const char *format, ...) {
    va_list ap;
    va_start(ap, format);
    int n = vfprint(stdout, format, ap);
    va_end(ap);
    return n;
}

/* What Halide's Hexagon runtime also asks of its host: HVX and VTCM
 * reservations (QEMU's HVX is always there; there is no VTCM), and a copy
 * helper. */
int qurt_hvx_lock(int mode) {
    (void)mode;
    return 0;
}
int qurt_hvx_unlock(void) { return 0; }
void *HAP_request_VTCM(unsigned size, unsigned single_page) {
    (void)size;
    (void)single_page;
    return 0;
}
int HAP_release_VTCM(void *p) {
    (void)p;
    return 0;
}
void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *dst, const void *src, size_t n) {
    return memcpy(dst, src, n);
}

/* The runtime's messages (it has no console of its own on bare metal). */
void halide_print(void *user_context, const char *msg) {
    (void)user_context;
    fwrite(msg, 1, strlen(msg), stderr);
}
void halide_error(void *user_context, const char *msg) {
    (void)user_context;
    fwrite("Error: ", 1, 7, stderr);
    fwrite(msg, 1, strlen(msg), stderr);
}
