// Lesson: `name_grad` runs as compiled sweeps, straight Rust on `f64`s. A body they do not
// follow yet (here `[x, x]`, one tracked value lent twice to a helper: on the tape both
// elements are one node, into which the helper adds what each receives, in an order the
// helper's own compiled halves do not keep) would record every call on the tape instead,
// many times slower, so it is an error that points at the spot: rewrite that part (lend
// the value once, `mix(x)`, or two values of their own, `[x, x * 1.0]`), move it into a
// helper, or say `#[differentiable(tape)]` to take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn mix(v: [f64; 2]) -> f64 {
    v[0] * v[1] + v[0].sin()
}

#[differentiable]
fn lent_twice(x: f64) -> f64 {
    mix([x, x]) + x
}

#[differentiable(tape)]
fn on_the_tape(x: f64) -> f64 {
    mix([x, x]) + x
}

fn main() {
    let _ = lent_twice_grad(1.5);
    let _ = on_the_tape_grad(1.5);
}
