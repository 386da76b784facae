/* Buffer helpers: what compiled code calls to describe a buffer (a bounds
 * query fills in the shape the pipeline needs), and the device entry
 * points callers of Halide code use. ferrohalide compiles for the CPU
 * only, so no buffer ever lives on a device: copies to the host and
 * device frees have nothing to do. */
#include "internal.h"

/* Set dimension d of b (a bounds query's answer). */
INTERNAL int ferrohalide_buffer_set_dim(struct halide_buffer_t *b, int d, int min, int extent,
                                        int stride) {
    b->dim[d].min = min;
    b->dim[d].extent = extent;
    b->dim[d].stride = stride;
    b->dim[d].flags = 0;
    return 0;
}

WEAK int halide_copy_to_host(void *user_context, struct halide_buffer_t *buf) {
    (void)user_context;
    (void)buf;
    return 0;
}

WEAK int halide_device_free(void *user_context, struct halide_buffer_t *buf) {
    (void)user_context;
    if (buf) {
        buf->device = 0;
        buf->device_interface = 0;
        buf->flags &= ~(uint64_t)halide_buffer_flag_device_dirty;
    }
    return 0;
}

WEAK int halide_device_sync(void *user_context, struct halide_buffer_t *buf) {
    (void)user_context;
    (void)buf;
    return 0;
}
