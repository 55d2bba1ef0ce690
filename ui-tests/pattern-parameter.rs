// Lesson: each parameter becomes one graph variable and one entry of the gradient, in
// parameter order, so each needs a plain name: write `x: f64, y: f64`, not a tuple pattern.
use scalar_autodiff::differentiable;

#[differentiable]
fn norm((x, y): (f64, f64)) -> f64 {
    (x * x + y * y).sqrt()
}

fn main() {
    let _ = norm((3.0, 4.0));
}
