/* IEEE half-precision values (Float(16)) to float and double. */
#include "internal.h"

WEAK double halide_float16_bits_to_double(uint16_t bits) {
    int exponent = (bits >> 10) & 0x1f;
    double mantissa = (double)(bits & 0x3ff);
    double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f) {
        return mantissa == 0 ? sign * __builtin_inf() : __builtin_nan("");
    }
    /* A subnormal is mantissa * 2^-24; a normal value has the implicit 1
     * and is (1024 + mantissa) * 2^(exponent - 25). */
    int power = exponent == 0 ? -24 : exponent - 25;
    union {
        uint64_t bits;
        double value;
    } scale = {(uint64_t)(power + 1023) << 52};
    double value = exponent == 0 ? mantissa : 1024.0 + mantissa;
    return sign * value * scale.value;
}

WEAK float halide_float16_bits_to_float(uint16_t bits) {
    /* Every half value is exact as a float. */
    return (float)halide_float16_bits_to_double(bits);
}
