// Lesson: reverse mode differentiates one f64 output with respect to f64 inputs, so a
// #[differentiable] function returns exactly `f64`. Other float types carry no gradient in
// this runtime; convert the f64 result (or its gradient) afterwards if you need to.
use scalar_autodiff::differentiable;

#[differentiable]
fn half(x: f64) -> f32 {
    x * 0.5
}

fn main() {
    let _ = half(1.5);
    let _ = half_grad(1.5);
}
