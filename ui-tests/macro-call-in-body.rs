// Lesson: macros expand after the attribute has rewritten the body, so #[differentiable]
// cannot see, let alone differentiate, the code a macro produces. Write the arithmetic out,
// and print values from the caller (the plain function and `name_grad` return them).
use scalar_autodiff::differentiable;

#[differentiable]
fn noisy(x: f64) -> f64 {
    let y = x * x;
    println!("y = {y}");
    y
}

fn main() {
    let _ = noisy(1.5);
    let _ = noisy_grad(1.5);
}
