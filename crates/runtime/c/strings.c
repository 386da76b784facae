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

WEAK char *halide_double_to_string(char *dst, char *end, double arg, int scientific) {
    /* %f of the largest double has 309 integer digits. */
    char buf[400];
    int n = snprintf(buf, sizeof(buf), scientific ? "%e" : "%f", arg);
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
