//! The language of small models: nested parameter arrays, `#[param]` slices, local arrays
//! of tracked values, array-valued helpers, iterator folds and detached values as data.

use autodiff::{differentiable, Parameters, Scalar, ScalarAutodiffError};

#[differentiable]
fn nested(w: [[f64; 2]; 3], b: f64) -> f64 {
    let mut total = b;
    for i in 0..3 {
        for j in 0..2 {
            total += w[i][j] * (i as f64 + 1.0) * (j as f64 + 2.0);
        }
    }
    total * total
}

#[test]
fn nested_arrays_are_differentiated_row_major() -> Result<(), ScalarAutodiffError> {
    let w = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
    let (value, gradient) = nested_grad(w, 0.5)?;
    assert_eq!(value.to_bits(), nested(w, 0.5).to_bits());
    let inner = 0.5 + (0..3).map(|i| (0..2).map(|j| w[i][j] * (i as f64 + 1.0) * (j as f64 + 2.0)).sum::<f64>()).sum::<f64>();
    assert_eq!(gradient.len(), 7);
    for i in 0..3 {
        for j in 0..2 {
            let expected = 2.0 * inner * (i as f64 + 1.0) * (j as f64 + 2.0);
            assert!((gradient[i * 2 + j] - expected).abs() < 1e-9);
        }
    }
    assert!((gradient[6] - 2.0 * inner).abs() < 1e-9);
    Ok(())
}

#[differentiable]
fn dense(w: [[f64; 2]; 3], b: [f64; 3], x: [f64; 2]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for o in 0..3 {
        let mut z = b[o];
        for i in 0..2 {
            z += w[o][i] * x[i];
        }
        out[o] = z.tanh();
    }
    out
}

#[differentiable]
fn softmax_loss(w: [[f64; 2]; 3], b: [f64; 3], x: &[f64; 2], label: usize) -> f64 {
    let logits = dense(w, b, *x);
    let mut m = f64::NEG_INFINITY;
    for &z in logits.iter() {
        m = m.max(z.detach());
    }
    let total: f64 = logits.iter().map(|z| (z - m).exp()).sum();
    m + total.ln() - logits[label]
}

#[test]
fn helpers_return_arrays_and_folds_sum() -> Result<(), ScalarAutodiffError> {
    let w = [[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]];
    let b = [0.01, 0.02, -0.03];
    let x = [1.5, -0.5];
    let (value, gradient) = softmax_loss_grad(w, b, &x, 1)?;
    assert_eq!(value.to_bits(), softmax_loss(w, b, &x, 1).to_bits());
    // Central differences of the plain function.
    let mut flat: Vec<f64> = w.iter().flatten().copied().chain(b).collect();
    for (k, g) in gradient.iter().enumerate() {
        let h = 1e-6;
        let eval = |flat: &[f64]| {
            let w = [[flat[0], flat[1]], [flat[2], flat[3]], [flat[4], flat[5]]];
            softmax_loss(w, [flat[6], flat[7], flat[8]], &x, 1)
        };
        flat[k] += h;
        let up = eval(&flat);
        flat[k] -= 2.0 * h;
        let down = eval(&flat);
        flat[k] += h;
        assert!((g - (up - down) / (2.0 * h)).abs() < 1e-7, "{k}: {g}");
    }
    // The graph form returns one node per output.
    let wv = w.variables()?;
    let bv = b.variables()?;
    let xv = x.variables()?;
    let outs: [Scalar; 3] = dense_graph(&wv, &bv, &xv)?;
    assert_eq!(outs[0].value().to_bits(), dense(w, b, x)[0].to_bits());
    Ok(())
}

#[differentiable]
fn slice_loss(#[param] w: &[f64], xs: &[f64]) -> f64 {
    w.iter().zip(xs).map(|(a, b)| a * b).sum::<f64>() + w.iter().fold(0.0, |acc, v| acc + v * v)
}

#[test]
fn slices_give_vec_gradients() -> Result<(), ScalarAutodiffError> {
    let w = vec![1.0, -2.0, 3.0];
    let xs = [0.5, 0.25, 2.0];
    let (value, gradient) = slice_loss_grad(&w, &xs)?;
    assert_eq!(value.to_bits(), slice_loss(&w, &xs).to_bits());
    let expected: Vec<f64> = w.iter().zip(xs).map(|(w, x)| x + 2.0 * w).collect();
    assert_eq!(gradient, expected);
    Ok(())
}
