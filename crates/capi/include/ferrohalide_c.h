/* ferrohalide's C API: build, schedule, realize and compile Halide pipelines
 * from C or any language's FFI (libferrohalide_c.so).
 *
 * Ownership: every object is an opaque handle made by an fh_*_new or fh_expr_*
 * call and freed by the matching fh_*_free. Handles passed to a call are
 * borrowed: no call frees its arguments or keeps them owned (an Expr or Func
 * made from others stays valid after those are freed). Buffers are Halide's
 * halide_buffer_t (HalideRuntime.h), owned by the caller.
 *
 * Errors: a call returning a handle returns NULL on failure; a call returning
 * int returns 0 on success and -1 on failure. fh_last_error() gives the
 * message of the last failed call on the calling thread. Nothing aborts the
 * process; a wrong, freed or NULL handle is an error, not a crash. */

#ifndef FERROHALIDE_C_H
#define FERROHALIDE_C_H

/* Generated from crates/capi/src by cbindgen: edit the Rust source, not this file. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "HalideRuntime.h"

/*
 Halide's boundary conditions (`fh_boundary_condition`).
 */
typedef enum FhBoundary {
  FhBoundary_RepeatEdge,
  FhBoundary_RepeatImage,
  FhBoundary_MirrorImage,
  FhBoundary_MirrorInterior,
} FhBoundary;

/*
 One-argument math functions (`fh_expr_math`).
 */
typedef enum FhMath {
  FhMath_Sqrt,
  FhMath_Sin,
  FhMath_Cos,
  FhMath_Tan,
  FhMath_Exp,
  FhMath_Log,
  FhMath_Floor,
  FhMath_Ceil,
  FhMath_Round,
  FhMath_Trunc,
  FhMath_Abs,
  FhMath_Asin,
  FhMath_Acos,
  FhMath_Atan,
  FhMath_Sinh,
  FhMath_Cosh,
  FhMath_Tanh,
  FhMath_Asinh,
  FhMath_Acosh,
  FhMath_Atanh,
  FhMath_Erf,
  /*
   `x - trunc(x)` (with the sign of `x`, as in Halide).
   */
  FhMath_Fract,
  /*
   Bool results.
   */
  FhMath_IsNan,
  FhMath_IsInf,
  FhMath_IsFinite,
  /*
   Float32 only (Halide's fast approximations).
   */
  FhMath_FastSin,
  FhMath_FastCos,
  FhMath_FastExp,
  FhMath_FastLog,
  FhMath_FastInverse,
  FhMath_FastInverseSqrt,
} FhMath;

/*
 Two-argument math functions (`fh_expr_math2`).
 */
typedef enum FhMath2 {
  FhMath2_Pow,
  FhMath2_Atan2,
  FhMath2_Hypot,
  /*
   `|a - b|`, exact (unsigned result for integers), as Halide's absd.
   */
  FhMath2_Absd,
  FhMath2_FastPow,
} FhMath2;

/*
 Binary operators (`fh_expr_binary`), with Halide's type rules.
 */
typedef enum FhOp {
  FhOp_Add,
  FhOp_Sub,
  FhOp_Mul,
  FhOp_Div,
  FhOp_Mod,
  FhOp_Min,
  FhOp_Max,
  FhOp_Eq,
  FhOp_Ne,
  FhOp_Lt,
  FhOp_Le,
  FhOp_Gt,
  FhOp_Ge,
  FhOp_And,
  FhOp_Or,
  FhOp_BitAnd,
  FhOp_BitOr,
  FhOp_BitXor,
  FhOp_Shl,
  FhOp_Shr,
} FhOp;

/*
 Inline reductions (`fh_expr_reduce`).
 */
typedef enum FhReduction {
  FhReduction_Sum,
  FhReduction_Product,
  FhReduction_Maximum,
  FhReduction_Minimum,
} FhReduction;

/*
 The ordered arguments of a compiled pipeline.
 */
typedef struct FhArguments FhArguments;

/*
 An expression.
 */
typedef struct FhExpr FhExpr;

/*
 A Func.
 */
typedef struct FhFunc FhFunc;

/*
 An input buffer parameter (Halide's ImageParam).
 */
typedef struct FhImageParam FhImageParam;

/*
 A scalar parameter (Halide's Param).
 */
typedef struct FhParam FhParam;

/*
 A reduction domain (Halide's RDom).
 */
typedef struct FhRDom FhRDom;

/*
 A definition of a Func, to schedule: an update (Halide's Stage).
 */
typedef struct FhStage FhStage;

/*
 A Var.
 */
typedef struct FhVar FhVar;

/*
 A scalar type: Halide's `halide_type_t` (code 0 int, 1 uint, 2 float,
 3 handle; bits; lanes 1).
 */
typedef struct FhType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} FhType;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/*
 A new Var named `name` (null: a fresh name).
 */
struct FhVar *fh_var_new(const char *name);

int32_t fh_var_free(struct FhVar *v);

/*
 The Var `v` as an Expr.
 */
struct FhExpr *fh_expr_var(const struct FhVar *v);

/*
 An integer constant of type `t` (an integer type; checked to fit).
 */
struct FhExpr *fh_expr_int(struct FhType t, int64_t value);

/*
 A floating-point constant of type `t` (a float type).
 */
struct FhExpr *fh_expr_float(struct FhType t, double value);

/*
 `a op b`, with Halide's rules for mixed types.
 */
struct FhExpr *fh_expr_binary(enum FhOp op, const struct FhExpr *a, const struct FhExpr *b);

/*
 `e` converted to type `t`.
 */
struct FhExpr *fh_expr_cast(struct FhType t, const struct FhExpr *e);

/*
 `condition ? t : f`.
 */
struct FhExpr *fh_expr_select(const struct FhExpr *condition,
                              const struct FhExpr *t,
                              const struct FhExpr *f);

/*
 `clamp(e, lo, hi)`.
 */
struct FhExpr *fh_expr_clamp(const struct FhExpr *e,
                             const struct FhExpr *lo,
                             const struct FhExpr *hi);

/*
 A math function of `e`.
 */
struct FhExpr *fh_expr_math(enum FhMath f, const struct FhExpr *e);

/*
 `f(a, b)` for a two-argument math function.
 */
struct FhExpr *fh_expr_math2(enum FhMath2 f, const struct FhExpr *a, const struct FhExpr *b);

/*
 `zero * (1 - weight) + one * weight`, with Halide's lerp rules for
 integer types (weights of unsigned types span [0, 1]).
 */
struct FhExpr *fh_expr_lerp(const struct FhExpr *zero,
                            const struct FhExpr *one,
                            const struct FhExpr *weight);

/*
 `e` converted to `t`, clamped to `t`'s range (Halide's saturating_cast).
 */
struct FhExpr *fh_expr_saturating_cast(struct FhType t, const struct FhExpr *e);

/*
 `~e` (an integer).
 */
struct FhExpr *fh_expr_bitwise_not(const struct FhExpr *e);

/*
 `!e` (a boolean).
 */
struct FhExpr *fh_expr_not(const struct FhExpr *e);

/*
 `-e`.
 */
struct FhExpr *fh_expr_neg(const struct FhExpr *e);

/*
 A boolean constant.
 */
struct FhExpr *fh_expr_bool(bool value);

/*
 An unsigned constant of type `t` (an unsigned type; checked to fit).
 */
struct FhExpr *fh_expr_uint(struct FhType t, uint64_t value);

/*
 The type of `e`.
 */
int32_t fh_expr_type(const struct FhExpr *e, struct FhType *out);

/*
 `argmax(e)` (`maximum` false: `argmin(e)`) over the RDom of the RVars in
 `e`: writes the point (one Expr per RDom dimension) to `point`
 (`point_len` entries) and returns the extreme value.
 */
struct FhExpr *fh_expr_argextreme(bool maximum,
                                  const struct FhExpr *e,
                                  struct FhExpr **point,
                                  size_t point_len);

/*
 `sum(e)`, `product(e)`, `maximum(e)` or `minimum(e)` over the RDom the
 RVars in `e` belong to.
 */
struct FhExpr *fh_expr_reduce(enum FhReduction kind, const struct FhExpr *e);

int32_t fh_expr_free(struct FhExpr *e);

/*
 A new, undefined Func named `name` (null: a fresh name).
 */
struct FhFunc *fh_func_new(const char *name);

int32_t fh_func_free(struct FhFunc *f);

/*
 `f(args...) = (values...)`: the pure definition (args are Vars), or an
 update definition once `f` is defined. Several values make a Tuple.
 */
int32_t fh_func_define(const struct FhFunc *f,
                       const struct FhExpr *const *args,
                       size_t n_args,
                       const struct FhExpr *const *values,
                       size_t n_values);

/*
 The call `f(args...)`, value `value_index` of a Tuple (0 otherwise).
 */
struct FhExpr *fh_func_call(const struct FhFunc *f,
                            const struct FhExpr *const *args,
                            size_t n_args,
                            size_t value_index);

/*
 `f.compute_root()`.
 */
int32_t fh_func_compute_root(const struct FhFunc *f);

/*
 `f.compute_at(g, var)`.
 */
int32_t fh_func_compute_at(const struct FhFunc *f, const struct FhFunc *g, const struct FhVar *var);

/*
 `f.vectorize(var, factor)` (factor 0: the whole loop).
 */
int32_t fh_func_vectorize(const struct FhFunc *f, const struct FhVar *var, int32_t factor);

/*
 `f.parallel(var)`.
 */
int32_t fh_func_parallel(const struct FhFunc *f, const struct FhVar *var);

/*
 Compute `f` into the caller's buffers (one per value of `f`): JIT
 compiled for the host on first use.
 */
int32_t fh_func_realize(const struct FhFunc *f, halide_buffer_t *const *outputs, size_t n_outputs);

/*
 `f.split(old, outer, inner, factor)`.
 */
int32_t fh_func_split(const struct FhFunc *f,
                      const struct FhVar *old,
                      const struct FhVar *outer,
                      const struct FhVar *inner,
                      int32_t factor);

/*
 `f.tile(x, y, xo, yo, xi, yi, xfactor, yfactor)`.
 */
int32_t fh_func_tile(const struct FhFunc *f,
                     const struct FhVar *x,
                     const struct FhVar *y,
                     const struct FhVar *xo,
                     const struct FhVar *yo,
                     const struct FhVar *xi,
                     const struct FhVar *yi,
                     int32_t xfactor,
                     int32_t yfactor);

/*
 `f.reorder(vars...)`, innermost first.
 */
int32_t fh_func_reorder(const struct FhFunc *f, const struct FhVar *const *vars, size_t n);

/*
 `f.unroll(var, factor)`.
 */
int32_t fh_func_unroll(const struct FhFunc *f, const struct FhVar *var, int32_t factor);

/*
 `f.fuse(inner, outer, fused)`.
 */
int32_t fh_func_fuse(const struct FhFunc *f,
                     const struct FhVar *inner,
                     const struct FhVar *outer,
                     const struct FhVar *fused);

/*
 `f.store_at(g, var)`.
 */
int32_t fh_func_store_at(const struct FhFunc *f, const struct FhFunc *g, const struct FhVar *var);

/*
 `f.set_estimate(var, min, extent)` (for autoschedulers).
 */
int32_t fh_func_estimate(const struct FhFunc *f,
                         const struct FhVar *var,
                         int32_t min,
                         int32_t extent);

/*
 `f.in_()`: a new Func wrapping `f` for all its consumers, to schedule.
 */
struct FhFunc *fh_func_in(const struct FhFunc *f);

/*
 Update definition `index` of `f`, to schedule.
 */
struct FhStage *fh_func_update(const struct FhFunc *f, size_t index);

int32_t fh_stage_free(struct FhStage *s);

/*
 `stage.vectorize(v, factor)` (`v` a Var or RVar; factor 0: the whole loop).
 */
int32_t fh_stage_vectorize(const struct FhStage *s, const struct FhExpr *v, int32_t factor);

/*
 `stage.parallel(v)`.
 */
int32_t fh_stage_parallel(const struct FhStage *s, const struct FhExpr *v);

/*
 `stage.reorder(loops...)`, innermost first (Vars and RVars).
 */
int32_t fh_stage_reorder(const struct FhStage *s, const struct FhExpr *const *loops, size_t n);

/*
 `stage.rfactor([(rvar_i, var_i)...])`: the intermediate Func.
 */
struct FhFunc *fh_stage_rfactor(const struct FhStage *s,
                                const struct FhExpr *const *rvars,
                                const struct FhVar *const *vars,
                                size_t n);

/*
 `f.store_root()`.
 */
int32_t fh_func_store_root(const struct FhFunc *f);

/*
 `f.bound(var, min, extent)`.
 */
int32_t fh_func_bound(const struct FhFunc *f, const struct FhVar *var, int32_t min, int32_t extent);

/*
 The lowered statement of `f` with `arguments` for `target`, as text:
 a NUL-terminated string the caller frees with `fh_string_free`.
 */
char *fh_func_lowered_stmt(const struct FhFunc *f,
                           const struct FhArguments *arguments,
                           const char *target);

/*
 Schedule `f`'s whole pipeline for `target` with the autoscheduler
 `name` (Halide's names; ferrohalide's own rules stand in and say so on
 stderr). Returns the schedule as C++ source (free it with
 `fh_string_free`).
 */
char *fh_func_autoschedule(const struct FhFunc *f, const char *name, const char *target);

/*
 1 if `target` names a valid target ("host", "x86-64-linux-avx2", ...),
 0 if not (the reason is then in `fh_last_error`).
 */
int32_t fh_target_is_valid(const char *target);

/*
 Free a string a call returned.
 */
void fh_string_free(char *s);

/*
 `RDom([(min_0, extent_0), ...], name)` (name may be null).
 */
struct FhRDom *fh_rdom_new(const struct FhExpr *const *mins,
                           const struct FhExpr *const *extents,
                           size_t n,
                           const char *name);

/*
 Dimension `i` of the RDom as an Expr (an RVar).
 */
struct FhExpr *fh_rdom_var(const struct FhRDom *r, size_t i);

/*
 `r.where(condition)`.
 */
int32_t fh_rdom_where(const struct FhRDom *r, const struct FhExpr *condition);

int32_t fh_rdom_free(struct FhRDom *r);

/*
 A scalar parameter of type `t` named `name`.
 */
struct FhParam *fh_param_new(struct FhType t, const char *name);

/*
 Set an integer (or bool) parameter's value (checked to fit).
 */
int32_t fh_param_set_int(const struct FhParam *p, int64_t value);

/*
 Set a float parameter's value.
 */
int32_t fh_param_set_float(const struct FhParam *p, double value);

/*
 The parameter's value as a double (NaN and an error if it has none or
 it is not a number).
 */
double fh_param_get(const struct FhParam *p);

/*
 The parameter as an Expr.
 */
struct FhExpr *fh_expr_param(const struct FhParam *p);

int32_t fh_param_free(struct FhParam *p);

/*
 An input buffer of element type `t` with `dimensions` dimensions.
 */
struct FhImageParam *fh_image_param_new(struct FhType t, int32_t dimensions, const char *name);

/*
 Bind the caller's buffer to the ImageParam for JIT realizations. The
 buffer's memory must stay valid while realizations use it.
 */
int32_t fh_image_param_set(const struct FhImageParam *im, halide_buffer_t *buffer);

/*
 The call `im(args...)`.
 */
struct FhExpr *fh_image_param_call(const struct FhImageParam *im,
                                   const struct FhExpr *const *args,
                                   size_t n_args);

int32_t fh_image_param_free(struct FhImageParam *im);

/*
 `BoundaryConditions.repeat_edge(im)`: the ImageParam extended beyond its
 shape by its edge values, as a new Func.
 */
struct FhFunc *fh_repeat_edge(const struct FhImageParam *im);

/*
 A boundary condition of Func `f` over the region `mins`/`extents` of
 its first `n` dimensions, as a new Func.
 */
struct FhFunc *fh_boundary_condition(enum FhBoundary kind,
                                     const struct FhFunc *f,
                                     const struct FhExpr *const *mins,
                                     const struct FhExpr *const *extents,
                                     size_t n);

/*
 `BoundaryConditions.constant_exterior(im, value)`.
 */
struct FhFunc *fh_constant_exterior(const struct FhImageParam *im, const struct FhExpr *value);

/*
 An empty argument list (the compiled function's arguments, in order).
 */
struct FhArguments *fh_arguments_new(void);

/*
 Append a scalar parameter.
 */
int32_t fh_arguments_add_param(struct FhArguments *list, const struct FhParam *p);

/*
 Append an input buffer.
 */
int32_t fh_arguments_add_image_param(struct FhArguments *list, const struct FhImageParam *im);

int32_t fh_arguments_free(struct FhArguments *list);

/*
 `fh_func_compile_to_file`, as `basename.a` (a static library with the
 runtime) and `basename.h`.
 */
int32_t fh_func_compile_to_static_library(const struct FhFunc *f,
                                          const char *basename,
                                          const struct FhArguments *arguments,
                                          const char *fn_name,
                                          const char *target);

/*
 Compile `f` with `arguments` into `basename.o` and `basename.h` (Halide's
 C ABI), a function called `fn_name`, for `target` (e.g. "host",
 "x86-64-linux-avx2").
 */
int32_t fh_func_compile_to_file(const struct FhFunc *f,
                                const char *basename,
                                const struct FhArguments *arguments,
                                const char *fn_name,
                                const char *target);

/*
 The message of the last failed call on this thread ("" if it
 succeeded). Valid until the next call on this thread.
 */
const char *fh_last_error(void);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* FERROHALIDE_C_H */
