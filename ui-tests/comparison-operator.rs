// Lesson: a comparison yields a `bool`, which carries no gradient, and the branches it would
// feed are not supported yet. Smooth choices are methods the runtime differentiates:
// `max`, `min` and `abs`.
use autodiff::differentiable;

#[differentiable]
fn positive_part(x: f64) -> f64 {
    let keep = x > 0.0;
    x
}

fn main() {
    let _ = positive_part(1.5);
    let _ = positive_part_grad(1.5);
}
