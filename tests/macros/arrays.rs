//! Parameter arrays: every element against central differences, the gradient flattened in
//! parameter order, lengths from literals and constants, and the graph form on the
//! caller's nodes.

use scalar_autodiff::{differentiable, scalar_gradient_check, Scalar, ScalarAutodiffError};

const DEGREE: usize = 3;

/// A polynomial `w[0] + w[1] x + w[2] x² + w[3] x³` with a const length, read by index on
/// purpose.
#[differentiable]
#[allow(clippy::needless_range_loop)]
fn polynomial(w: [f64; DEGREE + 1], x: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..w.len() {
        total += w[i] * x.powi(i as i32);
    }
    total
}

/// Scalars, arrays and data interleaved: the gradient is `[a, w[0], w[1], b, v[0..K]]`.
#[differentiable]
fn interleaved(a: f64, w: [f64; 2], xs: &[f64], b: f64, v: [f64; DEGREE]) -> f64 {
    let mut total = a * w[0] - w[1] * b;
    for (v_i, x) in v.iter().zip(xs) {
        total += v_i * x * a;
    }
    total.tanh() + (w[0] * v[2]).sin()
}

fn every_element(
    values: &[f64],
    gradient: &[f64],
    f: impl Fn(&[f64]) -> f64,
) -> Result<(), ScalarAutodiffError> {
    assert_eq!(values.len(), gradient.len());
    for (index, (&at, &analytic)) in values.iter().zip(gradient).enumerate() {
        let check = scalar_gradient_check(at, analytic, 1e-6, 1e-7, |v| {
            let mut moved = values.to_vec();
            moved[index] = v;
            f(&moved)
        })?;
        assert!(check.passed, "element {index}: {check:?}");
    }
    Ok(())
}

#[test]
fn every_element_of_a_parameter_array_matches_central_differences(
) -> Result<(), ScalarAutodiffError> {
    let w = [0.5, -1.0, 0.25, 2.0];
    let x = 1.5;
    let (value, gradient) = polynomial_grad(w, x)?;
    assert_eq!(value.to_bits(), polynomial(w, x).to_bits());
    // d/dw[i] = x^i exactly, d/dx by the power rule.
    assert_eq!(gradient[..4], [1.0, 1.5, 2.25, 3.375]);
    let values = [w[0], w[1], w[2], w[3], x];
    every_element(&values, &gradient, |v| {
        polynomial([v[0], v[1], v[2], v[3]], v[4])
    })
}

#[test]
fn the_gradient_is_flattened_in_parameter_order() -> Result<(), ScalarAutodiffError> {
    let (a, w, b, v) = (0.3, [0.7, -0.4], 1.1, [0.2, -0.5, 0.9]);
    let xs = [1.0, -2.0, 0.5];
    let (value, gradient): (f64, [f64; 3 + DEGREE + 1]) = interleaved_grad(a, w, &xs, b, v)?;
    assert_eq!(value.to_bits(), interleaved(a, w, &xs, b, v).to_bits());
    let values = [a, w[0], w[1], b, v[0], v[1], v[2]];
    every_element(&values, &gradient, |p| {
        interleaved(p[0], [p[1], p[2]], &xs, p[3], [p[4], p[5], p[6]])
    })
}

#[test]
fn the_graph_form_takes_arrays_of_the_callers_nodes() -> Result<(), ScalarAutodiffError> {
    let w = [0.5, -1.0, 0.25, 2.0];
    let nodes = [
        Scalar::variable(w[0])?,
        Scalar::variable(w[1])?,
        Scalar::variable(w[2])?,
        Scalar::variable(w[3])?,
    ];
    let x = Scalar::variable(1.5)?;
    polynomial_graph(&nodes, &x)?.backward()?;
    let (_, gradient) = polynomial_grad(w, 1.5)?;
    let from_graph: Vec<Option<f64>> = nodes.iter().map(Scalar::gradient).collect();
    let expected: Vec<Option<f64>> = gradient[..4].iter().copied().map(Some).collect();
    assert_eq!(from_graph, expected);
    assert_eq!(x.gradient(), Some(gradient[4]));
    Ok(())
}
