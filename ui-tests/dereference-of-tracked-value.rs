// Lesson: a dereference (`*x`) reads a number through a pointer, but in the generated graph
// function every f64 value is a graph node, so there is nothing to dereference. Use the
// value directly: `x`, not `*x`.
use scalar_autodiff::differentiable;

#[differentiable]
fn cube(x: f64) -> f64 {
    *x * x * x
}

fn main() {
    let _ = cube(1.5);
    let _ = cube_grad(1.5);
}
