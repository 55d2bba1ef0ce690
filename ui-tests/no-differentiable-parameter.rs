// Lesson: the gradient is taken with respect to the `f64` and `[f64; K]` parameters. When
// every parameter is data (of another type, or marked `#[constant]`) there is nothing to
// differentiate.
use scalar_autodiff::differentiable;

#[differentiable]
fn mean(xs: &[f64], #[constant] scale: f64) -> f64 {
    scale * xs.iter().sum::<f64>() / xs.len() as f64
}

fn main() {
    let _ = mean(&[1.0, 2.0], 1.0);
}
