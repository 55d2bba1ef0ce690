// Lesson: #[differentiable] records each f64 method as a graph operation with a known
// derivative. A method it does not know (here `to_degrees`) has no operation, so it is a
// compile error rather than a silently wrong gradient. The message lists the methods that
// work; `to_degrees` is `x * (180.0 / std::f64::consts::PI)` written with them.
use scalar_autodiff::differentiable;

#[differentiable]
fn heading(x: f64) -> f64 {
    x.to_degrees()
}

fn main() {
    let _ = heading(1.5);
    let _ = heading_grad(1.5);
}
