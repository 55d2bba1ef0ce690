// Lesson: integer arithmetic cannot carry a gradient, and Rust never mixes integers with
// `f64` anyway. Inside a #[differentiable] function every number is an `f64` literal such as
// `2.0`; the one place an integer belongs is the exponent of `powi`.
use scalar_autodiff::differentiable;

#[differentiable]
fn double(x: f64) -> f64 {
    x * 2
}

fn main() {
    let _ = double(1.5);
    let _ = double_grad(1.5);
}
