// Lesson: #[differentiable] reports every offending spot of a function in one compile, not
// only the first, so you can fix them all before building again. Here: a remainder, a
// rounding, a cast of a tracked value, a `match` on one and a macro call that prints one.
// (The integer parameter is fine: it is data, and `steps as f64` is plain Rust.)
use scalar_autodiff::differentiable;

#[differentiable]
fn messy(x: f64, steps: i32) -> f64 {
    let wrapped = x % 1.0;
    let rounded = x.round();
    let scaled = x * (x as i32) as f64 * steps as f64;
    let clipped = match x {
        s if s > 1.0 => 1.0,
        s => s,
    };
    println!("{x}");
    wrapped + rounded + scaled + clipped
}

fn main() {
    let _ = messy(1.5, 2);
    let _ = messy_grad(1.5, 2);
}
