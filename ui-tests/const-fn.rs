// Lesson: the generated `_graph` and `_grad` functions record graph nodes at run time,
// which constant evaluation cannot do, so a #[differentiable] function cannot be a
// `const fn`.
use scalar_autodiff::differentiable;

#[differentiable]
const fn doubled(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = doubled(1.5);
    let _ = doubled_grad(1.5);
}
