// Lesson: #[differentiable] rewrites the function's own expressions into graph operations.
// It cannot follow a value into a closure, whose body it would have to run later. Write the
// computation inline; a `let` binding holds a value you need several times, as one node.
use autodiff::differentiable;

#[differentiable]
fn squared_sum(x: f64, y: f64) -> f64 {
    let square = |v: f64| v * v;
    square(x) + square(y)
}

fn main() {
    let _ = squared_sum(1.0, 2.0);
    let _ = squared_sum_grad(1.0, 2.0);
}
