//! The loop scheduling methods `hl.Func` and `hl.Stage` share, written
//! once (as Halide's `PyScheduleMethods.h` does): a Func's directive acts
//! on its pure definition, a Stage's on that stage, and both parse their
//! arguments and report errors the same way.
//!
//! `schedule_methods!(Class, stage_of, "Kind")` adds a `#[pymethods]` block
//! of the shared methods to the class (PyO3's `multiple-pymethods`), each
//! calling `stage_of(&Class) -> Stage` for the stage it schedules and
//! returning the receiver for chaining. `"Kind"` is the class's Python name,
//! used in the docstrings ("Returns this Func."); the docstrings are written
//! here once and flow into both classes' methods.

#[macro_export]
macro_rules! schedule_methods {
    ($cls:ty, $stage_of:path, $kind:literal) => {
        $crate::schedule_methods!(@methods $cls, $stage_of, $kind, [
            /// `gpu_blocks(x, device_api=DeviceAPI.Default_GPU)`,
            /// `gpu_blocks(x, y, ...)` or `gpu_blocks(x, y, z, ...)`: make the
            /// loops over the given Vars the GPU block indices.
            /// ferrohalide generates no GPU code: the schedule is recorded
            /// (and shows in `print_loop_nest`), but compiling a pipeline with
            /// a GPU loop raises an error.
            gpu_blocks,
            /// `gpu_threads(x, device_api=DeviceAPI.Default_GPU)`,
            /// `gpu_threads(x, y, ...)` or `gpu_threads(x, y, z, ...)`: make
            /// the loops over the given Vars the GPU thread indices within a
            /// block. ferrohalide generates no GPU code: compiling a
            /// pipeline with a GPU loop raises an error.
            gpu_threads,
            /// `gpu_lanes(x, device_api=DeviceAPI.Default_GPU)`: make the loop
            /// over `x` the lanes of a GPU warp, which run in lockstep.
            /// ferrohalide generates no GPU code: compiling a pipeline with a
            /// GPU loop raises an error.
            gpu_lanes,
            /// `gpu(block_x, thread_x, device_api=DeviceAPI.Default_GPU)`,
            /// `gpu(block_x, block_y, thread_x, thread_y, ...)` or
            /// `gpu(block_x, block_y, block_z, thread_x, thread_y, thread_z, ...)`:
            /// `gpu_blocks` on the block loops and `gpu_threads` on the thread
            /// loops in one call. ferrohalide generates no GPU code: compiling
            /// a pipeline with a GPU loop raises an error.
            gpu,
            /// `gpu_tile(x, bx, tx, x_size, tail=TailStrategy.Auto, device_api=DeviceAPI.Default_GPU)`,
            /// `gpu_tile(x, y, bx, by, tx, ty, x_size, y_size, ...)` or
            /// `gpu_tile(x, y, z, bx, by, bz, tx, ty, tz, x_size, y_size, z_size, ...)`:
            /// split each loop by its size into
            /// a GPU block loop and a GPU thread loop, threads innermost. The
            /// forms without the block Vars (`gpu_tile(x, tx, x_size)`, ...)
            /// reuse `x`, `y`, `z` as the block loops. ferrohalide generates no
            /// GPU code: compiling a pipeline with a GPU loop raises an error.
            gpu_tile,
            /// `gpu_single_thread(device_api=DeviceAPI.Default_GPU)`: run the
            /// whole stage as a single GPU thread of a single block.
            /// ferrohalide generates no GPU code: compiling a pipeline with a
            /// GPU loop raises an error.
            gpu_single_thread,
            /// `hexagon(x=Var.outermost())`: run the loop over `x` (by default
            /// the whole stage) on a Hexagon DSP. For a Hexagon target it
            /// compiles as an ordinary loop; for any other target, compiling
            /// the pipeline raises an error, as ferrohalide cannot offload code
            /// to a DSP.
            hexagon,
        ]);
    };
    (@methods $cls:ty, $stage_of:path, $kind:literal, [$($(#[$dmeta:meta])* $device:ident),* $(,)?]) => {
        #[pyo3::pymethods]
        impl $cls {
            /// `split(old, outer, inner, factor, tail=TailStrategy.Auto)`:
            /// split the loop over `old` into an outer loop over `outer` and
            /// an inner loop over `inner` of `factor` iterations; `tail` says
            /// what happens when `factor` does not divide the extent. `old`
            /// may be reused as `outer` or `inner`. In an update definition an
            /// RVar must be split into RVars, and a Var into Vars.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (old, outer, inner, factor, tail=None))]
            fn split<'py>(
                slf: &pyo3::Bound<'py, Self>,
                old: &pyo3::Bound<'py, pyo3::PyAny>,
                outer: &pyo3::Bound<'py, pyo3::PyAny>,
                inner: &pyo3::Bound<'py, pyo3::PyAny>,
                factor: &pyo3::Bound<'py, pyo3::PyAny>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::split(&$stage_of(slf.get()), old, outer, inner, factor, tail)?;
                Ok(slf.clone())
            }

            /// `fuse(inner, outer, fused)`: merge the loops over `inner` and
            /// `outer` into a single loop over `fused`, whose extent is the
            /// product of theirs. In an update definition, fusing an RVar
            /// needs an RVar as `fused`.
            #[doc = concat!("Returns this ", $kind, ".")]
            fn fuse<'py>(
                slf: &pyo3::Bound<'py, Self>,
                inner: &pyo3::Bound<'py, pyo3::PyAny>,
                outer: &pyo3::Bound<'py, pyo3::PyAny>,
                fused: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                use $crate::errors::IntoPy;
                use $crate::py_rdom::var_or_rvar;
                $stage_of(slf.get())
                    .fuse(
                        &var_or_rvar(inner)?,
                        &var_or_rvar(outer)?,
                        &var_or_rvar(fused)?,
                    )
                    .py()?;
                Ok(slf.clone())
            }

            /// `rename(old, new)`: give the loop over `old` the name `new`. A
            /// Var must be renamed to a Var and an RVar to an RVar; `new` must
            /// not name another loop of this stage, and a loop already fused
            /// cannot be renamed.
            #[doc = concat!("Returns this ", $kind, ".")]
            fn rename<'py>(
                slf: &pyo3::Bound<'py, Self>,
                old: &pyo3::Bound<'py, pyo3::PyAny>,
                new: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                use $crate::errors::IntoPy;
                use $crate::py_rdom::var_or_rvar;
                $stage_of(slf.get())
                    .rename(&var_or_rvar(old)?, &var_or_rvar(new)?)
                    .py()?;
                Ok(slf.clone())
            }

            /// `reorder(v0, v1, ...)` or `reorder([v0, v1, ...])`: nest the
            /// listed loops in this order, innermost first; loops not listed
            /// keep their places. In an update definition, two RVars may only
            /// swap when the update is proven associative and commutative (or
            /// after `allow_race_conditions()`).
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (*args))]
            fn reorder<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::reorder(&$stage_of(slf.get()), args)?;
                Ok(slf.clone())
            }

            /// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail=TailStrategy.Auto)`:
            /// split the loops over `x` and `y` by `xfactor` and `yfactor` into
            /// outer loops `xo`, `yo` and inner loops `xi`, `yi`, nested `xi,
            /// yi, xo, yo` from innermost out. `tile(x, y, xi, yi, xfactor,
            /// yfactor, tail)` reuses `x` and `y` as the outer loops, and
            /// `tile(previous, outers, inners, factors, tail)` (lists, `outers`
            /// optional) tiles any number of loops. `tail` may also be given
            /// as the last positional argument. On an error the schedule is
            /// left as it was.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (*args, tail=None))]
            fn tile<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::tile(&$stage_of(slf.get()), args, tail)?;
                Ok(slf.clone())
            }

            /// `vectorize(var, factor=None, tail=TailStrategy.Auto)`: compute
            /// the loop over `var` as a single vector operation (its extent
            /// should be a constant). With `factor`, first split `var` by
            /// `factor` and vectorize the new inner loop. In an update
            /// definition, vectorizing an RVar needs proof that no two
            /// iterations write the same point (see `atomic` and
            /// `allow_race_conditions`).
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (var, factor=None, tail=None))]
            fn vectorize<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
                factor: Option<&pyo3::Bound<'py, pyo3::PyAny>>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let t = ferrohalide_core::ir::ForType::Vectorized;
                $crate::py_stage::loop_directive(&$stage_of(slf.get()), var, factor, tail, t)?;
                Ok(slf.clone())
            }

            /// `unroll(var, factor=None, tail=TailStrategy.Auto)`: unroll the
            /// loop over `var` (its extent should be a constant). With
            /// `factor`, first split `var` by `factor` and unroll the new
            /// inner loop.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (var, factor=None, tail=None))]
            fn unroll<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
                factor: Option<&pyo3::Bound<'py, pyo3::PyAny>>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let t = ferrohalide_core::ir::ForType::Unrolled;
                $crate::py_stage::loop_directive(&$stage_of(slf.get()), var, factor, tail, t)?;
                Ok(slf.clone())
            }

            /// `parallel(var, task_size=None, tail=TailStrategy.Auto)`: run
            /// the iterations of the loop over `var` in parallel, on the
            /// runtime's thread pool. With `task_size`, first split `var` by
            /// `task_size` and parallelize the outer loop, so each task runs
            /// `task_size` iterations. In an update definition, parallelizing
            /// an RVar needs proof that no two iterations write the same point
            /// (see `atomic` and `allow_race_conditions`).
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (var, task_size=None, tail=None))]
            fn parallel<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
                task_size: Option<&pyo3::Bound<'py, pyo3::PyAny>>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let t = ferrohalide_core::ir::ForType::Parallel;
                $crate::py_stage::loop_directive(&$stage_of(slf.get()), var, task_size, tail, t)?;
                Ok(slf.clone())
            }

            /// `serial(var)`: run the loop over `var` serially, in order (the
            /// default for every loop).
            #[doc = concat!("Returns this ", $kind, ".")]
            fn serial<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let t = ferrohalide_core::ir::ForType::Serial;
                $crate::py_stage::loop_directive(&$stage_of(slf.get()), var, None, None, t)?;
                Ok(slf.clone())
            }

            /// `atomic(override_associativity_test=False)`: let the loops over
            /// RVars of this update be made parallel or vectorized, with atomic
            /// updates, when the update's operator is associative and
            /// commutative. That is checked when such a loop is marked
            /// (an error if it cannot be proven), unless
            /// `override_associativity_test` is True.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (override_associativity_test=false))]
            fn atomic<'py>(
                slf: &pyo3::Bound<'py, Self>,
                override_associativity_test: bool,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                use $crate::errors::IntoPy;
                $stage_of(slf.get())
                    .atomic(override_associativity_test)
                    .py()?;
                Ok(slf.clone())
            }

            /// `prefetch(func, at, from, offset=1, strategy=PrefetchBoundStrategy.GuardWithIf)`:
            /// at the top of each iteration of the loop `at`, bring into the
            /// cache the part of `func` (a Func or an ImageParam) that
            /// iteration `from + offset` of the loop `from` will read;
            /// `strategy` says what to do where that region leaves the buffer.
            /// `offset` must be an integer. Prefetching never changes the
            /// values computed.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (func, at, from, offset=None, strategy=None))]
            fn prefetch<'py>(
                slf: &pyo3::Bound<'py, Self>,
                func: &pyo3::Bound<'py, pyo3::PyAny>,
                at: &pyo3::Bound<'py, pyo3::PyAny>,
                from: &pyo3::Bound<'py, pyo3::PyAny>,
                offset: Option<&pyo3::Bound<'py, pyo3::PyAny>>,
                strategy: Option<$crate::py_enum::PyPrefetchBoundStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::prefetch(&$stage_of(slf.get()), func, at, from, offset, strategy)?;
                Ok(slf.clone())
            }

            /// `allow_race_conditions()`: turn off the race checks of this
            /// stage, so loops over RVars can be made parallel or vectorized,
            /// or reordered, even when iterations may write the same point.
            /// Use with great caution: the output may then be
            /// non-deterministic.
            #[doc = concat!("Returns this ", $kind, ".")]
            fn allow_race_conditions<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                use $crate::errors::IntoPy;
                $stage_of(slf.get()).allow_race_conditions().py()?;
                Ok(slf.clone())
            }

            /// `specialize(condition)`: the Stage used instead of this one
            /// when `condition` holds at run time. `condition` is a boolean
            /// Expr of Params, buffer shapes and the like, but of no Var or
            /// RVar. The new
            /// Stage starts with a copy of this schedule and can then be
            /// scheduled on its own; the same condition again returns the
            /// same Stage. Specializations are tried in the order they were
            /// added.
            fn specialize(
                &self,
                condition: &pyo3::Bound<'_, pyo3::PyAny>,
            ) -> pyo3::PyResult<$crate::py_stage::PyStage> {
                use $crate::errors::IntoPy;
                let c = $crate::py_expr::py_to_expr(condition)?;
                Ok($crate::py_stage::PyStage {
                    inner: $stage_of(self).specialize(c).py()?,
                })
            }

            /// `specialize_fail(message)`: make the pipeline fail at run time
            /// with `message` when none of the specializations added before
            /// applies. `message` must not be empty, and no specialization can
            /// be added after it. Returns None.
            fn specialize_fail(&self, message: &str) -> pyo3::PyResult<()> {
                use $crate::errors::IntoPy;
                $stage_of(self).specialize_fail(message).py()
            }

            /// `compute_with(stage, var, align=LoopAlignStrategy.Auto)` or
            /// `compute_with(loop_level, align=LoopAlignStrategy.Auto)`: fuse
            /// this stage's loops, from the outermost through `var`, with the
            /// same loops of `stage` (a Stage, or a defined Func for its pure
            /// definition), computing this stage after `stage` in each fused
            /// iteration. `align` is one LoopAlignStrategy or a list of
            /// `(var, LoopAlignStrategy)` pairs, saying how loops of different
            /// bounds are lined up.
            #[doc = concat!("Returns this ", $kind, ".")]
            #[pyo3(signature = (*args, **kwargs))]
            fn compute_with<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                kwargs: Option<&pyo3::Bound<'py, pyo3::types::PyDict>>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_compute_with::compute_with(&$stage_of(slf.get()), args, kwargs)?;
                Ok(slf.clone())
            }

            /// `partition(var, partition_policy)`: set the loop partitioning
            /// policy of the loop over `var`. Partitioning splits a loop into
            /// a prologue, a steady state free of boundary conditions and an
            /// epilogue: `Partition.Auto` (the default) does it where useful,
            /// `Never` forbids it, and `Always` requires it (compiling fails
            /// if the loop cannot be partitioned).
            #[doc = concat!("Returns this ", $kind, ".")]
            fn partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
                partition_policy: $crate::py_partition::PyPartition,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_partition::partition(&$stage_of(slf.get()), var, partition_policy)?;
                Ok(slf.clone())
            }
            /// `never_partition(vars)`: `partition(v, Partition.Never)` for
            /// each Var or RVar in the list `vars`.
            #[doc = concat!("Returns this ", $kind, ".")]
            fn never_partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                vars: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Never;
                $crate::py_partition::partition_each(&$stage_of(slf.get()), vars, p)?;
                Ok(slf.clone())
            }
            /// `always_partition(vars)`: `partition(v, Partition.Always)` for
            /// each Var or RVar in the list `vars`.
            #[doc = concat!("Returns this ", $kind, ".")]
            fn always_partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                vars: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Always;
                $crate::py_partition::partition_each(&$stage_of(slf.get()), vars, p)?;
                Ok(slf.clone())
            }
            /// `never_partition_all()`: `Partition.Never` for every loop of this
            /// stage (call it separately on each update definition's Stage).
            #[doc = concat!("Returns this ", $kind, ".")]
            fn never_partition_all<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Never;
                $crate::py_partition::partition_all(&$stage_of(slf.get()), p)?;
                Ok(slf.clone())
            }
            /// `always_partition_all()`: `Partition.Always` for every loop of
            /// this stage (call it separately on each update definition's
            /// Stage).
            #[doc = concat!("Returns this ", $kind, ".")]
            fn always_partition_all<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Always;
                $crate::py_partition::partition_all(&$stage_of(slf.get()), p)?;
                Ok(slf.clone())
            }

            // The device directives (py_device_schedule), one per name, with
            // the docstrings given above.
            $(
                $(#[$dmeta])*
                #[doc = concat!("Returns this ", $kind, ".")]
                #[pyo3(signature = (*args, **kwargs))]
                fn $device<'py>(
                    slf: &pyo3::Bound<'py, Self>,
                    args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                    kwargs: Option<&pyo3::Bound<'py, pyo3::types::PyDict>>,
                ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                    let stage = $stage_of(slf.get());
                    $crate::py_device_schedule::device_directive(&stage, stringify!($device), args, kwargs)?;
                    Ok(slf.clone())
                }
            )*
        }
    };
}
