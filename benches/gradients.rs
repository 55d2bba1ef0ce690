//! Gradients side by side: `#[differentiable]`'s `name_grad`, the same function on `Scalar`
//! with `backward`, a hand-written derivative (the limit), `num-dual` forward mode and the
//! `reverse` crate. Every variant's result is checked against the hand-written gradient
//! (relative 1e-12) before anything is timed, so a fast wrong answer fails the run.
//!
//! Run with `cargo bench --bench gradients`; `-- --quick` for a shorter run.

use std::hint::black_box;

use autodiff::{differentiable, Scalar, ScalarAutodiffError};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use num_dual::{Dual64, DualNum};

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
    let variants: [Variant; 4] = [
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

criterion_group!(benches, scalar_cases, chain);
criterion_main!(benches);
