// Lesson: #[differentiable] accepts only safe f64 arithmetic, which never needs `unsafe`.
use scalar_autodiff::differentiable;

#[differentiable]
unsafe fn risky(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = unsafe { risky(1.5) };
    let _ = risky_grad(1.5);
}
