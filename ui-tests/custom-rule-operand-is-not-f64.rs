// Lesson: a custom derivative rule is one operation on one to three `f64` operands; its
// slope function returns one partial derivative per operand. An array (or a struct) is not
// one operand: give the rule its scalars, or differentiate the body itself.
use scalar_autodiff::differentiable;

#[differentiable(derivative = norm_slope)]
fn norm(v: [f64; 2]) -> f64 {
    v[0].hypot(v[1])
}

fn norm_slope(_v: [f64; 2], _value: f64) -> [f64; 2] {
    [0.0, 0.0]
}

fn main() {
    let _ = norm([3.0, 4.0]);
}
