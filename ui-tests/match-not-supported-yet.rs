// Lesson: `match` is a branch, and branches are not supported yet: this version rewrites
// straight-line code only. Use `max`, `min` or `abs` for smooth choices.
use autodiff::differentiable;

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
