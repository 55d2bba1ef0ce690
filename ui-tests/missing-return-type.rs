// Lesson: a function without `-> f64` returns `()`, so there is nothing to differentiate.
// The result of a #[differentiable] function is the `f64` it returns: declare it.
use scalar_autodiff::differentiable;

#[differentiable]
fn forgot(x: f64) {
    x * 2.0
}

fn main() {
    forgot(1.5);
    let _ = forgot_grad(1.5);
}
