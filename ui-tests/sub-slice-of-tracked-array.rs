// Lesson: a helper's differentiated parameter has a fixed shape, and a range of a tracked
// array (`p[0..2]`) has none the rewrite can check. Give each part its own parameter (or
// a field of a `#[derive(scalar_autodiff::Parameters)]` struct) and pass that.
use scalar_autodiff::differentiable;

#[differentiable]
fn norm(v: [f64; 2]) -> f64 {
    v[0] * v[0] + v[1] * v[1]
}

#[differentiable]
fn loss(p: [f64; 4]) -> f64 {
    norm(p[0..2]) + p[3]
}

fn main() {
    let _ = loss_grad([1.0, 2.0, 3.0, 4.0]);
}
