//! Lowering smoke tests: hand-built Funcs lower to the expected loop nests.

use ferrohalide_core::ir::{CallKind, Expr, ForType, Type};
use ferrohalide_core::lang::function::Function;
use ferrohalide_core::lower::lower;
use ferrohalide_core::schedule::{LoopLevel, Split, StageSchedule, TailStrategy};

fn define(name: &str, args: &[&str], value: Expr) -> Function {
    let f = Function::new(name);
    {
        let mut c = f.write();
        c.args = args.iter().map(|s| s.to_string()).collect();
        c.output_types = vec![value.ty()];
        c.values = vec![value];
        c.stage = StageSchedule::for_pure_args(&c.args);
    }
    f
}

fn call(f: &Function, args: Vec<Expr>) -> Expr {
    let ty = f.types()[0];
    Expr::call(
        ty,
        f.name(),
        args,
        CallKind::Halide {
            func: f.clone(),
            value_index: 0,
        },
    )
}

fn x() -> Expr {
    Expr::var_i32("x")
}
fn y() -> Expr {
    Expr::var_i32("y")
}

#[test]
fn two_stage_compute_root() {
    let f = define(
        "f",
        &["x", "y"],
        Expr::add(x(), Expr::mul(y(), Expr::i32(2))),
    );
    let g = define(
        "g",
        &["x", "y"],
        Expr::add(
            call(&f, vec![Expr::sub(x(), Expr::i32(1)), y()]),
            call(&f, vec![Expr::add(x(), Expr::i32(1)), y()]),
        ),
    );
    f.write().schedule.compute_level = LoopLevel::Root;
    f.write().schedule.store_level = LoopLevel::Root;
    let l = lower(&[g], "g").unwrap();
    let text = l.pipeline.body.to_string();
    println!("{text}");
    assert!(text.contains("allocate f"));
    assert!(text.contains("produce f"));
    assert!(text.contains("Output buffer g"));
}

#[test]
fn vectorized_split_lowers_to_vector_store() {
    let f = define(
        "f",
        &["x", "y"],
        Expr::cast(Type::float(32), Expr::add(x(), y())),
    );
    {
        let mut c = f.write();
        c.stage.splits.push(Split::Split {
            old: "x".into(),
            outer: "x".into(),
            inner: "xi".into(),
            factor: Expr::i32(8),
            tail: TailStrategy::Auto,
        });
        c.stage.dims[0].var = "xi".into();
        c.stage.dims[0].for_type = ForType::Vectorized;
        c.stage.dims.insert(
            1,
            ferrohalide_core::schedule::Dim {
                var: "x".into(),
                for_type: ForType::Serial,
                is_rvar: false,
            },
        );
        c.stage.dims[2].for_type = ForType::Parallel;
    }
    let l = lower(&[f], "f").unwrap();
    let text = l.pipeline.body.to_string();
    println!("{text}");
    assert!(text.contains("ramp("));
    assert!(text.contains("parallel"));
}
