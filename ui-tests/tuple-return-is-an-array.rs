// Lesson: a #[differentiable] function has one result to differentiate (`-> f64`) or an
// array of results (`-> [f64; M]`), whose `name_jacobian` gives the gradient of every
// output. A tuple of `f64`s is written as an array: `[a, b]`, read back by index.
use scalar_autodiff::differentiable;

#[differentiable]
fn polar(r: f64, theta: f64) -> (f64, f64) {
    (r * theta.cos(), r * theta.sin())
}

fn main() {
    let _ = polar(1.0, 0.5);
}
