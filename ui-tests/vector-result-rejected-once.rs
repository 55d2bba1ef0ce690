// Lesson: a function returning `Vec<f64>` is checked as a scalar one is, and a form the
// attribute rejects is reported once, at your line: here an `as` cast, which leaves the
// f64 graph. `name_vjp`, `name_jvp` and `name_jvps` still exist (as stand-ins), so the calls
// below add no errors of their own.
use scalar_autodiff::differentiable;

#[differentiable]
fn rounded(#[param] x: &[f64]) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        y[i] = (x[i] as i32) as f64;
    }
    y
}

fn main() {
    let _ = rounded(&[1.5]);
    let _ = rounded_vjp(&[1.5], &[1.0]);
    let _ = rounded_jvp(&[1.5], vec![1.0]);
    let _ = rounded_jvps(&[1.5], &[vec![1.0]]);
}
