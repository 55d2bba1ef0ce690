// Lesson: data stays data. A slice of data passed in (or a loop variable, or a
// `#[constant]`) cannot hold a tracked value, since no gradient could flow through what is
// written into it. A local array declared in the body becomes tracked when it is assigned
// one: `let mut out = [0.0; 2]; out[i] = value;`.
use scalar_autodiff::differentiable;

#[differentiable]
fn fill(w: f64, #[constant] buffer: &mut [f64]) -> f64 {
    buffer[0] = w * 2.0;
    w
}

fn main() {
    let mut buffer = [0.0; 2];
    let _ = fill_grad(1.0, &mut buffer);
}
