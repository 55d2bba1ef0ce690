// Lesson: a closure that captures a tracked value cannot be rewritten: the attribute does
// not follow values into closure bodies (or iterator adapters). Write the loop out: a
// `for` loop with a `let mut` accumulator records the same sum.
use autodiff::differentiable;

#[differentiable]
fn scaled_sum(w: f64, xs: &[f64]) -> f64 {
    xs.iter().map(|x| w * x).sum::<f64>()
}

fn main() {
    let _ = scaled_sum(1.0, &[1.0, 2.0]);
    let _ = scaled_sum_grad(1.0, &[1.0, 2.0]);
}
