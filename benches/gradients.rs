//! Gradients side by side: `#[differentiable]`'s `name_grad`, the same function on `Scalar`
//! with `backward`, a hand-written derivative (the limit), the floor of reverse mode written
//! by hand (`hand_reverse`: a forward sweep that keeps what the reverse sweep needs, then the
//! reverse sweep, plain `f64`, no tape), `num-dual` forward mode and the `reverse` crate.
//! Every case has a `hand_reverse` column; the two softmax cases (`softmax_iris`,
//! `mlp_batch`) have only `name_grad`, `hand_reverse`, `num_dual` and `reverse`. Every
//! variant's result is checked before anything is timed, so a fast wrong answer fails the
//! run: against the hand-written derivative (`hand`) where a case has one, against
//! `hand_reverse` in the softmax cases, relative 1e-12 unless a comment says why a peer
//! needs more.
//!
//! Run with `cargo bench --bench gradients`; `-- --quick` for a shorter run. The
//! `mlp_batch_parallel` group needs `--features rayon` (without it, it is left out).

use std::cell::RefCell;
use std::hint::black_box;

use criterion::{
    criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};
use nalgebra::{Const, SVector, U1};
use num_dual::{gradient, Dual64, DualNum, DualSVec64};
use scalar_autodiff::{differentiable, Parameters, Scalar, ScalarAutodiffError};

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// Panics unless `value` and `gradient` match the hand-written ones to 1e-12 relative.
fn check(case: &str, variant: &str, got: (f64, &[f64]), want: (f64, &[f64])) {
    check_within(1e-12, case, variant, got, want);
}

fn check_within(
    tolerance: f64,
    case: &str,
    variant: &str,
    got: (f64, &[f64]),
    want: (f64, &[f64]),
) {
    let close = |a: f64, b: f64| (a - b).abs() <= tolerance * a.abs().max(b.abs()).max(1e-300);
    let ok = close(got.0, want.0)
        && got.1.len() == want.1.len()
        && got.1.iter().zip(want.1).all(|(&a, &b)| close(a, b));
    assert!(ok, "{case}/{variant}: got {got:?}, want {want:?}");
}

// ---------------------------------------------------------------- reused square

#[differentiable]
fn reused_square(x: f64) -> f64 {
    let s = x * x;
    s + s
}

fn reused_square_scalar(x: f64) -> Result<(f64, f64)> {
    let x = Scalar::variable(x)?;
    let s = x.mul(&x)?;
    let loss = s.add(&s)?;
    loss.backward()?;
    Ok((loss.value(), x.gradient().unwrap_or(f64::NAN)))
}

fn reused_square_hand(x: f64) -> (f64, f64) {
    let s = x * x;
    (s + s, 4.0 * x)
}

/// Reverse mode by hand: the forward sweep keeps `x` (all the reverse sweep reads), the
/// reverse sweep adds one contribution per operand use, as a tape would.
fn reused_square_hand_reverse(x: f64) -> (f64, f64) {
    let s = x * x;
    let loss = s + s;
    let d_loss = 1.0;
    let d_s = d_loss + d_loss;
    let d_x = d_s * x + d_s * x;
    (loss, d_x)
}

fn reused_square_dual(x: f64) -> (f64, f64) {
    let x = Dual64::new(x, 1.0);
    let s = x * x;
    let loss = s + s;
    (loss.re, loss.eps)
}

fn reused_square_reverse(x: f64) -> (f64, f64) {
    let tape = reverse::Tape::new();
    let x = tape.add_var(x);
    let s = x * x;
    let loss = s + s;
    (loss.val(), loss.grad()[0])
}

// ---------------------------------------------------------------- exp(tanh(x))

#[differentiable]
fn nonlinear(x: f64) -> f64 {
    x.tanh().exp()
}

fn nonlinear_scalar(x: f64) -> Result<(f64, f64)> {
    let x = Scalar::variable(x)?;
    let y = x.tanh()?.exp()?;
    y.backward()?;
    Ok((y.value(), x.gradient().unwrap_or(f64::NAN)))
}

fn nonlinear_hand(x: f64) -> (f64, f64) {
    let t = x.tanh();
    let y = t.exp();
    (y, y * (1.0 - t * t))
}

/// Reverse mode by hand: the forward sweep keeps `t` and `y`, the reverse sweep applies
/// each operation's slope to the adjoint.
fn nonlinear_hand_reverse(x: f64) -> (f64, f64) {
    let t = x.tanh();
    let y = t.exp();
    let d_y = 1.0;
    let d_t = d_y * y;
    let d_x = d_t * (1.0 - t * t);
    (y, d_x)
}

fn nonlinear_dual(x: f64) -> (f64, f64) {
    let y = Dual64::new(x, 1.0).tanh().exp();
    (y.re, y.eps)
}

fn nonlinear_reverse(x: f64) -> (f64, f64) {
    let tape = reverse::Tape::new();
    let x = tape.add_var(x);
    let y = x.tanh().exp();
    (y.val(), y.grad()[0])
}

fn scalar_cases(c: &mut Criterion) {
    type Variants = [(&'static str, fn(f64) -> (f64, f64)); 6];
    let square: Variants = [
        ("name_grad", |x| unwrap_one(reused_square_grad(x))),
        ("scalar", |x| {
            reused_square_scalar(x).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", reused_square_hand),
        ("hand_reverse", reused_square_hand_reverse),
        ("num_dual", reused_square_dual),
        ("reverse", reused_square_reverse),
    ];
    let exp_tanh: Variants = [
        ("name_grad", |x| unwrap_one(nonlinear_grad(x))),
        ("scalar", |x| {
            nonlinear_scalar(x).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", nonlinear_hand),
        ("hand_reverse", nonlinear_hand_reverse),
        ("num_dual", nonlinear_dual),
        ("reverse", nonlinear_reverse),
    ];
    for (case, input, variants, plain) in [
        (
            "reused_square",
            2.0,
            square,
            reused_square as fn(f64) -> f64,
        ),
        ("exp_tanh", 0.5, exp_tanh, nonlinear as fn(f64) -> f64),
    ] {
        assert_eq!(
            plain(input),
            variants[2].1(input).0,
            "{case}: the plain function"
        );
        let want = variants[2].1(input);
        let mut group = c.benchmark_group(case);
        for (variant, f) in variants {
            let got = f(input);
            check(case, variant, (got.0, &[got.1]), (want.0, &[want.1]));
            group.bench_function(variant, |b| b.iter(|| f(black_box(input))));
        }
        group.finish();
    }
}

fn unwrap_one(r: Result<(f64, [f64; 1])>) -> (f64, f64) {
    r.map_or((f64::NAN, f64::NAN), |(v, [g])| (v, g))
}

// ---------------------------------------------------------------- the chain, annotated

#[differentiable]
fn chain_annotated(x: f64, steps: usize) -> f64 {
    let mut v = x;
    for step in 0..steps {
        if step % 3 == 0 {
            v *= SCALE;
        } else if step % 3 == 1 {
            v += SHIFT;
        } else {
            v = v.tanh();
        }
    }
    v
}

// ---------------------------------------------------------------- the chain

// One step of the chain: multiply by a constant, add a constant, tanh, in turn. From
// x = 0.5 these constants hold the chain at a fixed point where each cycle's slope
// SCALE * (1 - tanh²) is 1, so a million steps neither underflow the gradient into
// subnormals (slow for everyone) nor overflow it: the check below stays meaningful.
const START: f64 = 0.5;
const SCALE: f64 = 4.0 / 3.0;
/// atanh(0.5) - SCALE * 0.5
const SHIFT: f64 = -0.117_360_522_332_611_85;

fn chain_hand(x: f64, n: usize) -> (f64, f64) {
    let (mut v, mut d) = (x, 1.0);
    for step in 0..n {
        match step % 3 {
            0 => {
                v *= SCALE;
                d *= SCALE;
            }
            1 => v += SHIFT,
            _ => {
                v = v.tanh();
                d *= 1.0 - v * v;
            }
        }
    }
    (v, d)
}

/// Reverse mode by hand: the forward sweep keeps each tanh output (the only values the
/// slopes need; `* SCALE` and `+ SHIFT` have constant slopes), the reverse sweep walks the
/// steps backwards multiplying the adjoint by each step's slope. The buffer is reused across
/// calls, as `name_grad`'s tape is.
fn chain_hand_reverse(x: f64, n: usize) -> (f64, f64) {
    thread_local!(static TANH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) });
    TANH.with_borrow_mut(|kept| {
        kept.clear();
        let mut v = x;
        for step in 0..n {
            match step % 3 {
                0 => v *= SCALE,
                1 => v += SHIFT,
                _ => {
                    v = v.tanh();
                    kept.push(v);
                }
            }
        }
        let mut d = 1.0;
        for step in (0..n).rev() {
            match step % 3 {
                0 => d *= SCALE,
                1 => {}
                // Step 3i + 2 is the i-th tanh.
                _ => {
                    let t = kept[step / 3];
                    d *= 1.0 - t * t;
                }
            }
        }
        (v, d)
    })
}

fn chain_scalar(x: f64, n: usize) -> Result<(f64, f64)> {
    let x = Scalar::variable(x)?;
    let mut v = x.clone();
    for step in 0..n {
        v = match step % 3 {
            0 => v.mul(&Scalar::constant(SCALE)?)?,
            1 => v.add(&Scalar::constant(SHIFT)?)?,
            _ => v.tanh()?,
        };
    }
    v.backward()?;
    Ok((v.value(), x.gradient().unwrap_or(f64::NAN)))
}

fn chain_dual(x: f64, n: usize) -> (f64, f64) {
    let mut v = Dual64::new(x, 1.0);
    for step in 0..n {
        v = match step % 3 {
            0 => v * SCALE,
            1 => v + SHIFT,
            _ => v.tanh(),
        };
    }
    (v.re, v.eps)
}

fn chain_reverse(x: f64, n: usize) -> (f64, f64) {
    let tape = reverse::Tape::new();
    let x = tape.add_var(x);
    let mut v = x;
    for step in 0..n {
        v = match step % 3 {
            0 => v * SCALE,
            1 => v + SHIFT,
            _ => v.tanh(),
        };
    }
    (v.val(), v.grad()[0])
}

fn chain(c: &mut Criterion) {
    type Variant = (&'static str, fn(f64, usize) -> (f64, f64));
    let variants: [Variant; 6] = [
        ("name_grad", |x, n| {
            chain_annotated_grad(x, n).map_or((f64::NAN, f64::NAN), |(v, [g])| (v, g))
        }),
        ("scalar", |x, n| {
            chain_scalar(x, n).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", chain_hand),
        ("hand_reverse", chain_hand_reverse),
        ("num_dual", chain_dual),
        ("reverse", chain_reverse),
    ];
    let mut group = c.benchmark_group("chain");
    for n in [1_000, 100_000, 1_000_000] {
        let want = chain_hand(START, n);
        assert_eq!(
            chain_annotated(START, n),
            want.0,
            "chain: the plain function"
        );
        group.throughput(Throughput::Elements(n as u64));
        if n >= 100_000 {
            group.sample_size(10);
        }
        for (variant, f) in variants {
            let got = f(START, n);
            // Ours use the hand-written slope formulas, so only the order of the product
            // differs: 1e-12 holds. The peers use other formulas (num-dual: tanh as
            // sinh/cosh; reverse: its own tanh slope), each step within a few ulps, and a
            // product of n such factors agrees to about n ulps: beyond 1e-12 for n >= 1e5.
            let peer = matches!(variant, "num_dual" | "reverse");
            let tolerance = if peer {
                1e-12f64.max(4.0 * f64::EPSILON * n as f64)
            } else {
                1e-12
            };
            check_within(
                tolerance,
                "chain",
                variant,
                (got.0, &[got.1]),
                (want.0, &[want.1]),
            );
            group.bench_with_input(BenchmarkId::new(variant, n), &n, |b, &n| {
                b.iter(|| f(black_box(START), n))
            });
        }
    }
    group.finish();
}

// ---------------------------------------------------------------- mean squared error

/// 1,000 points near y = 3x - 1.
fn line_data() -> (Vec<f64>, Vec<f64>) {
    let xs: Vec<f64> = (0..1000).map(|i| f64::from(i) / 250.0 - 2.0).collect();
    let ys = xs
        .iter()
        .enumerate()
        .map(|(i, x)| 3.0 * x - 1.0 + 0.1 * (i as f64).sin())
        .collect();
    (xs, ys)
}

#[differentiable]
fn mse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let error = w * x + b - y;
        total += error * error;
    }
    total / xs.len() as f64
}

fn mse_hand(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> (f64, [f64; 2]) {
    let (mut total, mut dw, mut db) = (0.0, 0.0, 0.0);
    for (x, y) in xs.iter().zip(ys) {
        let error = w * x + b - y;
        total += error * error;
        dw += 2.0 * error * x;
        db += 2.0 * error;
    }
    let n = xs.len() as f64;
    (total / n, [dw / n, db / n])
}

fn mse_scalar(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> Result<(f64, [f64; 2])> {
    let (w, b) = (Scalar::variable(w)?, Scalar::variable(b)?);
    let mut total = Scalar::constant(0.0)?;
    for (x, y) in xs.iter().zip(ys) {
        let error = w
            .mul(&Scalar::constant(*x)?)?
            .add(&b)?
            .sub(&Scalar::constant(*y)?)?;
        total = total.add(&error.mul(&error)?)?;
    }
    let loss = total.div(&Scalar::constant(xs.len() as f64)?)?;
    loss.backward()?;
    let g = |s: &Scalar| s.gradient().unwrap_or(f64::NAN);
    Ok((loss.value(), [g(&w), g(&b)]))
}

/// The floor for any reverse-mode method here, written by hand: a tool that cannot know the
/// output's adjoint in advance must sweep forward keeping each residual, then sweep back
/// accumulating the gradient. Two passes over the data, each as long as the chain of its
/// running sums, where forward mode (num-dual) and the fused `mse_hand` need one.
fn mse_hand_reverse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> (f64, [f64; 2]) {
    thread_local!(static ERRORS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) });
    ERRORS.with_borrow_mut(|errors| {
        errors.resize(xs.len(), 0.0);
        let mut total = 0.0;
        for ((x, y), slot) in xs.iter().zip(ys).zip(errors.iter_mut()) {
            let error = w * x + b - y;
            total += error * error;
            *slot = error;
        }
        let n = xs.len() as f64;
        let d_total = 1.0 / n;
        let (mut dw, mut db) = (0.0, 0.0);
        for (&error, &x) in errors.iter().zip(xs).rev() {
            let d_error = d_total * error + d_total * error;
            dw += d_error * x;
            db += d_error;
        }
        (total / n, [dw, db])
    })
}

fn mse_generic<D: DualNum<Primitive = f64> + Copy>(w: D, b: D, xs: &[f64], ys: &[f64]) -> D {
    let mut total = D::from(0.0);
    for (x, y) in xs.iter().zip(ys) {
        let error = w * *x + b - *y;
        total += error * error;
    }
    total / xs.len() as f64
}

fn mse_dual(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> (f64, [f64; 2]) {
    let (value, grad) = gradient(
        |v: SVector<DualSVec64<2>, 2>| mse_generic(v[0], v[1], xs, ys),
        &SVector::from([w, b]),
    );
    (value, [grad[0], grad[1]])
}

fn mse_reverse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> (f64, [f64; 2]) {
    let tape = reverse::Tape::new();
    let (w, b) = (tape.add_var(w), tape.add_var(b));
    let mut total = tape.add_var(0.0);
    for (x, y) in xs.iter().zip(ys) {
        let error = w * *x + b - *y;
        total = total + error * error;
    }
    let loss = total / xs.len() as f64;
    let grad = loss.grad();
    (loss.val(), [grad[0], grad[1]])
}

// ---------------------------------------------------------------- the XOR MLP

/// XOR with targets 0 and 1: (x0, x1, target).
const XOR: [[f64; 3]; 4] = [
    [0.0, 0.0, 0.0],
    [0.0, 1.0, 1.0],
    [1.0, 0.0, 1.0],
    [1.0, 1.0, 0.0],
];

/// Nine parameters: two hidden tanh units (weights and bias each), a linear output.
const MLP_START: [f64; 9] = [0.5, -0.4, 0.1, -0.3, 0.6, 0.2, 0.7, -0.8, 0.05];

#[differentiable]
fn mlp(p: [f64; 9], data: &[[f64; 3]]) -> f64 {
    let mut total = 0.0;
    for row in data {
        let h0 = (p[0] * row[0] + p[1] * row[1] + p[2]).tanh();
        let h1 = (p[3] * row[0] + p[4] * row[1] + p[5]).tanh();
        let out = p[6] * h0 + p[7] * h1 + p[8];
        let error = out - row[2];
        total += error * error;
    }
    total / data.len() as f64
}

fn mlp_generic<D: DualNum<Primitive = f64> + Copy>(p: [D; 9], data: &[[f64; 3]]) -> D {
    let mut total = D::from(0.0);
    for row in data {
        let h0 = (p[0] * row[0] + p[1] * row[1] + p[2]).tanh();
        let h1 = (p[3] * row[0] + p[4] * row[1] + p[5]).tanh();
        let out = p[6] * h0 + p[7] * h1 + p[8];
        let error = out - row[2];
        total += error * error;
    }
    total / data.len() as f64
}

fn mlp_hand(p: [f64; 9], data: &[[f64; 3]]) -> (f64, [f64; 9]) {
    let (mut total, mut g) = (0.0, [0.0; 9]);
    let n = data.len() as f64;
    for row in data {
        let h0 = (p[0] * row[0] + p[1] * row[1] + p[2]).tanh();
        let h1 = (p[3] * row[0] + p[4] * row[1] + p[5]).tanh();
        let out = p[6] * h0 + p[7] * h1 + p[8];
        let error = out - row[2];
        total += error * error;
        mlp_add_row_gradient(&mut g, &p, row, [h0, h1], 2.0 * error / n);
    }
    (total / n, g)
}

/// Adds one row's share of the network's gradient to `g`: `d_out` is the loss's derivative
/// with respect to the row's output, `h0` and `h1` the row's hidden activations.
fn mlp_add_row_gradient(
    g: &mut [f64; 9],
    p: &[f64; 9],
    row: &[f64; 3],
    [h0, h1]: [f64; 2],
    d_out: f64,
) {
    let (d_h0, d_h1) = (
        d_out * p[6] * (1.0 - h0 * h0),
        d_out * p[7] * (1.0 - h1 * h1),
    );
    let grads = [
        d_h0 * row[0],
        d_h0 * row[1],
        d_h0,
        d_h1 * row[0],
        d_h1 * row[1],
        d_h1,
        d_out * h0,
        d_out * h1,
        d_out,
    ];
    for (slot, value) in g.iter_mut().zip(grads) {
        *slot += value;
    }
}

fn mlp_scalar(p: [f64; 9], data: &[[f64; 3]]) -> Result<(f64, [f64; 9])> {
    let p: Vec<Scalar> = p
        .iter()
        .map(|&v| Scalar::variable(v))
        .collect::<Result<_>>()?;
    let c = Scalar::constant;
    let mut total = c(0.0)?;
    for row in data {
        let (x0, x1) = (c(row[0])?, c(row[1])?);
        let h0 = p[0].mul(&x0)?.add(&p[1].mul(&x1)?)?.add(&p[2])?.tanh()?;
        let h1 = p[3].mul(&x0)?.add(&p[4].mul(&x1)?)?.add(&p[5])?.tanh()?;
        let out = p[6].mul(&h0)?.add(&p[7].mul(&h1)?)?.add(&p[8])?;
        let error = out.sub(&c(row[2])?)?;
        total = total.add(&error.mul(&error)?)?;
    }
    let loss = total.div(&c(data.len() as f64)?)?;
    loss.backward()?;
    let mut g = [0.0; 9];
    for (slot, param) in g.iter_mut().zip(&p) {
        *slot = param.gradient().unwrap_or(f64::NAN);
    }
    Ok((loss.value(), g))
}

fn mlp_dual(p: [f64; 9], data: &[[f64; 3]]) -> (f64, [f64; 9]) {
    let (value, grad) = gradient(
        |v: SVector<DualSVec64<9>, 9>| mlp_generic(std::array::from_fn(|i| v[i]), data),
        &SVector::from(p),
    );
    (value, std::array::from_fn(|i| grad[i]))
}

/// [`mse_hand_reverse`] for the network: a forward sweep keeping each row's hidden
/// activations and error, then a reverse sweep.
fn mlp_hand_reverse(p: [f64; 9], data: &[[f64; 3]]) -> (f64, [f64; 9]) {
    thread_local!(static KEPT: RefCell<Vec<[f64; 3]>> = const { RefCell::new(Vec::new()) });
    KEPT.with_borrow_mut(|kept| {
        kept.clear();
        let mut total = 0.0;
        for row in data {
            let h0 = (p[0] * row[0] + p[1] * row[1] + p[2]).tanh();
            let h1 = (p[3] * row[0] + p[4] * row[1] + p[5]).tanh();
            let out = p[6] * h0 + p[7] * h1 + p[8];
            let error = out - row[2];
            total += error * error;
            kept.push([h0, h1, error]);
        }
        let n = data.len() as f64;
        let d_total = 1.0 / n;
        let mut g = [0.0; 9];
        for (&[h0, h1, error], row) in kept.iter().zip(data).rev() {
            let d_out = d_total * error + d_total * error;
            mlp_add_row_gradient(&mut g, &p, row, [h0, h1], d_out);
        }
        (total / n, g)
    })
}

fn mlp_reverse(p: [f64; 9], data: &[[f64; 3]]) -> (f64, [f64; 9]) {
    let tape = reverse::Tape::new();
    let p: Vec<reverse::Var> = p.iter().map(|&v| tape.add_var(v)).collect();
    let mut total = tape.add_var(0.0);
    for row in data {
        let h0 = (p[0] * row[0] + p[1] * row[1] + p[2]).tanh();
        let h1 = (p[3] * row[0] + p[4] * row[1] + p[5]).tanh();
        let out = p[6] * h0 + p[7] * h1 + p[8];
        let error = out - row[2];
        total = total + error * error;
    }
    let loss = total / data.len() as f64;
    let grad = loss.grad();
    (loss.val(), std::array::from_fn(|i| grad[i]))
}

// ---------------------------------------------------------------- iris softmax regression

const IRIS_FEATURES: usize = 4;
const IRIS_CLASSES: usize = 3;
/// `w` row by row, then `b`: the order of `name_grad`'s flat gradient.
const IRIS_PARAMS: usize = IRIS_CLASSES * IRIS_FEATURES + IRIS_CLASSES;
const IRIS_ROWS: usize = 120;
const IRIS_SPECIES: [&str; IRIS_CLASSES] = ["setosa", "versicolor", "virginica"];

/// The first 120 rows of `examples/data/iris.csv`, raw features, species as 0..3.
fn iris_rows() -> (Vec<[f64; IRIS_FEATURES]>, Vec<usize>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/iris.csv");
    let mut reader = csv::Reader::from_path(path).expect("examples/data/iris.csv opens");
    let (mut xs, mut labels) = (Vec::new(), Vec::new());
    for record in reader.deserialize().take(IRIS_ROWS) {
        let (a, b, c, d, name): (f64, f64, f64, f64, String) =
            record.expect("an iris row: four numbers and a species");
        let label = IRIS_SPECIES
            .iter()
            .position(|s| *s == name)
            .expect("a known species");
        xs.push([a, b, c, d]);
        labels.push(label);
    }
    assert_eq!(labels.len(), IRIS_ROWS, "iris: too few rows");
    (xs, labels)
}

/// A fixed, unremarkable starting point (the loss is not at a minimum, no gradient is 0).
fn iris_start() -> ([[f64; IRIS_FEATURES]; IRIS_CLASSES], [f64; IRIS_CLASSES]) {
    let w = std::array::from_fn(|k| {
        std::array::from_fn(|j| 0.5 * ((k * IRIS_FEATURES + j) as f64 * 0.7 + 0.3).sin())
    });
    let b = std::array::from_fn(|k| 0.1 * k as f64 - 0.1);
    (w, b)
}

// The two softmax bodies are written in the restricted style the compiled sweeps handle
// first: arrays by value, range loops over the arrays, data iterated only as data, no folds,
// helpers or closures. Clippy would have the range loops be iterators.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn softmax_iris(
    w: [[f64; IRIS_FEATURES]; IRIS_CLASSES],
    b: [f64; IRIS_CLASSES],
    xs: &[[f64; IRIS_FEATURES]],
    labels: &[usize],
) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let mut z = [0.0; IRIS_CLASSES];
        for k in 0..IRIS_CLASSES {
            let mut s = b[k];
            for j in 0..IRIS_FEATURES {
                s += w[k][j] * x[j];
            }
            z[k] = s;
        }
        // The shift of the log-sum-exp is plain data: its gradient would be 0 anyway.
        let mut m = z[0].detach();
        for k in 1..IRIS_CLASSES {
            m = m.max(z[k].detach());
        }
        let mut sum = 0.0;
        for k in 0..IRIS_CLASSES {
            sum += (z[k] - m).exp();
        }
        total += m + sum.ln() - z[label];
    }
    total / xs.len() as f64
}

/// Reverse mode by hand: the forward sweep (the body's arithmetic, in its order) keeps each
/// row's `exp(z - m)` and their sum; the reverse sweep, rows last to first, turns them into
/// the logits' adjoints `d / sum * e[k]` (minus `d` at the label) and those into `w` and `b`.
#[allow(clippy::needless_range_loop)]
fn softmax_iris_hand_reverse(
    w: [[f64; IRIS_FEATURES]; IRIS_CLASSES],
    b: [f64; IRIS_CLASSES],
    xs: &[[f64; IRIS_FEATURES]],
    labels: &[usize],
) -> (f64, [f64; IRIS_PARAMS]) {
    type Kept = ([f64; IRIS_CLASSES], f64);
    thread_local!(static KEPT: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) });
    KEPT.with_borrow_mut(|kept| {
        kept.clear();
        let mut total = 0.0;
        for (x, &label) in xs.iter().zip(labels) {
            let mut z = [0.0; IRIS_CLASSES];
            for k in 0..IRIS_CLASSES {
                let mut s = b[k];
                for j in 0..IRIS_FEATURES {
                    s += w[k][j] * x[j];
                }
                z[k] = s;
            }
            let mut m = z[0];
            for k in 1..IRIS_CLASSES {
                m = m.max(z[k]);
            }
            let (mut e, mut sum) = ([0.0; IRIS_CLASSES], 0.0);
            for k in 0..IRIS_CLASSES {
                e[k] = (z[k] - m).exp();
                sum += e[k];
            }
            total += m + sum.ln() - z[label];
            kept.push((e, sum));
        }
        let n = xs.len() as f64;
        let d_row = 1.0 / n;
        let mut g = [0.0; IRIS_PARAMS];
        let (dw, db) = g.split_at_mut(IRIS_CLASSES * IRIS_FEATURES);
        for ((&(e, sum), x), &label) in kept.iter().zip(xs).zip(labels).rev() {
            let d_sum = d_row / sum;
            for k in 0..IRIS_CLASSES {
                let mut d_z = d_sum * e[k];
                if k == label {
                    d_z -= d_row;
                }
                for j in 0..IRIS_FEATURES {
                    dw[k * IRIS_FEATURES + j] += d_z * x[j];
                }
                db[k] += d_z;
            }
        }
        (total / n, g)
    })
}

#[allow(clippy::needless_range_loop)]
fn softmax_iris_generic<D: DualNum<Primitive = f64> + Copy>(
    w: &[[D; IRIS_FEATURES]; IRIS_CLASSES],
    b: &[D; IRIS_CLASSES],
    xs: &[[f64; IRIS_FEATURES]],
    labels: &[usize],
) -> D {
    let mut total = D::from(0.0);
    for (x, &label) in xs.iter().zip(labels) {
        let mut z = *b;
        for k in 0..IRIS_CLASSES {
            for j in 0..IRIS_FEATURES {
                z[k] += w[k][j] * x[j];
            }
        }
        let mut m = z[0].re();
        for k in 1..IRIS_CLASSES {
            m = m.max(z[k].re());
        }
        let mut sum = D::from(0.0);
        for k in 0..IRIS_CLASSES {
            sum += (z[k] - m).exp();
        }
        total += sum.ln() + m - z[label];
    }
    total / xs.len() as f64
}

/// One forward pass carrying all 15 directions (`DualSVec64<15>`), as for the other cases.
fn softmax_iris_dual(
    w: [[f64; IRIS_FEATURES]; IRIS_CLASSES],
    b: [f64; IRIS_CLASSES],
    xs: &[[f64; IRIS_FEATURES]],
    labels: &[usize],
) -> (f64, [f64; IRIS_PARAMS]) {
    let mut flat = [0.0; IRIS_PARAMS];
    for (slot, v) in flat.iter_mut().zip(w.iter().flatten().chain(&b)) {
        *slot = *v;
    }
    let (value, grad) = gradient(
        |v: SVector<DualSVec64<IRIS_PARAMS>, IRIS_PARAMS>| {
            let w = std::array::from_fn(|k| std::array::from_fn(|j| v[k * IRIS_FEATURES + j]));
            let b = std::array::from_fn(|k| v[IRIS_CLASSES * IRIS_FEATURES + k]);
            softmax_iris_generic(&w, &b, xs, labels)
        },
        &SVector::from(flat),
    );
    (value, std::array::from_fn(|i| grad[i]))
}

#[allow(clippy::needless_range_loop)]
fn softmax_iris_reverse(
    w: [[f64; IRIS_FEATURES]; IRIS_CLASSES],
    b: [f64; IRIS_CLASSES],
    xs: &[[f64; IRIS_FEATURES]],
    labels: &[usize],
) -> (f64, [f64; IRIS_PARAMS]) {
    let tape = reverse::Tape::new();
    // Variables in the flat gradient's order, so `grad()[i]` is entry i.
    let w: [[reverse::Var; IRIS_FEATURES]; IRIS_CLASSES] =
        std::array::from_fn(|k| std::array::from_fn(|j| tape.add_var(w[k][j])));
    let b: [reverse::Var; IRIS_CLASSES] = std::array::from_fn(|k| tape.add_var(b[k]));
    let mut total = tape.add_var(0.0);
    for (x, &label) in xs.iter().zip(labels) {
        let mut z = b;
        for k in 0..IRIS_CLASSES {
            for j in 0..IRIS_FEATURES {
                z[k] = z[k] + w[k][j] * x[j];
            }
        }
        let mut m = z[0].val();
        for k in 1..IRIS_CLASSES {
            m = m.max(z[k].val());
        }
        let mut sum = (z[0] - m).exp();
        for k in 1..IRIS_CLASSES {
            sum = sum + (z[k] - m).exp();
        }
        total = total + (sum.ln() + m - z[label]);
    }
    let loss = total / xs.len() as f64;
    let grad = loss.grad();
    (loss.val(), std::array::from_fn(|i| grad[i]))
}

// ---------------------------------------------------------------- a 64-16-10 tanh MLP

const MLP_INPUTS: usize = 64;
const MLP_HIDDEN: usize = 16;
const MLP_OUTPUTS: usize = 10;
const MLP_BATCH: usize = 32;
/// Offsets into the flat gradient: `w1` row by row, `b1`, `w2` row by row, `b2`.
const MLP_B1: usize = MLP_HIDDEN * MLP_INPUTS;
const MLP_W2: usize = MLP_B1 + MLP_HIDDEN;
const MLP_B2: usize = MLP_W2 + MLP_OUTPUTS * MLP_HIDDEN;
/// 1,210.
const MLP_PARAMS: usize = MLP_B2 + MLP_OUTPUTS;

type W1 = [[f64; MLP_INPUTS]; MLP_HIDDEN];
type W2 = [[f64; MLP_HIDDEN]; MLP_OUTPUTS];

/// A tiny LCG (Knuth's MMIX constants): the top 53 bits as a number in [0, 1).
fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// 32 rows of 64 features in [0, 1), labels 0..10 (each class at least three times).
fn mlp_batch_data() -> (Vec<[f64; MLP_INPUTS]>, Vec<usize>) {
    mlp_batch_rows(MLP_BATCH)
}

/// `rows` rows of 64 features in [0, 1), labels 0..10; the first 32 are `mlp_batch_data`'s.
fn mlp_batch_rows(rows: usize) -> (Vec<[f64; MLP_INPUTS]>, Vec<usize>) {
    let mut state = 0x5eed;
    let xs = (0..rows)
        .map(|_| std::array::from_fn(|_| lcg(&mut state)))
        .collect();
    let labels = (0..rows).map(|i| (i * 7) % MLP_OUTPUTS).collect();
    (xs, labels)
}

/// Weights uniform in ±1/sqrt(fan-in), small biases: every unit is in tanh's sloped range.
fn mlp_batch_start() -> (W1, [f64; MLP_HIDDEN], W2, [f64; MLP_OUTPUTS]) {
    let mut state = 0xfeed;
    let mut uniform = |scale: f64| scale * (2.0 * lcg(&mut state) - 1.0);
    let w1 = std::array::from_fn(|_| std::array::from_fn(|_| uniform(0.125)));
    let b1 = std::array::from_fn(|_| uniform(0.1));
    let w2 = std::array::from_fn(|_| std::array::from_fn(|_| uniform(0.25)));
    let b2 = std::array::from_fn(|_| uniform(0.1));
    (w1, b1, w2, b2)
}

#[allow(clippy::needless_range_loop)]
#[differentiable]
fn mlp_batch(
    w1: [[f64; MLP_INPUTS]; MLP_HIDDEN],
    b1: [f64; MLP_HIDDEN],
    w2: [[f64; MLP_HIDDEN]; MLP_OUTPUTS],
    b2: [f64; MLP_OUTPUTS],
    xs: &[[f64; MLP_INPUTS]],
    labels: &[usize],
) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let mut h = [0.0; MLP_HIDDEN];
        for j in 0..MLP_HIDDEN {
            let mut s = b1[j];
            for i in 0..MLP_INPUTS {
                s += w1[j][i] * x[i];
            }
            h[j] = s.tanh();
        }
        let mut z = [0.0; MLP_OUTPUTS];
        for k in 0..MLP_OUTPUTS {
            let mut s = b2[k];
            for j in 0..MLP_HIDDEN {
                s += w2[k][j] * h[j];
            }
            z[k] = s;
        }
        let mut m = z[0].detach();
        for k in 1..MLP_OUTPUTS {
            m = m.max(z[k].detach());
        }
        let mut sum = 0.0;
        for k in 0..MLP_OUTPUTS {
            sum += (z[k] - m).exp();
        }
        total += m + sum.ln() - z[label];
    }
    total / xs.len() as f64
}

/// The same network as a user writes it with layers: a parameter struct and one helper
/// per layer (the same operations in the same order as `mlp_batch`).
#[derive(Parameters, Clone)]
struct MlpParams {
    w1: W1,
    b1: [f64; MLP_HIDDEN],
    w2: W2,
    b2: [f64; MLP_OUTPUTS],
}

#[differentiable]
fn dense_tanh(
    w: [[f64; MLP_INPUTS]; MLP_HIDDEN],
    b: [f64; MLP_HIDDEN],
    x: &[f64; MLP_INPUTS],
) -> [f64; MLP_HIDDEN] {
    let mut h = [0.0; MLP_HIDDEN];
    for (j, row) in w.iter().enumerate() {
        let mut s = b[j];
        for (a, v) in row.iter().zip(x) {
            s += a * v;
        }
        h[j] = s.tanh();
    }
    h
}

#[differentiable]
fn dense_out(
    w: [[f64; MLP_HIDDEN]; MLP_OUTPUTS],
    b: [f64; MLP_OUTPUTS],
    h: [f64; MLP_HIDDEN],
) -> [f64; MLP_OUTPUTS] {
    let mut z = [0.0; MLP_OUTPUTS];
    for (k, row) in w.iter().enumerate() {
        let mut s = b[k];
        for (a, v) in row.iter().zip(h.iter()) {
            s += a * v;
        }
        z[k] = s;
    }
    z
}

#[allow(clippy::needless_range_loop)]
#[differentiable]
fn cross_entropy(z: [f64; MLP_OUTPUTS], label: usize) -> f64 {
    let mut m = z[0].detach();
    for k in 1..MLP_OUTPUTS {
        m = m.max(z[k].detach());
    }
    let mut sum = 0.0;
    for k in 0..MLP_OUTPUTS {
        sum += (z[k] - m).exp();
    }
    m + sum.ln() - z[label]
}

#[differentiable]
fn mlp_layers(#[param] p: &MlpParams, xs: &[[f64; MLP_INPUTS]], labels: &[usize]) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let h = dense_tanh(p.w1, p.b1, x);
        total += cross_entropy(dense_out(p.w2, p.b2, h), label);
    }
    total / xs.len() as f64
}

/// Reverse mode by hand: the forward sweep (the body's arithmetic, in its order) keeps each
/// row's hidden activations, `exp(z - m)` and their sum; the reverse sweep, rows last to
/// first, goes back through the softmax, the output layer (adjoints of `w2`, `b2` and `h`),
/// tanh's slope `1 - h²` and the hidden layer.
#[allow(clippy::needless_range_loop)]
fn mlp_batch_hand_reverse(
    w1: W1,
    b1: [f64; MLP_HIDDEN],
    w2: W2,
    b2: [f64; MLP_OUTPUTS],
    xs: &[[f64; MLP_INPUTS]],
    labels: &[usize],
) -> (f64, [f64; MLP_PARAMS]) {
    type Kept = ([f64; MLP_HIDDEN], [f64; MLP_OUTPUTS], f64);
    thread_local!(static KEPT: RefCell<Vec<Kept>> = const { RefCell::new(Vec::new()) });
    KEPT.with_borrow_mut(|kept| {
        kept.clear();
        let mut total = 0.0;
        for (x, &label) in xs.iter().zip(labels) {
            let mut h = [0.0; MLP_HIDDEN];
            for j in 0..MLP_HIDDEN {
                let mut s = b1[j];
                for i in 0..MLP_INPUTS {
                    s += w1[j][i] * x[i];
                }
                h[j] = s.tanh();
            }
            let mut z = [0.0; MLP_OUTPUTS];
            for k in 0..MLP_OUTPUTS {
                let mut s = b2[k];
                for j in 0..MLP_HIDDEN {
                    s += w2[k][j] * h[j];
                }
                z[k] = s;
            }
            let mut m = z[0];
            for k in 1..MLP_OUTPUTS {
                m = m.max(z[k]);
            }
            let (mut e, mut sum) = ([0.0; MLP_OUTPUTS], 0.0);
            for k in 0..MLP_OUTPUTS {
                e[k] = (z[k] - m).exp();
                sum += e[k];
            }
            total += m + sum.ln() - z[label];
            kept.push((h, e, sum));
        }
        let n = xs.len() as f64;
        let d_row = 1.0 / n;
        let mut g = [0.0; MLP_PARAMS];
        for ((&(h, e, sum), x), &label) in kept.iter().zip(xs).zip(labels).rev() {
            let d_sum = d_row / sum;
            let mut d_h = [0.0; MLP_HIDDEN];
            for k in 0..MLP_OUTPUTS {
                let mut d_z = d_sum * e[k];
                if k == label {
                    d_z -= d_row;
                }
                for j in 0..MLP_HIDDEN {
                    g[MLP_W2 + k * MLP_HIDDEN + j] += d_z * h[j];
                    d_h[j] += d_z * w2[k][j];
                }
                g[MLP_B2 + k] += d_z;
            }
            for j in 0..MLP_HIDDEN {
                let d_s = d_h[j] * (1.0 - h[j] * h[j]);
                for i in 0..MLP_INPUTS {
                    g[j * MLP_INPUTS + i] += d_s * x[i];
                }
                g[MLP_B1 + j] += d_s;
            }
        }
        (total / n, g)
    })
}

#[allow(clippy::needless_range_loop)]
fn mlp_batch_generic<D: DualNum<Primitive = f64> + Copy>(
    w1: &[[D; MLP_INPUTS]; MLP_HIDDEN],
    b1: &[D; MLP_HIDDEN],
    w2: &[[D; MLP_HIDDEN]; MLP_OUTPUTS],
    b2: &[D; MLP_OUTPUTS],
    xs: &[[f64; MLP_INPUTS]],
    labels: &[usize],
) -> D {
    let mut total = D::from(0.0);
    for (x, &label) in xs.iter().zip(labels) {
        let mut h = *b1;
        for j in 0..MLP_HIDDEN {
            for i in 0..MLP_INPUTS {
                h[j] += w1[j][i] * x[i];
            }
            h[j] = h[j].tanh();
        }
        let mut z = *b2;
        for k in 0..MLP_OUTPUTS {
            for j in 0..MLP_HIDDEN {
                z[k] += w2[k][j] * h[j];
            }
        }
        let mut m = z[0].re();
        for k in 1..MLP_OUTPUTS {
            m = m.max(z[k].re());
        }
        let mut sum = D::from(0.0);
        for k in 0..MLP_OUTPUTS {
            sum += (z[k] - m).exp();
        }
        total += sum.ln() + m - z[label];
    }
    total / xs.len() as f64
}

/// Directions per forward pass of [`mlp_batch_dual`]: one row of `w1`.
const MLP_DUAL_CHUNK: usize = MLP_INPUTS;

/// Forward mode needs one direction per parameter. One `DualSVec64<1210>` pass would carry
/// 1,210 derivatives in every value (about 10 kB each, 10 MB for `w1` alone on the stack), so
/// this runs ForwardDiff.jl-style chunks instead: ceil(1,210 / 64) = 19 passes, each seeding
/// 64 parameters with `DualSVec64<64>` and the rest as constants. num-dual keeps a constant's
/// derivative as `None`, so the operations that no seeded parameter reaches (in a `w1` chunk,
/// the other 15 hidden units) cost little more than `f64` arithmetic. Chosen by measurement
/// on this machine (one run, 2026-12-01): chunks of 64 took 10.7 ms, of 121 (10 passes)
/// 14.7 ms, of 16 (76 passes) 36 ms, of 4 64 ms, and 1,210 `Dual64` passes, one per
/// direction, 87 ms.
fn mlp_batch_dual(
    w1: W1,
    b1: [f64; MLP_HIDDEN],
    w2: W2,
    b2: [f64; MLP_OUTPUTS],
    xs: &[[f64; MLP_INPUTS]],
    labels: &[usize],
) -> (f64, [f64; MLP_PARAMS]) {
    type D = DualSVec64<MLP_DUAL_CHUNK>;
    let mut value = f64::NAN;
    let mut g = [0.0; MLP_PARAMS];
    for start in (0..MLP_PARAMS).step_by(MLP_DUAL_CHUNK) {
        let seed = |index: usize, v: f64| {
            let d = D::from_re(v);
            if (start..start + MLP_DUAL_CHUNK).contains(&index) {
                d.derivative(index - start)
            } else {
                d
            }
        };
        let w1: [[D; MLP_INPUTS]; MLP_HIDDEN] =
            std::array::from_fn(|j| std::array::from_fn(|i| seed(j * MLP_INPUTS + i, w1[j][i])));
        let b1: [D; MLP_HIDDEN] = std::array::from_fn(|j| seed(MLP_B1 + j, b1[j]));
        let w2: [[D; MLP_HIDDEN]; MLP_OUTPUTS] = std::array::from_fn(|k| {
            std::array::from_fn(|j| seed(MLP_W2 + k * MLP_HIDDEN + j, w2[k][j]))
        });
        let b2: [D; MLP_OUTPUTS] = std::array::from_fn(|k| seed(MLP_B2 + k, b2[k]));
        let loss = mlp_batch_generic(&w1, &b1, &w2, &b2, xs, labels);
        value = loss.re;
        let eps = loss.eps.unwrap_generic(Const::<MLP_DUAL_CHUNK>, U1);
        for (slot, d) in g[start..].iter_mut().zip(eps.iter()) {
            *slot = *d;
        }
    }
    (value, g)
}

#[allow(clippy::needless_range_loop)]
fn mlp_batch_reverse(
    w1: W1,
    b1: [f64; MLP_HIDDEN],
    w2: W2,
    b2: [f64; MLP_OUTPUTS],
    xs: &[[f64; MLP_INPUTS]],
    labels: &[usize],
) -> (f64, [f64; MLP_PARAMS]) {
    let tape = reverse::Tape::new();
    // Variables in the flat gradient's order, so `grad()[i]` is entry i.
    let w1: [[reverse::Var; MLP_INPUTS]; MLP_HIDDEN] =
        std::array::from_fn(|j| std::array::from_fn(|i| tape.add_var(w1[j][i])));
    let b1: [reverse::Var; MLP_HIDDEN] = std::array::from_fn(|j| tape.add_var(b1[j]));
    let w2: [[reverse::Var; MLP_HIDDEN]; MLP_OUTPUTS] =
        std::array::from_fn(|k| std::array::from_fn(|j| tape.add_var(w2[k][j])));
    let b2: [reverse::Var; MLP_OUTPUTS] = std::array::from_fn(|k| tape.add_var(b2[k]));
    let mut total = tape.add_var(0.0);
    for (x, &label) in xs.iter().zip(labels) {
        let mut h = b1;
        for j in 0..MLP_HIDDEN {
            for i in 0..MLP_INPUTS {
                h[j] = h[j] + w1[j][i] * x[i];
            }
            h[j] = h[j].tanh();
        }
        let mut z = b2;
        for k in 0..MLP_OUTPUTS {
            for j in 0..MLP_HIDDEN {
                z[k] = z[k] + w2[k][j] * h[j];
            }
        }
        let mut m = z[0].val();
        for k in 1..MLP_OUTPUTS {
            m = m.max(z[k].val());
        }
        let mut sum = (z[0] - m).exp();
        for k in 1..MLP_OUTPUTS {
            sum = sum + (z[k] - m).exp();
        }
        total = total + (sum.ln() + m - z[label]);
    }
    let loss = total / xs.len() as f64;
    let grad = loss.grad();
    (loss.val(), std::array::from_fn(|i| grad[i]))
}

fn softmax_models(c: &mut Criterion) {
    let (xs, labels) = iris_rows();
    let (w, b) = iris_start();
    type Iris = (
        &'static str,
        fn(
            [[f64; IRIS_FEATURES]; IRIS_CLASSES],
            [f64; IRIS_CLASSES],
            &[[f64; IRIS_FEATURES]],
            &[usize],
        ) -> (f64, [f64; IRIS_PARAMS]),
    );
    let iris: [Iris; 4] = [
        ("name_grad", |w, b, xs, labels| {
            softmax_iris_grad(w, b, xs, labels).unwrap_or((f64::NAN, [f64::NAN; IRIS_PARAMS]))
        }),
        ("hand_reverse", softmax_iris_hand_reverse),
        ("num_dual", softmax_iris_dual),
        ("reverse", softmax_iris_reverse),
    ];
    let want = softmax_iris_hand_reverse(w, b, &xs, &labels);
    assert_eq!(
        softmax_iris(w, b, &xs, &labels),
        want.0,
        "softmax_iris: the plain function"
    );
    let mut group = c.benchmark_group("softmax_iris");
    for (variant, f) in iris {
        let got = f(w, b, &xs, &labels);
        check("softmax_iris", variant, (got.0, &got.1), (want.0, &want.1));
        group.bench_function(variant, |bench| {
            bench.iter(|| f(black_box(w), black_box(b), &xs, &labels))
        });
    }
    group.finish();

    let (xs, labels) = mlp_batch_data();
    let (w1, b1, w2, b2) = mlp_batch_start();
    type Mlp = (
        &'static str,
        fn(
            W1,
            [f64; MLP_HIDDEN],
            W2,
            [f64; MLP_OUTPUTS],
            &[[f64; MLP_INPUTS]],
            &[usize],
        ) -> (f64, [f64; MLP_PARAMS]),
    );
    let mlp: [Mlp; 5] = [
        ("name_grad", |w1, b1, w2, b2, xs, labels| {
            mlp_batch_grad(w1, b1, w2, b2, xs, labels).unwrap_or((f64::NAN, [f64::NAN; MLP_PARAMS]))
        }),
        ("name_grad_layers", |w1, b1, w2, b2, xs, labels| {
            let p = MlpParams { w1, b1, w2, b2 };
            let mut flat = [f64::NAN; MLP_PARAMS];
            if let Ok((value, gradient)) = mlp_layers_grad(&p, xs, labels) {
                if gradient.write_flat(&mut flat).is_ok() {
                    return (value, flat);
                }
            }
            (f64::NAN, flat)
        }),
        ("hand_reverse", mlp_batch_hand_reverse),
        ("num_dual", mlp_batch_dual),
        ("reverse", mlp_batch_reverse),
    ];
    let want = mlp_batch_hand_reverse(w1, b1, w2, b2, &xs, &labels);
    assert_eq!(
        mlp_batch(w1, b1, w2, b2, &xs, &labels),
        want.0,
        "mlp_batch: the plain function"
    );
    let mut group = c.benchmark_group("mlp_batch");
    // The forward-mode variant takes milliseconds: a small flat sample keeps the group short.
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    for (variant, f) in mlp {
        let got = f(w1, b1, w2, b2, &xs, &labels);
        check("mlp_batch", variant, (got.0, &got.1), (want.0, &want.1));
        group.bench_function(variant, |bench| {
            bench.iter(|| {
                f(
                    black_box(w1),
                    black_box(b1),
                    black_box(w2),
                    black_box(b2),
                    &xs,
                    &labels,
                )
            })
        });
    }
    group.finish();
}

// ---------------------------------------------------------------- logistic regression

/// Labels for the line data: 1 above the line's middle, 0 below.
fn labels(ys: &[f64]) -> Vec<f64> {
    ys.iter()
        .map(|&y| if y > -1.0 { 1.0 } else { 0.0 })
        .collect()
}

/// Cross-entropy of a logistic regression through `special::sigmoid`, a custom rule.
#[differentiable]
fn logistic_rule(w: f64, b: f64, xs: &[f64], ts: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, t) in xs.iter().zip(ts) {
        let p = scalar_autodiff::special::sigmoid(w * x + b);
        total += -(t * p.ln() + (1.0 - t) * (1.0 - p).ln());
    }
    total
}

/// The same loss with the sigmoid written out, differentiated through its operations.
#[differentiable]
fn logistic_inline(w: f64, b: f64, xs: &[f64], ts: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, t) in xs.iter().zip(ts) {
        let p = 1.0 / (1.0 + (-(w * x + b)).exp());
        total += -(t * p.ln() + (1.0 - t) * (1.0 - p).ln());
    }
    total
}

/// Reverse mode by hand: each point's `dL/dp`, times the sigmoid's slope `p (1 - p)`.
fn logistic_hand_reverse(w: f64, b: f64, xs: &[f64], ts: &[f64]) -> (f64, [f64; 2]) {
    let (mut total, mut gw, mut gb) = (0.0, 0.0, 0.0);
    for (x, t) in xs.iter().zip(ts) {
        let p = scalar_autodiff::special::sigmoid(w * x + b);
        total += -(t * p.ln() + (1.0 - t) * (1.0 - p).ln());
        let dp = -(t / p) + (1.0 - t) / (1.0 - p);
        let dz = dp * (p * (1.0 - p));
        gw += dz * x;
        gb += dz;
    }
    (total, [gw, gb])
}

fn logistic(c: &mut Criterion) {
    let (xs, ys) = line_data();
    let ts = labels(&ys);
    type Variant = (
        &'static str,
        fn(f64, f64, &[f64], &[f64]) -> (f64, [f64; 2]),
    );
    let variants: [Variant; 3] = [
        ("name_grad_rule", |w, b, xs, ts| {
            logistic_rule_grad(w, b, xs, ts).unwrap_or((f64::NAN, [f64::NAN; 2]))
        }),
        ("name_grad_inline", |w, b, xs, ts| {
            logistic_inline_grad(w, b, xs, ts).unwrap_or((f64::NAN, [f64::NAN; 2]))
        }),
        ("hand_reverse", logistic_hand_reverse),
    ];
    let want = logistic_hand_reverse(0.5, 0.2, &xs, &ts);
    let mut group = c.benchmark_group("logistic_1000");
    for (variant, f) in variants {
        let got = f(0.5, 0.2, &xs, &ts);
        check_within(
            1e-10,
            "logistic_1000",
            variant,
            (got.0, &got.1),
            (want.0, &want.1),
        );
        group.bench_function(variant, |b| {
            b.iter(|| f(black_box(0.5), black_box(0.2), &xs, &ts))
        });
    }
    group.finish();
}

fn models(c: &mut Criterion) {
    let (xs, ys) = line_data();
    type Line = (
        &'static str,
        fn(f64, f64, &[f64], &[f64]) -> (f64, [f64; 2]),
    );
    let line: [Line; 6] = [
        ("name_grad", |w, b, xs, ys| {
            mse_grad(w, b, xs, ys).unwrap_or((f64::NAN, [f64::NAN; 2]))
        }),
        ("scalar", |w, b, xs, ys| {
            mse_scalar(w, b, xs, ys).unwrap_or((f64::NAN, [f64::NAN; 2]))
        }),
        ("hand", mse_hand),
        ("hand_reverse", mse_hand_reverse),
        ("num_dual", mse_dual),
        ("reverse", mse_reverse),
    ];
    let want = mse_hand(0.5, 0.2, &xs, &ys);
    assert_eq!(mse(0.5, 0.2, &xs, &ys), want.0, "mse: the plain function");
    let mut group = c.benchmark_group("mse_1000");
    for (variant, f) in line {
        let got = f(0.5, 0.2, &xs, &ys);
        check("mse_1000", variant, (got.0, &got.1), (want.0, &want.1));
        group.bench_function(variant, |b| {
            b.iter(|| f(black_box(0.5), black_box(0.2), &xs, &ys))
        });
    }
    group.finish();

    type Net = (&'static str, fn([f64; 9], &[[f64; 3]]) -> (f64, [f64; 9]));
    let net: [Net; 6] = [
        ("name_grad", |p, d| {
            mlp_grad(p, d).unwrap_or((f64::NAN, [f64::NAN; 9]))
        }),
        ("scalar", |p, d| {
            mlp_scalar(p, d).unwrap_or((f64::NAN, [f64::NAN; 9]))
        }),
        ("hand", mlp_hand),
        ("hand_reverse", mlp_hand_reverse),
        ("num_dual", mlp_dual),
        ("reverse", mlp_reverse),
    ];
    let want = mlp_hand(MLP_START, &XOR);
    assert_eq!(mlp(MLP_START, &XOR), want.0, "xor_mlp: the plain function");
    let mut group = c.benchmark_group("xor_mlp");
    for (variant, f) in net {
        let got = f(MLP_START, &XOR);
        check("xor_mlp", variant, (got.0, &got.1), (want.0, &want.1));
        group.bench_function(variant, |b| b.iter(|| f(black_box(MLP_START), &XOR)));
    }
    group.finish();
}

/// The first call on a fresh thread against a warm one: each sample spawns a thread and
/// times one call of `mlp_batch_grad` in it, the very first (an empty value stack, which
/// grows as the forward sweep pushes) or the second (the stack the first one left).
/// Spawning is not timed.
fn first_call(c: &mut Criterion) {
    use std::time::{Duration, Instant};
    let (xs, labels) = mlp_batch_data();
    let (w1, b1, w2, b2) = mlp_batch_start();
    let mut group = c.benchmark_group("first_call_mlp_batch");
    for (variant, warm) in [("first", false), ("warm", true)] {
        group.bench_function(variant, |bench| {
            bench.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let (xs, labels) = (&xs, &labels);
                    total += std::thread::scope(|scope| {
                        scope
                            .spawn(move || {
                                let call = || mlp_batch_grad(w1, b1, w2, b2, xs, labels);
                                if warm {
                                    black_box(call().ok());
                                }
                                let start = Instant::now();
                                black_box(call().ok());
                                start.elapsed()
                            })
                            .join()
                            .expect("a call does not panic")
                    });
                }
                total
            })
        });
    }
    group.finish();
}

// ---------------------------------------------------------------- the MLP batch on threads

/// `mlp_batch_parallel` (with `--features rayon`): the 64-16-10 MLP over a batch of 256 rows.
/// One `name_grad` call over the whole batch on the bench's thread, against
/// `parallel::batch_grad` in chunks of 128 and 64 rows called from the bench's thread (the
/// work runs on rayon's global pool, one thread per core, while the caller waits), the same
/// chunks of 128 with the timing loop itself inside a pool of as many threads (the loop's
/// thread takes a share of the chunks: no thread waits for another to wake it), the same
/// pool entered with `install` on every call, two
/// threads spawned for every call (`std::thread::scope`, each a first call on a fresh
/// tape: what a pool's warm threads save), and `batch_grad`'s own cost: chunks that
/// compute nothing, from outside the pool and inside it.
fn parallel_batch(c: &mut Criterion) {
    #[cfg(feature = "rayon")]
    parallel_batch::bench(c);
    #[cfg(not(feature = "rayon"))]
    let _ = c;
}

#[cfg(feature = "rayon")]
mod parallel_batch {
    use super::*;
    use scalar_autodiff::parallel;

    const ROWS: usize = 256;

    type Gradient = Result<(f64, [f64; MLP_PARAMS])>;

    /// `mlp_batch` as a sum over the rows it is given times `scale`: with `scale` 1/256 the
    /// chunks' results add up to the whole batch's mean (their own means would not).
    #[allow(clippy::needless_range_loop, clippy::too_many_arguments)]
    #[differentiable]
    fn mlp_batch_sum(
        w1: [[f64; MLP_INPUTS]; MLP_HIDDEN],
        b1: [f64; MLP_HIDDEN],
        w2: [[f64; MLP_HIDDEN]; MLP_OUTPUTS],
        b2: [f64; MLP_OUTPUTS],
        xs: &[[f64; MLP_INPUTS]],
        labels: &[usize],
        #[constant] scale: f64,
    ) -> f64 {
        let mut total = 0.0;
        for (x, &label) in xs.iter().zip(labels) {
            let mut h = [0.0; MLP_HIDDEN];
            for j in 0..MLP_HIDDEN {
                let mut s = b1[j];
                for i in 0..MLP_INPUTS {
                    s += w1[j][i] * x[i];
                }
                h[j] = s.tanh();
            }
            let mut z = [0.0; MLP_OUTPUTS];
            for k in 0..MLP_OUTPUTS {
                let mut s = b2[k];
                for j in 0..MLP_HIDDEN {
                    s += w2[k][j] * h[j];
                }
                z[k] = s;
            }
            let mut m = z[0].detach();
            for k in 1..MLP_OUTPUTS {
                m = m.max(z[k].detach());
            }
            let mut sum = 0.0;
            for k in 0..MLP_OUTPUTS {
                sum += (z[k] - m).exp();
            }
            total += m + sum.ln() - z[label];
        }
        total * scale
    }

    pub(super) fn bench(c: &mut Criterion) {
        let (xs, labels) = mlp_batch_rows(ROWS);
        let (w1, b1, w2, b2) = mlp_batch_start();
        let scale = 1.0 / ROWS as f64;
        let rows = |range: std::ops::Range<usize>| {
            mlp_batch_sum_grad(
                black_box(w1),
                b1,
                w2,
                b2,
                &xs[range.clone()],
                &labels[range],
                scale,
            )
        };
        let whole = || rows(0..ROWS);
        let chunks = |chunk_len| parallel::batch_grad_ranges(ROWS, chunk_len, rows);
        // What a user writes without a pool: a thread per chunk, spawned on every call.
        let fresh_threads = || -> Gradient {
            let (first, second) = std::thread::scope(|scope| {
                let first = scope.spawn(|| rows(0..128));
                let second = scope.spawn(|| rows(128..ROWS));
                let join = "a chunk does not panic";
                (first.join().expect(join), second.join().expect(join))
            });
            let ((value, mut gradient), (more, part)) = (first?, second?);
            gradient.iter_mut().zip(part).for_each(|(g, p)| *g += p);
            Ok((value + more, gradient))
        };
        let variants: [(&str, &dyn Fn() -> Gradient); 4] = [
            ("name_grad_whole", &whole),
            ("batch_grad_128", &|| chunks(128)),
            ("batch_grad_64", &|| chunks(64)),
            ("fresh_threads_128", &fresh_threads),
        ];
        let want = mlp_batch_hand_reverse(w1, b1, w2, b2, &xs, &labels);
        let mut group = c.benchmark_group("mlp_batch_parallel");
        for (variant, f) in variants {
            let got = f().expect("a gradient");
            check(
                "mlp_batch_parallel",
                variant,
                (got.0, &got.1),
                (want.0, &want.1),
            );
            group.bench_function(variant, |bench| bench.iter(|| f().ok()));
        }

        // The training loop inside the pool: the same bits as from outside it.
        let pool = parallel::rayon::ThreadPoolBuilder::new()
            .num_threads(parallel::rayon::current_num_threads())
            .build()
            .expect("a thread pool");
        let inside = pool.install(|| chunks(128)).expect("a gradient");
        let outside = chunks(128).expect("a gradient");
        assert!(
            inside.0.to_bits() == outside.0.to_bits()
                && inside
                    .1
                    .iter()
                    .zip(&outside.1)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
            "mlp_batch_parallel: batch_grad_128 inside a pool gave other bits"
        );
        group.bench_function("batch_grad_128_in_pool", |bench| {
            bench.iter_custom(|iters| {
                pool.install(|| {
                    let start = std::time::Instant::now();
                    for _ in 0..iters {
                        black_box(chunks(128).ok());
                    }
                    start.elapsed()
                })
            })
        });
        // The same pool entered on every step instead: each `install` from outside the
        // pool is a hop to a worker and back, as a call from outside the global pool is.
        group.bench_function("batch_grad_128_install_per_step", |bench| {
            bench.iter(|| pool.install(|| chunks(128).ok()))
        });

        // What `batch_grad` itself costs: two chunks that compute nothing (a zero gradient
        // of the MLP's size, still summed), called from outside the pool and inside it.
        let no_work = |_rows: std::ops::Range<usize>| -> Gradient { Ok((0.0, [0.0; MLP_PARAMS])) };
        let dispatch = || parallel::batch_grad_ranges(ROWS, 128, no_work).ok();
        group.bench_function("dispatch_only_128", |bench| bench.iter(dispatch));
        group.bench_function("dispatch_only_128_in_pool", |bench| {
            bench.iter_custom(|iters| {
                pool.install(|| {
                    let start = std::time::Instant::now();
                    for _ in 0..iters {
                        black_box(dispatch());
                    }
                    start.elapsed()
                })
            })
        });
        group.finish();
    }
}

// ---------------------------------------------------------------- second order

#[differentiable]
fn rosenbrock2(x: f64, y: f64) -> f64 {
    (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2)
}

#[differentiable]
fn rosenbrock10(x: [f64; 10]) -> f64 {
    let mut total = 0.0;
    for i in 0..9 {
        total = total + 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

fn rosenbrock_generic<D: DualNum<Primitive = f64> + Copy>(x: &[D]) -> D {
    let mut total = D::zero();
    for i in 0..x.len() - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = D::one() - x[i];
        total = total + a * a * 100.0 + b * b;
    }
    total
}

/// The value, gradient and Hessian (tridiagonal) of the N-dimensional Rosenbrock
/// function, by hand.
fn rosenbrock_hand<const N: usize>(x: [f64; N]) -> Second<N> {
    let (mut value, mut g, mut h) = (0.0, [0.0; N], [[0.0; N]; N]);
    for i in 0..N - 1 {
        let a = x[i + 1] - x[i] * x[i];
        let b = 1.0 - x[i];
        value += 100.0 * a * a + b * b;
        g[i] += -400.0 * a * x[i] - 2.0 * b;
        g[i + 1] += 200.0 * a;
        h[i][i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        h[i + 1][i + 1] += 200.0;
        h[i][i + 1] += -400.0 * x[i];
        h[i + 1][i] += -400.0 * x[i];
    }
    (value, g, h)
}

fn rosenbrock_dual<const N: usize>(x: [f64; N]) -> Second<N>
where
    Const<N>: nalgebra::DimName,
{
    let (value, g, h) = num_dual::hessian(
        |v: SVector<num_dual::Dual2SVec64<N>, N>| rosenbrock_generic(v.as_slice()),
        &SVector::from(x),
    );
    let h = std::array::from_fn(|i| std::array::from_fn(|j| h[(i, j)]));
    (value, std::array::from_fn(|i| g[i]), h)
}

/// Panics unless two Hessians agree to `tolerance` relative to the largest entry.
fn check_hessian<const N: usize>(
    case: &str,
    variant: &str,
    got: &[[f64; N]; N],
    want: &[[f64; N]; N],
) {
    let scale = want.iter().flatten().fold(1.0f64, |m, v| m.max(v.abs()));
    for i in 0..N {
        for j in 0..N {
            assert!(
                (got[i][j] - want[i][j]).abs() <= 1e-13 * scale,
                "{case}/{variant}: h[{i}][{j}] = {} against {}",
                got[i][j],
                want[i][j]
            );
        }
    }
}

/// A value, gradient and Hessian.
type Second<const N: usize> = (f64, [f64; N], [[f64; N]; N]);

fn hessian_case<const N: usize>(
    c: &mut Criterion,
    name: &str,
    x: [f64; N],
    ours: fn([f64; N]) -> Second<N>,
) where
    Const<N>: nalgebra::DimName,
{
    type Variant<const N: usize> = (&'static str, fn([f64; N]) -> Second<N>);
    let variants: [Variant<N>; 3] = [
        ("name_hessian", ours),
        ("hand", rosenbrock_hand::<N>),
        ("num_dual", rosenbrock_dual::<N>),
    ];
    let want = rosenbrock_hand(x);
    let mut group = c.benchmark_group(name);
    for (variant, f) in variants {
        let got = f(x);
        check(name, variant, (got.0, &got.1), (want.0, &want.1));
        check_hessian(name, variant, &got.2, &want.2);
        group.bench_function(variant, |b| b.iter(|| f(black_box(x))));
    }
    group.finish();
}

fn second_order(c: &mut Criterion) {
    hessian_case(
        c,
        "hessian_rosenbrock_2",
        [-1.2, 1.0],
        |[x, y]| match rosenbrock2_hessian(x, y) {
            Ok((value, g, h)) => (value, g, *h),
            Err(_) => (f64::NAN, [f64::NAN; 2], [[f64::NAN; 2]; 2]),
        },
    );
    let x10 = [-1.2, 1.0, 0.5, -0.3, 2.0, 1.5, 0.0, -2.0, 0.7, 1.1];
    hessian_case(
        c,
        "hessian_rosenbrock_10",
        x10,
        |x| match rosenbrock10_hessian(x) {
            Ok((value, g, h)) => (value, g, *h),
            Err(_) => (f64::NAN, [f64::NAN; 10], [[f64::NAN; 10]; 10]),
        },
    );

    // `name_hvp` on the MLP batch against `name_grad` (compiled) and the graph's
    // `backward` (the tape `name_hvp` records on), with a tangent of ±1s.
    let (xs, labels) = mlp_batch_data();
    let (w1, b1, w2, b2) = mlp_batch_start();
    let mut state = 0x7a9;
    let tangent: [f64; MLP_PARAMS] = std::array::from_fn(|_| 2.0 * lcg(&mut state) - 1.0);
    let (value, gradient, product) =
        mlp_batch_hvp(w1, b1, w2, b2, &xs, &labels, tangent).expect("the MLP's hvp");
    let want = mlp_batch_hand_reverse(w1, b1, w2, b2, &xs, &labels);
    check(
        "mlp_batch_hvp",
        "name_hvp",
        (value, &gradient),
        (want.0, &want.1),
    );
    // The product against a central difference of the gradient along the tangent.
    let step = 1e-5;
    let moved = |sign: f64| {
        let mut flat = [0.0; MLP_PARAMS];
        let mut w = (w1, b1, w2, b2);
        let mut at = 0;
        let mut next = |v: &mut f64| {
            *v += sign * step * tangent[at];
            at += 1;
        };
        w.0.iter_mut().flatten().for_each(&mut next);
        w.1.iter_mut().for_each(&mut next);
        w.2.iter_mut().flatten().for_each(&mut next);
        w.3.iter_mut().for_each(&mut next);
        let (_, g) = mlp_batch_grad(w.0, w.1, w.2, w.3, &xs, &labels).expect("a gradient");
        flat.copy_from_slice(&g);
        flat
    };
    let (up, down) = (moved(1.0), moved(-1.0));
    let scale = product.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for i in 0..MLP_PARAMS {
        let central = (up[i] - down[i]) / (2.0 * step);
        assert!(
            (product[i] - central).abs() <= 1e-6 * scale,
            "mlp_batch_hvp: product[{i}] = {} against {central}",
            product[i]
        );
    }
    // The same product through the layer helpers (`mlp_layers`: a parameter struct, two
    // layer helpers and a loss helper), whose halves run on duals: the same numbers.
    let params = MlpParams { w1, b1, w2, b2 };
    let layered_tangent = MlpParams {
        w1: std::array::from_fn(|j| std::array::from_fn(|i| tangent[j * MLP_INPUTS + i])),
        b1: std::array::from_fn(|j| tangent[MLP_HIDDEN * MLP_INPUTS + j]),
        w2: std::array::from_fn(|k| {
            std::array::from_fn(|j| tangent[MLP_HIDDEN * (MLP_INPUTS + 1) + k * MLP_HIDDEN + j])
        }),
        b2: std::array::from_fn(|k| tangent[MLP_PARAMS - MLP_OUTPUTS + k]),
    };
    let (layered_value, layered_gradient, layered_product) =
        mlp_layers_hvp(&params, &xs, &labels, layered_tangent.clone()).expect("the layers' hvp");
    assert_eq!(
        layered_value.to_bits(),
        value.to_bits(),
        "mlp_layers_hvp's value"
    );
    assert_eq!(
        layered_gradient.to_flat(),
        gradient.to_vec(),
        "mlp_layers_hvp's gradient"
    );
    for (i, (a, b)) in layered_product.to_flat().iter().zip(&product).enumerate() {
        assert!(
            (a - b).abs() <= 1e-12 * scale,
            "mlp_layers_hvp: product[{i}] = {a} against mlp_batch_hvp's {b}"
        );
    }
    let mut group = c.benchmark_group("mlp_batch_hvp");
    group.sample_size(20);
    group.bench_function("name_grad", |bench| {
        bench.iter(|| mlp_batch_grad(black_box(w1), b1, w2, b2, &xs, &labels).ok())
    });
    group.bench_function("graph_backward", |bench| {
        bench.iter(|| {
            let tracked = |w: &[f64]| -> Vec<Scalar> {
                w.iter()
                    .map(|&v| Scalar::variable(v).expect("finite"))
                    .collect()
            };
            let p1 = tracked(w1.as_flattened());
            let q1 = tracked(&b1);
            let p2 = tracked(w2.as_flattened());
            let q2 = tracked(&b2);
            let rows = |p: &[Scalar], cols: usize| -> Vec<Vec<Scalar>> {
                p.chunks(cols).map(<[Scalar]>::to_vec).collect()
            };
            let w1s: [[Scalar; MLP_INPUTS]; MLP_HIDDEN] = rows(&p1, MLP_INPUTS)
                .into_iter()
                .map(|row| row.try_into().expect("a row"))
                .collect::<Vec<_>>()
                .try_into()
                .expect("rows");
            let w2s: [[Scalar; MLP_HIDDEN]; MLP_OUTPUTS] = rows(&p2, MLP_HIDDEN)
                .into_iter()
                .map(|row| row.try_into().expect("a row"))
                .collect::<Vec<_>>()
                .try_into()
                .expect("rows");
            let b1s: [Scalar; MLP_HIDDEN] = q1.try_into().expect("b1");
            let b2s: [Scalar; MLP_OUTPUTS] = q2.try_into().expect("b2");
            let loss = mlp_batch_graph(&w1s, &b1s, &w2s, &b2s, &xs, &labels).expect("a graph");
            loss.backward().expect("a pass");
            black_box(loss.value())
        })
    });
    group.bench_function("name_hvp", |bench| {
        bench.iter(|| mlp_batch_hvp(black_box(w1), b1, w2, b2, &xs, &labels, tangent).ok())
    });
    group.bench_function("layers_name_hvp", |bench| {
        bench
            .iter(|| mlp_layers_hvp(black_box(&params), &xs, &labels, layered_tangent.clone()).ok())
    });
    group.finish();
}

criterion_group!(
    benches,
    scalar_cases,
    chain,
    models,
    logistic,
    softmax_models,
    first_call,
    parallel_batch,
    second_order
);
criterion_main!(benches);
