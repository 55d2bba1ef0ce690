// Lesson: #[differentiable] reports every offending spot of a function in one compile, not
// only the first, so you can fix them all before building again. Here: an integer
// parameter, a remainder, a rounding, a cast and a macro call.
use autodiff::differentiable;

#[differentiable]
fn messy(x: f64, steps: i32) -> f64 {
    let wrapped = x % 1.0;
    let rounded = wrapped.round();
    let scaled = rounded * (steps as f64);
    println!("{scaled}");
    scaled + x
}

fn main() {
    let _ = messy(1.5, 2);
    let _ = messy_grad(1.5, 2.0);
}
