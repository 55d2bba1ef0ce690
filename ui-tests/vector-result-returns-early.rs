// Lesson: `name_vjp` of a function returning `Vec<f64>` differentiates the vector its body
// ends with, so that body has one way out: compute the vector, then end with its name.
// An early `return` would leave the gradient another vector to follow.
use scalar_autodiff::differentiable;

#[differentiable]
fn clipped(#[param] x: &[f64], limit: usize) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        if i == limit {
            return y;
        }
        y[i] = x[i].tanh();
    }
    y
}

fn main() {
    let _ = clipped(&[1.0, 2.0], 1);
    let _ = clipped_vjp(&[1.0, 2.0], 1, &[0.0, 1.0]);
}
