/* halide_error: how compiled code reports a failure (it then returns the
 * error code). The default handler writes the message to stderr and keeps
 * it for ferrohalide_last_error_message; unlike Halide's it never aborts,
 * so a program (or a Python interpreter calling through ctypes) survives a
 * failing call. */
#include "internal.h"

enum { LAST_ERROR_BYTES = 4096 };

static struct halide_mutex last_error_lock;
static char last_error[LAST_ERROR_BYTES];
static size_t last_error_length;

static void keep_last_error(const char *msg) {
    size_t n = ferrohalide_strlen(msg);
    /* Without its trailing newline, if any. */
    if (n > 0 && msg[n - 1] == '\n') {
        n--;
    }
    halide_mutex_lock(&last_error_lock);
    last_error_length = n;
    if (n >= LAST_ERROR_BYTES) {
        n = LAST_ERROR_BYTES - 1;
    }
    for (size_t i = 0; i < n; i++) {
        last_error[i] = msg[i];
    }
    last_error[n] = 0;
    halide_mutex_unlock(&last_error_lock);
}

static void default_error_handler(void *user_context, const char *msg) {
    (void)user_context;
    if (!msg) {
        msg = "(no message)";
    }
    keep_last_error(msg);
    size_t n = ferrohalide_strlen(msg);
    ferrohalide_write_fd(2, "Error: ", 7);
    ferrohalide_write_fd(2, msg, n);
    if (n == 0 || msg[n - 1] != '\n') {
        ferrohalide_write_fd(2, "\n", 1);
    }
}

static halide_error_handler_t error_handler = default_error_handler;

WEAK void halide_error(void *user_context, const char *msg) {
    __atomic_load_n(&error_handler, __ATOMIC_ACQUIRE)(user_context, msg);
}

WEAK halide_error_handler_t halide_set_error_handler(halide_error_handler_t handler) {
    return __atomic_exchange_n(&error_handler, handler ? handler : default_error_handler,
                               __ATOMIC_ACQ_REL);
}

WEAK size_t ferrohalide_last_error_message(char *dst, size_t size) {
    halide_mutex_lock(&last_error_lock);
    size_t n = last_error_length;
    if (dst && size > 0) {
        size_t copy = 0;
        while (copy + 1 < size && last_error[copy]) {
            dst[copy] = last_error[copy];
            copy++;
        }
        dst[copy] = 0;
    }
    halide_mutex_unlock(&last_error_lock);
    return n;
}

WEAK void ferrohalide_clear_last_error(void) {
    halide_mutex_lock(&last_error_lock);
    last_error_length = 0;
    last_error[0] = 0;
    halide_mutex_unlock(&last_error_lock);
}

/* An assertion's message, formatted and reported in one call: `format` is
 * the message's text with a marker byte where each value goes, and the
 * values follow in order (at most four). Compiled code used to build each
 * message with a call per part; one call per failing assertion keeps the
 * many failure paths of a pipeline's checks quick to compile. The text is
 * what those calls built (the same formatting functions, the same 4096
 * bytes). Markers: 1 a signed integer, 2 an unsigned one, 3 a double in
 * scientific notation (a 64-bit float), 4 a double (a 32-bit float), 5 a
 * bool, 6 a pointer; doubles come as their bits. */
WEAK void ferrohalide_error_formatted(void *user_context, const char *format, uint64_t v0,
                                      uint64_t v1, uint64_t v2, uint64_t v3) {
    char buf[4096];
    char *dst = buf, *end = buf + sizeof buf;
    const uint64_t values[4] = {v0, v1, v2, v3};
    int next = 0;
    buf[0] = 0;
    const char *text = format;
    for (const char *p = format;; p++) {
        unsigned char c = (unsigned char)*p;
        if (c > 6) {
            continue;
        }
        /* The text since the last value. */
        size_t n = (size_t)(p - text), room = (size_t)(end - dst) - 1;
        if (n > room) {
            n = room;
        }
        for (size_t i = 0; i < n; i++) {
            dst[i] = text[i];
        }
        dst[n] = 0;
        dst += n;
        text = p + 1;
        if (c == 0) {
            break;
        }
        uint64_t v = values[next & 3];
        next++;
        double d;
        __builtin_memcpy(&d, &v, sizeof d);
        switch (c) {
        case 1: dst = halide_int64_to_string(dst, end, (int64_t)v, 1); break;
        case 2: dst = halide_uint64_to_string(dst, end, v, 1); break;
        case 3: dst = halide_double_to_string(dst, end, d, 1); break;
        case 4: dst = halide_double_to_string(dst, end, d, 0); break;
        case 5: dst = halide_string_to_string(dst, end, v ? "true" : "false"); break;
        default: dst = halide_pointer_to_string(dst, end, (const void *)(uintptr_t)v); break;
        }
    }
    halide_error(user_context, buf);
}
