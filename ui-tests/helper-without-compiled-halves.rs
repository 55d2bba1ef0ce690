// Lesson: a compiled gradient calls each helper's own compiled halves (a forward and a
// reverse sweep of its own). `gate` below assigns its parameter to a local (`m = y;`) and
// then computes with the copy: on the tape `m * m` adds both of its edges straight into the
// caller's `y`, which the halves cannot hand back in the tape's order, so `gate` has no
// halves, and `loss_grad`, which would call them, is an error at the call rather than a
// gradient that silently runs on the tape. Write `m = m.max(y)` (an operation of its own,
// which the halves follow), or `#[differentiable(tape)]` on `loss` to take the tape
// knowingly. (A helper written `#[differentiable(tape)]` has no halves either.)
use scalar_autodiff::differentiable;

#[differentiable]
fn gate(x: f64, y: f64) -> f64 {
    let mut m = x;
    if y > m {
        m = y;
    }
    m * m
}

#[differentiable]
fn loss(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += gate(w[0] * x, w[1]);
    }
    total
}

fn main() {
    let _ = loss_grad([0.5, -0.25], &[1.0, 2.0]);
    let _ = gate_grad(1.5, 0.5);
}
