// Lesson: an assignment rebinds a name to a new graph node, so it needs a `let mut` local
// (or a `mut` parameter), exactly as plain Rust would require.
use scalar_autodiff::differentiable;

#[differentiable]
fn accumulate(x: f64, y: f64) -> f64 {
    x += y;
    x
}

fn main() {
    let _ = accumulate(1.5, 2.0);
    let _ = accumulate_grad(1.5, 2.0);
}
