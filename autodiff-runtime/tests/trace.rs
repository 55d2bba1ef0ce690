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
