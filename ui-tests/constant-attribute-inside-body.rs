// Lesson: `#[constant]` marks an `f64` parameter as data left out of the gradient (a
// hyperparameter). Inside the body, whether a value is tracked follows from what it is
// computed from; for a value without gradient write `.detach()`.
use scalar_autodiff::differentiable;

#[differentiable]
fn scaled(x: f64) -> f64 {
    #[constant]
    let scale = x * 2.0;
    scale * x
}

fn main() {
    let _ = scaled(1.5);
    let _ = scaled_grad(1.5);
}
