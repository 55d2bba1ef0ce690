// Lesson: a closure that captures a tracked value cannot be rewritten: the attribute does
// not follow values into a closure it cannot see called. Iterator folds are the exception
// (`xs.iter().map(|x| w * x).sum::<f64>()`, `.fold(..)`): their closures run as the body
// of a loop. Write the closure's body where it is used, or call a #[differentiable]
// function instead.
use scalar_autodiff::differentiable;

#[differentiable]
fn scaled(w: f64, x: f64) -> f64 {
    let scale = |v: f64| w * v;
    scale(x) + scale(2.0 * x)
}

fn main() {
    let _ = scaled(1.0, 2.0);
    let _ = scaled_grad(1.0, 2.0);
}
