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
            func: f.ptr(),
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
    // g's output region is its buffer, so its bounds checks are provably
    // true and simplified away.
    assert!(!text.contains("Output buffer g"), "{text}");
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
            ferrohalide_core::schedule::Dim::serial("x", false),
        );
        c.stage.dims[2].for_type = ForType::Parallel;
    }
    let l = lower(&[f], "f").unwrap();
    let text = l.pipeline.body.to_string();
    println!("{text}");
    assert!(text.contains("ramp("));
    assert!(text.contains("parallel"));
}

#[test]
fn environment_orders_producers_first_and_rejects_undefined_funcs() {
    use ferrohalide_core::lower::environment::build_environment;
    let f = define("f", &["x"], x());
    let g = define("g", &["x"], Expr::add(call(&f, vec![x()]), Expr::i32(1)));
    let h = define(
        "h",
        &["x"],
        Expr::mul(call(&g, vec![x()]), call(&f, vec![x()])),
    );
    let env = build_environment(&[h.clone()]).unwrap();
    assert_eq!(env.order, vec!["f", "g", "h"]);

    let undefined = Function::new("u");
    let bad = define(
        "bad",
        &["x"],
        Expr::call(
            Type::i32(),
            "u",
            vec![x()],
            CallKind::Halide {
                func: undefined.ptr(),
                value_index: 0,
            },
        ),
    );
    let Err(err) = build_environment(&[bad]) else {
        panic!("an undefined Func must be an error")
    };
    assert!(
        err.message.contains("Func u is used but has no definition"),
        "{}",
        err.message
    );
}

#[test]
fn storage_flattening_indexes_by_mins_and_strides() {
    use ferrohalide_core::lower::storage_flattening::flat_index;
    let idx = flat_index("f", &[x(), y()]);
    assert_eq!(
        idx.to_string(),
        "(((x - f.min.0) * f.stride.0) + ((y - f.min.1) * f.stride.1))"
    );
    assert_eq!(flat_index("f", &[]).to_string(), "0");
}

#[test]
fn user_bound_overrides_the_inferred_region() {
    let f = define("f", &["x"], Expr::mul(x(), Expr::i32(2)));
    let g = define(
        "g",
        &["x"],
        Expr::add(
            call(&f, vec![x()]),
            call(&f, vec![Expr::add(x(), Expr::i32(1))]),
        ),
    );
    {
        let mut c = f.write();
        c.schedule.compute_level = LoopLevel::Root;
        c.schedule.store_level = LoopLevel::Root;
        c.schedule.bounds.push(ferrohalide_core::schedule::Bound {
            var: "x".into(),
            min: Some(Expr::i32(-4)),
            extent: Some(Expr::i32(64)),
            modulus: None,
            remainder: None,
        });
    }
    let text = lower(&[g], "g").unwrap().pipeline.body.to_string();
    assert!(text.contains("allocate f[int32 * 64]"), "{text}");
    assert!(text.contains("for (f.s0.x, -4, 64)"), "{text}");
}

#[test]
fn input_and_output_buffers_are_checked() {
    let b =
        ferrohalide_core::buffer::Buffer::new(Type::uint(8), &[10], Some("img".into())).unwrap();
    let read = Expr::call(
        Type::uint(8),
        "img",
        vec![Expr::add(x(), Expr::i32(1))],
        CallKind::Image {
            buffer: Some(b),
            param: None,
        },
    );
    let f = define("f", &["x"], read);
    let l = lower(&[f], "f").unwrap();
    let text = l.pipeline.body.to_string();
    assert!(text.contains("Input buffer img is accessed at "), "{text}");
    assert_eq!(l.input_buffers.len(), 1);
}
