// Lesson: `name_grad` runs as compiled sweeps, straight Rust on `f64`s. A body they do not
// follow yet (here `[h; 3]`, an array whose three elements are one tracked value: the tape
// adds what each element receives into that one value, in an order the sweeps do not
// keep) would record every call on the tape instead, many times slower, so it is an error
// that points at the spot: rewrite that part (an array of values each computed on its
// own, `[x * 2.0, x * 3.0, 1.0]`, compiles), move it into a helper, or say
// `#[differentiable(tape)]` to take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn repeated(x: f64) -> f64 {
    let h = x * 2.0;
    let a = [h; 3];
    a[0] * a[1] + a[2]
}

#[differentiable(tape)]
fn on_the_tape(x: f64) -> f64 {
    let h = x * 2.0;
    let a = [h; 3];
    a[0] * a[1] + a[2]
}

fn main() {
    let _ = repeated_grad(1.5);
    let _ = on_the_tape_grad(1.5);
}
