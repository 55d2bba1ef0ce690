//! Control flow the compiled sweeps run: `while` (a counter, a condition on primal values,
//! a data-dependent trip count), `loop` with `break`, `break` out of `while` and `for`
//! (first or in the middle of the body, in nested loops, by label out of a nested loop),
//! `return` from inside loops and from helpers returning arrays, and
//! `if let` and `match` arms that bind names from data. The forward sweep keeps a flag
//! per `while` iteration and a trip count per `for` that may stop early; the reverse sweep
//! runs the iterations that ran, backwards. Each is checked against `name_graph` +
//! `backward` bit for bit, against the plain function's value, and against central
//! differences, with no trace on a warm call.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::differentiable;

use crate::aliasing;
use crate::cases::{graph_of, outcome, traces, Outcome};
use crate::support::{near, near_each, XorShift};

/// Powers by a counter.
#[differentiable]
fn counted(x: f64, n: usize) -> f64 {
    let mut y = x;
    let mut k = 0;
    while k < n {
        y = y * x + 0.25;
        k += 1;
    }
    y
}

/// Newton's iteration for a square root: the trip count depends on the value.
#[differentiable]
fn root(x: f64) -> f64 {
    let mut y = x.abs().detach() + 1.0;
    let mut steps = 0;
    while (y * y - x.abs()).abs() > 1e-12 * x.abs() && steps < 60 {
        y = 0.5 * (y + x.abs() / y);
        steps += 1;
    }
    y
}

/// A `while` over data with a counter used as an index, and a branch inside.
#[differentiable]
fn scan(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut i = 0;
    while i < xs.len() && total < 6.0 {
        if xs[i] > 0.0 {
            total += w[0] * xs[i] + w[1];
        } else {
            total *= w[2];
        }
        i += 1;
    }
    total
}

/// `loop` left by `break` in the middle of the body.
#[differentiable]
fn grow(x: f64, xs: &[f64]) -> f64 {
    let mut t = 0.0;
    let mut i = 0;
    loop {
        if i >= xs.len() {
            break;
        }
        t += x * xs[i];
        if t > 2.0 {
            t = t.sqrt();
            break;
        }
        i += 1;
    }
    t
}

/// `break` out of a `while`.
#[differentiable]
fn settle(x: f64, n: usize) -> f64 {
    let mut y = x;
    let mut k = 0;
    while k < n {
        y = y.sin() + x;
        if y < 0.5 {
            break;
        }
        k += 1;
    }
    y
}

/// `break` out of `for` loops: first in the body, in the middle, in a nested loop.
#[differentiable]
fn early(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut t = 0.0;
    for (i, x) in xs.iter().enumerate() {
        if t > 3.0 {
            break;
        }
        t += w[i % 3] * x;
    }
    let mut p = 1.0;
    for v in w.iter() {
        p *= v;
        if p.abs() > 2.0 {
            p = p.abs().sqrt();
            break;
        }
        p += 0.5;
    }
    for &x in xs {
        for (j, v) in w.iter().enumerate() {
            if j as f64 > x {
                break;
            }
            t += v * x;
        }
    }
    t + p
}

/// `return` from inside a `for`, a `while` and a nested loop.
#[differentiable]
fn leave(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut t: f64 = 0.0;
    for i in 0..xs.len() {
        if xs[i] > 1.8 {
            return t * w[0] + xs[i];
        }
        t += w[i % 3] * xs[i];
    }
    let mut k = 0;
    while k < 4 {
        t = t * w[1] + 0.5;
        if t > 3.0 {
            return t.ln();
        }
        k += 1;
    }
    for &x in xs {
        for v in w.iter() {
            if t.abs() > 6.0 {
                return t.abs().sqrt();
            }
            t += v * x;
        }
    }
    t * 2.0
}

/// `if let` on data, as a statement in a loop and as a value, and a `match` whose arms
/// bind names.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Flat,
    Scaled(f64),
    Shifted { by: f64, times: usize },
}

#[differentiable]
fn bound(x: f64, y: f64, #[constant] offset: Option<f64>, #[constant] shapes: &[Shape]) -> f64 {
    let mut t = x;
    for shape in shapes {
        if let Shape::Scaled(s) = shape {
            t = t * s + y;
        } else {
            t += 0.5 * y;
        }
        let step = match shape {
            Shape::Shifted { by, times } => (t + by) * (*times as f64),
            Shape::Scaled(s) => t * y - s,
            Shape::Flat => t.sin(),
        };
        t = 0.5 * t + 0.25 * step;
    }
    if let Some(d) = offset {
        t * d + x
    } else {
        t * y
    }
}

/// `break 'rows` out of a nested loop, the rest of the outer body skipped; a `loop` left
/// from a `for` inside it; and a range over a parameter array's length.
#[differentiable]
fn grid(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut t = 0.0;
    'rows: for &x in xs {
        for v in w.iter() {
            if t > 4.0 {
                break 'rows;
            }
            t += v * x;
        }
        t *= 0.9;
    }
    let mut rounds = 0;
    'outer: loop {
        for (i, &v) in w.iter().enumerate() {
            if i == 2 || rounds > 3 {
                break 'outer;
            }
            t += v * 0.1;
        }
        rounds += 1;
    }
    for i in 0..w.len() {
        t += w[i] * (i as f64);
    }
    t
}

/// Blocks as values and as statements, at the top level and in a loop.
#[differentiable]
fn blocks(x: f64, y: f64) -> f64 {
    let z = {
        let x = y + 1.0;
        x / 2.0
    };
    let mut w = 2.0 * {
        let t = x * z;
        t.sin()
    } + z;
    {
        let mut t = z;
        t += 1.0;
        w *= t;
    }
    let mut s = 0.0;
    for i in 0..3 {
        {
            let q = x * i as f64;
            s += q * q;
        }
    }
    w * x + s
}

/// A `mut` parameter assigned in a loop and a block, and a `return` before an unreachable
/// tail.
#[differentiable]
#[allow(unreachable_code)]
fn staged(x: f64, mut y: f64, n: usize) -> f64 {
    for k in 0..n {
        y = y * x + k as f64;
        if y > 3.0 {
            y = y.sqrt();
        }
    }
    {
        let t = y + x;
        y *= t;
    }
    return y * x;
    x
}

/// `staged` as a helper, through its compiled halves: its `mut` parameter's reads before
/// the first assignment add into the caller's adjoints, which already hold the later
/// reads' (and, lent twice, the other argument's).
#[differentiable]
fn calls_staged(x: f64, y: f64, n: usize) -> f64 {
    staged(x * 0.5, y, n) + staged(y, x, n) * y + staged(x, x, n + 1)
}

/// A helper whose data argument is a loop's counter and whose differentiated one is
/// given data read from a primal.
#[differentiable]
fn step(a: f64, k: usize, b: f64) -> f64 {
    (a * b).sin() + a * (k as f64 * 0.25)
}

/// Data that changes inside a loop, lent to a helper: a `while` counter (`k`, `n - k`)
/// and a value read from a primal (`acc.detach().round()`), which the reverse sweep needs
/// as the call saw them: kept on the value stack.
#[differentiable]
fn kept_args(x: f64, w: [f64; 3], n: usize) -> f64 {
    let mut acc = x;
    let mut k = 0;
    while k < n {
        acc += step(acc, k, w[1]);
        acc += step(w[0], n - k, acc.detach().round());
        k += 1;
    }
    acc
}

/// The same with a differentiated parameter (called as a helper by [`calls_kept`]).
#[differentiable]
fn settled(x: f64, n: usize) -> f64 {
    let mut t = x;
    let mut k = 0;
    while k < n {
        t = step(t, k, (t.detach() * 2.0).round() * 0.5);
        k += 1;
    }
    t
}

/// An Euler integrator whose time, data, is lent for a differentiated parameter.
#[differentiable]
fn drift(y0: f64, n: usize) -> f64 {
    let mut y = y0;
    let mut t = 0.0;
    let dt = 0.25;
    while t < n as f64 * dt {
        y += dt * step(y, 1, t);
        t += dt;
    }
    y
}

/// Data read from a slice at a `while` counter, lent for a differentiated parameter.
#[differentiable]
fn sampled(y0: f64, ts: &[f64]) -> f64 {
    let mut y = y0;
    let mut k = 0;
    while k < ts.len() {
        y += 0.5 * step(y, k, ts[k]);
        k += 1;
    }
    y
}

/// [`kept_args`], [`settled`], [`drift`] and [`sampled`] as helpers: their halves keep
/// the data they lend on, through their own loops.
#[differentiable]
fn calls_kept(x: f64, w: [f64; 3], n: usize) -> f64 {
    let mut total = kept_args(x * 0.5, w, n) + settled(w[2], n + 1) * x + drift(w[1], n);
    for k in 0..2 {
        total += kept_args(total, [x * 2.0, w[0] * w[k], 0.5], n) + sampled(x, &[0.5, -0.25]);
    }
    total
}

/// [`calls_kept`] on the tape: the reference.
#[differentiable(tape)]
fn calls_kept_recorded(x: f64, w: [f64; 3], n: usize) -> f64 {
    let mut total = kept_args(x * 0.5, w, n) + settled(w[2], n + 1) * x + drift(w[1], n);
    for k in 0..2 {
        total += kept_args(total, [x * 2.0, w[0] * w[k], 0.5], n) + sampled(x, &[0.5, -0.25]);
    }
    total
}

/// A helper of a `bool` and an `i32`, kept too.
#[differentiable]
fn flag(a: f64, on: bool, j: i32) -> f64 {
    if on {
        a * a * j as f64
    } else {
        a.cos()
    }
}

/// Kept data beside every exit: `break` and `continue` around the calls, two kept values
/// in one expression, and kept `bool`s and `i32`s in nested loops left by `return`.
#[differentiable]
fn kept_exits(x: f64, n: usize) -> f64 {
    let mut acc = x;
    let mut k = 0;
    while k < n {
        k += 1;
        if acc > 2.0 {
            break;
        }
        if k % 2 == 0 {
            continue;
        }
        acc += step(acc, k, acc.detach().round()) * step(x, n - k, 0.5);
    }
    for i in 0..n {
        let mut j = 0;
        while j < i {
            acc += flag(acc * 0.5, j % 2 == 0, j as i32 - 1);
            j += 1;
            if acc > 5.0 {
                return acc * 2.0;
            }
        }
    }
    acc
}

/// A kept argument of a call whose result is a local lent to the next call (its adjoints
/// are declared before the kept value is taken back), and a `mut` parameter lent beside
/// another (`relent`, called through its halves).
#[differentiable]
fn kept_chain(x: f64, y: f64, n: usize) -> f64 {
    let mut acc = x;
    let mut k = 0;
    while k < n {
        let t = step(acc, k, 1.0);
        acc = step(t, k, 0.5);
        k += 1;
    }
    acc + relent(x, y) + relent(y * 2.0, x)
}

#[differentiable]
fn relent(x: f64, mut y: f64) -> f64 {
    y = step(y, 2, x);
    y
}

/// `return` two `if`s deep and from inside a block.
#[differentiable]
fn deep_return(x: f64, y: f64, n: usize) -> f64 {
    let mut acc = x * y;
    if acc > 0.0 {
        if n > 2 {
            return acc.sin() * x;
        }
        acc += y.exp();
    }
    {
        let t = acc * 0.5;
        if t < -1.0 {
            return t * t;
        }
        acc *= t;
    }
    acc + x
}

/// Data computed from detached values after an early `return`: the statements after it
/// run in a block of their own, whose reverse must not read the forward's values.
#[differentiable]
fn detached_after_return(x: f64, w: [f64; 2]) -> f64 {
    let mut acc = x * 2.0;
    let mut t = x.sin();
    if (acc * 0.5).cos() > 0.9 {
        return acc;
    }
    let copy = t;
    t *= w[0];
    let step = (copy + acc).detach().round();
    acc = acc * step + t * w[1];
    acc
}

/// Loops left by `break` or by `return`, each of `loop`, `for` and `while`: the value
/// after the loop is the returned one only where a `return` left it.
#[differentiable]
fn break_or_return(x: f64, n: usize) -> f64 {
    let mut acc = x * 2.0;
    let mut k = 0;
    loop {
        k += 1;
        if k > n {
            break;
        }
        if acc < -3.0 {
            return acc * 3.0;
        }
        acc -= acc.sin() * 0.5;
    }
    for j in 0..6 {
        if j > n {
            break;
        }
        if acc > 3.0 {
            return acc.ln();
        }
        acc += x.cos() * 0.25;
    }
    let mut m = 0;
    while m < 4 {
        m += 1;
        if acc * x > 2.5 {
            return acc - x;
        }
        if m > n {
            break;
        }
        acc = acc * 0.75 + 0.5;
    }
    acc + 1.0
}

/// A `loop` left by `break` as the last statement of an `if`'s block, one that may also
/// `return` from inside it.
#[differentiable]
fn loop_in_branch(x: f64, n: usize) -> f64 {
    let mut acc = x * 2.0;
    if acc < 0.5 {
        let mut k = 0;
        loop {
            k += 1;
            if k > n {
                break;
            }
            if acc < -3.0 {
                return acc * 3.0;
            }
            acc -= acc.sin() * 0.5;
        }
    } else {
        let mut k = 0;
        loop {
            k += 1;
            if k > n {
                break;
            }
            acc = acc * 0.5 + x.cos();
        }
    }
    acc
}

/// `continue` inside a nested `if`, and at the end of an `else if`.
#[differentiable]
fn deep_continue(x: f64, xs: &[f64]) -> f64 {
    let mut acc = x;
    for (i, v) in xs.iter().enumerate() {
        if *v > 0.0 {
            if i % 2 == 0 {
                continue;
            }
            acc *= v;
        } else if *v < -1.0 {
            acc += 1.0;
            continue;
        }
        acc = acc.tanh() + v;
    }
    acc
}

/// `break` inside a nested `if`.
#[differentiable]
fn deep_break(x: f64, xs: &[f64]) -> f64 {
    let mut acc = x;
    for v in xs {
        acc = acc * v + x;
        if acc > 2.0 {
            if *v > 0.5 {
                break;
            }
            acc -= 1.0;
        }
        acc += 0.25;
    }
    acc
}

/// `return` from a nested `if` inside a loop.
#[differentiable]
fn deep_loop_return(x: f64, xs: &[f64]) -> f64 {
    let mut acc = x;
    for v in xs {
        if *v > 0.0 {
            acc *= v;
            if acc > 3.0 {
                return acc.ln();
            }
        }
        acc += x;
    }
    acc
}

/// Horner's rule over a range walked backwards, then a backwards loop that breaks.
#[differentiable]
fn horner(c: [f64; 4], x: f64, n: usize) -> f64 {
    let mut acc = 0.0;
    for i in (0..n.min(4)).rev() {
        acc = acc * x + c[i];
    }
    for i in (0..4).rev() {
        if i == 1 {
            break;
        }
        acc += c[i] * 0.5;
    }
    acc
}

fn scalar(result: Result<(f64, [f64; 1]), scalar_autodiff::ScalarAutodiffError>) -> Outcome {
    outcome(result.map(|(v, g)| (v, g.to_vec())))
}

fn array(result: Result<(f64, [f64; 3]), scalar_autodiff::ScalarAutodiffError>) -> Outcome {
    outcome(result.map(|(v, g)| (v, g.to_vec())))
}

#[test]
fn loops_with_data_dependent_trip_counts_agree_with_the_graph_bit_for_bit() {
    let mut rng = XorShift::new(0x05ee_d0f1_00f5);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    let xs = [0.5, 1.5, -0.7, 2.0, 0.3, -1.1, 1.2];
    let mut values = 0;
    for case in 0..120 {
        let (x, n) = (next(), case % 6);
        let w = [next(), next(), next()];
        let len = case % (xs.len() + 1);
        let pairs = [
            (
                scalar(counted_grad(x, n)),
                graph_of(&x, |t| counted_graph(t, n)),
            ),
            (scalar(root_grad(x * 3.0)), graph_of(&(x * 3.0), root_graph)),
            (
                array(scan_grad(w, &xs[..len])),
                graph_of(&w, |t| scan_graph(t, &xs[..len])),
            ),
            (
                scalar(grow_grad(x, &xs[..len])),
                graph_of(&x, |t| grow_graph(t, &xs[..len])),
            ),
            (
                scalar(settle_grad(x, n)),
                graph_of(&x, |t| settle_graph(t, n)),
            ),
            (
                array(early_grad(w, &xs[..len])),
                graph_of(&w, |t| early_graph(t, &xs[..len])),
            ),
            (
                array(leave_grad(w, &xs[..len])),
                graph_of(&w, |t| leave_graph(t, &xs[..len])),
            ),
            (
                array(grid_grad(w, &xs[..len])),
                graph_of(&w, |t| grid_graph(t, &xs[..len])),
            ),
        ];
        for (index, (fast, checked)) in pairs.into_iter().enumerate() {
            assert_eq!(
                fast, checked,
                "case {case}, function {index}, x {x}, w {w:?}"
            );
            values += matches!(fast, Outcome::Bits(_)) as usize;
        }
        // Warm calls (the first may grow the value stack) start no trace.
        let warm = traces(|| {
            drop(counted_grad(x, n));
            drop(scan_grad(w, &xs[..len]));
            drop(grow_grad(x, &xs[..len]));
            drop(settle_grad(x, n));
            drop(early_grad(w, &xs[..len]));
            drop(leave_grad(w, &xs[..len]));
            drop(grid_grad(w, &xs[..len]));
        });
        assert_eq!(warm, 0, "case {case}");
        if x.abs() > 0.1 {
            assert_eq!(traces(|| drop(root_grad(x * 3.0))), 0, "case {case}");
        }
    }
    assert!(values > 700, "{values} values");
}

#[test]
fn loops_with_data_dependent_trip_counts_have_the_plain_functions_derivatives() {
    let xs = [0.5, 1.5, -0.7, 2.0, 0.3, -1.1, 1.2];
    for (x, n) in [(0.7, 3), (1.3, 5), (-0.4, 2)] {
        let (value, [d]) = counted_grad(x, n).expect("finite");
        assert_eq!(value.to_bits(), counted(x, n).to_bits());
        near(d, |t| counted(t, n), x, "counted");
        let (value, [d]) = settle_grad(x, n).expect("finite");
        assert_eq!(value.to_bits(), settle(x, n).to_bits());
        near(d, |t| settle(t, n), x, "settle");
        let (value, [d]) = grow_grad(x, &xs).expect("finite");
        assert_eq!(value.to_bits(), grow(x, &xs).to_bits());
        near(d, |t| grow(t, &xs), x, "grow");
    }
    // The square root's derivative, 1 / (2 sqrt(x)).
    let (value, [d]) = root_grad(2.0).expect("finite");
    assert_eq!(value.to_bits(), root(2.0).to_bits());
    assert!((d - 0.5 / 2f64.sqrt()).abs() < 1e-12, "{d}");
    for w in [[0.5, 1.0, -0.25], [1.5, 2.0, 3.0], [-0.3, 0.8, 1.1]] {
        for (f, name) in [
            (scan as fn([f64; 3], &[f64]) -> f64, "scan"),
            (early as fn([f64; 3], &[f64]) -> f64, "early"),
            (leave as fn([f64; 3], &[f64]) -> f64, "leave"),
            (grid as fn([f64; 3], &[f64]) -> f64, "grid"),
        ] {
            let (value, gradient) = match name {
                "scan" => scan_grad(w, &xs),
                "early" => early_grad(w, &xs),
                "leave" => leave_grad(w, &xs),
                _ => grid_grad(w, &xs),
            }
            .expect("finite");
            assert_eq!(value.to_bits(), f(w, &xs).to_bits(), "{name}");
            for k in 0..3 {
                let moved = |t: f64| {
                    let mut q = w;
                    q[k] = t;
                    f(q, &xs)
                };
                near(gradient[k], moved, w[k], name);
            }
        }
    }
}

#[test]
fn if_let_and_binding_arms_run_compiled_and_agree() {
    let shapes = [
        Shape::Scaled(1.5),
        Shape::Flat,
        Shape::Shifted { by: -0.5, times: 2 },
        Shape::Scaled(-0.75),
        Shape::Shifted { by: 0.25, times: 1 },
    ];
    let mut rng = XorShift::new(0x0123_4567_89ab_cdef);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..60 {
        let (x, y) = (next(), next());
        let offset = (case % 3 != 0).then_some(next());
        let used = &shapes[..case % (shapes.len() + 1)];
        let fast = outcome(bound_grad(x, y, offset, used).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| bound_graph(&t[0], &t[1], offset, used));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(
            traces(|| drop(bound_grad(x, y, offset, used))),
            0,
            "case {case}"
        );
        let (value, [dx, dy]) = bound_grad(x, y, offset, used).expect("finite");
        assert_eq!(value.to_bits(), bound(x, y, offset, used).to_bits());
        near(dx, |t| bound(t, y, offset, used), x, "d/dx");
        near(dy, |t| bound(x, t, offset, used), y, "d/dy");
    }
}

#[test]
fn blocks_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x0fed_cba9_8765_4321);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    for case in 0..40 {
        let (x, y) = (next(), next());
        let fast = outcome(blocks_grad(x, y).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| blocks_graph(&t[0], &t[1]));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(blocks_grad(x, y))), 0, "case {case}");
        let (value, [dx, dy]) = blocks_grad(x, y).expect("finite");
        assert_eq!(value.to_bits(), blocks(x, y).to_bits());
        near(dx, |t| blocks(t, y), x, "d/dx");
        near(dy, |t| blocks(x, t), y, "d/dy");
    }
}

#[test]
fn mut_parameters_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x1357_9bdf_2468_ace0);
    let mut next = move || rng.unit() * 3.0 - 1.5;
    for case in 0..40 {
        let (x, y, n) = (next(), next(), case % 5);
        let fast = outcome(staged_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| staged_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "case {case}");
        if matches!(fast, Outcome::Bits(_)) {
            assert_eq!(traces(|| drop(staged_grad(x, y, n))), 0, "case {case}");
            let (value, [dx, dy]) = staged_grad(x, y, n).expect("finite");
            assert_eq!(value.to_bits(), staged(x, y, n).to_bits());
            near(dx, |t| staged(t, y, n), x, "d/dx");
            near(dy, |t| staged(x, t, n), y, "d/dy");
        }
        let fast = outcome(calls_staged_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| calls_staged_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "calls_staged, case {case}");
        if matches!(fast, Outcome::Bits(_)) {
            assert_eq!(
                traces(|| drop(calls_staged_grad(x, y, n))),
                0,
                "case {case}"
            );
            let (value, [dx, dy]) = calls_staged_grad(x, y, n).expect("finite");
            assert_eq!(value.to_bits(), calls_staged(x, y, n).to_bits());
            near(dx, |t| calls_staged(t, y, n), x, "calls_staged d/dx");
            near(dy, |t| calls_staged(x, t, n), y, "calls_staged d/dy");
        }
    }
}

#[test]
fn data_from_detached_values_after_a_return_runs_compiled_and_agrees() {
    let mut rng = XorShift::new(0x0de7_ac4e_d000_0001);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    let mut returned = 0;
    for case in 0..60 {
        let (x, w) = (next(), [next(), next()]);
        returned += usize::from((x * 2.0 * 0.5).cos() > 0.9);
        let fast = outcome(detached_after_return_grad(x, w).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, w[0], w[1]], |t| {
            detached_after_return_graph(&t[0], &[t[1].clone(), t[2].clone()])
        });
        assert_eq!(fast, checked, "case {case}");
        let warm = traces(|| drop(detached_after_return_grad(x, w)));
        assert_eq!(warm, 0, "case {case}");
        let (value, gradient) = detached_after_return_grad(x, w).expect("finite");
        assert_eq!(value.to_bits(), detached_after_return(x, w).to_bits());
        // (Away from the jumps of `round`.)
        let step = (x.sin() + x * 2.0).round();
        if ((x.sin() + x * 2.0) - step).abs() < 0.49 {
            near(gradient[0], |t| detached_after_return(t, w), x, "d/dx");
        }
        near(
            gradient[1],
            |t| detached_after_return(x, [t, w[1]]),
            w[0],
            "d/dw0",
        );
    }
    assert!(returned > 2 && returned < 58, "{returned}");
}

#[test]
fn loops_ending_a_branch_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x100b_e4d5_0000_0001);
    let mut next = move || rng.unit() * 6.0 - 3.0;
    for case in 0..60 {
        let (x, n) = (next(), case % 5);
        let fast = outcome(loop_in_branch_grad(x, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x], |t| loop_in_branch_graph(&t[0], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(loop_in_branch_grad(x, n))), 0, "case {case}");
        let (value, [dx]) = loop_in_branch_grad(x, n).expect("finite");
        assert_eq!(value.to_bits(), loop_in_branch(x, n).to_bits());
        near(dx, |t| loop_in_branch(t, n), x, "d/dx");

        let fast = outcome(break_or_return_grad(x, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x], |t| break_or_return_graph(&t[0], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(
            traces(|| drop(break_or_return_grad(x, n))),
            0,
            "case {case}"
        );
        let (value, [dx]) = break_or_return_grad(x, n).expect("finite");
        assert_eq!(
            value.to_bits(),
            break_or_return(x, n).to_bits(),
            "case {case}"
        );
        near(dx, |t| break_or_return(t, n), x, "d/dx");
    }
}

#[test]
fn exits_at_any_depth_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x2468_ace0_1357_9bdf);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    let mut taken = [0usize; 3];
    for case in 0..80 {
        let (x, y, n) = (next(), next(), case % 4);
        let fast = outcome(deep_return_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| deep_return_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(deep_return_grad(x, y, n))), 0, "case {case}");
        let (value, [dx, dy]) = deep_return_grad(x, y, n).expect("finite");
        assert_eq!(value.to_bits(), deep_return(x, y, n).to_bits());
        // Which exit the case took, so that every one is seen.
        let acc = x * y;
        let exit = if acc > 0.0 && n > 2 {
            0
        } else if (if acc > 0.0 { acc + y.exp() } else { acc }) * 0.5 < -1.0 {
            1
        } else {
            2
        };
        taken[exit] += 1;
        near(dx, |t| deep_return(t, y, n), x, "d/dx");
        near(dy, |t| deep_return(x, t, n), y, "d/dy");

        let xs: Vec<f64> = (0..case % 7).map(|_| next()).collect();
        for (name, grad, graph, plain) in [
            (
                "deep_continue",
                deep_continue_grad as fn(f64, &[f64]) -> _,
                deep_continue_graph as fn(&_, &[f64]) -> _,
                deep_continue as fn(f64, &[f64]) -> f64,
            ),
            ("deep_break", deep_break_grad, deep_break_graph, deep_break),
            (
                "deep_loop_return",
                deep_loop_return_grad,
                deep_loop_return_graph,
                deep_loop_return,
            ),
        ] {
            let fast = scalar(grad(x, &xs));
            let checked = graph_of(&[x], |t| graph(&t[0], &xs));
            assert_eq!(fast, checked, "{name}, case {case}");
            assert_eq!(traces(|| drop(grad(x, &xs))), 0, "{name}, case {case}");
            let (value, [dx]) = grad(x, &xs).expect("finite");
            assert_eq!(value.to_bits(), plain(x, &xs).to_bits(), "{name}");
            near(dx, |t| plain(t, &xs), x, name);
        }
    }
    assert!(taken.iter().all(|&count| count > 2), "{taken:?}");
}

#[test]
fn ranges_walked_backwards_run_compiled_and_agree() {
    let mut rng = XorShift::new(0x0bac_c0a2_d5ee_d001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..30 {
        let c = [next(), next(), next(), next()];
        let (x, n) = (next(), case % 6);
        let fast = outcome(horner_grad(c, x, n).map(|(v, g)| (v, g.to_vec())));
        let at = [c[0], c[1], c[2], c[3], x];
        let checked = graph_of(&at, |t| {
            let c = [t[0].clone(), t[1].clone(), t[2].clone(), t[3].clone()];
            horner_graph(&c, &t[4], n)
        });
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(horner_grad(c, x, n))), 0, "case {case}");
        let (value, gradient) = horner_grad(c, x, n).expect("finite");
        assert_eq!(value.to_bits(), horner(c, x, n).to_bits());
        near_each(
            &gradient,
            |q| horner([q[0], q[1], q[2], q[3]], q[4], n),
            &at,
            "horner",
        );
    }
}

#[test]
fn data_that_changes_in_a_loop_lent_to_a_helper_runs_compiled_and_agrees(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0x6e97_0a1d_33c5_0b01);
    let mut next = move || rng.unit() * 3.0 - 1.5;
    for case in 0..30 {
        let (x, w, n) = (next(), [next(), next(), next()], case % 5);
        let fast = outcome(kept_args_grad(x, w, n).map(|(v, g)| (v, g.to_vec())));
        let at = [x, w[0], w[1], w[2]];
        let checked = graph_of(&at, |t| {
            kept_args_graph(&t[0], &[t[1].clone(), t[2].clone(), t[3].clone()], n)
        });
        assert_eq!(fast, checked, "case {case}");
        if !matches!(fast, Outcome::Bits(_)) {
            continue;
        }
        assert_eq!(traces(|| drop(kept_args_grad(x, w, n))), 0, "case {case}");
        let (value, gradient) = kept_args_grad(x, w, n)?;
        assert_eq!(value.to_bits(), kept_args(x, w, n).to_bits());
        near(gradient[0], |t| kept_args(t, w, n), x, "d/dx");
        near(
            gradient[2],
            |t| kept_args(x, [w[0], t, w[2]], n),
            w[1],
            "d/dw1",
        );
        let fast = outcome(settled_grad(w[2], n).map(|(v, g)| (v, g.to_vec())));
        assert_eq!(
            fast,
            graph_of(&w[2], |t| settled_graph(t, n)),
            "case {case}"
        );
        assert_eq!(traces(|| drop(settled_grad(w[2], n))), 0);
        if let Ok((_, [d])) = settled_grad(w[2], n) {
            near(d, |t| settled(t, n), w[2], "settled");
        }
        // `name_hvp`'s sweeps keep them too: H against the recorded Hessian's columns.
        let (_, _, hessian) = kept_args_hessian(x, w, n)?;
        let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
        crate::hvp::check_columns(
            4,
            |direction| {
                let tangent: [f64; 4] = direction.try_into().expect("four");
                let (value, gradient, product) = kept_args_hvp(x, w, n, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian,
            (value, &gradient),
        )?;
        assert_eq!(
            traces(|| drop(kept_args_hvp(x, w, n, [1.0, 0.5, -0.5, 2.0]))),
            0
        );
        // Through the helpers' halves, against the tape twin.
        let fast = outcome(calls_kept_grad(x, w, n).map(|(v, g)| (v, g.to_vec())));
        let twin = calls_kept_recorded_grad(x, w, n).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(calls_kept_grad(x, w, n))), 0, "case {case}");
        if let Ok((_, gradient)) = calls_kept_grad(x, w, n) {
            near(gradient[0], |t| calls_kept(t, w, n), x, "calls_kept d/dx");
        }
        let fast = outcome(kept_chain_grad(x, w[0], n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, w[0]], |t| kept_chain_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(kept_chain_grad(x, w[0], n))), 0);
        let fast = outcome(kept_exits_grad(x, n).map(|(v, g)| (v, g.to_vec())));
        assert_eq!(
            fast,
            graph_of(&x, |t| kept_exits_graph(t, n)),
            "case {case}"
        );
        if let Ok((value, [d])) = kept_exits_grad(x, n) {
            assert_eq!(traces(|| drop(kept_exits_grad(x, n))), 0);
            assert_eq!(value.to_bits(), kept_exits(x, n).to_bits());
            near(d, |t| kept_exits(t, n), x, "kept_exits");
        }
    }
    Ok(())
}

/// Arrays indexed by a `while` loop's counter, read and written (`a[k] = ..`, `w[k]`,
/// `a[k - 1]`), in a `loop` left by `break` too: the index is kept for the reverse.
#[differentiable]
fn counted_reads(w: [f64; 4], x: f64, n: usize) -> f64 {
    let mut a = [0.0f64; 4];
    let mut k = 0;
    while k < n.min(4) {
        a[k] = w[k] * x + if k > 0 { a[k - 1].sin() } else { 0.5 };
        k += 1;
    }
    let mut total = 0.0;
    let mut j = 3;
    loop {
        total += a[j] * w[3 - j];
        if j == 0 {
            break;
        }
        j -= 1;
    }
    total
}

/// [`counted_reads`] on the tape: the reference.
#[differentiable(tape)]
fn counted_reads_recorded(w: [f64; 4], x: f64, n: usize) -> f64 {
    let mut a = [0.0f64; 4];
    let mut k = 0;
    while k < n.min(4) {
        a[k] = w[k] * x + if k > 0 { a[k - 1].sin() } else { 0.5 };
        k += 1;
    }
    let mut total = 0.0;
    let mut j = 3;
    loop {
        total += a[j] * w[3 - j];
        if j == 0 {
            break;
        }
        j -= 1;
    }
    total
}

#[test]
fn arrays_indexed_by_a_counter_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0x0c0f_17ed_0001);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..30 {
        let (w, x, n) = ([next(), next(), next(), next()], next(), case % 6);
        let fast = outcome(counted_reads_grad(w, x, n).map(|(v, g)| (v, g.to_vec())));
        let twin = counted_reads_recorded_grad(w, x, n).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(
            traces(|| drop(counted_reads_grad(w, x, n))),
            0,
            "case {case}"
        );
        let (value, gradient) = counted_reads_grad(w, x, n)?;
        assert_eq!(value.to_bits(), counted_reads(w, x, n).to_bits());
        near(gradient[4], |t| counted_reads(w, t, n), x, "d/dx");
        near(
            gradient[1],
            |t| counted_reads([w[0], t, w[2], w[3]], x, n),
            w[1],
            "d/dw1",
        );
        let (_, _, hessian) = counted_reads_hessian(w, x, n)?;
        let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
        crate::hvp::check_columns(
            5,
            |direction| {
                let tangent: [f64; 5] = direction.try_into().expect("five");
                let (value, gradient, product) = counted_reads_hvp(w, x, n, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian,
            (value, &gradient),
        )?;
        let tangent = [1.0, 0.5, -0.5, 2.0, 0.25];
        assert_eq!(traces(|| drop(counted_reads_hvp(w, x, n, tangent))), 0);
    }
    Ok(())
}

/// A step of [`walked`]: a counter as data.
#[differentiable]
fn stepped(y: f64, j: usize, c: f64) -> f64 {
    y * c + (j as f64).sin()
}

/// A helper returning a pair, for [`walked`].
#[differentiable]
fn paired(x: f64, h: [f64; 2]) -> [f64; 2] {
    [h[0] * x + h[1], (h[1] * x).sin()]
}

/// Elements read by a changing counter into locals (a copy, a copy of it, both read after
/// the counter moved on), lent to a helper and stored into a row, under a `break`; then a
/// local copy the output reads, and a helper's result handed back into itself.
#[differentiable]
fn walked(w: [f64; 3], x: f64, n: usize) -> f64 {
    let mut s = 0.0;
    let mut y = 0.5 * x;
    let mut rows = [[0.0f64; 2]; 4];
    let mut j = 0;
    while j < n {
        let e = w[j % 3];
        let f = e;
        j += 1;
        s = s + e * x + f * f;
        y = stepped(y, j, w[j % 3]);
        rows[j % 4] = paired(y, [e, s]);
        if s > 1.0 {
            break;
        }
    }
    let last = w[j % 3];
    let mut h = paired(x, [s, y]);
    h = paired(last, h);
    h[0] + h[1] * last + rows[1][0] + rows[2][1]
}

/// [`walked`] on the tape: the reference.
#[differentiable(tape)]
fn walked_recorded(w: [f64; 3], x: f64, n: usize) -> f64 {
    let mut s = 0.0;
    let mut y = 0.5 * x;
    let mut rows = [[0.0f64; 2]; 4];
    let mut j = 0;
    while j < n {
        let e = w[j % 3];
        let f = e;
        j += 1;
        s = s + e * x + f * f;
        y = stepped(y, j, w[j % 3]);
        rows[j % 4] = paired(y, [e, s]);
        if s > 1.0 {
            break;
        }
    }
    let last = w[j % 3];
    let mut h = paired(x, [s, y]);
    h = paired(last, h);
    h[0] + h[1] * last + rows[1][0] + rows[2][1]
}

/// [`walked`] called as a helper: its own halves follow the same forms.
#[differentiable]
fn walked_twice(w: [f64; 3], x: f64) -> f64 {
    walked(w, x, 2) * walked(w, x * 0.5, 5)
}

/// [`walked_twice`] on the tape: the reference.
#[differentiable(tape)]
fn walked_twice_recorded(w: [f64; 3], x: f64) -> f64 {
    walked(w, x, 2) * walked(w, x * 0.5, 5)
}

/// A row named by a changing counter, read after the counter moved on, in a branch and in
/// a nested loop.
#[differentiable]
fn rowed(m: [[f64; 2]; 3], x: f64) -> f64 {
    let mut s = 0.0;
    let mut j = 0;
    while j < 3 {
        let r = m[j];
        j += 1;
        if s < 1.0 {
            let q = m[j % 3][1];
            s += q * x;
        }
        for k in 0..2 {
            s = s + r[k] * (x * s).sin();
        }
        // Rows and elements by the counter in literals lent to a helper.
        s = s * 0.5 + aliasing::det2([m[j - 1], [x, m[j % 3][0]]]);
    }
    s
}

/// [`rowed`] on the tape: the reference.
#[differentiable(tape)]
fn rowed_recorded(m: [[f64; 2]; 3], x: f64) -> f64 {
    let mut s = 0.0;
    let mut j = 0;
    while j < 3 {
        let r = m[j];
        j += 1;
        if s < 1.0 {
            let q = m[j % 3][1];
            s += q * x;
        }
        for k in 0..2 {
            s = s + r[k] * (x * s).sin();
        }
        // Rows and elements by the counter in literals lent to a helper.
        s = s * 0.5 + aliasing::det2([m[j - 1], [x, m[j % 3][0]]]);
    }
    s
}

#[test]
fn copies_and_lent_elements_by_a_counter_run_compiled_and_agree(
) -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let mut rng = XorShift::new(0x0c0f_17ed_0002);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    for case in 0..30 {
        let (w, x, n) = ([next(), next(), next()], next(), case % 7);
        let fast = outcome(walked_grad(w, x, n).map(|(v, g)| (v, g.to_vec())));
        let twin = walked_recorded_grad(w, x, n).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(walked_grad(w, x, n))), 0, "case {case}");
        let (value, gradient) = walked_grad(w, x, n)?;
        assert_eq!(value.to_bits(), walked(w, x, n).to_bits());
        near(gradient[3], |t| walked(w, t, n), x, "d/dx");
        near(
            gradient[1],
            |t| walked([w[0], t, w[2]], x, n),
            w[1],
            "d/dw1",
        );
        let (_, _, hessian) = walked_hessian(w, x, n)?;
        let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
        crate::hvp::check_columns(
            4,
            |direction| {
                let tangent: [f64; 4] = direction.try_into().expect("four");
                let (value, gradient, product) = walked_hvp(w, x, n, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian,
            (value, &gradient),
        )?;
        assert_eq!(
            traces(|| drop(walked_hvp(w, x, n, [1.0, 0.5, -0.5, 2.0]))),
            0
        );

        let fast = outcome(walked_twice_grad(w, x).map(|(v, g)| (v, g.to_vec())));
        let twin = walked_twice_recorded_grad(w, x).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(walked_twice_grad(w, x))), 0, "case {case}");
        let (_, gradient) = walked_twice_grad(w, x)?;
        near(
            gradient[0],
            |t| walked_twice([t, w[1], w[2]], x),
            w[0],
            "d/dw0",
        );

        let m = [[w[0], w[1]], [w[2], x], [x * w[0], 0.5]];
        let fast = outcome(rowed_grad(m, x).map(|(v, g)| (v, g.to_vec())));
        let twin = rowed_recorded_grad(m, x).map(|(v, g)| (v, g.to_vec()));
        assert_eq!(fast, outcome(twin), "case {case}");
        assert_eq!(traces(|| drop(rowed_grad(m, x))), 0, "case {case}");
        let (_, gradient) = rowed_grad(m, x)?;
        // The gradient is flat: `m`'s six entries, then `x`.
        near(gradient[6], |t| rowed(m, t), x, "d/dx");
        near(
            gradient[2],
            |t| {
                let mut moved = m;
                moved[1][0] = t;
                rowed(moved, x)
            },
            m[1][0],
            "d/dm10",
        );
    }
    Ok(())
}

/// A helper returning an array early: literals of new values, copies and detached values
/// (`return [x.detach(), ..]`), from a branch and after a loop.
#[differentiable]
fn early_pair(x: f64, y: f64, n: usize) -> [f64; 2] {
    let mut acc = y;
    if x > 1.5 {
        return [x.detach(), (acc * acc + 0.5).cbrt()];
    }
    for k in 0..n {
        if x > 0.5 {
            acc *= y;
        } else if k > 1 {
            acc = -0.5;
        }
    }
    if n > 2 {
        return [f64::max(acc, x), acc];
    }
    [acc + acc + y, acc - x]
}

#[differentiable]
fn doubled<const N: usize>(x: [f64; N]) -> [f64; N] {
    let mut out = [0.0; N];
    for i in 0..N {
        out[i] = x[i] * 2.0;
    }
    out
}

/// A const-generic helper returning a local array or another helper's result early.
#[differentiable]
fn early_rows<const N: usize>(x: [f64; N], k: usize) -> [f64; N] {
    let mut h = doubled(x);
    if k > 1 {
        return h;
    }
    h[0] *= x[N - 1];
    if k > 0 {
        return doubled(h);
    }
    h
}

#[differentiable]
fn early_user(x: f64, y: f64, n: usize) -> f64 {
    let a = early_pair(x, y, n);
    let b = early_rows([x, y, 0.5], n % 3);
    a[0] + a[1] * y + b[0] * b[1] - b[2] * x
}

#[test]
fn helpers_returning_arrays_early_run_compiled_and_agree() {
    let mut rng = XorShift::new(0xc0_47e0_5eed_0001);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    for case in 0..60 {
        let (x, y, n) = (next(), next(), case % 5);
        let fast = outcome(early_user_grad(x, y, n).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| early_user_graph(&t[0], &t[1], n));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(early_user_grad(x, y, n))), 0, "case {case}");
        let Ok((value, gradient)) = early_user_grad(x, y, n) else {
            continue;
        };
        assert_eq!(value.to_bits(), early_user(x, y, n).to_bits());
        // Second order, through the helpers' halves on duals.
        let (_, grad, hessian) = early_user_hessian(x, y, n).expect("finite");
        assert_eq!(grad, gradient);
        crate::hvp::check_columns(
            2,
            |direction| {
                let tangent: [f64; 2] = direction.try_into().expect("two");
                let (value, gradient, product) = early_user_hvp(x, y, n, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &gradient),
        )
        .expect("finite");
        assert_eq!(traces(|| drop(early_user_hvp(x, y, n, [1.0, -0.5]))), 0);
        // (Above 1.5, `x.detach()` stops a path the differences see.)
        if x <= 1.5 {
            near_each(
                &gradient,
                |q| early_user(q[0], q[1], n),
                &[x, y],
                &format!("case {case}"),
            );
        }
    }
}

/// A `return` from inside a loop whose body reads a local kept for its reverse (`t`),
/// before a nested loop: the iteration that returns keeps it too. (Until this was fixed,
/// a call that returned after one that did not took the other call's kept value back:
/// a silently wrong gradient.)
#[allow(clippy::neg_multiply)] // (`-acc` is kept too; this is the form that failed.)
#[differentiable]
fn returns_mid_loop(x: f64, w: [f64; 3]) -> f64 {
    let mut acc = w[0] + w[1] - 0.5;
    for _ in 0..1 {
        let t = acc * -1.0;
        if acc < 0.0 {
            return acc * 3.0;
        }
        for _ in 0..1 {
            acc = t + x;
        }
    }
    acc - x
}

/// Two calls, the first not returning early and the second returning (or the reverse).
#[differentiable]
fn returns_twice(x: f64, y: f64) -> f64 {
    let a = returns_mid_loop(x * 0.5, [2.0, x * y, 0.5]);
    let b = returns_mid_loop(x * 0.5, [2.0, a * 1.0, 0.5]);
    let c = returns_mid_loop(y, [2.0, y - 3.0, x]);
    b - x + c * a
}

#[test]
fn a_return_mid_loop_keeps_what_its_reverse_takes() {
    let mut rng = XorShift::new(0xc0_47e0_5eed_0002);
    let mut next = move || rng.unit() * 4.0 - 2.0;
    for case in 0..60 {
        let (x, y) = (next(), next());
        let fast = outcome(returns_twice_grad(x, y).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&[x, y], |t| returns_twice_graph(&t[0], &t[1]));
        assert_eq!(fast, checked, "case {case}");
        assert_eq!(traces(|| drop(returns_twice_grad(x, y))), 0, "case {case}");
        let w = [next(), next(), next()];
        let at = [x, w[0], w[1], w[2]];
        let fast = outcome(returns_mid_loop_grad(x, w).map(|(v, g)| (v, g.to_vec())));
        let checked = graph_of(&at, |t| {
            returns_mid_loop_graph(&t[0], &[t[1].clone(), t[2].clone(), t[3].clone()])
        });
        assert_eq!(fast, checked, "case {case}");
        let (_, gradient) = returns_twice_grad(x, y).expect("finite");
        near_each(
            &gradient,
            |q| returns_twice(q[0], q[1]),
            &[x, y],
            &format!("case {case}"),
        );
    }
}
