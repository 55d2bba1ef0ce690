// Lesson: `if let` (and `while let`, `let ... else`) match a pattern against a value. On a
// tracked value the names the pattern binds would be plain copies without a gradient, so
// the attribute refuses it; on data (an `Option<f64>` parameter, say) it works.
use scalar_autodiff::differentiable;

#[differentiable]
fn first_positive(x: f64) -> f64 {
    if let Some(v) = Some(x).filter(|v| *v > 0.0) {
        v
    } else {
        0.0
    }
}

fn main() {
    let _ = first_positive(1.5);
    let _ = first_positive_grad(1.5);
}
