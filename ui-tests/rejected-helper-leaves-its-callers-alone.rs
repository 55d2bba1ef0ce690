// Lesson: when #[differentiable] rejects a helper, you see that helper's error and no
// other: the functions that call it still compile as if it were fine, so the first error
// is the one to fix. Here `dense` cannot tell whether `w: W` (a type alias) is
// differentiated; `loss` and `batch`, which lend it arrays, scalars and struct fields,
// report nothing.
use scalar_autodiff::{differentiable, Parameters};

type W = [f64; 2];

#[differentiable]
fn dense(w: W, x: f64) -> f64 {
    w[0] * x + w[1]
}

#[derive(Parameters)]
struct Net {
    w: [f64; 2],
    b: f64,
}

#[differentiable]
fn loss(w: [f64; 2], x: f64) -> f64 {
    let y = dense(w, x * 2.0);
    y * y + dense([x * 3.0, 1.0], 0.5)
}

#[differentiable]
fn batch(#[param] net: &Net, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += dense(net.w, *x) * net.b;
    }
    total
}

fn main() {
    let _ = loss_grad([1.0, 2.0], 3.0);
    let _ = batch_grad(&Net { w: [1.0, 2.0], b: 0.5 }, &[1.0]);
}
