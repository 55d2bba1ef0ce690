// Lesson: in the generated graph function every f64 value is a graph node, not a number in
// memory, and the rewrite already passes nodes by reference for you (`x * x` becomes
// `x.mul(&x)?`). Taking `&x` yourself has no meaning there: use the value directly.
use scalar_autodiff::differentiable;

#[differentiable]
fn scaled(x: f64) -> f64 {
    let r = &x;
    x * 2.0
}

fn main() {
    let _ = scaled(1.5);
    let _ = scaled_grad(1.5);
}
