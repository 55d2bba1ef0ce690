//! Multi-parameter functions against analytic gradients, shadowing and reassignment, results
//! that depend on no parameter, and run-time errors from inside the body.

use std::hint::black_box;

use approx::assert_relative_eq;
use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError, ScalarOperation};

/// A small regression loss: `(w x + b - y)²`.
#[differentiable]
pub fn squared_error(w: f64, b: f64, x: f64, y: f64) -> f64 {
    let prediction = w * x + b;
    let residual = prediction - y;
    residual * residual
}

/// The Rosenbrock function.
#[differentiable]
fn rosenbrock(x: f64, y: f64) -> f64 {
    (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2)
}

/// A logistic unit with a smooth log-likelihood.
#[differentiable]
fn log_sigmoid(w: f64, x: f64) -> f64 {
    let z = w * x;
    -(1.0 + (-z).exp()).ln()
}

/// One parameter used in many places, shadowed twice, reassigned and updated in place.
#[differentiable]
fn many_uses(x: f64) -> f64 {
    let y = x * x + x / (x + 1.0) - x.sin() * x;
    let x = x * 3.0;
    let mut acc = x + y;
    acc *= x;
    acc -= y / x;
    acc /= 2.0;
    let x = {
        let x = acc + x;
        x * x
    };
    acc += x;
    acc
}

/// The same computation written out by hand for the analytic check.
fn many_uses_by_hand(x0: f64) -> (f64, f64) {
    let x = Scalar::variable(x0).expect("finite");
    let c = |v: f64| Scalar::constant(v).expect("finite");
    let step = || -> Result<Scalar, ScalarAutodiffError> {
        let y = x
            .mul(&x)?
            .add(&x.div(&x.add(&c(1.0))?)?)?
            .sub(&x.sin()?.mul(&x)?)?;
        let x3 = x.mul(&c(3.0))?;
        let mut acc = x3.add(&y)?;
        acc = acc.mul(&x3)?;
        acc = acc.sub(&y.div(&x3)?)?;
        acc = acc.div(&c(2.0))?;
        let inner = acc.add(&x3)?;
        let squared = inner.mul(&inner)?;
        acc.add(&squared)
    };
    let out = step().expect("finite");
    out.backward().expect("finite");
    (out.value(), x.gradient().expect("tracked"))
}

/// A mutable parameter, with a `return` statement.
#[differentiable]
#[allow(clippy::needless_return)] // the statement form is what this test exercises
fn mutable_parameter(mut x: f64, y: f64) -> f64 {
    x += y;
    x *= x;
    return x - y;
}

/// Parameters named like the generated function's own temporaries do not clash with them.
#[differentiable]
fn clashing_names(output: f64, variables: f64, value_and_gradient: f64) -> f64 {
    output * variables - value_and_gradient
}

/// Depends on no parameter: the gradient is all zero.
#[differentiable]
fn constant_result(x: f64) -> f64 {
    let unused = x * 2.0;
    let _ = unused;
    std::f64::consts::PI * 2.0
}

/// Depends on its parameter only through `detach`: the gradient is zero.
#[differentiable]
fn detached_result(x: f64) -> f64 {
    x.detach() * 3.0
}

/// Returns the parameter itself: gradient one.
#[differentiable]
fn identity(x: f64) -> f64 {
    x
}

/// `ln` of a negative number when `x < 1`.
#[differentiable]
fn log_of_difference(x: f64) -> f64 {
    (x - 1.0).ln() * 2.0
}

#[test]
fn multi_parameter_functions_match_analytic_gradients() -> Result<(), ScalarAutodiffError> {
    let (w, b, x, y) = (0.5, -0.25, 2.0, 1.5);
    let (value, [dw, db, dx, dy]) = squared_error_grad(w, b, x, y)?;
    let r = w * x + b - y;
    assert_eq!(value, r * r);
    assert_relative_eq!(dw, 2.0 * r * x, max_relative = 1e-15);
    assert_relative_eq!(db, 2.0 * r, max_relative = 1e-15);
    assert_relative_eq!(dx, 2.0 * r * w, max_relative = 1e-15);
    assert_relative_eq!(dy, -2.0 * r, max_relative = 1e-15);

    for (x, y) in [(-1.2, 1.0), (0.5, 0.25), (1.0, 1.0), (2.0, 3.5)] {
        let (value, [dx, dy]) = rosenbrock_grad(x, y)?;
        assert_eq!(
            value.to_bits(),
            rosenbrock(black_box(x), black_box(y)).to_bits()
        );
        let expected_dx = -2.0 * (1.0 - x) - 400.0 * x * (y - x * x);
        let expected_dy = 200.0 * (y - x * x);
        assert_relative_eq!(dx, expected_dx, epsilon = 1e-12, max_relative = 1e-13);
        assert_relative_eq!(dy, expected_dy, epsilon = 1e-12, max_relative = 1e-13);
    }

    for (w, x) in [(0.3, 2.0), (-1.5, 0.4), (2.0, -3.0)] {
        let (value, [dw, dx]) = log_sigmoid_grad(w, x)?;
        assert_eq!(
            value.to_bits(),
            log_sigmoid(black_box(w), black_box(x)).to_bits()
        );
        let sigma = 1.0 / (1.0 + (-w * x).exp());
        assert_relative_eq!(dw, (1.0 - sigma) * x, max_relative = 1e-13);
        assert_relative_eq!(dx, (1.0 - sigma) * w, max_relative = 1e-13);
    }
    Ok(())
}

#[test]
fn a_parameter_used_many_times_and_shadowed() -> Result<(), ScalarAutodiffError> {
    for x in [0.3, 1.0, 2.5] {
        let (value, [dx]) = many_uses_grad(x)?;
        let (expected_value, expected_dx) = many_uses_by_hand(x);
        assert_eq!(value.to_bits(), expected_value.to_bits());
        assert_eq!(value.to_bits(), many_uses(black_box(x)).to_bits());
        assert_eq!(dx.to_bits(), expected_dx.to_bits());
    }
    // The parameter is one node with one edge per use: six uses in `y`, one in the first
    // shadowing `let`; the later `x`s are other nodes.
    let x = Scalar::variable(1.0)?;
    let ledger = many_uses_graph(&x)?.backward()?.ledger();
    let x_index = ledger
        .nodes
        .iter()
        .position(|node| node.operation == ScalarOperation::Variable)
        .expect("x is in the ledger");
    let x_edges = ledger
        .edges
        .iter()
        .filter(|edge| edge.parent == x_index)
        .count();
    assert_eq!(x_edges, 7);
    Ok(())
}

#[test]
fn mutable_parameters_and_early_return() -> Result<(), ScalarAutodiffError> {
    let (x, y) = (1.5, 0.5);
    let (value, [dx, dy]) = mutable_parameter_grad(x, y)?;
    assert_eq!(value, mutable_parameter(x, y));
    assert_eq!(value, (x + y) * (x + y) - y);
    assert_eq!(dx, 2.0 * (x + y));
    assert_eq!(dy, 2.0 * (x + y) - 1.0);
    // The caller's node is untouched by the rebinding inside.
    let xs = Scalar::variable(x)?;
    let ys = Scalar::variable(y)?;
    let out = mutable_parameter_graph(&xs, &ys)?;
    assert_eq!(xs.value(), x);
    out.backward()?;
    assert_eq!(xs.gradient(), Some(dx));
    Ok(())
}

#[test]
fn generated_names_do_not_clash_with_parameters() -> Result<(), ScalarAutodiffError> {
    assert_eq!(clashing_names_grad(2.0, 3.0, 1.0)?, (5.0, [3.0, 2.0, -1.0]));
    assert_eq!(clashing_names(2.0, 3.0, 1.0), 5.0);
    Ok(())
}

#[test]
fn untracked_results_have_zero_gradient() -> Result<(), ScalarAutodiffError> {
    assert_eq!(constant_result_grad(1.5)?, (std::f64::consts::TAU, [0.0]));
    assert_eq!(detached_result_grad(1.5)?, (4.5, [0.0]));
    assert_eq!(identity_grad(1.5)?, (1.5, [1.0]));
    // The graph form still refuses a pass from an untracked output.
    let x = Scalar::variable(1.5)?;
    let error = detached_result_graph(&x)?.backward().unwrap_err();
    assert!(matches!(error, ScalarAutodiffError::UntrackedOutput { .. }));
    Ok(())
}

#[test]
fn run_time_errors_come_back_typed() -> Result<(), ScalarAutodiffError> {
    assert_eq!(log_of_difference_grad(3.0)?, (2.0f64.ln() * 2.0, [1.0]));
    // ln(0.5 - 1) is NaN in plain f64 arithmetic, and a typed error from the graph.
    assert!(log_of_difference(0.5).is_nan());
    let error = log_of_difference_grad(0.5).unwrap_err();
    match &error {
        ScalarAutodiffError::NonFiniteResult {
            operation,
            operands,
            value,
            ..
        } => {
            assert_eq!(*operation, ScalarOperation::Ln);
            assert_eq!(operands.as_slice(), &[-0.5]);
            assert!(value.is_nan());
        }
        other => panic!("expected NonFiniteResult, got {other:?}"),
    }
    assert_eq!(error.kind(), "non-finite-result");
    // Non-finite arguments are refused before the body runs.
    assert!(matches!(
        identity_grad(f64::INFINITY),
        Err(ScalarAutodiffError::NonFiniteLeaf { .. })
    ));
    // A failed call leaves nothing behind on the thread's tape.
    assert_eq!(scalar_autodiff::tape_len(), 0);
    Ok(())
}

#[test]
fn plain_and_graph_values_agree_bit_for_bit() -> Result<(), ScalarAutodiffError> {
    for v in [-2.0, -0.5, 0.25, 1.0, 3.75] {
        let v = black_box(v);
        let w = black_box(v * 0.5 + 0.1);
        assert_eq!(
            squared_error(v, w, 2.0, -1.0).to_bits(),
            squared_error_grad(v, w, 2.0, -1.0)?.0.to_bits()
        );
        assert_eq!(
            rosenbrock(v, w).to_bits(),
            rosenbrock_grad(v, w)?.0.to_bits()
        );
        assert_eq!(
            log_sigmoid(v, w).to_bits(),
            log_sigmoid_grad(v, w)?.0.to_bits()
        );
        assert_eq!(
            mutable_parameter(v, w).to_bits(),
            mutable_parameter_grad(v, w)?.0.to_bits()
        );
        assert_eq!(
            constant_result(v).to_bits(),
            constant_result_grad(v)?.0.to_bits()
        );
        assert_eq!(
            detached_result(v).to_bits(),
            detached_result_grad(v)?.0.to_bits()
        );
        assert_eq!(identity(v).to_bits(), identity_grad(v)?.0.to_bits());
        if v > 0.0 {
            assert_eq!(many_uses(v).to_bits(), many_uses_grad(v)?.0.to_bits());
        }
    }
    assert_eq!(
        log_of_difference(black_box(5.0)).to_bits(),
        log_of_difference_grad(5.0)?.0.to_bits()
    );
    Ok(())
}
