//! Params and ImageParams are arguments of the compiled code: changing a
//! Param's value or an ImageParam's buffer (same type and rank) reuses the
//! compiled pipeline; the run-time checks report Halide's messages and a
//! failed run leaves the pipeline usable.

use ferrohalide_driver::pipeline::{compilations, realize};
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, Type};
use ferrohalide_core::lang::func::Func;
use ferrohalide_core::lang::image_param::ImageParam;
use ferrohalide_core::lang::parameter::{Parameter, ScalarInput};

fn input(values: &[i32]) -> Buffer {
    let b = Buffer::new(Type::i32(), &[values.len() as i32], None).unwrap();
    for (i, v) in values.iter().enumerate() {
        b.set_i128(&[i as i32], *v as i128).unwrap();
    }
    b
}

fn values(b: &Buffer) -> Vec<i128> {
    (0..b.dim(0).unwrap().extent)
        .map(|i| b.get_i128(&[i]).unwrap())
        .collect()
}

#[test]
fn values_are_arguments_not_compiled_in() {
    let im = ImageParam::new(Type::i32(), 1, Some("args_im"));
    let p = Parameter::new(Type::i32(), false, 0, "args_p");
    p.set_min_value(Some(Expr::i32(0))).unwrap();
    let f = Func::new(Some("args_f"));
    let x = Expr::var_i32("x");
    f.define(
        vec![x.clone()],
        vec![Expr::add(im.call(vec![x]).unwrap(), p.expr())],
    )
    .unwrap();
    let out = || realize(&[f.function.clone()], &[3]).map(|b| values(&b[0]));

    let err = out().unwrap_err();
    assert!(err
        .message
        .contains("Parameter args_p does not have a valid scalar value"));
    p.set_scalar(ScalarInput::Int(10)).unwrap();
    assert!(out()
        .unwrap_err()
        .message
        .contains("Buffer argument args_im is nullptr"));

    im.set(input(&[1, 2, 3])).unwrap();
    assert_eq!(out().unwrap(), vec![11, 12, 13]);
    let before = compilations();
    p.set_scalar(ScalarInput::Int(20)).unwrap();
    im.set(input(&[5, 6, 7, 8])).unwrap();
    assert_eq!(out().unwrap(), vec![25, 26, 27]);
    assert_eq!(compilations(), before, "a new value must not recompile");

    // Run-time checks, then the pipeline still works.
    p.set_scalar(ScalarInput::Int(-1)).unwrap();
    let err = out().unwrap_err();
    assert!(
        err.message
            .contains("Parameter args_p is -1 but must be at least 0"),
        "{}",
        err.message
    );
    p.set_scalar(ScalarInput::Int(0)).unwrap();
    im.set(input(&[1, 2])).unwrap();
    let err = out().unwrap_err();
    assert!(
        err.message.contains(
            "Input buffer args_im is accessed at 2, which is beyond the max (1) in dimension 0"
        ),
        "{}",
        err.message
    );
    im.set(input(&[4, 5, 6])).unwrap();
    assert_eq!(out().unwrap(), vec![4, 5, 6]);
    assert_eq!(compilations(), before);
}
