// Lesson: an `as` cast leaves the f64 graph. Casting to an integer truncates, which has
// derivative 0 almost everywhere, and no other numeric type carries a gradient. Keep every
// value `f64`, and write whole-number constants as float literals (`3.0`, not `3 as f64`).
use scalar_autodiff::differentiable;

#[differentiable]
fn steps(x: f64) -> f64 {
    (x as i32) as f64 * 2.0
}

fn main() {
    let _ = steps(1.5);
    let _ = steps_grad(1.5);
}
