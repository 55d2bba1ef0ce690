// Lesson: a condition is evaluated on the primal values of tracked names. When a closure
// inside it rebinds a tracked name (`x` here), the rewrite cannot tell the two `x`s apart.
// Rename the inner binding.
use scalar_autodiff::differentiable;

#[differentiable]
fn above_all(x: f64, xs: &[f64]) -> f64 {
    if xs.iter().all(|x| *x < 2.0 * x.abs()) && x > 0.0 {
        x
    } else {
        -x
    }
}

fn main() {
    let _ = above_all(1.5, &[1.0]);
    let _ = above_all_grad(1.5, &[1.0]);
}
