//! `compute_with`: fuse a stage's loops, from a given loop outwards, with
//! the same loops of another stage, which runs first in each shared
//! iteration (Halide's `Stage::compute_with`).
//!
//! The directive only records a `FuseLevel` on the definition (never on a
//! specialization: Halide marks the original definition so that no
//! specialization can carry a competing one) and checks what can be
//! checked now, with Halide's messages: a defined level naming another
//! Func, no specializations on this definition. Everything that depends on
//! the rest of the schedule (compute levels, matching loops, dependencies,
//! cycles) is checked when lowering (`lower/fused_groups.rs`), since the
//! schedule may still change.

use crate::error::{user_warning, Error, Result};
use crate::lang::stage::{definition_at, Stage};
use crate::schedule::{FuseLevel, LoopAlignStrategy, LoopLevel};

/// The alignment part of a `compute_with` call: one strategy for the
/// loop named by the level, or one per named dimension.
#[derive(Clone, Debug)]
pub enum Align {
    One(LoopAlignStrategy),
    PerDim(Vec<(String, LoopAlignStrategy)>),
}

impl Stage {
    /// `compute_with(level, align)`: compute this stage after the stage
    /// `level` names, in its loops from `level`'s var outwards.
    pub fn compute_with(&self, level: LoopLevel, align: Align) -> Result<()> {
        let name = self.name();
        if !self.function.has_pure_definition() {
            return Err(Error::user(format!(
                "In schedule for {name}: can't apply compute_with to Func \"{name}\" because it has not been defined yet.\n"
            )));
        }
        let (func, var) = match &level {
            LoopLevel::At { func, var, .. } => (func.clone(), var.clone()),
            LoopLevel::Undefined => {
                return Err(Error::user(
                    "There should be no undefined LoopLevels at the start of lowering. (Did you mean to use LoopLevel::inlined() instead of LoopLevel() ?)",
                ))
            }
            LoopLevel::Inlined | LoopLevel::Root => {
                return Err(Error::user("Undefined loop level to compute with\n"))
            }
        };
        if func == self.function.name() {
            return Err(Error::user(format!(
                "Cannot schedule {name} to be computed with {}\n",
                level.describe()
            )));
        }
        let align = match align {
            Align::One(a) => vec![(var, a)],
            // Halide keeps the first strategy given for a dimension.
            Align::PerDim(list) => {
                let mut out: Vec<(String, LoopAlignStrategy)> = vec![];
                for (d, a) in list {
                    if !out.iter().any(|(o, _)| *o == d) {
                        out.push((d, a));
                    }
                }
                out
            }
        };
        let mut c = self.function.write();
        // The level goes on the definition itself, which must not be
        // specialized (a specialization could not share the loops).
        let (st, specs) = definition_at(&mut c, self.index, &[])
            .ok_or_else(|| Error::internal("stage refers to a missing definition"))?;
        if !specs.is_empty() {
            return Err(Error::user(format!(
                "Func {name} is scheduled to be computed with {func}, so it must not have any specializations.\n"
            )));
        }
        if let Some(old) = &st.fuse_level {
            user_warning(&format!(
                "{name} already has a compute_with at {}. Replacing it with a new compute_with at {}\n",
                old.level.describe(),
                level.describe()
            ));
        }
        st.fuse_level = Some(FuseLevel { level, align });
        st.touched = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Expr;
    use crate::lang::func::Func;

    fn func(name: &str) -> Func {
        let f = Func::new(Some(name));
        let (x, y) = (Expr::var_i32("x"), Expr::var_i32("y"));
        f.define(vec![x.clone(), y], vec![x]).unwrap();
        f
    }

    fn at(f: &str, v: &str) -> LoopLevel {
        LoopLevel::At {
            func: f.into(),
            var: v.into(),
            stage: Some(0),
        }
    }

    #[test]
    fn records_the_level_and_the_alignment_of_its_var() {
        let (f, g) = (func("cw_f"), func("cw_g"));
        g.stage()
            .compute_with(at(&f.name(), "y"), Align::One(LoopAlignStrategy::AlignEnd))
            .unwrap();
        let fl = g.function.read().stage.fuse_level.clone().unwrap();
        assert_eq!(fl.level, at(&f.name(), "y"));
        assert_eq!(
            fl.align,
            vec![("y".to_string(), LoopAlignStrategy::AlignEnd)]
        );
    }

    #[test]
    fn refuses_itself_root_and_specialized_stages() {
        let (f, g) = (func("cw_f2"), func("cw_g2"));
        let e = g
            .stage()
            .compute_with(at(&g.name(), "x"), Align::One(LoopAlignStrategy::Auto))
            .unwrap_err();
        assert!(e
            .message
            .starts_with("Cannot schedule cw_g2 to be computed with cw_g2.s0.x"));
        let e = g
            .stage()
            .compute_with(LoopLevel::Root, Align::One(LoopAlignStrategy::Auto))
            .unwrap_err();
        assert!(e.message.contains("Undefined loop level"));
        g.specialize(Expr::bool_const(true)).unwrap();
        let e = g
            .stage()
            .compute_with(at(&f.name(), "x"), Align::PerDim(vec![]))
            .unwrap_err();
        assert!(e.message.contains("must not have any specializations"));
    }
}
