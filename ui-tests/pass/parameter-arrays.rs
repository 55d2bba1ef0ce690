// Parameter arrays compile: `[f64; K]` with a literal or a const length, read by index and
// by `.len()`, mixed with scalars and data; the gradient is flattened in parameter order.
#![deny(warnings)]

use scalar_autodiff::differentiable;

const HIDDEN: usize = 2;

/// `w[0] x² + w[1] x + b`.
#[differentiable]
fn quadratic(w: [f64; 2], b: f64, x: f64) -> f64 {
    w[0] * x * x + w[1] * x + b
}

/// A sum of `w[i] * x^i` with a const length.
#[differentiable]
fn series(w: [f64; HIDDEN], x: f64, extra: [f64; 1]) -> f64 {
    let mut total = extra[0];
    for i in 0..w.len() {
        total += w[i] * x.powi(i as i32);
    }
    total
}

pub fn main() {
    let (value, gradient) = quadratic_grad([1.0, 2.0], 3.0, 2.0).unwrap();
    assert_eq!(value, 4.0 + 4.0 + 3.0);
    assert_eq!(gradient, [4.0, 2.0, 1.0, 2.0 * 1.0 * 2.0 + 2.0]);
    let (value, gradient): (f64, [f64; HIDDEN + 2]) = series_grad([1.0, 2.0], 3.0, [0.5]).unwrap();
    assert_eq!(value, 0.5 + 1.0 + 6.0);
    assert_eq!(gradient, [1.0, 3.0, 2.0, 1.0]);
}
