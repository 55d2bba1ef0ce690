// Lesson: every parameter of a #[differentiable] function becomes a graph variable, and
// gradients exist only for f64 values. Take `f64` parameters and convert other inputs
// (here a count) to `f64` before the call.
use autodiff::differentiable;

#[differentiable]
fn average(total: f64, count: u32) -> f64 {
    total / count
}

fn main() {
    let _ = average(3.0, 2);
    let _ = average_grad(3.0, 2.0);
}
