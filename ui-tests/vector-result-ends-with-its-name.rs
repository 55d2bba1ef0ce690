// Lesson: a function returning `Vec<f64>` gets `name_vjp`, which differentiates the
// elements of the vector the body ends with. So the body builds its result in a local
// (`let mut y = vec![0.0; n];`, its elements assigned) and ends with that local's name,
// not with an expression that makes a new vector.
use scalar_autodiff::differentiable;

#[differentiable]
fn doubled(#[param] x: &[f64]) -> Vec<f64> {
    x.iter().map(|v| v * 2.0).collect()
}

fn main() {
    let _ = doubled(&[1.0, 2.0]);
    let _ = doubled_vjp(&[1.0, 2.0], &[0.0, 1.0]);
}
