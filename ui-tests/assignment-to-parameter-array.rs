// Lesson: the elements of a parameter array are the graph variables the gradient is taken
// for; assigning one would cut it out of the graph. Copy it into a `let mut` local.
use scalar_autodiff::differentiable;

#[differentiable]
fn clamped(w: [f64; 2]) -> f64 {
    if w[0] > 1.0 {
        w[0] = 1.0;
    }
    w[0] * w[1]
}

fn main() {
    let _ = clamped([1.0, 2.0]);
    let _ = clamped_grad([1.0, 2.0]);
}
