// Lesson: a parameter array is not a number: arithmetic takes its elements (`w[i]`, or a
// loop over `w.iter()`). The whole array may be bound, returned, iterated, or passed to
// another #[differentiable] function that takes `[f64; K]`.
use scalar_autodiff::differentiable;

#[differentiable]
fn total(w: [f64; 3]) -> f64 {
    w * 2.0
}

fn main() {
    let _ = total_grad([1.0, 2.0, 3.0]);
}
