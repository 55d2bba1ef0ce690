// Lesson: #[differentiable] takes one argument, `derivative = slope`, and nothing else. An
// unknown argument is an error rather than silently ignored, so a typo never changes what
// gets differentiated.
use scalar_autodiff::differentiable;

#[differentiable(order = 2)]
fn square(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = square(1.5);
    let _ = square_grad(1.5);
}
