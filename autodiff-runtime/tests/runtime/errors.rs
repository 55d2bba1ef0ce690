//! Every refused request is a typed error, and a refused pass stores nothing.

use autodiff_runtime::{scalar_gradient_check, Scalar, ScalarAutodiffError, ScalarOperation};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

fn bits(scalars: &[&Scalar]) -> Vec<Option<u64>> {
    scalars
        .iter()
        .map(|s| s.gradient().map(f64::to_bits))
        .collect()
}

#[test]
fn leaves_must_be_finite() {
    for value in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let (error, line) = (Scalar::variable(value).err(), line!());
        assert!(matches!(
            error,
            Some(ScalarAutodiffError::NonFiniteLeaf { operation: ScalarOperation::Variable, value: v, .. })
                if v.to_bits() == value.to_bits()
        ));
        // The plain API has no function: the location is the call's.
        let at = error.as_ref().and_then(ScalarAutodiffError::location);
        assert_eq!(
            at.map(|at| (at.function(), at.file(), at.line(), at.column())),
            Some((None, file!(), line, 30))
        );
        let error = Scalar::constant(value).err();
        assert_eq!(
            error.as_ref().map(ScalarAutodiffError::kind),
            Some("non-finite-leaf")
        );
    }
    let (message, line) = (
        Scalar::variable(f64::INFINITY).err().map(|e| e.to_string()),
        line!(),
    );
    assert_eq!(
        message,
        Some(format!(
            "variable scalar value inf must be finite at {}:{}:9",
            file!(),
            line - 1
        ))
    );
}

#[test]
fn a_non_finite_result_names_the_operation_and_its_operands() -> Result {
    let x = Scalar::variable(-1.0)?;
    let (error, line) = (x.ln().err(), line!());
    let Some(ScalarAutodiffError::NonFiniteResult {
        operation,
        operands,
        value,
        location: Some(at),
    }) = &error
    else {
        panic!("expected NonFiniteResult, got {error:?}");
    };
    assert_eq!(*operation, ScalarOperation::Ln);
    assert_eq!(operands.as_slice(), [-1.0]);
    assert!(value.is_nan());
    assert_eq!((at.file(), at.line(), at.column()), (file!(), line, 28));
    assert_eq!(
        error.map(|e| e.to_string()),
        Some(format!(
            "ln(-1.0) produced non-finite value NaN at {}:{line}:28",
            file!()
        ))
    );
    Ok(())
}

#[test]
fn untracked_outputs_are_refused_by_name() -> Result {
    let x = Scalar::variable(1.0)?;
    let c = Scalar::constant(2.0)?;
    let cases = [
        (c.clone(), "constant-output"),
        (x.detach()?, "detached-output"),
        (c.mul(&c)?, "untracked-output"),
    ];
    for (output, kind) in cases {
        let error = output.backward().err();
        assert_eq!(error.as_ref().map(ScalarAutodiffError::kind), Some(kind));
        assert!(matches!(
            error,
            Some(ScalarAutodiffError::UntrackedOutput { .. })
        ));
    }
    assert_eq!(x.gradient(), Some(0.0));
    Ok(())
}

/// A graph whose stored gradients are already non-trivial, to watch for changes.
fn primed() -> Result<(Scalar, Scalar, Scalar)> {
    let x = Scalar::variable(1e-200)?;
    let scale = Scalar::variable(1e200)?;
    let y = x.mul(&scale)?; // 1.0
    y.backward_with_seed(0.75)?;
    Ok((x, scale, y))
}

#[test]
fn non_finite_seeds_are_refused_without_mutation() -> Result {
    let (x, scale, y) = primed()?;
    let before = bits(&[&x, &scale, &y]);
    for seed in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let error = y.backward_with_seed(seed).err();
        assert!(
            matches!(error, Some(ScalarAutodiffError::NonFiniteSeed { seed: s }) if s.to_bits() == seed.to_bits())
        );
    }
    assert_eq!(bits(&[&x, &scale, &y]), before);
    Ok(())
}

#[test]
fn an_overflowing_contribution_is_refused_without_mutation() -> Result {
    let (x, scale, y) = primed()?;
    let before = bits(&[&x, &scale, &y]);
    // d y / d x = 1e200; times the seed 1e200 overflows.
    let error = y.backward_with_seed(1e200).err();
    assert_eq!(
        error,
        Some(ScalarAutodiffError::NonFiniteContribution {
            child: 2,
            operation: ScalarOperation::Multiply,
            parent: 0,
            operand: 0,
            upstream: 1e200,
            local_derivative: 1e200,
            location: None,
        })
    );
    assert_eq!(bits(&[&x, &scale, &y]), before);
    assert_eq!(
        y.gradient(),
        Some(0.75),
        "even the output's own gradient is untouched"
    );
    Ok(())
}

#[test]
fn an_overflowing_pass_adjoint_is_refused_without_mutation() -> Result {
    let x = Scalar::variable(1.0)?;
    let doubled = x.add(&x)?;
    doubled.backward()?;
    let before = bits(&[&x, &doubled]);
    let error = doubled.backward_with_seed(f64::MAX).err();
    assert_eq!(
        error,
        Some(ScalarAutodiffError::NonFinitePassAdjoint {
            node: 0,
            operation: ScalarOperation::Variable,
            previous: f64::MAX,
            contribution: f64::MAX,
            location: None,
        })
    );
    assert_eq!(bits(&[&x, &doubled]), before);
    Ok(())
}

#[test]
fn an_overflowing_stored_gradient_is_refused_without_mutation() -> Result {
    let x = Scalar::variable(3.0)?;
    let y = x.mul(&Scalar::constant(0.5)?)?;
    y.backward_with_seed(f64::MAX)?; // y: MAX, x: MAX/2
    let before = bits(&[&x, &y]);
    let error = y.backward_with_seed(f64::MAX).err();
    // x's stored sum MAX/2 + MAX/2 is finite; y's MAX + MAX (topology node 2) is not.
    assert_eq!(
        error,
        Some(ScalarAutodiffError::NonFiniteAccumulatedGradient {
            node: 2,
            operation: ScalarOperation::Multiply,
            stored: f64::MAX,
            pass_adjoint: f64::MAX,
        })
    );
    assert_eq!(bits(&[&x, &y]), before);
    // A pass that fits still works afterwards.
    y.zero_grad();
    y.backward()?;
    assert_eq!(x.gradient(), Some(0.5));
    Ok(())
}

#[test]
fn a_missing_derivative_is_refused_by_the_pass_that_needs_it() -> Result {
    let x = Scalar::variable(0.0)?;
    let w = Scalar::variable(2.0)?;
    let root = x.sqrt()?; // value 0 is fine; the slope is not
    let loss = root.add(&w.mul(&w)?)?;
    let earlier = w.mul(&w)?;
    earlier.backward()?;
    let before = bits(&[&x, &w, &root, &loss]);
    let error = loss.backward().err();
    let Some(ScalarAutodiffError::NonFiniteDerivative {
        operation,
        operand,
        operands,
        derivative,
        ..
    }) = &error
    else {
        panic!("expected NonFiniteDerivative, got {error:?}");
    };
    assert_eq!(
        (*operation, *operand, operands.as_slice()),
        (ScalarOperation::Sqrt, 0, &[0.0][..])
    );
    assert_eq!(*derivative, f64::INFINITY);
    assert_eq!(
        error.as_ref().map(ScalarAutodiffError::kind),
        Some("non-finite-derivative")
    );
    assert_eq!(bits(&[&x, &w, &root, &loss]), before);
    Ok(())
}

#[test]
fn set_value_updates_free_leaves_only() -> Result {
    let w = Scalar::variable(1.0)?;
    w.set_value(2.5)?;
    assert_eq!(w.value(), 2.5);
    let y = w.exp()?;
    assert_eq!(
        w.set_value(3.0).err(),
        Some(ScalarAutodiffError::LeafInUse {
            operation: ScalarOperation::Variable,
            consumer: ScalarOperation::Exp,
        })
    );
    assert_eq!(
        y.set_value(3.0).err(),
        Some(ScalarAutodiffError::NotALeaf {
            operation: ScalarOperation::Exp
        })
    );
    drop(y);
    assert_eq!(
        w.set_value(f64::NAN).err().map(|e| e.kind()),
        Some("non-finite-leaf")
    );
    w.set_value(3.0)?;
    assert_eq!(w.value(), 3.0);
    Ok(())
}

#[test]
fn gradient_check_refuses_bad_requests() {
    let square = |x: f64| x * x;
    let kind = |r: std::result::Result<_, ScalarAutodiffError>| r.err().map(|e| e.kind());
    for step in [0.0, -1e-6, f64::NAN, f64::INFINITY] {
        assert_eq!(
            kind(scalar_gradient_check(1.0, 2.0, step, 1e-9, square)),
            Some("invalid-step")
        );
    }
    // A step that vanishes next to the input.
    assert_eq!(
        kind(scalar_gradient_check(1e10, 2e10, 1e-30, 1e-9, square)),
        Some("invalid-step")
    );
    for tolerance in [-1e-9, f64::NAN, f64::INFINITY] {
        assert_eq!(
            kind(scalar_gradient_check(1.0, 2.0, 1e-6, tolerance, square)),
            Some("invalid-tolerance")
        );
    }
    assert_eq!(
        kind(scalar_gradient_check(1.0, f64::NAN, 1e-6, 1e-9, square)),
        Some("non-finite-analytic")
    );
    assert_eq!(
        kind(scalar_gradient_check(0.0, 1.0, 1e-6, 1e-9, f64::ln)),
        Some("non-finite-evaluation")
    );
}

#[test]
fn gradient_check_reports_numbers_and_verdict() -> Result {
    let check = scalar_gradient_check(2.0, 8.0, 1e-6, 1e-9, |x| 2.0 * x * x)?;
    assert_eq!(
        (
            check.analytic,
            check.numerical,
            check.scaled_error,
            check.passed
        ),
        (8.0, 8.0, 0.0, true)
    );
    // A wrong derivative fails the check with a scaled error near 1/8.
    let wrong = scalar_gradient_check(2.0, 7.0, 1e-6, 1e-9, |x| 2.0 * x * x)?;
    assert!(!wrong.passed);
    assert!((wrong.scaled_error - 0.125).abs() < 1e-9);
    Ok(())
}
