// Lesson: the attribute rewrites this function's own expressions into graph operations; it
// cannot follow a tracked value into a closure's body. A closure over data alone is fine;
// to reuse math on tracked values, make it a separate #[differentiable] function.
use scalar_autodiff::differentiable;

#[differentiable]
fn squared_sum(x: f64, y: f64) -> f64 {
    let square = |v: f64| v * v;
    square(x) + square(y)
}

fn main() {
    let _ = squared_sum(1.0, 2.0);
    let _ = squared_sum_grad(1.0, 2.0);
}
