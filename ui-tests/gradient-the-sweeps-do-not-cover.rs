// Lesson: `name_grad` runs as compiled sweeps, straight Rust on `f64`s. A body they do not
// follow yet (here `.flatten()`, an iterator chain over the rows of a tracked matrix)
// would record every call on the tape instead, many times slower, so it is an error that
// points at the spot: rewrite that part (two nested loops, `for row in w { for v in row
// { .. } }`, say the same), move it into a helper, or say `#[differentiable(tape)]` to
// take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn flattened(w: [[f64; 2]; 2]) -> f64 {
    w.iter().flatten().map(|v| v * v).sum::<f64>()
}

#[differentiable(tape)]
fn on_the_tape(w: [[f64; 2]; 2]) -> f64 {
    w.iter().flatten().map(|v| v * v).sum::<f64>()
}

fn main() {
    let _ = flattened_grad([[1.0, 2.0], [3.0, 4.0]]);
    let _ = on_the_tape_grad([[1.0, 2.0], [3.0, 4.0]]);
}
