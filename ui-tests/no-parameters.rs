// Lesson: the gradient is taken with respect to the parameters. A function without any has
// nothing to differentiate; pass the inputs the result depends on as f64 parameters.
use scalar_autodiff::differentiable;

#[differentiable]
fn constant() -> f64 {
    3.0
}

fn main() {
    let _ = constant();
    let _ = constant_grad();
}
