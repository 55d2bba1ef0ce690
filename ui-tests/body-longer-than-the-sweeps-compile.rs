// Lesson: `name_grad` runs as compiled sweeps, as long as the body: a body of more than
// 512 operations as written (here 180 steps of a recurrence written out, 540 operations)
// would take rustc tens of seconds to compile, so it is an error. Write the steps as a
// loop (`for _ in 0..180 { h = (w * h + x).tanh(); }`: a loop's body counts once), split
// the body into helper functions, or say `#[differentiable(tape)]` to record every call
// on the tape knowingly.
use scalar_autodiff::differentiable;

/// One step `h = (w * h + x).tanh()` for every `;`.
macro_rules! written_out {
    ($($end:tt)*) => {
        #[differentiable]
        fn unrolled(w: f64, x: f64) -> f64 {
            let mut h = 0.0;
            $(h = (w * h + x).tanh() $end)*
            h
        }
    };
}

written_out!(
    ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ;
    ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ;
    ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ;
    ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ; ;
);

#[differentiable]
fn looped(w: f64, x: f64) -> f64 {
    let mut h = 0.0;
    for _ in 0..180 {
        h = (w * h + x).tanh();
    }
    h
}

fn main() {
    let _ = unrolled_grad(0.5, 0.25);
    let _ = looped_grad(0.5, 0.25);
}
