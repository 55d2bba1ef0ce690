// Lesson: a function returning `Vec<f64>` gets `name_vjp`, a compiled reverse sweep, so its
// body must be one the compiled sweeps follow, like `name_grad`'s. The error names your
// function and `name_vjp`: here a row of the vector copied out (`let p = out[i];`) and read
// again. Read the row's elements where they are (`out[i][0]`), or write
// `#[differentiable(tape)]` to record every call on the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn spread(#[param] x: &[f64]) -> Vec<f64> {
    let mut out = vec![[0.0; 2]; x.len()];
    for i in 0..x.len() {
        out[i][0] = x[i].sin();
        out[i][1] = x[i].cos();
    }
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        let p = out[i];
        y[i] = p[0] * p[1];
    }
    y
}

fn main() {
    let _ = spread(&[1.0, 2.0]);
    let _ = spread_vjp(&[1.0, 2.0], &[0.0, 1.0]);
}
