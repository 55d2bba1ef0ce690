// Lesson: the gradient is computed on `f64` values, so a #[differentiable] function cannot be
// generic over a type (`T: Float`, `f32`). Sizes can be: `const N: usize` parameters are
// fine (`fn dense<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) -> [f64; O]`).
use scalar_autodiff::differentiable;

#[differentiable]
fn twice<T>(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = twice::<u8>(1.5);
    let _ = twice_grad(1.5);
}
