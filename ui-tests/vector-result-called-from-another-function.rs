// Lesson: a function returning `Vec<f64>` gets `name_vjp` for its own gradient, but no
// graph form that another differentiable body records into, so it cannot be called from
// one (here on the tape, as `tape` chose; the compiled sweeps refuse the call too). Return
// an array `[f64; M]` from a helper instead, or compute the vector in the caller's body.
use scalar_autodiff::differentiable;

#[differentiable]
fn running_products(#[param] x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    let mut product = 1.0;
    for i in 0..x.len() {
        product *= x[i];
        y[i] = product;
    }
    y
}

#[differentiable(tape)]
fn last(#[param] x: &[f64]) -> f64 {
    let y = running_products(x);
    y[x.len() - 1]
}

fn main() {
    let _ = last_grad(&[2.0, 3.0]);
}
