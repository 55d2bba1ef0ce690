// Lesson: only a local declared with its own `let` becomes a graph node when it is assigned
// a tracked value. A `#[constant]` parameter (like other data parameters, loop variables
// and names bound by patterns) stays data, so it cannot hold one. Declare a separate
// `let mut` local for the tracked value.
use scalar_autodiff::differentiable;

#[differentiable]
fn decayed(x: f64, #[constant] mut rate: f64) -> f64 {
    rate = rate * x;
    rate
}

fn main() {
    let _ = decayed(1.5, 0.5);
    let _ = decayed_grad(1.5, 0.5);
}
