/* The string builder compiled code formats print lines and error messages
 * with. Each function appends at dst, never writes at or past end, keeps
 * the text NUL-terminated and returns the new end of the text (dst itself
 * when there is no room), so calls chain. */
#include "internal.h"

size_t ferrohalide_strlen(const char *s) {
    size_t n = 0;
    while (s[n]) {
        n++;
    }
    return n;
}

int ferrohalide_env_count(const char *name, int max) {
    const char *s = getenv(name);
    if (!s) {
        return -1;
    }
    while (*s == ' ') {
        s++;
    }
    int n = 0, digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        n = n * 10 + (*s - '0');
        if (n > max) {
            n = max;
        }
    }
    while (*s == ' ') {
        s++;
    }
    return digits > 0 && *s == 0 ? n : -1;
}

static char *append(char *dst, char *end, const char *s, size_t n) {
    if (!dst || !end || dst >= end) {
        return dst;
    }
    size_t room = (size_t)(end - dst) - 1;
    if (n > room) {
        n = room;
    }
    for (size_t i = 0; i < n; i++) {
        dst[i] = s[i];
    }
    dst[n] = 0;
    return dst + n;
}

WEAK char *halide_string_to_string(char *dst, char *end, const char *arg) {
    if (!arg) {
        arg = "<null>";
    }
    return append(dst, end, arg, ferrohalide_strlen(arg));
}

/* The decimal digits of v, at least `digits` of them, ending at buf_end. */
static char *digits_of(char *buf_end, uint64_t v, int digits) {
    char *p = buf_end;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
        digits--;
    } while (v != 0 || digits > 0);
    return p;
}

WEAK char *halide_uint64_to_string(char *dst, char *end, uint64_t arg, int digits) {
    char buf[32];
    if (digits > 24) {
        digits = 24;
    }
    char *start = digits_of(buf + sizeof(buf), arg, digits);
    return append(dst, end, start, (size_t)(buf + sizeof(buf) - start));
}

WEAK char *halide_int64_to_string(char *dst, char *end, int64_t arg, int digits) {
    if (arg < 0) {
        dst = append(dst, end, "-", 1);
        /* Negate in unsigned arithmetic: INT64_MIN has no positive twin. */
        return halide_uint64_to_string(dst, end, 0 - (uint64_t)arg, digits);
    }
    return halide_uint64_to_string(dst, end, (uint64_t)arg, digits);
}

#if defined(FERROHALIDE_NOOS)
/* Bare metal has no snprintf: `%f` / `%e` with six decimals, rounded half
 * up in decimal from the binary value (exact for every value whose scaled
 * integer fits in 64 bits; larger ones print in scientific form). */
static int format_double(char *buf, size_t size, double v, int scientific) {
    char *p = buf, *e = buf + size - 1;
    if (v != v) {
        const char *nan = "nan";
        while (*nan && p < e) *p++ = *nan++;
        *p = 0;
        return (int)(p - buf);
    }
    if (v < 0 || (v == 0 && 1 / v < 0)) {
        *p++ = '-';
        v = -v;
    }
    if (v > 1.7976931348623157e308) {
        const char *inf = "inf";
        while (*inf && p < e) *p++ = *inf++;
        *p = 0;
        return (int)(p - buf);
    }
    int exponent = 0;
    if (scientific || v >= 1e12) {
        scientific = 1;
        if (v != 0) {
            while (v >= 10) { v /= 10; exponent++; }
            while (v < 1) { v *= 10; exponent--; }
        }
    }
    uint64_t scaled = (uint64_t)(v * 1e6 + 0.5);
    uint64_t whole = scaled / 1000000, frac = scaled % 1000000;
    if (scientific && whole >= 10) { whole /= 10; exponent++; frac = 0; }
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + whole % 10); whole /= 10; } while (whole);
    while (n && p < e) *p++ = digits[--n];
    if (p < e) *p++ = '.';
    for (uint64_t d = 100000; d; d /= 10) {
        if (p < e) *p++ = (char)('0' + (frac / d) % 10);
    }
    if (scientific) {
        if (p < e) *p++ = 'e';
        if (p < e) *p++ = exponent < 0 ? '-' : '+';
        int x = exponent < 0 ? -exponent : exponent;
        char xd[4];
        int k = 0;
        do { xd[k++] = (char)('0' + x % 10); x /= 10; } while (x);
        if (k < 2) xd[k++] = '0';
        while (k && p < e) *p++ = xd[--k];
    }
    *p = 0;
    return (int)(p - buf);
}
#define snprintf_double(buf, size, v, sci) format_double(buf, size, v, sci)
#else
#define snprintf_double(buf, size, v, sci) snprintf(buf, size, (sci) ? "%e" : "%f", v)
#endif

WEAK char *halide_double_to_string(char *dst, char *end, double arg, int scientific) {
    /* %f of the largest double has 309 integer digits. */
    char buf[400];
    int n = snprintf_double(buf, sizeof(buf), arg, scientific);
    if (n < 0) {
        return dst;
    }
    return append(dst, end, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

WEAK char *halide_pointer_to_string(char *dst, char *end, const void *arg) {
    char buf[2 + 2 * sizeof(void *)];
    char *p = buf + sizeof(buf);
    uintptr_t v = (uintptr_t)arg;
    do {
        *--p = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v != 0);
    *--p = 'x';
    *--p = '0';
    return append(dst, end, p, (size_t)(buf + sizeof(buf) - p));
}
