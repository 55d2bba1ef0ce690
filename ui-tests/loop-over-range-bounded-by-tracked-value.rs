// Lesson: a `for` loop runs over data (a range, a slice, an iterator) or over the elements
// of a parameter array. A range bounded by a tracked value would change the number of
// iterations as the value moves, a step with derivative 0 almost everywhere. Bound loops by
// data; `0..(x.detach() as usize)` says the count is meant as a constant.
use scalar_autodiff::differentiable;

#[differentiable]
fn repeated(x: f64) -> f64 {
    let mut total = 0.0;
    for _ in 0..(x as usize) {
        total += x;
    }
    total
}

fn main() {
    let _ = repeated(2.5);
    let _ = repeated_grad(2.5);
}
