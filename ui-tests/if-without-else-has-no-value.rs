// Lesson: an `if` used as a value must produce one whichever branch runs, so that the graph
// has a node for the result on every path. Add an `else`, or assign a `let mut` variable in
// an `if` statement.
use scalar_autodiff::differentiable;

#[differentiable]
fn positive_part(x: f64) -> f64 {
    let y = if x > 0.0 {
        x
    };
    y
}

fn main() {
    let _ = positive_part(1.5);
    let _ = positive_part_grad(1.5);
}
