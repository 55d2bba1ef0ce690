// Lesson: `derivative = ...` names the slope function; it is not an expression. Write the
// slope as a function and name it.
use scalar_autodiff::differentiable;

#[differentiable(derivative = |x: f64, _value: f64| 3.0 * x * x)]
fn cube(x: f64) -> f64 {
    x * x * x
}

fn main() {
    let _ = cube(2.0);
}
