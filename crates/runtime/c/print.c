/* halide_print: compiled code's print() lines (each message ends with its
 * own newline). The default writes to stdout. */
#include "internal.h"

static void default_print(void *user_context, const char *msg) {
    (void)user_context;
    if (msg) {
        ferrohalide_write_fd(1, msg, ferrohalide_strlen(msg));
    }
}

static halide_print_t print_fn = default_print;

WEAK void halide_print(void *user_context, const char *msg) {
    __atomic_load_n(&print_fn, __ATOMIC_ACQUIRE)(user_context, msg);
}

WEAK halide_print_t halide_set_custom_print(halide_print_t print) {
    return __atomic_exchange_n(&print_fn, print ? print : default_print, __ATOMIC_ACQ_REL);
}
