// Lesson: a custom derivative rule's node keeps at most three operands, each with the slope
// the rule gives it. Split a wider operation into rules of up to three operands.
use scalar_autodiff::differentiable;

#[differentiable(derivative = sum4_slopes)]
fn sum4(a: f64, b: f64, c: f64, d: f64) -> f64 {
    a + b + c + d
}

fn sum4_slopes(_a: f64, _b: f64, _c: f64, _d: f64, _value: f64) -> [f64; 4] {
    [1.0; 4]
}

fn main() {
    let _ = sum4(1.0, 2.0, 3.0, 4.0);
}
