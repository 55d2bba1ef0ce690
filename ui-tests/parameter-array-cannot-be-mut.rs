// Lesson: each element of a parameter array `w: [f64; K]` is a graph variable the gradient
// is taken for, so the array is read-only in the body. Copy an element into a `let mut`
// local to change it.
use scalar_autodiff::differentiable;

#[differentiable]
fn shifted(mut w: [f64; 2]) -> f64 {
    w[0] = w[0] + 1.0;
    w[0] * w[1]
}

fn main() {
    let _ = shifted([1.0, 2.0]);
    let _ = shifted_grad([1.0, 2.0]);
}
