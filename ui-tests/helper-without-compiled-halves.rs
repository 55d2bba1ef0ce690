// Lesson: a compiled gradient calls each helper's own compiled halves (a forward and a
// reverse sweep of its own). `gate` below is written `#[differentiable(tape)]`: every call
// of it records on the tape, so it has no halves, and `loss_grad`, which would call them,
// is an error at the call rather than a gradient that silently runs on the tape. Drop
// `(tape)` from the helper, or write `#[differentiable(tape)]` on `loss` too to take the
// tape knowingly. (A helper whose body its halves do not follow has no halves either: the
// error's note `required by this bound` then points at the part of the helper they stop at.)
use scalar_autodiff::differentiable;

#[differentiable(tape)]
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
