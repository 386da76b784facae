/* The error reporters compiled code calls when one of its entry checks
 * fails (Halide's halide_error_* functions): each formats its message,
 * reports it with halide_error and returns the error code the pipeline
 * then returns. */
#include "internal.h"

enum { MESSAGE_BYTES = 1024 };

/* Text building over one stack buffer; each step returns the new end. */
typedef struct {
    char text[MESSAGE_BYTES];
    char *at;
} message;

static void begin(message *m) {
    m->at = m->text;
    m->text[0] = 0;
}
static void str(message *m, const char *s) {
    m->at = halide_string_to_string(m->at, m->text + MESSAGE_BYTES, s);
}
static void num(message *m, int64_t v) {
    m->at = halide_int64_to_string(m->at, m->text + MESSAGE_BYTES, v, 1);
}
static void unum(message *m, uint64_t v) {
    m->at = halide_uint64_to_string(m->at, m->text + MESSAGE_BYTES, v, 1);
}
static int report(void *user_context, message *m, int code) {
    halide_error(user_context, m->text);
    return code;
}

/* A type as Halide names it: int32, uint8, float32, uint1, handle64, with
 * x<lanes> for vectors. */
WEAK char *halide_type_to_string(char *dst, char *end, const struct halide_type_t *t) {
    static const char *const codes[] = {"int", "uint", "float", "handle", "bfloat"};
    dst = halide_string_to_string(dst, end, t->code < 5 ? codes[t->code] : "bad_type_code");
    dst = halide_uint64_to_string(dst, end, t->bits, 1);
    if (t->lanes != 1) {
        dst = halide_string_to_string(dst, end, "x");
        dst = halide_uint64_to_string(dst, end, t->lanes, 1);
    }
    return dst;
}

static void type_name(message *m, uint32_t packed) {
    struct halide_type_t t;
    t.code = (uint8_t)(packed & 0xff);
    t.bits = (uint8_t)((packed >> 8) & 0xff);
    t.lanes = (uint16_t)(packed >> 16);
    m->at = halide_type_to_string(m->at, m->text + MESSAGE_BYTES, &t);
}

WEAK int halide_error_bad_type(void *user_context, const char *func_name,
                               uint32_t type_given_bits, uint32_t correct_type_bits) {
    message m;
    begin(&m);
    str(&m, func_name);
    str(&m, " has type ");
    type_name(&m, correct_type_bits);
    str(&m, " but type of the buffer passed in is ");
    type_name(&m, type_given_bits);
    return report(user_context, &m, halide_error_code_bad_type);
}

WEAK int halide_error_bad_dimensions(void *user_context, const char *func_name,
                                     int32_t dimensions_given, int32_t correct_dimensions) {
    message m;
    begin(&m);
    str(&m, func_name);
    str(&m, " requires a buffer of exactly ");
    num(&m, correct_dimensions);
    str(&m, " dimensions, but the buffer passed in has ");
    num(&m, dimensions_given);
    str(&m, " dimensions");
    return report(user_context, &m, halide_error_code_bad_dimensions);
}

WEAK int halide_error_buffer_argument_is_null(void *user_context, const char *buffer_name) {
    message m;
    begin(&m);
    str(&m, "Buffer argument ");
    str(&m, buffer_name);
    str(&m, " is nullptr");
    return report(user_context, &m, halide_error_code_buffer_argument_is_null);
}

WEAK int halide_error_debug_to_file_failed(void *user_context, const char *func, const char *filename,
                                           int error_code) {
    message m;
    begin(&m);
    str(&m, "Failed to dump function ");
    str(&m, func);
    str(&m, " to file ");
    str(&m, filename);
    str(&m, " with error ");
    num(&m, error_code);
    return report(user_context, &m, halide_error_code_debug_to_file_failed);
}

WEAK int halide_error_extern_stage_failed(void *user_context, const char *extern_stage_name, int result) {
    message m;
    begin(&m);
    str(&m, "Call to external stage ");
    str(&m, extern_stage_name);
    str(&m, " returned non-zero value: ");
    num(&m, result);
    report(user_context, &m, result);
    return result;
}

WEAK int halide_error_bounds_inference_call_failed(void *user_context, const char *extern_stage_name,
                                                   int result) {
    message m;
    begin(&m);
    str(&m, "Bounds inference call to external stage ");
    str(&m, extern_stage_name);
    str(&m, " returned non-zero value: ");
    num(&m, result);
    report(user_context, &m, result);
    return result;
}

WEAK int halide_error_host_is_null(void *user_context, const char *func) {
    message m;
    begin(&m);
    str(&m, "The host pointer of ");
    str(&m, func);
    str(&m, " is null, but the pipeline will access it on the host.");
    return report(user_context, &m, halide_error_code_host_is_null);
}

WEAK int halide_error_device_dirty_with_no_device_support(void *user_context, const char *func) {
    message m;
    begin(&m);
    str(&m, "The buffer ");
    str(&m, func);
    str(&m, " is dirty on device, but this pipeline was compiled with no support for device to host copies.");
    return report(user_context, &m, halide_error_code_device_dirty_with_no_device_support);
}

WEAK int halide_error_buffer_extents_negative(void *user_context, const char *buffer_name,
                                              int dimension, int extent) {
    message m;
    begin(&m);
    str(&m, "The extents for buffer ");
    str(&m, buffer_name);
    str(&m, " dimension ");
    num(&m, dimension);
    str(&m, " is negative (");
    num(&m, extent);
    str(&m, ")");
    return report(user_context, &m, halide_error_code_buffer_extents_negative);
}

WEAK int halide_error_buffer_extents_too_large(void *user_context, const char *buffer_name,
                                               int64_t actual_size, int64_t max_size) {
    message m;
    begin(&m);
    str(&m, "Product of extents for buffer ");
    str(&m, buffer_name);
    str(&m, " is ");
    num(&m, actual_size);
    str(&m, ", which exceeds the maximum size of ");
    num(&m, max_size);
    return report(user_context, &m, halide_error_code_buffer_extents_too_large);
}

WEAK int halide_error_buffer_allocation_too_large(void *user_context, const char *buffer_name,
                                                  uint64_t allocation_size, uint64_t max_size) {
    message m;
    begin(&m);
    str(&m, "Total allocation for buffer ");
    str(&m, buffer_name);
    str(&m, " is ");
    unum(&m, allocation_size);
    str(&m, ", which exceeds the maximum size of ");
    unum(&m, max_size);
    return report(user_context, &m, halide_error_code_buffer_allocation_too_large);
}

WEAK int halide_error_out_of_memory(void *user_context) {
    message m;
    begin(&m);
    str(&m, "Out of memory (halide_malloc returned nullptr)");
    return report(user_context, &m, halide_error_code_out_of_memory);
}

WEAK int halide_error_constraints_make_required_region_smaller(
    void *user_context, const char *buffer_name, int dimension, int constrained_min,
    int constrained_max, int required_min, int required_max) {
    message m;
    begin(&m);
    str(&m, "Applying the constraints on ");
    str(&m, buffer_name);
    str(&m, " to the required region made it smaller in dimension ");
    num(&m, dimension);
    str(&m, ". Required size: ");
    num(&m, required_min);
    str(&m, " to ");
    num(&m, required_max);
    str(&m, ". Constrained size: ");
    num(&m, constrained_min);
    str(&m, " to ");
    num(&m, constrained_max);
    str(&m, ".");
    return report(user_context, &m, halide_error_code_constraints_make_required_region_smaller);
}
