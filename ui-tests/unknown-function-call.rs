// Lesson: an attribute sees only the tokens of the function it is attached to. It cannot
// look inside `helper`, so it cannot record what `helper` computes in the graph. Write the
// math inline; the f64 methods work in both forms, `x.exp()` and `f64::exp(x)`.
use autodiff::differentiable;

fn helper(v: f64) -> f64 {
    v * v
}

#[differentiable]
fn outer(x: f64) -> f64 {
    helper(x) + 1.0
}

fn main() {
    let _ = helper(1.0);
    let _ = outer(1.5);
    let _ = outer_grad(1.5);
}
