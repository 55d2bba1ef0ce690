// Lesson: a compiled gradient calls each helper's own compiled halves (a forward and a
// reverse sweep of its own). `relu` below returns its parameter as it is: on the tape its
// result *is* the caller's node, which the halves cannot hand back in the tape's order,
// so `relu` has no halves, and `loss_grad`, which would call them, is an error at the call
// rather than a gradient that silently runs on the tape. Write `x.max(0.0)` (an operation
// of its own, which the halves follow), or `#[differentiable(tape)]` on `loss` to take the
// tape knowingly. (A helper written `#[differentiable(tape)]` has no halves either.)
use scalar_autodiff::differentiable;

#[differentiable]
fn relu(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

#[differentiable]
fn loss(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += relu(w[0] * x + w[1]);
    }
    total
}

fn main() {
    let _ = loss_grad([0.5, -0.25], &[1.0, 2.0]);
    let _ = relu_grad(1.5);
}
