//! Loops scheduled on a device (the GPU directives, `hexagon()`) and
//! Funcs copied to one (`copy_to_device`).
//!
//! Assumes: the environment's schedules. Guarantees: lowering goes on only
//! if no loop is on a device other than the target's own processor. A loop
//! on a device the target lacks gets Halide's error; on a device the target
//! has, an error saying that ferrohalide has no code generator for it
//! (Halide would compile it). `hexagon()` loops on a Hexagon target are
//! the target's own code (Halide offloads them only from another CPU), so
//! they compile as ordinary loops; from an ARM target with `hvx` they are
//! offloaded (`inject_hexagon_rpc.rs`).

use crate::device_api::{supports_device_api, DeviceApi};
use crate::error::{Error, Result};
use crate::lang::function::Specialization;
use crate::schedule::StageSchedule;
use crate::target::Target;

use super::environment::Environment;

/// The first device API a loop of `stage` (or of one of its
/// specializations) is scheduled on.
fn device_of(stage: &StageSchedule, specs: &[Specialization]) -> Option<DeviceApi> {
    stage
        .dims
        .iter()
        .find_map(|d| d.device.map(|dl| dl.api))
        .or_else(|| specs.iter().find_map(|s| device_of(&s.stage, &s.specializations)))
}

/// See the module comment.
pub fn validate_device_loops(env: &Environment, target: &Target) -> Result<()> {
    for name in &env.order {
        let f = env.get(name).read();
        if f.schedule.copy_to_device.is_some() {
            // Halide's copy is an extern stage: what it copies must exist
            // as a buffer.
            if let Some(crate::ir::ExprNode::Call { name: src, kind: crate::ir::CallKind::Halide { .. }, .. }) =
                f.values.first().map(|v| v.node())
            {
                if env.get(src).read().schedule.compute_level.is_inlined() {
                    return Err(Error::user(format!(
                        "Func {src} cannot be scheduled to be computed inline, because it is used in the externally-computed function {name}\n"
                    )));
                }
            }
        }
        if let Some(api) = f.schedule.copy_to_device.filter(|a| !matches!(a, DeviceApi::Host | DeviceApi::None)) {
            if !supports_device_api(target, api) {
                return Err(Error::user(format!(
                    "Func {name} has an extern definition that may leave the output with a dirty <{}> device allocation, but no compatible target feature is enabled in target {target}\n",
                    api.display_name()
                )));
            }
            return Err(Error::user(format!(
                "Func {name} is copied to <{}> for target {target}, but ferrohalide has no code generator for devices yet: device buffers are not implemented.\n",
                api.display_name()
            )));
        }
        let stages = std::iter::once((&f.stage, &f.specializations))
            .chain(f.updates.iter().map(|u| (&u.stage, &u.specializations)));
        for (stage, specs) in stages {
            let Some(api) = device_of(stage, specs) else { continue };
            if api == DeviceApi::Hexagon && target.arch == crate::target::arch::HEXAGON {
                continue;
            }
            if api == DeviceApi::Hexagon && supports_device_api(target, api) {
                if target.arch == crate::target::arch::ARM {
                    // Offloaded (inject_hexagon_rpc.rs).
                    continue;
                }
                return Err(Error::user(format!(
                    "Func {name} is scheduled on <Hexagon> for target {target}, but ferrohalide offloads hexagon() loops only from ARM targets.\n"
                )));
            }
            if !supports_device_api(target, api) {
                return Err(Error::user(format!(
                    "Schedule for Func {name} requires <{}> but no compatible target feature is enabled in target {target}\n",
                    api.display_name()
                )));
            }
            return Err(Error::user(format!(
                "Func {name} is scheduled on <{}> for target {target}, but ferrohalide has no code generator for devices yet: compiling GPU and Hexagon loops is not implemented.\n",
                api.display_name()
            )));
        }
    }
    Ok(())
}
