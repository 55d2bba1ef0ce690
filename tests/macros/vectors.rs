//! Functions returning `Vec<f64>`, a vector of run-time length: the plain function as
//! written, and `name_vjp`, the vector with the gradient of `cotangent · f`. Each unit
//! cotangent gives the bits of a scalar function returning that one element, compiled.

use scalar_autodiff::{differentiable, ScalarAutodiffError};

use crate::support::{near_each, XorShift};

/// One residual a data point of a small nonlinear model, `tanh(w0 + w1 x) * w2 - y`.
#[differentiable]
fn residuals(#[param] w: &[f64], xs: &[f64], ys: &[f64]) -> Vec<f64> {
    let mut r = vec![0.0; xs.len()];
    for i in 0..xs.len() {
        r[i] = (w[0] + w[1] * xs[i]).tanh() * w[2] - ys[i];
    }
    r
}

/// The same model's `k`-th residual alone, as a scalar function.
#[differentiable]
fn residual(#[param] w: &[f64], xs: &[f64], ys: &[f64], k: usize) -> f64 {
    let mut r = vec![0.0; xs.len()];
    for i in 0..xs.len() {
        r[i] = (w[0] + w[1] * xs[i]).tanh() * w[2] - ys[i];
    }
    r[k]
}

/// A running product over an array parameter, its length a local (the gradient flat,
/// as `name_grad`'s is for arrays).
#[differentiable]
fn prefix_products(x: [f64; 4], scale: f64) -> Vec<f64> {
    let n = x.len();
    let mut out = vec![0.0; n];
    let mut running = scale;
    for i in 0..n {
        running *= x[i];
        out[i] = running.sin();
    }
    out
}

fn counted<T>(run: impl FnOnce() -> T) -> (T, u64) {
    let before = scalar_autodiff::__private::traces();
    let value = run();
    (value, scalar_autodiff::__private::traces() - before)
}

#[test]
fn each_unit_cotangent_gives_that_elements_gradient_bit_for_bit() {
    let mut rng = XorShift::new(7);
    let w = vec![0.3, -1.1, 0.8];
    let xs: Vec<f64> = (0..9).map(|_| rng.unit() * 4.0 - 2.0).collect();
    let ys: Vec<f64> = (0..9).map(|_| rng.unit()).collect();
    let plain = residuals(&w, &xs, &ys);
    for k in 0..xs.len() {
        let mut unit = vec![0.0; xs.len()];
        unit[k] = 1.0;
        let (value, gradient) = residuals_vjp(&w, &xs, &ys, &unit).unwrap();
        assert_eq!(value, plain);
        let (element, expected) = residual_grad(&w, &xs, &ys, k).unwrap();
        assert_eq!(element.to_bits(), value[k].to_bits());
        let bits = |g: &[f64]| g.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&gradient), bits(&expected), "element {k}");
        near_each(&gradient, |w| residuals(w, &xs, &ys)[k], &w, "residual");
        // Compiled: a warm call records nothing on the tape.
        let (_, traced) = counted(|| residuals_vjp(&w, &xs, &ys, &unit));
        assert_eq!(traced, 0);
    }
}

#[test]
fn a_cotangent_weighs_the_elements_gradients() {
    let x = [0.9, -1.3, 0.4, 2.0];
    let (value, _) = prefix_products_vjp(x, 0.7, &[1.0, 0.0, 0.0, 0.0]).unwrap();
    assert_eq!(value, prefix_products(x, 0.7));
    let rows: Vec<[f64; 5]> = (0..4)
        .map(|k| {
            let mut unit = [0.0; 4];
            unit[k] = 1.0;
            prefix_products_vjp(x, 0.7, &unit).unwrap().1
        })
        .collect();
    // Row `k` against central differences of element `k`, in every argument.
    for (k, row) in rows.iter().enumerate() {
        let f = |v: &[f64]| prefix_products([v[0], v[1], v[2], v[3]], v[4])[k];
        near_each(row, f, &[x[0], x[1], x[2], x[3], 0.7], "prefix product");
    }
    let cotangent = [0.5, -2.0, 1.5, 0.25];
    let (_, weighted) = prefix_products_vjp(x, 0.7, &cotangent).unwrap();
    for j in 0..5 {
        let expected: f64 = (0..4).map(|k| cotangent[k] * rows[k][j]).sum();
        assert!(
            (weighted[j] - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
            "{j}: {} against {expected}",
            weighted[j]
        );
    }
}

#[test]
fn a_cotangent_of_another_length_is_a_typed_error() {
    let w = [0.3, -1.1, 0.8];
    let result = residuals_vjp(&w, &[1.0, 2.0], &[0.0, 0.5], &[1.0]);
    assert!(matches!(
        result,
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 2,
            found: 1
        })
    ));
    // A non-finite value on the way is the scalar functions' typed error.
    let result = residuals_vjp(&[f64::NAN, 0.0, 1.0], &[1.0], &[0.0], &[1.0]);
    assert!(result.is_err());
}
