// Lesson: each tracked `let` binds one `f64`, which becomes one graph node; a pattern would
// bind parts of a tuple the graph does not have. Destructuring data is fine; for tracked
// values, bind one name per `let`.
use scalar_autodiff::differentiable;

#[differentiable]
fn swapped(x: f64, y: f64) -> f64 {
    let (a, b) = (y, x);
    a - b
}

fn main() {
    let _ = swapped(1.5, 2.0);
    let _ = swapped_grad(1.5, 2.0);
}
