// Lesson: a gradient is of one `f64` result. A #[differentiable] function that returns an
// array has a Jacobian instead, one gradient row per output (`dense_jacobian`); or call it
// from a function that reduces its outputs to one `f64` (a loss) and differentiate that.
use scalar_autodiff::differentiable;

#[differentiable]
fn dense(w: [[f64; 2]; 2], x: [f64; 2]) -> [f64; 2] {
    [w[0][0] * x[0] + w[0][1] * x[1], w[1][0] * x[0] + w[1][1] * x[1]]
}

fn main() {
    let _ = dense([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0]);
    let _ = dense_grad([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0]);
}
