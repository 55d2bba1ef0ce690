// Lesson: `floor` (like `ceil`, `round`, `trunc` and `signum`) is flat almost everywhere:
// its derivative is 0 except at whole numbers, where it jumps. A gradient through it would
// silently be 0, so #[differentiable] refuses it. If the rounded value is meant as a
// constant, say so with `detach()`: `x.detach().floor()` is accepted and carries no gradient.
use scalar_autodiff::differentiable;

#[differentiable]
fn bucket(x: f64) -> f64 {
    x.floor() * 0.5
}

fn main() {
    let _ = bucket(1.5);
    let _ = bucket_grad(1.5);
}
