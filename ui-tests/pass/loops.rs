// Loops compile: ranges bounded by parameters, lengths and consts (`..` and `..=`), `for &x
// in xs`, `.iter()`, `.zip(..)`, `.enumerate()`, loops over a parameter array, `while` on a
// primal condition, `loop` with `break`, labelled loops and accumulators.
#![deny(warnings)]

use scalar_autodiff::differentiable;

const STEPS: usize = 3;

/// `x` to the power `n + 1`, by repeated multiplication.
#[differentiable]
fn power(x: f64, n: usize) -> f64 {
    let mut y = x;
    for _ in 0..n {
        y *= x;
    }
    y
}

/// Sums over data in every loop shape, and a `while` loop on a primal condition.
#[differentiable]
fn shapes(w: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        total += w * x;
    }
    for x in xs.iter() {
        total += w * x;
    }
    for (x, y) in xs.iter().zip(ys) {
        total += (w * x - y) * (w * x - y);
    }
    for (i, x) in xs.iter().enumerate() {
        total += w * x * i as f64;
    }
    for i in 0..=STEPS {
        total += w * (i as f64);
    }
    let mut grow = w;
    while grow < 100.0 {
        grow = grow * 3.0;
    }
    total + grow
}

/// A dot product over a parameter array, and `loop` with labelled `break`s.
#[differentiable]
fn dot(w: [f64; 3], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for (w_i, x) in w.iter().zip(xs) {
        total += w_i * x;
    }
    let mut count = 0;
    'outer: loop {
        for (i, &w_i) in w.iter().enumerate() {
            if i == 2 {
                break 'outer;
            }
            total += w_i;
            count += 1;
        }
    }
    total + count as f64
}

pub fn main() {
    assert_eq!(power_grad(2.0, 2).unwrap(), (8.0, [12.0]));
    let (xs, ys) = ([1.0, 2.0], [1.0, 3.0]);
    let (value, [dw]) = shapes_grad(0.5, &xs, &ys).unwrap();
    assert_eq!(value, shapes(0.5, &xs, &ys));
    assert!(dw.is_finite());
    let (value, [d0, d1, d2]) = dot_grad([1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
    assert_eq!(value, 4.0 + 10.0 + 18.0 + 1.0 + 2.0 + 2.0);
    assert_eq!((d0, d1, d2), (5.0, 6.0, 6.0));
}
