// Lesson: each tracked `let` binds one `f64`, which becomes one graph node; a pattern would
// bind parts of a tuple the graph does not have. Destructuring data is fine, and so is a
// tuple of names over a tuple literal (`let (a, b) = (y, x);` is one `let` per name); a
// tuple computed another way, as by the `if` below, is not: bind one name per `let`.
use scalar_autodiff::differentiable;

#[differentiable]
fn ordered(x: f64, y: f64) -> f64 {
    let (a, b) = if x < y { (y, x) } else { (x, y) };
    a - b
}

fn main() {
    let _ = ordered(1.5, 2.0);
    let _ = ordered_grad(1.5, 2.0);
}
