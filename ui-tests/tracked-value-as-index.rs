// Lesson: an index is a whole number, so the element it picks jumps as a tracked value
// moves: a step with derivative 0 almost everywhere, which would silently give a zero
// gradient. Index with data, such as a loop counter; if you mean the number without its
// gradient, say so with `detach()`: `table[x.detach() as usize]`.
use scalar_autodiff::differentiable;

#[differentiable]
fn lookup(x: f64, table: &[f64]) -> f64 {
    table[x as usize] * x
}

fn main() {
    let _ = lookup(1.5, &[1.0, 2.0]);
    let _ = lookup_grad(1.5, &[1.0, 2.0]);
}
