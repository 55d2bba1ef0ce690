// Data parameters compile and pass through untouched: slices, nested arrays, integers,
// booleans, and anything marked `#[constant]` (hyperparameters, a `&Vec`). Plain Rust over
// data alone (casts, closures, iterator sums, macros) stays as written; its `f64` result
// meets the graph as a constant.
#![deny(warnings)]

use scalar_autodiff::differentiable;

/// Mean squared error of a line, with an L2 penalty weighted by a hyperparameter.
#[differentiable]
pub fn penalized(w: f64, b: f64, points: &[[f64; 2]], #[constant] lambda: f64) -> f64 {
    assert!(!points.is_empty(), "no points");
    let n = points.len() as f64;
    let mut total = 0.0;
    for point in points {
        let err = w * point[0] + b - point[1];
        total += err * err;
    }
    total / n + lambda * w * w
}

/// Plain Rust over data: an iterator sum with a closure, an index and a cast.
#[differentiable]
fn centered(x: f64, #[constant] data: &Vec<f64>, skip: usize, flip: bool) -> f64 {
    let mean = data.iter().map(|v| v * 1.0).sum::<f64>() / data.len() as f64;
    let offset = data[skip] * (skip as f64 + 0.5);
    let signed = if flip { -x } else { x };
    signed - mean + offset
}

pub fn main() {
    let points = [[1.0, 3.0], [2.0, 5.0]];
    let (value, gradient) = penalized_grad(2.0, 1.0, &points, 0.1).unwrap();
    assert_eq!(value, penalized(2.0, 1.0, &points, 0.1));
    assert_eq!(gradient.len(), 2);
    let data = vec![1.0, 2.0, 3.0];
    assert_eq!(
        centered_grad(1.0, &data, 1, true).unwrap(),
        (-1.0 - 2.0 + 3.0, [-1.0])
    );
    assert_eq!(centered(1.0, &data, 0, false), 1.0 - 2.0 + 0.5);
}
