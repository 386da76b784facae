/* Func.debug_to_file: the realization of a Func written to a file after
 * the pipeline has used it, in the format its name ends with, as Halide's
 * runtime writes it (elements always dimension 0 fastest):
 *   .npy        NumPy's format, shape listed dimension 0 first (not
 *               Fortran order);
 *   .tif/.tiff  a planar TIFF: width, height, then channels (or depth and
 *               channels for four dimensions);
 *   .mat        a MATLAB level 5 matrix named after the file;
 *   other       a "tmp" file: five int32s (the four extents, 1 past the
 *               dimensions, and a type code), then the elements.
 * At most four dimensions. Unlike Halide's, the TIFF header has no
 * uninitialized bytes. */
#include "internal.h"

/* Halide's type codes of the tmp format and NumPy's descriptions. */
struct dump_type {
    uint8_t code, bits;
    int8_t tmp_code;
    char npy_order, npy_kind;
    uint8_t mat_class, mat_type; /* MATLAB's class and data type codes */
    int8_t tiff_format;          /* TIFF SampleFormat: 1 uint, 2 int, 3 float */
};

static const struct dump_type dump_types[] = {
    {halide_type_float, 32, 0, '<', 'f', 7, 7, 3},   {halide_type_float, 64, 1, '<', 'f', 6, 9, 3},
    {halide_type_uint, 8, 2, '|', 'u', 9, 2, 1},     {halide_type_uint, 1, 2, '|', 'u', 9, 2, 1},
    {halide_type_int, 8, 3, '|', 'i', 8, 1, 2},      {halide_type_uint, 16, 4, '<', 'u', 11, 4, 1},
    {halide_type_int, 16, 5, '<', 'i', 10, 3, 2},    {halide_type_uint, 32, 6, '<', 'u', 13, 6, 1},
    {halide_type_int, 32, 7, '<', 'i', 12, 5, 2},    {halide_type_uint, 64, 8, '<', 'u', 15, 13, 1},
    {halide_type_int, 64, 9, '<', 'i', 14, 12, 2},   {halide_type_float, 16, -1, '<', 'f', 0, 0, 0},
};

/* Little-endian fields at byte offsets of a header being built. */
static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v) {
    put16(p, v);
    put16(p + 2, v >> 16);
}

/* The TIFF header: 8 bytes, an IFD of 15 tags (2 + 15 * 12 + 4 bytes), two
 * resolution rationals; 210 bytes, then (several channels) the strip
 * offsets and byte counts. */
#define TIFF_HEADER 210
static int write_tiff_header(int fd, const struct dump_type *t, int bytes, const halide_dimension_t *shape,
                             int64_t elements) {
    int32_t width = shape[0].extent, height = shape[1].extent, channels, depth;
    if ((shape[3].extent == 0 || shape[3].extent == 1) && shape[2].extent < 5) {
        channels = shape[2].extent;
        depth = 1;
    } else {
        channels = shape[3].extent;
        depth = shape[2].extent;
    }
    uint8_t h[TIFF_HEADER];
    __builtin_memset(h, 0, sizeof(h));
    put16(h, 0x4949); /* "II": little-endian */
    put16(h + 2, 42);
    put32(h + 4, 8);
    put16(h + 8, 15);
    /* (tag, TIFF type: 3 short, 4 long, 5 rational, count, value) */
    const uint32_t tags[15][4] = {
        {256, 4, 1, (uint32_t)width},
        {257, 4, 1, (uint32_t)height},
        {258, 3, 1, (uint32_t)(bytes * 8)},
        {259, 3, 1, 1},
        {262, 3, 1, channels >= 3 ? 2u : 1u},
        {273, 4, (uint32_t)channels, TIFF_HEADER},
        {277, 3, 1, (uint32_t)channels},
        {278, 4, 1, (uint32_t)shape[1].extent},
        {279, 4, (uint32_t)channels,
         channels == 1 ? (uint32_t)(elements * bytes) : (uint32_t)(TIFF_HEADER + channels * 4)},
        {282, 5, 1, 194},
        {283, 5, 1, 202},
        {284, 3, 1, 2},
        {296, 3, 1, 1},
        {339, 3, 1, (uint32_t)t->tiff_format},
        {32997, 4, 1, (uint32_t)depth},
    };
    for (int i = 0; i < 15; i++) {
        uint8_t *e = h + 10 + 12 * i;
        put16(e, tags[i][0]);
        put16(e + 2, tags[i][1]);
        put32(e + 4, tags[i][2]);
        if (tags[i][1] == 3) {
            put16(e + 8, tags[i][3]);
        } else {
            put32(e + 8, tags[i][3]);
        }
    }
    /* IFD end (0) at 190; resolutions 1/1 at 194 and 202. */
    put32(h + 194, 1);
    put32(h + 198, 1);
    put32(h + 202, 1);
    put32(h + 206, 1);
    if (!ferrohalide_file_write(fd, h, sizeof(h))) {
        return 0;
    }
    if (channels > 1) {
        int32_t plane = shape[0].extent * shape[1].extent * depth * bytes;
        int32_t offset = TIFF_HEADER + channels * 4 * 2;
        for (int32_t c = 0; c < channels; c++, offset += plane) {
            if (!ferrohalide_file_write(fd, &offset, 4)) {
                return 0;
            }
        }
        for (int32_t c = 0; c < channels; c++) {
            if (!ferrohalide_file_write(fd, &plane, 4)) {
                return 0;
            }
        }
    }
    return 1;
}

/* The MATLAB level 5 header and the matrix's tags up to its data; the
 * array is named after the file (without directory and extension).
 * `padding` receives the zero bytes that follow the data. */
static int write_mat_header(int fd, const char *filename, const struct dump_type *t, const halide_buffer_t *buf,
                            const halide_dimension_t *shape, int64_t payload, uint32_t *padding) {
    const char *end = filename + ferrohalide_strlen(filename);
    while (end != filename && *end != '.') {
        end--;
    }
    const char *start = end;
    while (start != filename && start[-1] != '/') {
        start--;
    }
    uint32_t name_size = (uint32_t)(end - start);
    if (name_size > 255) {
        return 0;
    }
    char name[256];
    __builtin_memset(name, 0, sizeof(name));
    __builtin_memcpy(name, start, name_size);
    uint32_t padded_name = (name_size + 7) & ~7u;
    char text[128];
    __builtin_memset(text, ' ', sizeof(text));
    const char *intro = "MATLAB 5.0 MAT-file, produced by Halide";
    __builtin_memcpy(text, intro, ferrohalide_strlen(intro));
    text[124] = 0; /* version 0x0100 */
    text[125] = 1;
    text[126] = 'I'; /* "IM": little-endian */
    text[127] = 'M';
    *padding = (uint32_t)(7 - ((payload - 1) & 7));
    if (((uint64_t)payload + *padding) >> 32) {
        return 0;
    }
    int dims = buf->dimensions < 2 ? 2 : buf->dimensions;
    int padded_dims = (dims + 1) & ~1;
    uint32_t tags[8] = {14, 40 + (uint32_t)padded_dims * 4 + padded_name + (uint32_t)payload + *padding,
                        6, 8, t->mat_class, 1, 5, (uint32_t)dims * 4};
    int32_t extents[4] = {shape[0].extent, shape[1].extent, shape[2].extent, shape[3].extent};
    uint32_t name_header[2] = {1, name_size};
    uint32_t payload_header[2] = {t->mat_type, (uint32_t)payload};
    return ferrohalide_file_write(fd, text, sizeof(text)) && ferrohalide_file_write(fd, tags, sizeof(tags)) &&
           ferrohalide_file_write(fd, extents, (size_t)padded_dims * 4) &&
           ferrohalide_file_write(fd, name_header, sizeof(name_header)) &&
           ferrohalide_file_write(fd, name, padded_name) &&
           ferrohalide_file_write(fd, payload_header, sizeof(payload_header));
}

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
    enum { NPY, TIFF, MAT, TMP } format = ends_with(filename, ".npy")    ? NPY
                                          : ends_with(filename, ".tiff") ? TIFF
                                          : ends_with(filename, ".tif")  ? TIFF
                                          : ends_with(filename, ".mat")  ? MAT
                                                                         : TMP;
    if ((format == TMP && t->tmp_code < 0) || (format == TIFF && t->tiff_format == 0) ||
        (format == MAT && t->mat_type == 0)) {
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
    int64_t elements = (int64_t)shape[0].extent * shape[1].extent * shape[2].extent * shape[3].extent;
    uint32_t final_padding = 0;
    int ok;
    if (format == NPY) {
        ok = write_npy_header(fd, t, bytes, buf);
    } else if (format == TIFF) {
        ok = write_tiff_header(fd, t, bytes, shape, elements);
    } else if (format == MAT) {
        ok = write_mat_header(fd, filename, t, buf, shape, elements * bytes, &final_padding);
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
    const uint64_t zero = 0;
    if (ok && final_padding) {
        ok = ferrohalide_file_write(fd, &zero, final_padding);
    }
    ferrohalide_file_close(fd);
    return ok ? halide_error_code_success : halide_error_code_debug_to_file_failed;
}
