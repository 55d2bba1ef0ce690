// Lesson: loops stay statements in the generated code: each iteration records its own
// operations, and a tracked value leaves a loop through a variable. `loop` producing a
// value with `break value` is not supported; assign a `let mut` variable and `break;`.
use scalar_autodiff::differentiable;

#[differentiable]
fn first_above(x: f64) -> f64 {
    let mut y = x;
    let found = loop {
        y = y * 2.0;
        if y > 10.0 {
            break y;
        }
    };
    found
}

fn main() {
    let _ = first_above(1.5);
    let _ = first_above_grad(1.5);
}
