// Lesson: a parameter array is read element by element (`w[i]`, or a loop over
// `w.iter()`); the array itself is not a value the graph computes with. It may also be
// passed whole to another #[differentiable] function that takes `[f64; K]`.
use autodiff::differentiable;

#[differentiable]
fn total(w: [f64; 3]) -> f64 {
    let copy = w;
    copy[0] + copy[1] + copy[2]
}

fn main() {
    let _ = total([1.0, 2.0, 3.0]);
    let _ = total_grad([1.0, 2.0, 3.0]);
}
