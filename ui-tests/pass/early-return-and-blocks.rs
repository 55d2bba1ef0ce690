// Statements the rewrite supports: `let`, `let mut`, shadowing, compound assignment,
// nested blocks with their own scope, and an early `return`.
#![deny(warnings)]
#![allow(unreachable_code)]

use scalar_autodiff::differentiable;

#[differentiable]
fn staged(x: f64, mut y: f64) -> f64 {
    let x = x * 2.0;
    y -= 1.0;
    y *= x;
    let z = {
        let x = y + 1.0;
        x / 2.0
    };
    {
        let mut t = z;
        t += 1.0;
        y = t;
    }
    return y * x;
    x
}

pub fn main() {
    let (value, [dx, dy]) = staged_grad(1.5, 2.0).unwrap();
    assert_eq!(value, staged(1.5, 2.0));
    // y' = (y - 1) 2x, z = (y' + 1) / 2, result = (z + 1) * 2x.
    let (x, y) = (1.5, 2.0);
    let expected_dx =
        2.0 * ((y - 1.0) * 2.0 * x + 1.0) / 2.0 + 2.0 * x * (y - 1.0) * 2.0 / 2.0 + 2.0;
    let expected_dy = 2.0 * x * (2.0 * x / 2.0);
    assert!((dx - expected_dx).abs() < 1e-12, "{dx} {expected_dx}");
    assert!((dy - expected_dy).abs() < 1e-12, "{dy} {expected_dy}");
}
