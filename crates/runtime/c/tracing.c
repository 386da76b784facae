/* halide_trace: the events of traced Funcs (Func.trace_loads, trace_stores,
 * trace_realizations). The default writes one line of Halide's text format
 * per event through halide_print, so the lines reach whoever receives the
 * pipeline's print output. Halide's binary trace files (HL_TRACE_FILE) are
 * not supported. */
#include "internal.h"

static int32_t default_trace(void *user_context, const struct halide_trace_event_t *e);

static halide_trace_t trace_fn = default_trace;

/* Event ids are unique in the process, from 1, as Halide's. */
static int32_t next_id = 1;

static const char *const event_names[] = {
    "Load",          "Store",   "Begin realization", "End realization",
    "Produce",       "End produce", "Consume",       "End consume",
    "Begin pipeline", "End pipeline", "Tag",
};

static char *put(char *dst, char *end, const char *s) {
    return halide_string_to_string(dst, end, s);
}

/* Lane `i` of the event's value, formatted as Halide prints it: integers
 * by their width rounded up to 8, 16, 32 or 64 bits, floats as
 * Halide does, handles as addresses. Other type codes
 * (bfloat) print nothing, as in Halide. */
static char *put_value(char *dst, char *end, const struct halide_type_t *t, const void *value, int i) {
    int bits = 8;
    while (bits < t->bits) {
        bits <<= 1;
    }
    if (t->code == halide_type_int) {
        int64_t v = bits == 8    ? ((const int8_t *)value)[i]
                    : bits == 16 ? ((const int16_t *)value)[i]
                    : bits == 32 ? ((const int32_t *)value)[i]
                                 : ((const int64_t *)value)[i];
        return halide_int64_to_string(dst, end, v, 1);
    }
    if (t->code == halide_type_uint) {
        uint64_t v = bits == 8    ? ((const uint8_t *)value)[i]
                     : bits == 16 ? ((const uint16_t *)value)[i]
                     : bits == 32 ? ((const uint32_t *)value)[i]
                                  : ((const uint64_t *)value)[i];
        return halide_uint64_to_string(dst, end, v, 1);
    }
    if (t->code == halide_type_float) {
        /* Halide prints floats with %f, doubles and halves with %e. */
        if (bits == 32) {
            return halide_double_to_string(dst, end, ((const float *)value)[i], 0);
        }
        double v = bits == 16 ? halide_float16_bits_to_double(((const uint16_t *)value)[i])
                              : ((const double *)value)[i];
        return halide_double_to_string(dst, end, v, 1);
    }
    if (t->code == halide_type_handle) {
        return halide_pointer_to_string(dst, end, ((void *const *)value)[i]);
    }
    return dst;
}

/* "(c0, c1)" for a scalar event, "(<x0, x1>, <y0, y1>)" for a vector one
 * (each coordinate is a vector of `lanes` values). */
static char *put_coordinates(char *dst, char *end, const struct halide_trace_event_t *e) {
    int lanes = e->type.lanes;
    int vector = lanes > 1;
    dst = put(dst, end, vector ? "(<" : "(");
    for (int i = 0; i < e->dimensions; i++) {
        if (i > 0) {
            dst = put(dst, end, vector && i % lanes == 0 ? ">, <" : ", ");
        }
        dst = halide_int64_to_string(dst, end, e->coordinates[i], 1);
    }
    return put(dst, end, vector ? ">)" : ")");
}

static char *put_values(char *dst, char *end, const struct halide_trace_event_t *e) {
    int vector = e->type.lanes > 1;
    dst = put(dst, end, vector ? " = <" : " = ");
    for (int i = 0; i < e->type.lanes; i++) {
        if (i > 0) {
            dst = put(dst, end, ", ");
        }
        dst = put_value(dst, end, &e->type, e->value, i);
    }
    return vector ? put(dst, end, ">") : dst;
}

/* Lines of concurrent events (parallel loops) stay whole. */
static int print_lock;

static int32_t default_trace(void *user_context, const struct halide_trace_event_t *e) {
    int32_t id = ATOMIC_ADD(&next_id, 1);
    char buf[4096];
    char *end = buf + sizeof(buf);
    char *dst = buf;
    int known = (unsigned)e->event <= halide_trace_tag;
    dst = put(dst, end, known ? event_names[e->event] : "Unknown event");
    dst = put(dst, end, " ");
    dst = put(dst, end, e->func);
    dst = put(dst, end, ".");
    dst = halide_int64_to_string(dst, end, e->value_index, 1);
    dst = put_coordinates(dst, end, e);
    if (e->event == halide_trace_load || e->event == halide_trace_store) {
        dst = put_values(dst, end, e);
    }
    if (e->trace_tag && *e->trace_tag) {
        dst = put(dst, end, " tag = \"");
        dst = put(dst, end, e->trace_tag);
        dst = put(dst, end, "\"");
    }
    put(dst, end, "\n");
    int unlocked = 0;
    while (!ATOMIC_CAS(&print_lock, &unlocked, 1)) {
        unlocked = 0;
        ferrohalide_cpu_relax();
    }
    halide_print(user_context, buf);
    ATOMIC_STORE(&print_lock, 0);
    return id;
}

WEAK int32_t halide_default_trace(void *user_context, const struct halide_trace_event_t *e) {
    return default_trace(user_context, e);
}

WEAK int32_t halide_trace(void *user_context, const struct halide_trace_event_t *e) {
    return __atomic_load_n(&trace_fn, __ATOMIC_ACQUIRE)(user_context, e);
}

WEAK halide_trace_t halide_set_custom_trace(halide_trace_t trace) {
    return __atomic_exchange_n(&trace_fn, trace ? trace : default_trace, __ATOMIC_ACQ_REL);
}

/* What compiled code calls for each event: the event's fields as
 * arguments, so the code generator need not lay out the struct. */
WEAK int32_t halide_trace_helper(void *user_context, const char *func, void *value,
                                 int32_t *coordinates, int type_code, int type_bits,
                                 int type_lanes, int event, int32_t parent_id,
                                 int32_t value_index, int32_t dimensions, const char *trace_tag) {
    struct halide_trace_event_t e;
    e.func = func;
    e.value = value;
    e.coordinates = coordinates;
    e.trace_tag = trace_tag;
    e.type.code = (uint8_t)type_code;
    e.type.bits = (uint8_t)type_bits;
    e.type.lanes = (uint16_t)type_lanes;
    e.event = (enum halide_trace_event_code_t)event;
    e.parent_id = parent_id;
    e.value_index = value_index;
    e.dimensions = dimensions;
    return halide_trace(user_context, &e);
}
