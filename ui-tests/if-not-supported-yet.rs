// Lesson: branches are not supported yet: this version rewrites straight-line code only.
// Many branches on f64 values are smooth choices the runtime already differentiates:
// `if x > 0.0 { x } else { 0.0 }` is `x.max(0.0)`, and `if x < 0.0 { -x } else { x }` is
// `x.abs()`.
use autodiff::differentiable;

#[differentiable]
fn relu(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

fn main() {
    let _ = relu(1.5);
    let _ = relu_grad(1.5);
}
