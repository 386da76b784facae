/* Func.debug_to_file: the realization of a Func written to a file after
 * the pipeline has used it, in the format its name ends with, as Halide's
 * runtime writes it:
 *   .npy  NumPy's format: shape listed dimension 0 first (not Fortran
 *         order), elements dimension 0 fastest;
 *   other a "tmp" file: five int32s (the four extents, 1 past the
 *         dimensions, and a type code), then the elements.
 * At most four dimensions. (.mat and .tiff are refused when scheduled.) */
#include "internal.h"

/* Halide's type codes of the tmp format and NumPy's descriptions. */
struct dump_type {
    uint8_t code, bits;
    int8_t tmp_code;
    char npy_order, npy_kind;
};

static const struct dump_type dump_types[] = {
    {halide_type_float, 32, 0, '<', 'f'},  {halide_type_float, 64, 1, '<', 'f'},
    {halide_type_uint, 8, 2, '|', 'u'},    {halide_type_uint, 1, 2, '|', 'u'},
    {halide_type_int, 8, 3, '|', 'i'},     {halide_type_uint, 16, 4, '<', 'u'},
    {halide_type_int, 16, 5, '<', 'i'},    {halide_type_uint, 32, 6, '<', 'u'},
    {halide_type_int, 32, 7, '<', 'i'},    {halide_type_uint, 64, 8, '<', 'u'},
    {halide_type_int, 64, 9, '<', 'i'},    {halide_type_float, 16, -1, '<', 'f'},
};

static int ends_with(const char *s, const char *suffix) {
    size_t n = ferrohalide_strlen(s), m = ferrohalide_strlen(suffix);
    if (m > n) {
        return 0;
    }
    for (size_t i = 0; i < m; i++) {
        if (s[n - m + i] != suffix[i]) {
            return 0;
        }
    }
    return 1;
}

/* The NumPy header: magic, version 1.0, length, and the dictionary padded
 * with spaces so the data starts at a multiple of 64 bytes. */
static int write_npy_header(int fd, const struct dump_type *t, int bytes, const halide_buffer_t *buf) {
    char dict[1024];
    char *dst = dict, *end = dict + sizeof(dict) - 1;
    dst = halide_string_to_string(dst, end, "{'descr': '");
    *dst++ = t->npy_order;
    *dst++ = t->npy_kind;
    dst = halide_int64_to_string(dst, end, bytes, 1);
    dst = halide_string_to_string(dst, end, "', 'fortran_order': False, 'shape': (");
    for (int d = 0; d < buf->dimensions; d++) {
        if (d > 0) {
            dst = halide_string_to_string(dst, end, ",");
        }
        dst = halide_int64_to_string(dst, end, buf->dim[d].extent, 1);
        if (buf->dimensions == 1) {
            dst = halide_string_to_string(dst, end, ",");
        }
    }
    dst = halide_string_to_string(dst, end, ")}\n");
    size_t unpadded = 8 + 2 + (size_t)(dst - dict);
    size_t padding = ((unpadded + 63) & ~(size_t)63) - unpadded;
    if (dst + padding >= end) {
        return 0;
    }
    for (size_t i = 0; i < padding; i++) {
        *dst++ = ' ';
    }
    size_t len = (size_t)(dst - dict);
    uint8_t len_le[2] = {(uint8_t)(len & 0xff), (uint8_t)(len >> 8)};
    return ferrohalide_file_write(fd, "\x93NUMPY\x01\x00", 8) && ferrohalide_file_write(fd, len_le, 2) &&
           ferrohalide_file_write(fd, dict, len);
}

WEAK int halide_debug_to_file(void *user_context, const char *filename, struct halide_buffer_t *buf) {
    if (!buf->host) {
        halide_error(user_context, "Bounds query buffer passed to halide_debug_to_file");
        return halide_error_code_host_is_null;
    }
    if (buf->dimensions > 4) {
        halide_error(user_context, "Can't debug_to_file a Func with more than four dimensions\n");
        return halide_error_code_bad_dimensions;
    }
    const struct dump_type *t = 0;
    for (unsigned i = 0; i < sizeof(dump_types) / sizeof(dump_types[0]); i++) {
        if (dump_types[i].code == buf->type.code && dump_types[i].bits == buf->type.bits && buf->type.lanes == 1) {
            t = &dump_types[i];
        }
    }
    if (!t) {
        return halide_error_code_debug_to_file_failed;
    }
    int npy = ends_with(filename, ".npy");
    if (!npy && t->tmp_code < 0) {
        return halide_error_code_debug_to_file_failed;
    }
    const int bytes = (buf->type.bits + 7) / 8;
    halide_dimension_t shape[4];
    for (int d = 0; d < 4; d++) {
        if (d < buf->dimensions) {
            shape[d] = buf->dim[d];
        } else {
            shape[d].min = 0;
            shape[d].extent = 1;
            shape[d].stride = 0;
        }
    }
    int fd = ferrohalide_file_create(filename);
    if (fd < 0) {
        return halide_error_code_debug_to_file_failed;
    }
    int ok;
    if (npy) {
        ok = write_npy_header(fd, t, bytes, buf);
    } else {
        int32_t header[5] = {shape[0].extent, shape[1].extent, shape[2].extent, shape[3].extent, t->tmp_code};
        ok = ferrohalide_file_write(fd, header, sizeof(header));
    }
    /* The elements, dimension 0 fastest, through a small staging buffer. */
    uint8_t staged[4096];
    size_t used = 0;
    for (int32_t i3 = 0; ok && i3 < shape[3].extent; i3++) {
        for (int32_t i2 = 0; ok && i2 < shape[2].extent; i2++) {
            for (int32_t i1 = 0; ok && i1 < shape[1].extent; i1++) {
                for (int32_t i0 = 0; ok && i0 < shape[0].extent; i0++) {
                    int64_t offset = (int64_t)i0 * shape[0].stride + (int64_t)i1 * shape[1].stride +
                                     (int64_t)i2 * shape[2].stride + (int64_t)i3 * shape[3].stride;
                    __builtin_memcpy(staged + used, buf->host + offset * bytes, (size_t)bytes);
                    used += (size_t)bytes;
                    if (used + (size_t)bytes > sizeof(staged)) {
                        ok = ferrohalide_file_write(fd, staged, used);
                        used = 0;
                    }
                }
            }
        }
    }
    if (ok && used) {
        ok = ferrohalide_file_write(fd, staged, used);
    }
    ferrohalide_file_close(fd);
    return ok ? halide_error_code_success : halide_error_code_debug_to_file_failed;
}
