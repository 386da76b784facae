//! Lowering of Tuple-valued Funcs: output arguments per element, inlining
//! by element, compute_root storage per element.

use ferrohalide_core::ir::{Expr, Type};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lower::{lower, ArgumentKind};

fn x() -> Expr {
    Expr::var_i32("x")
}

/// f(x) = (x * 2, float32(x)), defined through the front end.
fn pair(name: &str) -> Func {
    let f = Func::new(Some(name));
    f.define(
        vec![x()],
        vec![
            Expr::mul(x(), Expr::i32(2)),
            Expr::cast(Type::float(32), x()),
        ],
    )
    .unwrap();
    f
}

#[test]
fn a_tuple_output_has_one_buffer_argument_per_element() {
    let f = pair("tout");
    let l = lower(&[f.function.clone()], "tout").unwrap();
    let outs: Vec<(String, Type)> = l
        .pipeline
        .args
        .iter()
        .filter(|a| a.kind == ArgumentKind::OutputBuffer)
        .map(|a| (a.name.clone(), a.ty))
        .collect();
    assert_eq!(
        outs,
        vec![
            ("tout.0".to_string(), Type::i32()),
            ("tout.1".to_string(), Type::float(32))
        ]
    );
    let text = l.pipeline.body.to_string();
    // The loops follow the first buffer; the second must have its shape.
    assert!(
        text.contains("Constraint violated: tout.1.min.0 ("),
        "{text}"
    );
    assert!(
        text.contains("Constraint violated: tout.1.extent.0 ("),
        "{text}"
    );
    assert!(text.contains("tout.0["), "{text}");
    assert!(text.contains("tout.1["), "{text}");
}

#[test]
fn inlining_a_tuple_substitutes_each_element() {
    let f = pair("tin");
    let g = Func::new(Some("tg"));
    let r = f.call(vec![x()]).unwrap();
    g.define(
        vec![x()],
        vec![Expr::add(
            r.element(0).unwrap(),
            Expr::cast(Type::i32(), r.element(1).unwrap()),
        )],
    )
    .unwrap();
    let l = lower(&[g.function.clone()], "tg").unwrap();
    let text = l.pipeline.body.to_string();
    assert!(!text.contains("tin"), "f should be inlined:\n{text}");
}

#[test]
fn a_computed_tuple_is_stored_per_element() {
    let f = pair("troot");
    f.compute_root();
    let g = Func::new(Some("tg2"));
    let r = f.call(vec![Expr::add(x(), Expr::i32(1))]).unwrap();
    g.define(
        vec![x()],
        vec![Expr::add(
            r.element(0).unwrap(),
            Expr::cast(Type::i32(), r.element(1).unwrap()),
        )],
    )
    .unwrap();
    let l = lower(&[g.function.clone()], "tg2").unwrap();
    let text = l.pipeline.body.to_string();
    assert!(text.contains("allocate troot.0[int32"), "{text}");
    assert!(text.contains("allocate troot.1[float32"), "{text}");
    assert!(!text.contains("allocate troot["), "{text}");
}
