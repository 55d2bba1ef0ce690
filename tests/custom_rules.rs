//! Custom derivative rules: `#[differentiable(derivative = slope)]`.

use autodiff::{differentiable, Scalar, ScalarAutodiffError};

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

#[differentiable(derivative = sig_slope)]
fn sig(x: f64) -> f64 {
    logistic(x)
}

#[differentiable]
fn sig_slope(_x: f64, value: f64) -> f64 {
    value * (1.0 - value)
}

#[differentiable(derivative = opaque_slope)]
fn opaque(x: f64) -> f64 {
    x.sin() * 2.0
}

fn opaque_slope(x: f64, _value: f64) -> f64 {
    2.0 * x.cos()
}

#[differentiable]
fn loss(w: f64, b: f64) -> f64 {
    let y = sig(w * 1.5 + b);
    y * y + opaque(w)
}

#[test]
fn first_order() -> Result<(), ScalarAutodiffError> {
    let (value, gradient) = loss_grad(0.3, -0.2)?;
    let z: f64 = 0.3 * 1.5 - 0.2;
    let s = logistic(z);
    assert_eq!(value, s * s + 0.3f64.sin() * 2.0);
    let ds = s * (1.0 - s);
    let dw = 2.0 * s * ds * 1.5 + 2.0 * 0.3f64.cos();
    let db = 2.0 * s * ds;
    assert!((gradient[0] - dw).abs() < 1e-15, "{gradient:?} {dw}");
    assert!((gradient[1] - db).abs() < 1e-15);
    let w = Scalar::variable(0.3)?;
    let b = Scalar::variable(-0.2)?;
    let out = loss_graph(&w, &b)?;
    let pass = out.backward()?;
    assert_eq!(w.gradient(), Some(gradient[0]));
    assert_eq!(b.gradient(), Some(gradient[1]));
    let ledger = pass.ledger().to_string();
    assert!(ledger.contains("sig"), "{ledger}");
    assert!(ledger.contains("opaque"), "{ledger}");
    let (jv, dot) = loss_jvp(0.3, -0.2, [0.7, -1.1])?;
    assert_eq!(jv, value);
    assert!((dot - (0.7 * dw - 1.1 * db)).abs() < 1e-14);
    Ok(())
}

#[test]
fn second_order() -> Result<(), ScalarAutodiffError> {
    let (_, g, h) = sig_hessian(0.4)?;
    let s = logistic(0.4);
    assert!((g[0] - s * (1.0 - s)).abs() < 1e-16);
    let expected = s * (1.0 - s) * (1.0 - 2.0 * s);
    assert!((h[0][0] - expected).abs() < 1e-15, "{h:?} {expected}");
    let error = opaque_hessian(0.4).unwrap_err();
    assert_eq!(error.kind(), "no-second-derivative");
    assert!(error.to_string().contains("opaque"), "{error}");
    Ok(())
}
