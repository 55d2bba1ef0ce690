// Lesson: reverse mode differentiates one `f64` result. A #[differentiable] function that
// returns an array is a helper: call it from a function that reduces its outputs to one
// `f64` (a loss) and differentiate that one, or build its outputs with `_graph`.
use autodiff::differentiable;

#[differentiable]
fn dense(w: [[f64; 2]; 2], x: [f64; 2]) -> [f64; 2] {
    [w[0][0] * x[0] + w[0][1] * x[1], w[1][0] * x[0] + w[1][1] * x[1]]
}

fn main() {
    let _ = dense([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0]);
    let _ = dense_grad([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0]);
}
