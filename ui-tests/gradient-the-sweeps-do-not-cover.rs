// Lesson: `name_grad` runs as compiled sweeps, straight Rust on `f64`s. A body they do not
// follow yet (here a `break` nested deeper than the loop body's own `if`) would record
// every call on the tape instead, many times slower, so it is an error that points at
// the spot: rewrite that part (`if k > 2 && s > 10.0 { break; }` compiles), move it into a
// helper, or say `#[differentiable(tape)]` to take the tape knowingly.
use scalar_autodiff::differentiable;

#[differentiable]
fn nested_break(x: f64, n: usize) -> f64 {
    let mut s = x;
    for k in 0..n {
        if k > 2 {
            if s > 10.0 {
                break;
            }
        }
        s = s * x;
    }
    s
}

#[differentiable(tape)]
fn on_the_tape(x: f64, n: usize) -> f64 {
    let mut s = x;
    for k in 0..n {
        if k > 2 {
            if s > 10.0 {
                break;
            }
        }
        s = s * x;
    }
    s
}

fn main() {
    let _ = nested_break_grad(1.5, 6);
    let _ = on_the_tape_grad(1.5, 6);
}
