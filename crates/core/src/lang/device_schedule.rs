//! The device directives of a stage: `gpu_blocks`, `gpu_threads`,
//! `gpu_lanes`, `gpu`, `gpu_tile`, `gpu_single_thread` and `hexagon`
//! (Halide's Func.cpp / Stage). They record on each loop the device it runs
//! on; ferrohalide has no device code generator, so lowering refuses such
//! a loop with Halide's message when the target has no such device, and
//! with an error naming what is missing when it has (`validate_device_loops`).
//! The loop nest printout shows them as Halide's does.

use crate::device_api::DeviceApi;
use crate::error::{Error, Result};
use crate::ir::Expr;
use crate::lang::func::{dump_dims, var_name_match};
use crate::lang::stage::{Stage, VarOrRVar};
use crate::lang::var::Var;
use crate::schedule::{DeviceLoop, GpuLoop, TailStrategy, OUTERMOST};

impl Stage {
    /// Put the loop over `var` on `api`, as a GPU loop of type `gpu`
    /// (`None`: the loop type stays, as `hexagon()` does). As in Halide, a
    /// GPU loop type gets parallel's race check.
    pub fn set_device_loop(&self, var: &VarOrRVar, gpu: Option<GpuLoop>, api: DeviceApi) -> Result<()> {
        if gpu.is_some() && self.is_update() {
            if let Some(st) = self.schedule() {
                if Stage::find_dim(&st, &var.name).is_some() {
                    self.check_race(&st, &var.name)?;
                }
            }
        }
        self.with_schedule("a device API", |st, name| {
            let mut found = false;
            for d in st.dims.iter_mut().filter(|d| var_name_match(&d.var, &var.name)) {
                found = true;
                let gpu = gpu.or(d.device.and_then(|old| old.gpu));
                d.device = Some(DeviceLoop { gpu, api });
            }
            if !found {
                return Err(Error::user(format!(
                    "In schedule for {name}, could not find dimension {} to set to device API {} in vars for function\n{}",
                    var.name,
                    api.value(),
                    dump_dims(&st.dims)
                )));
            }
            Ok(())
        })
    }

    fn set_device_loops(&self, vars: &[VarOrRVar], gpu: GpuLoop, api: DeviceApi) -> Result<()> {
        for v in vars {
            self.set_device_loop(v, Some(gpu), api)?;
        }
        Ok(())
    }

    /// `gpu_blocks(x[, y[, z]], device_api)`.
    pub fn gpu_blocks(&self, vars: &[VarOrRVar], api: DeviceApi) -> Result<()> {
        self.set_device_loops(vars, GpuLoop::Block, api)
    }

    /// `gpu_threads(x[, y[, z]], device_api)`.
    pub fn gpu_threads(&self, vars: &[VarOrRVar], api: DeviceApi) -> Result<()> {
        self.set_device_loops(vars, GpuLoop::Thread, api)
    }

    /// `gpu_lanes(x, device_api)`.
    pub fn gpu_lanes(&self, var: &VarOrRVar, api: DeviceApi) -> Result<()> {
        self.set_device_loop(var, Some(GpuLoop::Lane), api)
    }

    /// `gpu(blocks..., threads..., device_api)`.
    pub fn gpu(&self, blocks: &[VarOrRVar], threads: &[VarOrRVar], api: DeviceApi) -> Result<()> {
        self.gpu_blocks(blocks, api)?;
        self.gpu_threads(threads, api)
    }

    /// `gpu_tile`: split each of `vars` into a block and a thread loop of
    /// the given sizes, threads innermost, as Halide's overloads do
    /// (`blocks` may repeat `vars`: the in-place forms).
    pub fn gpu_tile(
        &self,
        vars: &[VarOrRVar],
        blocks: &[VarOrRVar],
        threads: &[VarOrRVar],
        sizes: &[Expr],
        tail: TailStrategy,
        api: DeviceApi,
    ) -> Result<()> {
        for (((v, b), t), size) in vars.iter().zip(blocks).zip(threads).zip(sizes) {
            self.split(v, b, t, size.clone(), tail)?;
        }
        if vars.len() > 1 {
            let order: Vec<VarOrRVar> = threads.iter().chain(blocks).cloned().collect();
            self.reorder(&order)?;
        }
        self.gpu_blocks(blocks, api)?;
        self.gpu_threads(threads, api)
    }

    /// `gpu_single_thread(device_api)`: the whole stage as one GPU thread of
    /// one block (one-iteration loops split off the outermost one).
    pub fn gpu_single_thread(&self, api: DeviceApi) -> Result<()> {
        let block = VarOrRVar::var(Var::fresh().name());
        let thread = VarOrRVar::var(Var::fresh().name());
        let outermost = VarOrRVar::var(OUTERMOST);
        self.split(&outermost, &outermost, &thread, Expr::i32(1), TailStrategy::Auto)?;
        self.split(&outermost, &outermost, &block, Expr::i32(1), TailStrategy::Auto)?;
        self.set_device_loop(&block, Some(GpuLoop::Block), api)?;
        self.set_device_loop(&thread, Some(GpuLoop::Thread), api)
    }

    /// `hexagon(x = Var.outermost())`: the loop runs on the Hexagon DSP.
    pub fn hexagon(&self, var: &VarOrRVar) -> Result<()> {
        self.set_device_loop(var, None, DeviceApi::Hexagon)
    }
}

impl crate::lang::func::Func {
    /// `copy_to_device(api)` / `copy_to_host()` (`api` Host): the Func must
    /// be a plain copy of one Func or image (its pure definition calls it at
    /// its own arguments, in order). Halide turns it into an extern copy
    /// stage computed at root; here it stays its definition, computed at
    /// root unless scheduled elsewhere, and lowering refuses a device the
    /// target does not have (`validate_device_loops`).
    pub fn copy_to_device(&self, api: DeviceApi, method: &str) -> Result<()> {
        let name = self.name();
        let c = self.function.read();
        if c.values.is_empty() {
            return Err(Error::user(format!("{method} on Func {name} with no definition\n")));
        }
        if c.values.len() != 1 {
            return Err(Error::user(format!(
                "{method} on a Tuple-valued Func {name} not yet supported\n"
            )));
        }
        if !c.updates.is_empty() {
            return Err(Error::user(format!("{method} on Func {name} with update definition\n")));
        }
        let value = &c.values[0];
        let is_copy = match value.node() {
            crate::ir::ExprNode::Call { args, kind, .. } => {
                matches!(kind, crate::ir::CallKind::Halide { .. } | crate::ir::CallKind::Image { .. })
                    && args.len() == c.args.len()
                    && args.iter().zip(&c.args).all(|(a, v)| {
                        matches!(a.node(), crate::ir::ExprNode::Variable { name, param: None, .. } if name == v)
                            && a.ty() == crate::ir::Type::i32()
                    })
            }
            _ => false,
        };
        if !is_copy {
            return Err(Error::user(format!(
                "Func {name} is scheduled as copy_to_host/device, but has value: {}\nExpected a single call to another Func with matching dimensionality and argument order.\n",
                crate::lang::print::expr_to_string(value)
            )));
        }
        drop(c);
        let mut c = self.function.write();
        if c.schedule.compute_level == crate::schedule::LoopLevel::Inlined {
            c.schedule.compute_level = crate::schedule::LoopLevel::Root;
        }
        c.schedule.copy_to_device = Some(api);
        Ok(())
    }
}
