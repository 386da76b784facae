/* Halide's first tutorial through ferrohalide's C API: f(x, y) = x + y,
 * realized into a buffer this program owns. Build and run (from the
 * repository, after scripts/setup.sh):
 *
 *   cc examples/c_api/gradient.c -I crates/capi/include \
 *      -I python/ferrohalide/include -L target/release -lferrohalide_c -o gradient
 *   LD_LIBRARY_PATH=target/release ./gradient
 */
#include <stdio.h>

#include "ferrohalide_c.h"

static int fail(const char *what) {
    fprintf(stderr, "%s failed: %s\n", what, fh_last_error());
    return 1;
}

int main(void) {
    FhVar *x = fh_var_new("x"), *y = fh_var_new("y");
    FhExpr *ex = fh_expr_var(x), *ey = fh_expr_var(y);
    FhExpr *sum = fh_expr_binary(FhOp_Add, ex, ey);
    FhFunc *gradient = fh_func_new("gradient");
    const FhExpr *args[] = {ex, ey};
    const FhExpr *values[] = {sum};
    if (fh_func_define(gradient, args, 2, values, 1) != 0) return fail("fh_func_define");

    enum { W = 8, H = 4 };
    int32_t pixels[H][W];
    halide_dimension_t dims[2] = {{0, W, 1, 0}, {0, H, W, 0}};
    halide_buffer_t out = {0};
    out.host = (uint8_t *)pixels;
    out.type.code = halide_type_int;
    out.type.bits = 32;
    out.type.lanes = 1;
    out.dimensions = 2;
    out.dim = dims;
    halide_buffer_t *outputs[] = {&out};
    if (fh_func_realize(gradient, outputs, 1) != 0) return fail("fh_func_realize");

    for (int j = 0; j < H; j++) {
        for (int i = 0; i < W; i++) {
            if (pixels[j][i] != i + j) {
                printf("wrong value at (%d, %d): %d\n", i, j, pixels[j][i]);
                return 1;
            }
            printf("%d ", pixels[j][i]);
        }
        printf("\n");
    }
    /* A failing call reports Halide's message; the program carries on. */
    FhFunc *undefined = fh_func_new("undefined");
    if (fh_func_realize(undefined, outputs, 1) == 0) return 1;
    printf("expected error: %s\n", fh_last_error());

    fh_func_free(undefined);
    fh_func_free(gradient);
    fh_expr_free(sum);
    fh_expr_free(ex);
    fh_expr_free(ey);
    fh_var_free(x);
    fh_var_free(y);
    printf("Success!\n");
    return 0;
}
