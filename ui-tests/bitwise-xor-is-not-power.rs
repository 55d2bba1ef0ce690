// Lesson: in Rust `^` is bitwise exclusive or, not a power, and it works on integers and
// booleans only. Write powers with `powi` (integer exponent) or `powf`.
use scalar_autodiff::differentiable;

#[differentiable]
fn square(x: f64) -> f64 {
    x ^ 2.0
}

fn main() {
    let _ = square(1.5);
    let _ = square_grad(1.5);
}
