// Lesson: `match` compares patterns against a value and binds parts of it. On a tracked
// value, a name bound by a pattern (`v` below) would be a plain copy without its gradient,
// so the attribute refuses it. Branch with `if` on comparisons instead; `match` works on
// data, such as an integer parameter or a loop counter.
use scalar_autodiff::differentiable;

#[differentiable]
fn clip(x: f64) -> f64 {
    match x {
        v if v > 1.0 => 1.0,
        v => v,
    }
}

fn main() {
    let _ = clip(1.5);
    let _ = clip_grad(1.5);
}
