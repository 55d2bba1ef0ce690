// Lesson: the generated `_graph` and `_grad` functions return Rust `Result`s, which have no
// foreign calling convention. Keep the #[differentiable] function a Rust function and wrap
// the plain function in an `extern "C"` one if foreign code must call it.
use scalar_autodiff::differentiable;

#[differentiable]
extern "C" fn exported(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = exported(1.5);
    let _ = exported_grad(1.5);
}
