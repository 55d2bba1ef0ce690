// Lesson: only `f64` and `[f64; K]` parameters are differentiated; a parameter of any
// other type (a slice of data here) is data already, so `#[constant]` on it says nothing.
use autodiff::differentiable;

#[differentiable]
fn weighted(w: f64, #[constant] xs: &[f64]) -> f64 {
    w * xs[0]
}

fn main() {
    let _ = weighted(1.5, &[2.0]);
    let _ = weighted_grad(1.5, &[2.0]);
}
