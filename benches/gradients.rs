//! Gradients side by side: `#[differentiable]`'s `name_grad`, the same function on `Scalar`
//! with `backward`, a hand-written derivative (the limit), `num-dual` forward mode and the
//! `reverse` crate; for the two models also the floor of reverse mode written by hand (two
//! sweeps, no tape). Every variant's result is checked against the hand-written gradient
//! (relative 1e-12) before anything is timed, so a fast wrong answer fails the run.
//!
//! Run with `cargo bench --bench gradients`; `-- --quick` for a shorter run.

use std::cell::RefCell;
use std::hint::black_box;

use autodiff::{differentiable, Scalar, ScalarAutodiffError};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nalgebra::SVector;
use num_dual::{gradient, Dual64, DualNum, DualSVec64};

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
    type Variants = [(&'static str, fn(f64) -> (f64, f64)); 5];
    let square: Variants = [
        ("name_grad", |x| unwrap_one(reused_square_grad(x))),
        ("scalar", |x| {
            reused_square_scalar(x).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", reused_square_hand),
        ("num_dual", reused_square_dual),
        ("reverse", reused_square_reverse),
    ];
    let exp_tanh: Variants = [
        ("name_grad", |x| unwrap_one(nonlinear_grad(x))),
        ("scalar", |x| {
            nonlinear_scalar(x).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", nonlinear_hand),
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
    let variants: [Variant; 5] = [
        ("name_grad", |x, n| {
            chain_annotated_grad(x, n).map_or((f64::NAN, f64::NAN), |(v, [g])| (v, g))
        }),
        ("scalar", |x, n| {
            chain_scalar(x, n).unwrap_or((f64::NAN, f64::NAN))
        }),
        ("hand", chain_hand),
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
fn mse_hand_two_sweep(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> (f64, [f64; 2]) {
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

/// [`mse_hand_two_sweep`] for the network: a forward sweep keeping each row's hidden
/// activations and error, then a reverse sweep.
fn mlp_hand_two_sweep(p: [f64; 9], data: &[[f64; 3]]) -> (f64, [f64; 9]) {
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
        ("hand_two_sweep", mse_hand_two_sweep),
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
        ("hand_two_sweep", mlp_hand_two_sweep),
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

criterion_group!(benches, scalar_cases, chain, models);
criterion_main!(benches);
