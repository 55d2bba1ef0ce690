// Lesson: a parameter that is not `f64` (here a `u32` count) is data: it is passed through
// untouched and has no gradient. Where data meets a tracked value it becomes an `f64`
// constant, so it must be an `f64`; Rust itself does not divide an `f64` by a `u32` either.
// Convert it first: `total / count as f64`.
use scalar_autodiff::differentiable;

#[differentiable]
fn average(total: f64, count: u32) -> f64 {
    total / count
}

fn main() {
    let _ = average(3.0, 2);
    let _ = average_grad(3.0, 2);
}
