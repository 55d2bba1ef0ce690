// Lesson: the value a function returns is its final expression, written without a `;`
// (or a `return`). A trailing `;` turns it into a statement whose value is thrown away, and
// a #[differentiable] function must end with the f64 it differentiates.
use scalar_autodiff::differentiable;

#[differentiable]
fn area(r: f64) -> f64 {
    let square = r * r;
    std::f64::consts::PI * square;
}

fn main() {
    let _ = area(1.5);
    let _ = area_grad(1.5);
}
