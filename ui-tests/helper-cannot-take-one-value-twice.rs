// Lesson: a compiled sweep can lend one value to a helper twice (`dot(v, v)`,
// `mul(x, x)`): on the tape both parameters' edges go to one node, and the helper's
// reverse half then adds into one shared sum. A helper that lends its own parameters on,
// two at once, to another helper (`pair` below) has no such reverse half, so lending it
// one value twice is an error at the call: lend a copy (`let c = x;` is a node of its
// own), or write `#[differentiable(tape)]` on the caller.
use scalar_autodiff::differentiable;

#[differentiable]
fn mul(a: f64, b: f64) -> f64 {
    a * b
}

#[differentiable]
fn pair(a: f64, b: f64) -> f64 {
    mul(a, b) + a
}

#[differentiable]
fn square_plus(x: f64) -> f64 {
    pair(x, x)
}

#[differentiable]
fn fine(x: f64) -> f64 {
    let c = x;
    mul(x, x) + pair(x, c)
}

fn main() {
    let _ = square_plus_grad(1.5);
    let _ = fine_grad(1.5);
}
