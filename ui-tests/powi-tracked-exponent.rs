// Lesson: `powi` records its `i32` exponent as part of the operation, so only the base
// carries a gradient, and the exponent must be an integer known without the tracked values.
// For an f64 exponent, or one that depends on the parameters, use `powf`.
use scalar_autodiff::differentiable;

#[differentiable]
fn self_power(x: f64, n: f64) -> f64 {
    x.powi(n)
}

fn main() {
    let _ = self_power(1.5, 2.0);
    let _ = self_power_grad(1.5, 2.0);
}
