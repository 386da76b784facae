//! `print` writes Halide-formatted lines to stdout (checked by redirecting
//! file descriptor 1 to a file around the call).

mod common;

use std::io::Read;
use std::os::fd::AsRawFd;

use common::*;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, ForType, Intrinsic, Type};

extern "C" {
    fn dup(fd: i32) -> i32;
    fn dup2(from: i32, to: i32) -> i32;
    fn close(fd: i32) -> i32;
}

fn capture_stdout(f: impl FnOnce()) -> String {
    let path = std::env::temp_dir().join(format!("ferrohalide_print_{}.txt", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    unsafe {
        let saved = dup(1);
        dup2(file.as_raw_fd(), 1);
        f();
        dup2(saved, 1);
        close(saved);
    }
    let mut s = String::new();
    std::fs::File::open(&path)
        .unwrap()
        .read_to_string(&mut s)
        .unwrap();
    let _ = std::fs::remove_file(&path);
    s
}

#[test]
fn print_formats_like_halide() {
    let f32t = Type::float(32);
    let printed = Expr::intrinsic(
        Type::i32(),
        Intrinsic::Print,
        vec![
            v("x"),
            Expr::string("hello"),
            Expr::add(
                Expr::mul(Expr::cast(f32t, v("x")), Expr::f32(1.5)),
                Expr::f32(0.1),
            ),
            Expr::div(Expr::cast(Type::float(64), v("x")), Expr::f64(3.0)),
            Expr::cast(Type::uint(8), v("x")),
            Expr::mul(
                Expr::cast(Type::int(64), v("x")),
                Expr::int_imm(Type::int(64), -5),
            ),
        ],
    );
    let body = loop_1d("out", "x", Type::i32(), ForType::Serial, printed);
    let p = pipeline("printer", vec![out_arg("out", Type::i32(), 1)], body);
    let m = jit(&p);
    let out = Buffer::new(Type::i32(), &[3], None).unwrap();
    let text = capture_stdout(|| run(&m, &[A::B(&out)]).unwrap());
    assert_eq!(
        text,
        "0 hello 0.100000 0.000000e+00 0 0\n\
         1 hello 1.600000 3.333333e-01 1 -5\n\
         2 hello 3.100000 6.666667e-01 2 -10\n"
    );
    // print returns its first argument
    for x in 0..3 {
        assert_eq!(out.get_i128(&[x]).unwrap(), x as i128);
    }
}
