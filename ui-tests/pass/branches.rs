// Branches compile: `if` / `else if` / `else` as statements and as values, conditions that
// compare primal values (`&&`, `||`, `!`, methods on tracked values, comparisons of data),
// a comparison bound by `let`, and `match` / `if let` on data. Nothing generated trips a
// lint under `deny(warnings)`.
#![deny(warnings)]

use scalar_autodiff::differentiable;

/// ReLU as an `if` expression.
#[differentiable]
fn relu(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// Huber loss: quadratic near zero, linear outside, with `else if` and a data threshold.
#[differentiable]
fn huber(r: f64, #[constant] delta: f64) -> f64 {
    let mut loss = 0.0;
    if r.abs() <= delta {
        loss = 0.5 * r * r;
    } else if r > 0.0 {
        loss += delta * (r - 0.5 * delta);
    } else {
        loss += delta * (-r - 0.5 * delta);
    }
    loss
}

/// A comparison held in a `bool`, combined with `&&`, `||` and `!`.
#[differentiable]
fn gate(x: f64, y: f64, enabled: bool) -> f64 {
    let inside = x > -1.0 && x < 1.0;
    if !inside || !enabled {
        y
    } else {
        x * y
    }
}

/// `match` on an integer parameter and `if let` on data.
#[differentiable]
fn pick(x: f64, mode: u8, #[constant] fallback: Option<f64>) -> f64 {
    let scale = match mode {
        0 => 1.0,
        1 | 2 => x,
        _ => x * x,
    };
    if let Some(v) = fallback {
        scale * v
    } else {
        scale
    }
}

pub fn main() {
    assert_eq!(relu_grad(2.0).unwrap(), (2.0, [1.0]));
    assert_eq!(relu_grad(-2.0).unwrap(), (0.0, [0.0]));
    assert_eq!(huber_grad(0.5, 1.0).unwrap(), (0.125, [0.5]));
    assert_eq!(huber_grad(3.0, 1.0).unwrap(), (2.5, [1.0]));
    assert_eq!(huber_grad(-3.0, 1.0).unwrap(), (2.5, [-1.0]));
    assert_eq!(gate_grad(0.5, 2.0, true).unwrap(), (1.0, [2.0, 0.5]));
    assert_eq!(gate_grad(0.5, 2.0, false).unwrap(), (2.0, [0.0, 1.0]));
    assert_eq!(pick_grad(3.0, 2, Some(2.0)).unwrap(), (6.0, [2.0]));
    assert_eq!(pick_grad(3.0, 7, None).unwrap(), (9.0, [6.0]));
    assert_eq!(pick(3.0, 0, None), pick_grad(3.0, 0, None).unwrap().0);
}
