// Lesson: #[differentiable] parses the body recursively, on the compiler's stack: a level for
// every parenthesis and every operator waiting for its right-hand side, two for a block or a
// square bracket. Past 128 levels it stops with this error, on the first bracket too deep,
// rather than let rustc crash with a stack overflow. No one writes such a body by hand; a
// generated one reads better as `let` bindings or helper functions.
use scalar_autodiff::differentiable;

#[differentiable]
fn deep(x: f64) -> f64 {
    // 130 nested parentheses, 26 a line.
    ((((((((((((((((((((((((((
    ((((((((((((((((((((((((((
    ((((((((((((((((((((((((((
    ((((((((((((((((((((((((((
    ((((((((((((((((((((((((((
    x
    ))))))))))))))))))))))))))
    ))))))))))))))))))))))))))
    ))))))))))))))))))))))))))
    ))))))))))))))))))))))))))
    ))))))))))))))))))))))))))
}

fn main() {
    // The plain function and the generated ones still exist, so these calls add no errors.
    let _ = deep(1.0);
    let _ = deep_grad(1.0);
}
