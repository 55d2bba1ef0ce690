// Lesson: #[differentiable] rewrites the body of a function into graph operations; it has
// nothing to do on a struct or any other item.
use scalar_autodiff::differentiable;

#[differentiable]
struct Point {
    x: f64,
}

fn main() {
    let p = Point { x: 1.0 };
    let _ = p.x;
}
