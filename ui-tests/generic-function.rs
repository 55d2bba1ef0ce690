// Lesson: the gradient is computed on concrete `f64` values, one per parameter, so a
// #[differentiable] function cannot be generic. Write `f64` for every parameter.
use scalar_autodiff::differentiable;

#[differentiable]
fn twice<T>(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = twice::<u8>(1.5);
    let _ = twice_grad(1.5);
}
