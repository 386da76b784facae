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
