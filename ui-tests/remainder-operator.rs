// Lesson: `a % b` equals `a - b * (a / b).trunc()`. It jumps every time `a / b` crosses a
// whole number, and the `trunc` inside has derivative 0 almost everywhere, so
// #[differentiable] refuses `%`. Writing the formula with the quotient detached,
// `a - b * (a / b).detach().trunc()`, keeps the slopes and says what is held constant.
use scalar_autodiff::differentiable;

#[differentiable]
fn wrap(angle: f64, period: f64) -> f64 {
    angle % period
}

fn main() {
    let _ = wrap(7.0, 2.0);
    let _ = wrap_grad(7.0, 2.0);
}
