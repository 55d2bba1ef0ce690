// Lesson: this version of #[differentiable] rewrites straight-line code only. Loops (and
// `if` and `match`) are planned for a later version; until then, unroll a short loop by
// hand into `let` statements.
use autodiff::differentiable;

#[differentiable]
fn power_tower(x: f64) -> f64 {
    let mut y = x;
    for _ in 0..3 {
        y = y * x;
    }
    y
}

fn main() {
    let _ = power_tower(1.5);
    let _ = power_tower_grad(1.5);
}
