//! The handle-free backend records what the handle backend records, and frees it all.

use autodiff_runtime::__private::{trace, Backend, Handles};
use autodiff_runtime::{tape_len, Scalar, ScalarAutodiffError, ScalarOperation};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

/// f(x, y) = tanh(x·y + x) / hypot(x, y) - (x - 2)·powi(y, 3) + mul_add(x, y, y).max(x)
fn body<B: Backend>(b: &B, x: &B::Value, y: &B::Value) -> Result<B::Value> {
    let xy = b.mul(x, y)?;
    let t = b.tanh(&b.add(&xy, x)?)?;
    let left = b.div(&t, &b.hypot(x, y)?)?;
    let right = b.mul(&b.sub(x, &b.constant(2.0)?)?, &b.powi(y, 3)?)?;
    let fused = b.max(&b.mul_add(x, y, y)?, x)?;
    b.add(&b.sub(&left, &right)?, &fused)
}

#[test]
fn both_backends_agree_bit_for_bit() -> Result {
    for (x0, y0) in [(0.3, -1.2), (2.0, 0.5), (-1.5, 2.5)] {
        let base = tape_len();
        let (value, [dx, dy]) = trace(|t| {
            let (x, y) = (t.variable(x0)?, t.variable(y0)?);
            let out = body(t, &x, &y)?;
            t.value_and_gradient(out, [x, y])
        })?;
        assert_eq!(tape_len(), base, "the trace pops everything it recorded");

        let (x, y) = (Scalar::variable(x0)?, Scalar::variable(y0)?);
        let out = body(&Handles, &x, &y)?;
        let pass = out.backward()?;
        assert_eq!(value.to_bits(), out.value().to_bits());
        assert_eq!(Some(dx.to_bits()), x.gradient().map(f64::to_bits));
        assert_eq!(Some(dy.to_bits()), y.gradient().map(f64::to_bits));
        assert_eq!(pass.ledger().nodes.len(), 15);
    }
    Ok(())
}

/// `max` and `min` of two equal zeros have one sign in both backends, in both operand
/// orders, with the zero a node or a constant kept inside the trace's node: `f64::max`
/// may return either zero, and inlined beside a constant in a release build it returned
/// `0.0` where a `Scalar` got `-0.0`.
#[test]
fn max_and_min_of_signed_zeros_have_one_sign() -> Result {
    for (a, b) in [(-0.0f64, 0.0f64), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0)] {
        let either_positive = a.is_sign_positive() || b.is_sign_positive();
        let expected_max = if either_positive { 0.0 } else { -0.0 };
        let either_negative = a.is_sign_negative() || b.is_sign_negative();
        let expected_min = if either_negative { -0.0 } else { 0.0 };
        let (x, y) = (Scalar::variable(a)?, Scalar::variable(b)?);
        let handles = [
            x.max(&y)?.value(),
            x.min(&y)?.value(),
            x.max(&Scalar::constant(b)?)?.value(),
            x.min(&Scalar::constant(b)?)?.value(),
        ];
        let traced = trace(|t| {
            let (x, y) = (t.variable(a)?, t.variable(b)?);
            let c = t.constant(std::hint::black_box(b))?;
            let values = [
                t.max(&x, &y)?,
                t.min(&x, &y)?,
                t.max(&x, &c)?,
                t.min(&x, &c)?,
            ];
            Ok(values.map(|v| t.value(&v)))
        })?;
        let expected = [expected_max, expected_min, expected_max, expected_min];
        let bits = |values: [f64; 4]| values.map(f64::to_bits);
        assert_eq!(bits(handles), bits(expected), "handles at ({a:?}, {b:?})");
        assert_eq!(bits(traced), bits(expected), "trace at ({a:?}, {b:?})");
    }
    Ok(())
}

#[test]
fn a_trace_reports_errors_and_untracked_outputs() -> Result {
    let base = tape_len();
    let error = trace(|t| {
        let x = t.variable(-1.0)?;
        let out = t.ln(&x)?;
        t.value_and_gradient(out, [x])
    })
    .err();
    assert_eq!(
        error.as_ref().map(ScalarAutodiffError::kind),
        Some("non-finite-result")
    );
    let error = trace(|t| {
        let x = t.variable(0.0)?;
        let out = t.sqrt(&x)?;
        t.value_and_gradient(out, [x])
    })
    .err();
    assert!(matches!(
        error,
        Some(ScalarAutodiffError::NonFiniteDerivative {
            operation: ScalarOperation::Sqrt,
            ..
        })
    ));
    // An output that ignores the variable has a zero gradient, not an error.
    let (value, [dx]) = trace(|t| {
        let x = t.variable(3.0)?;
        let c = t.constant(2.0)?;
        let out = t.mul(&c, &t.detach(&x)?)?;
        t.value_and_gradient(out, [x])
    })?;
    assert_eq!((value, dx), (6.0, 0.0));
    assert_eq!(tape_len(), base);
    // Scalars cannot be made while a trace holds the tape: a typed error, not a panic.
    let inside = trace(|_| Scalar::variable(1.0).map(|s| s.value())).err();
    assert_eq!(inside, Some(ScalarAutodiffError::TapeUnavailable));
    Ok(())
}

/// Constants in every operand position: immediates in a trace, nodes on handles.
fn constants<B: Backend>(b: &B, x: &B::Value) -> Result<B::Value> {
    let c = b.constant(1.5)?;
    let d = b.constant(-0.25)?;
    let mut total = b.mul(&c, &d)?; // constants alone: folded in a trace
    total = b.add(&total, &b.exp(&c)?)?;
    for binary in [
        B::add,
        B::sub,
        B::mul,
        B::div,
        B::powf,
        B::log,
        B::atan2,
        B::max,
        B::min,
        B::hypot,
    ] {
        total = b.add(&total, &binary(b, x, &c)?)?;
        total = b.add(&total, &binary(b, &c, x)?)?;
    }
    total = b.add(&total, &b.mul_add(x, &c, &d)?)?; // two constants: one becomes a leaf
    total = b.add(&total, &b.mul_add(&c, &d, x)?)?;
    total = b.add(&total, &b.mul_add(&c, x, x)?)?;
    total = b.add(&total, &b.powi(&c, 3)?)?;
    total = b.add(&total, &b.mul(&b.detach(x)?, x)?)?;
    Ok(total)
}

#[test]
fn constants_give_the_same_bits_as_constant_nodes() -> Result {
    for x0 in [0.7, 1.3, 2.9] {
        let (value, [dx]) = trace(|t| {
            let x = t.variable(x0)?;
            let out = constants(t, &x)?;
            t.value_and_gradient(out, [x])
        })?;
        let x = Scalar::variable(x0)?;
        let out = constants(&Handles, &x)?;
        out.backward()?;
        assert_eq!(value.to_bits(), out.value().to_bits(), "value at {x0}");
        assert_eq!(
            Some(dx.to_bits()),
            x.gradient().map(f64::to_bits),
            "gradient at {x0}"
        );
    }
    Ok(())
}

#[test]
fn a_trace_folds_constants_and_reports_their_errors() -> Result {
    let base = tape_len();
    let (value, [dx]) = trace(|t| {
        let x = t.variable(1.0)?;
        let c = t.exp(&t.constant(2.0)?)?;
        assert_eq!(tape_len(), base, "nothing recorded for constants");
        let out = t.mul(&x, &c)?;
        t.value_and_gradient(out, [x])
    })?;
    assert_eq!((value, dx), (2f64.exp(), 2f64.exp()));
    let error = trace(|t| {
        let c = t.ln(&t.constant(-1.0)?)?;
        t.value_and_gradient(c, [])
    })
    .err();
    assert!(matches!(
        error,
        Some(ScalarAutodiffError::NonFiniteResult {
            operation: ScalarOperation::Ln,
            ..
        })
    ));
    let error = trace(|t| t.constant(f64::NAN).map(|_| ())).err();
    assert_eq!(
        error.as_ref().map(ScalarAutodiffError::kind),
        Some("non-finite-leaf")
    );
    Ok(())
}

#[test]
fn an_unreached_node_without_a_slope_does_not_fail_a_trace() -> Result {
    let (value, [dx]) = trace(|t| {
        let x = t.variable(0.0)?;
        let _dead = t.sqrt(&x)?; // no finite slope at 0, and the output does not use it
        let out = t.mul(&x, &t.constant(3.0)?)?;
        t.value_and_gradient(out, [x])
    })?;
    assert_eq!((value, dx), (0.0, 3.0));
    // A second pass in the same trace gives the same answer.
    let twice = trace(|t| {
        let x = t.variable(1.5)?;
        let out = t.mul(&x, &t.sin(&x)?)?;
        let first = t.value_and_gradient(out, [x])?;
        let second = t.value_and_gradient(out, [x])?;
        Ok((first, second))
    })?;
    assert_eq!(twice.0, twice.1);
    assert_eq!(twice.0 .1[0], 1.5f64.sin() + 1.5 * 1.5f64.cos());
    Ok(())
}
/// `powf` with a literal operand gives the C library's `pow` in both backends: inlined
/// beside the literal in a release build, a trace's `x.powf(0.5)` was `sqrt(x)`,
/// `x.powf(2.0)` was `x * x`, `x.powf(-1.0)` was `1 / x` and `2.0.powf(x)` was `exp2(x)`,
/// each a bit away from `pow` for about one input in a thousand.
#[test]
fn powf_with_a_literal_operand_is_the_same_in_both_backends() -> Result {
    let mut differ = 0;
    for i in 0..4_000 {
        let x0 = 0.01 + f64::from(i) * 1.5e-3;
        let x = Scalar::variable(x0)?;
        let handles = [
            x.powf(&Scalar::constant(0.5)?)?.value(),
            x.powf(&Scalar::constant(2.0)?)?.value(),
            x.powf(&Scalar::constant(-1.0)?)?.value(),
            Scalar::constant(2.0)?.powf(&x)?.value(),
        ];
        let traced = trace(|t| {
            let x = t.variable(x0)?;
            let values = [
                t.powf(&x, &t.constant(0.5)?)?,
                t.powf(&x, &t.constant(2.0)?)?,
                t.powf(&x, &t.constant(-1.0)?)?,
                t.powf(&t.constant(2.0)?, &x)?,
            ];
            Ok(values.map(|value| t.value(&value)))
        })?;
        differ += handles
            .iter()
            .zip(&traced)
            .filter(|(h, t)| h.to_bits() != t.to_bits())
            .count();
    }
    assert_eq!(differ, 0, "of 16,000 powers");
    Ok(())
}
