// Lesson: the slope function of a one-operand rule takes the operand and the operation's
// value, `fn(x: f64, value: f64) -> f64`. Forgetting the value is a type error on the slope's
// name in the attribute.
use scalar_autodiff::differentiable;

#[differentiable(derivative = cube_slope)]
fn cube(x: f64) -> f64 {
    x * x * x
}

fn cube_slope(x: f64) -> f64 {
    3.0 * x * x
}

fn main() {
    let _ = cube(2.0);
}
