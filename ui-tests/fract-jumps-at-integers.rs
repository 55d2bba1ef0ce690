// Lesson: `fract` is `x - x.trunc()`. Its slope is 1 between whole numbers, but it jumps
// back to 0 at every one, and the `trunc` inside it has derivative 0 almost everywhere.
// Write `x - x.detach().trunc()` to get the same value with slope 1 (the whole part held
// constant), or `x.detach().fract()` if the fractional part is meant as a constant.
use scalar_autodiff::differentiable;

#[differentiable]
fn phase(x: f64) -> f64 {
    f64::fract(x * 0.25)
}

fn main() {
    let _ = phase(1.5);
    let _ = phase_grad(1.5);
}
