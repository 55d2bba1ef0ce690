// Lesson: `let h = if c { f(..) } else { g(..) };` where the helpers return arrays is
// plain Rust, but the compiled sweeps cannot see how long `h` is: only rustc knows a
// helper's result type. Rather than record every call on the tape without a word, this
// is a compile error that says what to write: declare `h` with its length first
// (`let mut h = [0.0; 2];`) and assign it in each branch (`h = f(..);`).
use scalar_autodiff::differentiable;

#[differentiable]
fn scaled(v: [f64; 2], s: f64) -> [f64; 2] {
    [v[0] * s, v[1] * s]
}

#[differentiable]
fn pick(v: [f64; 2], x: f64) -> f64 {
    let h = if x > 0.0 { scaled(v, x) } else { scaled(v, 2.0) };
    h[0] + h[1]
}

fn main() {
    let _ = pick_grad([0.3, -0.1], 0.7);
}
