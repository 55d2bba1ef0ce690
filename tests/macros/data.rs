//! Data parameters and `#[constant]`: passed through untouched, excluded from the gradient,
//! and plain Rust over data evaluated exactly as the plain function evaluates it.

use scalar_autodiff::{differentiable, scalar_gradient_check, Scalar, ScalarAutodiffError};

/// Mean squared error of a line over data slices.
#[differentiable]
fn mse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let err = w * x + b - y;
        total += err * err;
    }
    total / ys.len() as f64
}

/// A hyperparameter scales the result but has no gradient entry.
#[differentiable]
fn scaled_square(x: f64, #[constant] scale: f64) -> f64 {
    scale * x * x
}

/// Plain Rust over data: iterator sums with closures, casts, nested indexing, a data-only
/// call and a data-only macro; every `f64` result meets the graph as a constant. (`&Vec`
/// and `Option` on purpose: any type passes through as data once it is `#[constant]`.)
#[differentiable]
#[allow(clippy::ptr_arg)]
fn with_plain_rust(
    x: f64,
    points: &[[f64; 2]],
    #[constant] data: &Vec<f64>,
    count: usize,
    flip: bool,
    #[constant] extra: Option<f64>,
) -> f64 {
    assert!(count <= data.len(), "count out of range");
    let mean = data.iter().sum::<f64>() / data.len() as f64;
    let spread = data.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>();
    let mut y = x * mean + spread;
    for i in 0..count {
        y += x * (i as f64 * 0.5) + points[i % points.len()][0] * points[0][1];
    }
    let sign = if flip { -1.0 } else { 1.0 };
    y = y * sign + f64::max(data[0], 0.25);
    if let Some(e) = extra {
        y += e * x;
    }
    y
}

/// Reassigned plain data and a data parameter declared `mut`.
#[differentiable]
fn data_updates(x: f64, mut steps: usize, #[constant] mut rate: f64) -> f64 {
    let mut y = x;
    while steps > 0 {
        y *= rate;
        rate *= 0.5;
        steps -= 1;
    }
    y
}

#[test]
fn data_parameters_are_excluded_from_the_gradient() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = ([1.0, 2.0, 3.0], [2.0, 4.5, 5.5]);
    let (w, b) = (1.5, 0.25);
    let (value, [dw, db]) = mse_grad(w, b, &xs, &ys)?;
    assert_eq!(value.to_bits(), mse(w, b, &xs, &ys).to_bits());
    let residuals: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| w * x + b - y).collect();
    let expected_dw = residuals
        .iter()
        .zip(&xs)
        .map(|(r, x)| 2.0 * r * x)
        .sum::<f64>()
        / 3.0;
    let expected_db = residuals.iter().map(|r| 2.0 * r).sum::<f64>() / 3.0;
    assert!((dw - expected_dw).abs() < 1e-12, "{dw} vs {expected_dw}");
    assert!((db - expected_db).abs() < 1e-12, "{db} vs {expected_db}");

    // The graph form takes the data as it is.
    let (w_node, b_node) = (Scalar::variable(w)?, Scalar::variable(b)?);
    mse_graph(&w_node, &b_node, &xs, &ys)?.backward()?;
    assert_eq!(w_node.gradient(), Some(dw));
    assert_eq!(b_node.gradient(), Some(db));
    Ok(())
}

#[test]
fn a_constant_parameter_is_data() -> Result<(), ScalarAutodiffError> {
    let (value, gradient) = scaled_square_grad(3.0, 0.5)?;
    assert_eq!(gradient, [3.0]);
    assert_eq!(value.to_bits(), scaled_square(3.0, 0.5).to_bits());
    // The graph form takes the hyperparameter as a plain `f64`.
    let x = Scalar::variable(3.0)?;
    scaled_square_graph(&x, 0.5)?.backward()?;
    assert_eq!(x.gradient(), Some(3.0));
    Ok(())
}

#[test]
fn plain_rust_over_data_is_evaluated_as_written() -> Result<(), ScalarAutodiffError> {
    let points = [[1.0, 2.0], [3.0, -1.0]];
    let data = vec![0.5, 1.5, -2.0, 4.0];
    for (x, count, flip, extra) in [(0.7, 3, false, None), (-1.2, 4, true, Some(2.5))] {
        let (value, [dx]) = with_plain_rust_grad(x, &points, &data, count, flip, extra)?;
        let plain = with_plain_rust(x, &points, &data, count, flip, extra);
        assert_eq!(value.to_bits(), plain.to_bits());
        let check = scalar_gradient_check(x, dx, 1e-6, 1e-8, |v| {
            with_plain_rust(v, &points, &data, count, flip, extra)
        })?;
        assert!(check.passed, "{check:?}");
    }
    Ok(())
}

#[test]
fn data_may_change_while_the_graph_is_built() -> Result<(), ScalarAutodiffError> {
    let (value, [dx]) = data_updates_grad(2.0, 3, 0.5)?;
    assert_eq!(value.to_bits(), data_updates(2.0, 3, 0.5).to_bits());
    assert_eq!(dx, 0.5 * 0.25 * 0.125);
    Ok(())
}
