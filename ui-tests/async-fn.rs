// Lesson: graph nodes belong to one thread and the gradient of an f64 computation is
// computed synchronously, so a #[differentiable] function cannot be `async`. Call the plain
// function, or `name_grad`, from async code instead.
use scalar_autodiff::differentiable;

#[differentiable]
async fn later(x: f64) -> f64 {
    x * 2.0
}

fn main() {
    let _ = later(1.5);
    let _ = later_grad(1.5);
}
