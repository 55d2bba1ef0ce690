//! The chapter's three examples written as `#[differentiable]` functions reproduce the
//! runtime's numbers and ledger.

use std::hint::black_box;

use approx::assert_abs_diff_eq;
use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError, ScalarOperation};

/// The reused square: `s = x * x`, `loss = s + s`.
#[differentiable]
fn loss(x: f64) -> f64 {
    let s = x * x;
    s + s
}

/// A stop-gradient: the second term's `x` counts as the constant 2.
#[differentiable]
fn detached(x: f64) -> f64 {
    x * x + x.detach() * 3.0
}

/// The chapter's nonlinear example.
#[differentiable]
fn exp_tanh(x: f64) -> f64 {
    x.tanh().exp()
}

#[test]
fn reused_square_value_and_gradient() -> Result<(), ScalarAutodiffError> {
    assert_eq!(loss(2.0), 8.0);
    assert_eq!(loss_grad(2.0)?, (8.0, [8.0]));
    Ok(())
}

#[test]
fn reused_square_ledger_has_three_nodes_and_four_edges() -> Result<(), ScalarAutodiffError> {
    let x = Scalar::variable(2.0)?;
    let output = loss_graph(&x)?;
    let ledger = output.backward()?.ledger();
    assert_eq!(ledger.nodes.len(), 3);
    assert_eq!(ledger.edges.len(), 4);
    let operations: Vec<ScalarOperation> = ledger.nodes.iter().map(|n| n.operation).collect();
    assert_eq!(
        operations,
        [
            ScalarOperation::Variable,
            ScalarOperation::Multiply,
            ScalarOperation::Add
        ]
    );
    // Every edge goes into a distinct operand slot: two into the square from x, two into
    // the sum from the square.
    let parents: Vec<(usize, usize)> = ledger.edges.iter().map(|e| (e.child, e.parent)).collect();
    assert_eq!(
        parents.iter().filter(|&&(c, p)| (c, p) == (1, 0)).count(),
        2
    );
    assert_eq!(
        parents.iter().filter(|&&(c, p)| (c, p) == (2, 1)).count(),
        2
    );
    assert_eq!(x.gradient(), Some(8.0));
    Ok(())
}

#[test]
fn graph_on_the_callers_nodes_accumulates_and_clears() -> Result<(), ScalarAutodiffError> {
    let x = Scalar::variable(2.0)?;
    let output = loss_graph(&x)?;
    output.backward()?;
    output.backward()?;
    assert_eq!(x.gradient(), Some(16.0));
    output.zero_grad();
    assert_eq!(x.gradient(), Some(0.0));
    // Combined with more runtime operations: d/dx of 3 * loss(x) is 24 at 2.
    let tripled = loss_graph(&x)?.mul(&Scalar::constant(3.0)?)?;
    tripled.backward()?;
    assert_eq!(x.gradient(), Some(24.0));
    Ok(())
}

#[test]
fn detach_stops_the_gradient() -> Result<(), ScalarAutodiffError> {
    assert_eq!(detached(2.0), 10.0);
    assert_eq!(detached_grad(2.0)?, (10.0, [4.0]));
    Ok(())
}

#[test]
fn exp_tanh_matches_the_chapter() -> Result<(), ScalarAutodiffError> {
    let (value, [dx]) = exp_tanh_grad(0.5)?;
    assert_abs_diff_eq!(value, 1.587431271430, epsilon = 1e-12);
    assert_abs_diff_eq!(dx, 1.248431724655, epsilon = 1e-12);
    let expected = 0.5f64.tanh().exp() * (1.0 - 0.5f64.tanh().powi(2));
    assert_abs_diff_eq!(dx, expected, epsilon = 1e-15);
    Ok(())
}

#[test]
fn plain_and_graph_values_agree_bit_for_bit() -> Result<(), ScalarAutodiffError> {
    for v in [-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.0, 7.25, 1e3] {
        let v = black_box(v);
        assert_eq!(loss(v).to_bits(), loss_grad(v)?.0.to_bits());
        assert_eq!(detached(v).to_bits(), detached_grad(v)?.0.to_bits());
        assert_eq!(exp_tanh(v).to_bits(), exp_tanh_grad(v)?.0.to_bits());
    }
    Ok(())
}
