//! `target_arch_is`, `target_os_is`, `target_bits`, `target_has_feature`
//! and `target_natural_vector_size`: expressions whose value is a fact of
//! the target the pipeline is compiled for. As in Halide they stay calls
//! until lowering, which knows the target: `with_compile_target` makes it
//! known for the lowering of one pipeline, during which the simplifier
//! folds the calls (so bounds inference, specializations and split
//! factors see constants) and `lower/target_query_ops.rs` replaces the
//! ones left.

use std::cell::RefCell;

use crate::ir::{Expr, ExprNode, Intrinsic, Type};
use crate::target::{Arch, Feature, Os, Target};

pub fn target_arch_is(arch: Arch) -> Expr {
    Expr::intrinsic(Type::bool(), Intrinsic::TargetArchIs, vec![Expr::i32(arch.0 as i64)])
}

pub fn target_os_is(os: Os) -> Expr {
    Expr::intrinsic(Type::bool(), Intrinsic::TargetOsIs, vec![Expr::i32(os.0 as i64)])
}

pub fn target_bits() -> Expr {
    Expr::intrinsic(Type::i32(), Intrinsic::TargetBits, vec![])
}

pub fn target_has_feature(feature: Feature) -> Expr {
    Expr::intrinsic(Type::bool(), Intrinsic::TargetHasFeature, vec![Expr::i32(feature.0 as i64)])
}

/// The argument is a zero of the element type asked about (Halide's form).
pub fn target_natural_vector_size(t: Type) -> Expr {
    let zero = Expr::zero(t.element_of());
    Expr::intrinsic(Type::i32(), Intrinsic::TargetNaturalVectorSize, vec![zero])
}

thread_local! {
    static COMPILE_TARGET: RefCell<Option<Target>> = const { RefCell::new(None) };
}

/// Run `f` with `target` as the target being compiled for (restored after).
pub fn with_compile_target<R>(target: &Target, f: impl FnOnce() -> R) -> R {
    let saved = COMPILE_TARGET.with(|c| c.replace(Some(target.clone())));
    let out = f();
    COMPILE_TARGET.with(|c| *c.borrow_mut() = saved);
    out
}

/// The target being compiled for, inside a compilation.
pub fn compile_target() -> Option<Target> {
    COMPILE_TARGET.with(|c| c.borrow().clone())
}

/// The value of the target query `which(args)` for the target being
/// compiled for; `None` outside a compilation or for other calls.
pub fn query_value(which: Intrinsic, args: &[Expr]) -> Option<Expr> {
    COMPILE_TARGET.with(|c| c.borrow().as_ref().and_then(|t| value_for(t, which, args)))
}

/// The value of a target query for target `t`.
pub fn value_for(t: &Target, which: Intrinsic, args: &[Expr]) -> Option<Expr> {
    let code = || match args.first()?.node() {
        ExprNode::IntImm(v) => u8::try_from(*v).ok(),
        _ => None,
    };
    Some(match which {
        Intrinsic::TargetArchIs => Expr::bool_const(t.arch == Arch(code()?)),
        Intrinsic::TargetOsIs => Expr::bool_const(t.os == Os(code()?)),
        Intrinsic::TargetHasFeature => Expr::bool_const(t.has_feature(Feature(code()?))),
        Intrinsic::TargetBits => Expr::i32(t.bits as i64),
        Intrinsic::TargetNaturalVectorSize => {
            Expr::i32(t.natural_vector_size(args.first()?.ty()) as i64)
        }
        _ => return None,
    })
}
