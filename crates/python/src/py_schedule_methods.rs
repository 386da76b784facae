//! The loop scheduling methods `hl.Func` and `hl.Stage` share, written
//! once (as Halide's `PyScheduleMethods.h` does): a Func's directive acts
//! on its pure definition, a Stage's on that stage, and both parse their
//! arguments and report errors the same way.
//!
//! `schedule_methods!(Class, stage_of)` adds a `#[pymethods]` block of the
//! shared methods to the class (PyO3's `multiple-pymethods`), each calling
//! `stage_of(&Class) -> Stage` for the stage it schedules and returning
//! the receiver for chaining.

#[macro_export]
macro_rules! schedule_methods {
    ($cls:ty, $stage_of:path) => {
        $crate::schedule_methods!(@methods $cls, $stage_of, [
            gpu_blocks, gpu_threads, gpu_lanes, gpu, gpu_tile, gpu_single_thread, hexagon
        ]);
    };
    (@methods $cls:ty, $stage_of:path, [$($device:ident),* $(,)?]) => {
        #[pyo3::pymethods]
        impl $cls {
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

            /// `reorder(v0, v1, ...)` or `reorder([v0, v1, ...])`, innermost first.
            #[pyo3(signature = (*args))]
            fn reorder<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::reorder(&$stage_of(slf.get()), args)?;
                Ok(slf.clone())
            }

            /// `tile(x, y, xo, yo, xi, yi, xfactor, yfactor, tail=Auto)`,
            /// `tile(x, y, xi, yi, xfactor, yfactor, tail=Auto)` or
            /// `tile(previous, [outers,] inners, factors, tail=Auto)`.
            #[pyo3(signature = (*args, tail=None))]
            fn tile<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                tail: Option<$crate::py_func::PyTailStrategy>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_stage::tile(&$stage_of(slf.get()), args, tail)?;
                Ok(slf.clone())
            }

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

            fn serial<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let t = ferrohalide_core::ir::ForType::Serial;
                $crate::py_stage::loop_directive(&$stage_of(slf.get()), var, None, None, t)?;
                Ok(slf.clone())
            }

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

            /// `prefetch(func_or_image, at, from, offset=1,
            /// strategy=PrefetchBoundStrategy.GuardWithIf)`.
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

            fn allow_race_conditions<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                use $crate::errors::IntoPy;
                $stage_of(slf.get()).allow_race_conditions().py()?;
                Ok(slf.clone())
            }

            /// `specialize(condition)`: the Stage that runs when `condition` holds.
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

            fn specialize_fail(&self, message: &str) -> pyo3::PyResult<()> {
                use $crate::errors::IntoPy;
                $stage_of(self).specialize_fail(message).py()
            }

            /// `compute_with(stage, var, align)` / `compute_with(loop_level, align)`.
            #[pyo3(signature = (*args, **kwargs))]
            fn compute_with<'py>(
                slf: &pyo3::Bound<'py, Self>,
                args: &pyo3::Bound<'py, pyo3::types::PyTuple>,
                kwargs: Option<&pyo3::Bound<'py, pyo3::types::PyDict>>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_compute_with::compute_with(&$stage_of(slf.get()), args, kwargs)?;
                Ok(slf.clone())
            }

            fn partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                var: &pyo3::Bound<'py, pyo3::PyAny>,
                partition_policy: $crate::py_partition::PyPartition,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                $crate::py_partition::partition(&$stage_of(slf.get()), var, partition_policy)?;
                Ok(slf.clone())
            }
            fn never_partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                vars: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Never;
                $crate::py_partition::partition_each(&$stage_of(slf.get()), vars, p)?;
                Ok(slf.clone())
            }
            fn always_partition<'py>(
                slf: &pyo3::Bound<'py, Self>,
                vars: &pyo3::Bound<'py, pyo3::PyAny>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Always;
                $crate::py_partition::partition_each(&$stage_of(slf.get()), vars, p)?;
                Ok(slf.clone())
            }
            fn never_partition_all<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Never;
                $crate::py_partition::partition_all(&$stage_of(slf.get()), p)?;
                Ok(slf.clone())
            }
            fn always_partition_all<'py>(
                slf: &pyo3::Bound<'py, Self>,
            ) -> pyo3::PyResult<pyo3::Bound<'py, Self>> {
                let p = ferrohalide_core::schedule::Partition::Always;
                $crate::py_partition::partition_all(&$stage_of(slf.get()), p)?;
                Ok(slf.clone())
            }

            // The device directives (py_device_schedule), one per name.
            $(
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
