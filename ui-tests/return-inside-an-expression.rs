// Lesson: `return value` becomes returning the graph node of `value`, which the rewrite can
// do where the `return` stands on its own: as a statement, as the final expression, or as
// the value of a branch. Inside another expression it is refused; use a `match` or `if`.
use scalar_autodiff::differentiable;

#[differentiable]
fn scaled_first(x: f64, xs: &[f64]) -> f64 {
    x * xs.first().copied().unwrap_or(return 0.0)
}

fn main() {
    let _ = scaled_first(1.5, &[2.0]);
    let _ = scaled_first_grad(1.5, &[2.0]);
}
