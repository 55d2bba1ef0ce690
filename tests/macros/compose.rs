//! Composition: calls to other `#[differentiable]` functions build into the caller's graph,
//! giving the same values, gradients and ledger as the body written inline, and an argument
//! reused across calls accumulates every path.

use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError};

mod layers {
    use scalar_autodiff::differentiable;

    /// A dense unit: `tanh(w · x + b)` over a parameter array and a data input.
    #[differentiable]
    pub fn unit(w: [f64; 2], b: f64, x: &[f64; 2]) -> f64 {
        (w[0] * x[0] + w[1] * x[1] + b).tanh()
    }

    /// `ln` of its argument: fails for arguments below zero.
    #[differentiable]
    pub fn log(v: f64) -> f64 {
        v.ln()
    }
}

/// `v²`.
#[differentiable]
fn square(v: f64) -> f64 {
    v * v
}

/// Two calls: a computed argument and a parameter.
#[differentiable]
fn composed(x: f64, y: f64) -> f64 {
    square(x * y) + square(x)
}

/// The same body written inline: `square`'s `v * v` on the same nodes.
#[differentiable]
fn inlined(x: f64, y: f64) -> f64 {
    let a = x * y;
    a * a + x * x
}

/// One argument used by two calls: its gradient gets both paths.
#[differentiable]
fn reused(x: f64) -> f64 {
    square(x) + square(x)
}

/// A small model through a module path, with a parameter array passed whole, data passed
/// as written, and a literal argument.
#[differentiable]
fn model(w: [f64; 2], b: f64, v: f64, x: &[f64; 2]) -> f64 {
    let hidden = layers::unit(w, b, x);
    square(v * hidden - 1.0) + square(0.5) * v
}

/// `model` with `unit` and `square` inlined.
#[differentiable]
fn model_inlined(w: [f64; 2], b: f64, v: f64, x: &[f64; 2]) -> f64 {
    let hidden = (w[0] * x[0] + w[1] * x[1] + b).tanh();
    let e = v * hidden - 1.0;
    let c = 0.5;
    e * e + c * c * v
}

/// A call in a condition runs the plain function on primal values.
#[differentiable]
fn guarded(x: f64) -> f64 {
    if square(x) > 4.0 {
        layers::log(x)
    } else {
        x
    }
}

/// Recursion: `x^n`.
#[differentiable]
fn power(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        x * power(x, n - 1)
    }
}

fn bits<const N: usize>((value, gradient): (f64, [f64; N])) -> (u64, [u64; N]) {
    (value.to_bits(), gradient.map(f64::to_bits))
}

#[test]
fn a_composed_function_equals_its_inlined_body() -> Result<(), ScalarAutodiffError> {
    for (x, y) in [(1.5, -0.5), (0.25, 3.0)] {
        assert_eq!(bits(composed_grad(x, y)?), bits(inlined_grad(x, y)?));
        assert_eq!(composed(x, y).to_bits(), inlined(x, y).to_bits());
    }
    // The same ledger: x, y, x*y, (x*y)², x², the sum: 6 nodes, 8 edges.
    let (x, y) = (Scalar::variable(1.5)?, Scalar::variable(-0.5)?);
    let composed = composed_graph(&x, &y)?.backward()?.ledger();
    let inlined = inlined_graph(&x, &y)?.backward()?.ledger();
    assert_eq!(composed.nodes.len(), 6);
    assert_eq!(composed.edges.len(), 8);
    let operations = |ledger: &scalar_autodiff::Ledger| {
        ledger
            .nodes
            .iter()
            .map(|node| node.operation)
            .collect::<Vec<_>>()
    };
    assert_eq!(operations(&composed), operations(&inlined));
    Ok(())
}

#[test]
fn an_argument_reused_across_calls_accumulates_every_path() -> Result<(), ScalarAutodiffError> {
    assert_eq!(reused_grad(3.0)?, (reused(3.0), [12.0]));
    let x = Scalar::variable(3.0)?;
    let ledger = reused_graph(&x)?.backward()?.ledger();
    // Two edges from x into each square.
    let from_x = ledger.edges.iter().filter(|edge| edge.parent == 0).count();
    assert_eq!(from_x, 4);
    assert_eq!(x.gradient(), Some(12.0));
    Ok(())
}

#[test]
fn a_model_of_composed_parts_equals_its_inlined_form() -> Result<(), ScalarAutodiffError> {
    let x = [0.5, -1.5];
    for (w, b, v) in [([0.3, 0.8], 0.1, 1.2), ([-1.0, 0.2], 0.5, -0.7)] {
        assert_eq!(
            bits(model_grad(w, b, v, &x)?),
            bits(model_inlined_grad(w, b, v, &x)?)
        );
        assert_eq!(
            model(w, b, v, &x).to_bits(),
            model_inlined(w, b, v, &x).to_bits()
        );
    }
    Ok(())
}

#[test]
fn calls_in_conditions_recursion_and_errors_from_callees() -> Result<(), ScalarAutodiffError> {
    assert_eq!(guarded_grad(1.5)?, (1.5, [1.0]));
    assert_eq!(guarded_grad(4.0)?, (4.0f64.ln(), [0.25]));
    assert_eq!(guarded(4.0), 4.0f64.ln());
    // x = -4: square(x) > 4, so `log(-4)` runs and fails inside the callee.
    let error = guarded_grad(-4.0).expect_err("ln of a negative number");
    assert_eq!(error.kind(), "non-finite-result");
    assert_eq!(power_grad(2.0, 5)?, (32.0, [80.0]));
    assert_eq!(power(2.0, 5), 32.0);
    Ok(())
}
