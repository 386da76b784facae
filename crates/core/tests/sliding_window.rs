//! Sliding window and storage folding on small pipelines: the IR after each
//! pass shows the cut regions (`select(likely_if_innermost(v > v_min), ...)` when the
//! first iteration computes the whole window, or the loop rewound to start
//! early), the folded Realize bounds and the `% factor` indices.

use ferrohalide_core::analysis::simplify_stmt;
use ferrohalide_core::buffer::Buffer;
use ferrohalide_core::ir::{Expr, Stmt, Type};
use ferrohalide_core::lang::func::{image_call, Func};
use ferrohalide_core::lower::environment::build_environment;
use ferrohalide_core::lower::{
    bounds_inference::bounds_inference, lower, schedule_functions::schedule_functions,
    sliding_window::sliding_window, storage_folding::storage_folding,
};
use ferrohalide_core::schedule::TailStrategy;

fn v(n: &str) -> Expr {
    Expr::var_i32(n)
}
fn i(n: i64) -> Expr {
    Expr::i32(n)
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::add(a, b)
}

fn define(name: &str, args: &[&str], value: Expr) -> Func {
    let f = Func::new(Some(name));
    f.define(args.iter().map(|a| v(a)).collect(), vec![value])
        .unwrap();
    f
}

fn call(f: &Func, args: Vec<Expr>) -> Expr {
    f.call(args).unwrap().to_expr().unwrap()
}

/// The IR after sliding window, and after storage folding.
fn passes(out: &Func) -> (String, String) {
    let outputs = vec![out.function.clone()];
    let env = build_environment(&outputs).unwrap();
    let s = schedule_functions(&env, &outputs).unwrap();
    let s = bounds_inference(&s, &env, &outputs).unwrap();
    let (s, slides) = sliding_window(&s, &env).unwrap();
    let slid = s.to_string();
    let s: Stmt = simplify_stmt(&s);
    let folded = storage_folding(&s, &env, &slides).unwrap();
    (slid, folded.to_string())
}

/// The line defining `name` in `text`.
fn let_line<'a>(text: &'a str, name: &str) -> &'a str {
    let key = format!("let {name} = ");
    text.lines()
        .find(|l| l.trim_start().starts_with(&key))
        .unwrap_or_else(|| panic!("no let {name} in\n{text}"))
}

/// The classic blur: out split by 32 rows (parallel), vectorized by 8;
/// blur_x stored per strip and computed per vector of out.
fn blur() -> (Func, Func) {
    blur_computed_at("x")
}

/// blur_x stored per strip of out and computed at out's loop `level`.
fn blur_computed_at(level: &str) -> (Func, Func) {
    let inp = Buffer::new(Type::uint(16), &[70, 70], Some("inp".into())).unwrap();
    let at =
        |dx: i64, dy: i64| image_call(&inp, vec![add(v("x"), i(dx)), add(v("y"), i(dy))]).unwrap();
    let three = || Expr::uint_imm(Type::uint(16), 3);
    let bx = define(
        "blur_x",
        &["x", "y"],
        Expr::div(add(add(at(0, 0), at(1, 0)), at(2, 0)), three()),
    );
    let c = |dy: i64| call(&bx, vec![v("x"), add(v("y"), i(dy))]);
    let out = define(
        "out",
        &["x", "y"],
        Expr::div(add(add(c(0), c(1)), c(2)), three()),
    );
    out.split("y", "y", "yi", i(32), TailStrategy::Auto)
        .unwrap();
    out.parallel("y").unwrap();
    out.vectorize_by("x", i(8), TailStrategy::Auto).unwrap();
    // Result-returning or not, depending on the front end version.
    let _ = bx.store_at(&out, "y");
    let _ = bx.compute_at(&out, level);
    bx.vectorize_by("x", i(8), TailStrategy::Auto).unwrap();
    (bx, out)
}

/// Is the min of `func`'s region along `dim` cut on a loop rewound to warm
/// up the window (no first-iteration select, the loop's original min kept
/// as `loop.loop_min.orig`)?
fn rewound(slid: &str, func: &str, dim: &str, lp: &str) -> bool {
    let min = let_line(slid, &format!("{func}.s0.{dim}.min"));
    !min.contains("select") && min.contains(&format!("{lp}.loop_min.orig"))
}

#[test]
fn blur_slides_along_yi_and_x() {
    let (bx, out) = blur();
    let (b, o) = (bx.name(), out.name());
    let (slid, _) = passes(&out);
    // Along yi the window is three rows moving one per iteration: the loop
    // starts two iterations early, warming blur_x up one row at a time,
    // and the consumer skips those iterations.
    assert!(rewound(&slid, &b, "y", &format!("{o}.s0.y.yi")), "{slid}");
    assert!(
        slid.contains(&format!(
            "for ({o}.s0.y.yi, ({o}.s0.y.yi.loop_min.orig - 2), "
        )),
        "{slid}"
    );
    assert!(
        slid.contains(&format!(
            "if (likely(({o}.s0.y.yi >= {o}.s0.y.yi.loop_min.orig)))"
        )),
        "{slid}"
    );
    // Along x the window's step is not constant (the last vector shifts
    // inwards): the first iteration computes it whole.
    let x_min = let_line(&slid, &format!("{b}.s0.x.min"));
    assert!(
        x_min.contains(&format!(
            "select(likely_if_innermost(({o}.s0.x.x > {o}.s0.x.x.loop_min)), max("
        )),
        "{x_min}"
    );
    // The maxes are untouched: the region grows at its max only.
    assert!(!let_line(&slid, &format!("{b}.s0.y.max")).contains("select"));
    assert!(!let_line(&slid, &format!("{b}.s0.x.max")).contains("select"));
}

#[test]
fn a_rewound_row_loop_keeps_its_warm_up_in_the_loop() {
    // blur_x computed per row of out: the consume wraps out's whole row
    // loop, so skipping it on the two warm-up rows is one branch per row.
    // The guard is likely only if innermost, as in Halide: loop
    // partitioning leaves the row loop whole instead of peeling the
    // warm-up rows into a second copy of blur_x's loops.
    let (bx, out) = blur_computed_at("yi");
    let (b, o) = (bx.name(), out.name());
    let (slid, _) = passes(&out);
    assert!(rewound(&slid, &b, "y", &format!("{o}.s0.y.yi")), "{slid}");
    assert!(
        slid.contains(&format!(
            "if (likely_if_innermost(({o}.s0.y.yi >= {o}.s0.y.yi.loop_min.orig)))"
        )),
        "{slid}"
    );
    let lowered = lower(&[out.function.clone()], &o).unwrap();
    let text = lowered.pipeline.body.to_string();
    let loops = text
        .lines()
        .filter(|l| l.trim_start().starts_with(&format!("for ({b}.s0.x")))
        .count();
    // blur_x's vector loop and its tail, once.
    assert!(loops <= 2, "blur_x's loops were copied ({loops}):\n{text}");
}

#[test]
fn blur_folds_y_to_four_rows() {
    let (bx, out) = blur();
    let (b, o) = (bx.name(), out.name());
    let (_, folded) = passes(&out);
    let realize = folded
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("realize {b}(")))
        .unwrap();
    assert!(realize.ends_with(", [0, 4]) {"), "{realize}");
    assert!(
        folded.contains(&format!("{b}({b}.s0.x, ({b}.s0.y.min % 4))")),
        "{folded}"
    );
    assert!(
        folded.contains(&format!("{b}({o}.s0.x, (({o}.s0.y + 2) % 4))")),
        "{folded}"
    );
    // x slid over the x loop, which runs inside yi (slid too): not folded.
    assert!(!realize.contains("[0, 8]"), "{realize}");

    let lowered = lower(&[out.function.clone()], &o).unwrap();
    let text = lowered.pipeline.body.to_string();
    let alloc = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("allocate {b}[")))
        .unwrap();
    assert!(alloc.contains(" * 4]"), "{alloc}");
    assert!(text.contains("% 4)"), "{text}");
}

/// Lesson 8: `producer` stored at the root, computed per row of `consumer`.
fn lesson_8() -> (Func, Func) {
    let p = define(
        "producer",
        &["x", "y"],
        add(Expr::mul(v("x"), i(7)), v("y")),
    );
    let q = |dx: i64, dy: i64| call(&p, vec![add(v("x"), i(dx)), add(v("y"), i(dy))]);
    let c = define(
        "consumer",
        &["x", "y"],
        add(add(q(0, 0), q(1, 0)), add(q(0, 1), q(1, 1))),
    );
    p.store_root();
    let _ = p.compute_at(&c, "y");
    (p, c)
}

#[test]
fn lesson_8_slides_and_folds_to_two_rows() {
    let (p, c) = lesson_8();
    let (pn, cn) = (p.name(), c.name());
    let (slid, folded) = passes(&c);
    assert!(rewound(&slid, &pn, "y", &format!("{cn}.s0.y")), "{slid}");
    assert!(folded.contains("[0, 2]) {"), "{folded}");
    assert!(folded.contains("% 2)"), "{folded}");
}

/// `f` stored at the root and computed per row of `g`, which reads rows
/// `y + k` for each k in `rows` (or `k - y` if `down`).
fn per_row(rows: &[i64], down: bool) -> (Func, Func) {
    let f = define("f", &["x", "y"], add(v("x"), v("y")));
    let row = |k: i64| {
        let y = if down {
            Expr::sub(i(k), v("y"))
        } else {
            add(v("y"), i(k))
        };
        call(&f, vec![v("x"), y])
    };
    let mut value = row(rows[0]);
    for k in &rows[1..] {
        value = add(value, row(*k));
    }
    let g = define("g", &["x", "y"], value);
    f.store_root();
    let _ = f.compute_at(&g, "y");
    (f, g)
}

#[test]
fn window_moving_down_cuts_the_max() {
    let (f, g) = per_row(&[40, 41, 42], true);
    let (fnm, gn) = (f.name(), g.name());
    let (slid, folded) = passes(&g);
    assert!(!let_line(&slid, &format!("{fnm}.s0.y.min")).contains("select"));
    assert!(
        let_line(&slid, &format!("{fnm}.s0.y.max")).contains(&format!(
            "select(likely_if_innermost(({gn}.s0.y > {gn}.s0.y.loop_min)), min("
        ))
    );
    assert!(folded.contains("[0, 4]) {"), "{folded}");
}

#[test]
fn no_slide_when_the_window_is_not_monotonic() {
    let f = define("f", &["x", "y"], add(v("x"), v("y")));
    let g = define(
        "g",
        &["x", "y"],
        call(
            &f,
            vec![v("x"), Expr::modulo(Expr::mul(v("y"), i(7)), i(5))],
        ),
    );
    f.store_root();
    let _ = f.compute_at(&g, "y");
    let (slid, folded) = passes(&g);
    assert!(!slid.contains("likely"), "{slid}");
    let fnm = f.name();
    assert!(
        !folded.contains(&format!("{fnm}({fnm}.s0.x, ({fnm}.s0.y %")),
        "{folded}"
    );
}

#[test]
fn round_up_split_of_the_window_dimension_is_not_cut() {
    let (f, g) = per_row(&[0, 1], false);
    f.split("y", "yo", "yi", i(4), TailStrategy::RoundUp)
        .unwrap();
    let (slid, _) = passes(&g);
    assert!(
        !let_line(&slid, &format!("{}.s0.y.min", f.name())).contains("select"),
        "{slid}"
    );
    // A RoundUp split of the other dimension does not matter.
    let (f, g) = per_row(&[0, 1], false);
    f.split("x", "xo", "xi", i(4), TailStrategy::RoundUp)
        .unwrap();
    let (slid, _) = passes(&g);
    assert!(
        rewound(&slid, &f.name(), "y", &format!("{}.s0.y", g.name())),
        "{slid}"
    );
}

#[test]
fn rewinding_guards_what_is_computed_inside_the_consumer() {
    // g reads two windows, f's and h's, both computed per row of g. h's
    // loop nest lands inside f's consume, so f is rewound and h, skipped
    // on the warm-up iterations with the rest of f's consumers, computes
    // its whole window on the first real iteration.
    let f = define("f", &["x", "y"], add(v("x"), v("y")));
    let h = define("h", &["x", "y"], Expr::mul(v("x"), v("y")));
    let r = |func: &Func, k: i64| call(func, vec![v("x"), add(v("y"), i(k))]);
    let g = define(
        "g",
        &["x", "y"],
        add(add(r(&f, 0), r(&f, 1)), add(r(&h, 0), r(&h, 1))),
    );
    for p in [&f, &h] {
        p.store_root();
        let _ = p.compute_at(&g, "y");
    }
    let (slid, folded) = passes(&g);
    let gy = format!("{}.s0.y", g.name());
    let (first, second) = if slid.find(&format!("produce {}", f.name()))
        < slid.find(&format!("produce {}", h.name()))
    {
        (&f, &h)
    } else {
        (&h, &f)
    };
    assert!(rewound(&slid, &first.name(), "y", &gy), "{slid}");
    let min = let_line(&slid, &format!("{}.s0.y.min", second.name()));
    assert!(min.contains("select(likely_if_innermost("), "{slid}");
    for p in [&f, &h] {
        let realize = format!("realize {}(int32, [", p.name());
        let line = folded.lines().find(|l| l.contains(&realize)).unwrap();
        assert!(line.ends_with(", [0, 2]) {"), "{folded}");
    }
}

#[test]
fn rewinding_needs_no_producer_computed_beside_the_func() {
    // f reads h's window and both are computed per row of g: h runs
    // outside f's produce and consume, so f's loop can't start early; h's
    // window, cut along f's, has no constant width: both peel.
    let h = define("h", &["x", "y"], Expr::mul(v("x"), v("y")));
    let hr = |k: i64| call(&h, vec![v("x"), add(v("y"), i(k))]);
    let f = define("f", &["x", "y"], add(hr(0), hr(1)));
    let fr = |k: i64| call(&f, vec![v("x"), add(v("y"), i(k))]);
    let g = define("g", &["x", "y"], add(fr(0), fr(1)));
    for p in [&f, &h] {
        p.store_root();
        let _ = p.compute_at(&g, "y");
    }
    let (slid, _) = passes(&g);
    assert!(!slid.contains("loop_min.orig"), "{slid}");
    for p in [&f, &h] {
        let min = let_line(&slid, &format!("{}.s0.y.min", p.name()));
        assert!(min.contains("select(likely_if_innermost("), "{slid}");
    }
}

#[test]
fn rewinding_skips_funcs_with_updates() {
    let f = define("f", &["x", "y"], add(v("x"), v("y")));
    f.define(
        vec![v("x"), v("y")],
        vec![Expr::mul(call(&f, vec![v("x"), v("y")]), i(2))],
    )
    .unwrap();
    let r = |k: i64| call(&f, vec![v("x"), add(v("y"), i(k))]);
    let g = define("g", &["x", "y"], add(add(r(0), r(1)), r(2)));
    f.store_root();
    let _ = f.compute_at(&g, "y");
    let (slid, _) = passes(&g);
    assert!(!slid.contains("loop_min.orig"), "{slid}");
    assert!(
        let_line(&slid, &format!("{}.s1.y.min", f.name())).contains("select(likely_if_innermost("),
        "{slid}"
    );
}

#[test]
fn requested_fold_is_used_and_checked() {
    let build = |factor: i64| {
        let (f, g) = per_row(&[0, 1, 2], false);
        f.fold_storage("y", i(factor), true).unwrap();
        passes(&g).1
    };
    // Three rows fit in three: no check needed.
    let fits = build(3);
    assert!(fits.contains("[0, 3]) {"), "{fits}");
    assert!(fits.contains("% 3)"), "{fits}");
    assert!(!fits.contains("too small"), "{fits}");
    // Two can't hold three rows: the assertion stays (and fails at run time).
    let small = build(2);
    assert!(small.contains("[0, 2]) {"), "{small}");
    assert!(
        small.contains("The fold factor (") && small.contains("is too small"),
        "{small}"
    );
}

#[test]
fn vectorized_dimension_is_folded_only_on_request() {
    let build = |request: bool| {
        let f = define("f", &["x", "y"], add(v("x"), v("y")));
        let q = |dy: i64| call(&f, vec![v("x"), add(v("y"), i(dy))]);
        let g = define("g", &["x", "y"], add(q(0), q(1)));
        g.split("y", "yo", "yi", i(4), TailStrategy::Auto).unwrap();
        g.vectorize("yi").unwrap();
        f.store_root();
        let _ = f.compute_at(&g, "yo");
        if request {
            f.fold_storage("y", i(8), true).unwrap();
        }
        passes(&g).1
    };
    let auto = build(false);
    assert!(!auto.contains("% 8)"), "{auto}");
    let requested = build(true);
    assert!(requested.contains("[0, 8]) {"), "{requested}");
}

/// The bodies of the loops over `name` in `text` (by indentation).
fn loop_bodies(text: &str, name: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let head = format!("for ({name}, ");
    let mut out = vec![];
    for (i, l) in lines.iter().enumerate() {
        if !l.trim_start().starts_with(&head) {
            continue;
        }
        let indent = l.len() - l.trim_start().len();
        let body: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|b| b.len() - b.trim_start().len() > indent)
            .copied()
            .collect();
        out.push(body.join("\n"));
    }
    out
}

#[test]
fn blur_steady_state_computes_one_vector_without_loops() {
    let (bx, out) = blur();
    let (b, o) = (bx.name(), out.name());
    let text = lower(&[out.function.clone()], &o)
        .unwrap()
        .pipeline
        .body
        .to_string();
    let steady = loop_bodies(&text, &format!("{o}.s0.x.x"))
        .into_iter()
        .filter(|body| body.contains(&format!("produce {b}")) && !body.contains("for ("))
        .count();
    assert!(steady > 0, "{text}");
}

/// `f(x, y) = x + y` with one update `f(x, yarg) = f(x, yarg) + 1`,
/// stored at the root and computed per row of `g`, which reads rows y,
/// y + 1 and y + 2.
fn with_update(yarg: Expr) -> (Func, Func) {
    let f = define("f", &["x", "y"], add(v("x"), v("y")));
    f.define(
        vec![v("x"), yarg.clone()],
        vec![add(call(&f, vec![v("x"), yarg]), i(1))],
    )
    .unwrap();
    let row = |k: i64| call(&f, vec![v("x"), add(v("y"), i(k))]);
    let g = define("g", &["x", "y"], add(add(row(0), row(1)), row(2)));
    f.store_root();
    let _ = f.compute_at(&g, "y");
    (f, g)
}

#[test]
fn updates_over_the_pure_row_slide_with_their_func() {
    let (f, g) = with_update(v("y"));
    let (fnm, gn) = (f.name(), g.name());
    let (slid, _) = passes(&g);
    // The last stage's region is cut; the pure stage's follows it.
    assert!(let_line(&slid, &format!("{fnm}.s1.y.min"))
        .contains(&format!("select(likely_if_innermost(({gn}.s0.y > {gn}.s0.y.loop_min))")));
    assert!(let_line(&slid, &format!("{fnm}.s0.y.min")).ends_with(&format!("= {fnm}.s1.y.min")));
}

#[test]
fn updates_over_an_rvar_row_do_not_slide() {
    let r =
        ferrohalide_core::lang::rdom::ReductionDomain::new(Some("r"), vec![(i(0), i(4))]).unwrap();
    let (_, g) = with_update(r.rvar(0).unwrap().expr());
    let (slid, _) = passes(&g);
    assert!(!slid.contains("select(likely"), "{slid}");
}

#[test]
fn guard_with_if_opens_the_inner_loop_and_the_window_still_slides() {
    // g's rows split by 4 with GuardWithIf, f computed per inner row: the
    // guard depends only on the row loops, so it opens the inner row loop
    // and f is computed inside it (only for rows g has); it holds on a
    // prefix of the inner loop's iterations, so f still slides.
    let (f, g) = per_row(&[0, 1, 2], false);
    g.split("y", "yo", "yi", i(4), TailStrategy::GuardWithIf)
        .unwrap();
    let _ = f.store_at(&g, "yo");
    let _ = f.compute_at(&g, "yi");
    let (slid, _) = passes(&g);
    let gn = g.name();
    let guard = slid
        .find(&format!("if (likely(({gn}.s0.y <= {gn}.s0.y.loop_max)))"))
        .unwrap_or_else(|| panic!("{slid}"));
    let produce = slid.find(&format!("produce {}", f.name())).unwrap();
    let inner_loop = slid.find(&format!("for ({gn}.s0.y.yi, ")).unwrap();
    assert!(inner_loop < guard && guard < produce, "{slid}");
    assert!(
        rewound(&slid, &f.name(), "y", &format!("{gn}.s0.y.yi")),
        "{slid}"
    );
}
