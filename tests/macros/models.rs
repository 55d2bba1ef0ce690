//! The language of small models: nested parameter arrays, `#[param]` slices, local arrays
//! of tracked values, array-valued helpers, iterator folds and detached values as data.

#![allow(clippy::needless_range_loop)] // index loops on purpose: the form the rewrite must accept

use scalar_autodiff::{differentiable, Parameters, Scalar, ScalarAutodiffError};

use crate::support::central_partials;

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
    let inner = 0.5
        + (0..3)
            .map(|i| {
                (0..2)
                    .map(|j| w[i][j] * (i as f64 + 1.0) * (j as f64 + 2.0))
                    .sum::<f64>()
            })
            .sum::<f64>();
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
    let flat: Vec<f64> = w.iter().flatten().copied().chain(b).collect();
    let eval = |flat: &[f64]| {
        let w = [[flat[0], flat[1]], [flat[2], flat[3]], [flat[4], flat[5]]];
        softmax_loss(w, [flat[6], flat[7], flat[8]], &x, 1)
    };
    let numeric = central_partials(eval, &flat, 1e-6);
    assert_eq!(numeric.len(), gradient.len());
    for (k, (g, numeric)) in gradient.iter().zip(numeric).enumerate() {
        assert!((g - numeric).abs() < 1e-7, "{k}: {g} vs {numeric}");
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

/// A 2-3-2-1 tanh network as a parameter struct.
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Mlp {
    w1: [[f64; 2]; 3],
    b1: [f64; 3],
    w2: [[f64; 3]; 2],
    b2: Vec<f64>,
    out: Head,
}

#[derive(Parameters, Clone, Debug, PartialEq)]
struct Head {
    w: [f64; 2],
    b: f64,
}

#[differentiable]
fn layer3(w: [[f64; 2]; 3], b: [f64; 3], x: [f64; 2]) -> [f64; 3] {
    let mut h = [0.0; 3];
    for (o, row) in w.iter().enumerate() {
        h[o] = (row.iter().zip(x.iter()).map(|(a, v)| a * v).sum::<f64>() + b[o]).tanh();
    }
    h
}

#[differentiable]
fn mlp_loss(#[param] p: &Mlp, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let h1 = layer3(p.w1, p.b1, *x);
        let mut h2 = [0.0; 2];
        for o in 0..2 {
            let mut z = p.b2[o];
            for i in 0..3 {
                z += p.w2[o][i] * h1[i];
            }
            h2[o] = z.tanh();
        }
        let out = p.out.w[0] * h2[0] + p.out.w[1] * h2[1] + p.out.b;
        total += (out - y) * (out - y);
    }
    total / ys.len() as f64
}

/// The same network with its 20 parameters in one flat array, in the struct's order.
#[differentiable]
fn flat_loss(p: [f64; 20], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let mut h1 = [0.0; 3];
        for o in 0..3 {
            h1[o] = (p[o * 2] * x[0] + p[o * 2 + 1] * x[1] + p[6 + o]).tanh();
        }
        let mut h2 = [0.0; 2];
        for o in 0..2 {
            let mut z = p[15 + o];
            for i in 0..3 {
                z += p[9 + o * 3 + i] * h1[i];
            }
            h2[o] = z.tanh();
        }
        let out = p[17] * h2[0] + p[18] * h2[1] + p[19];
        total += (out - y) * (out - y);
    }
    total / ys.len() as f64
}

/// The same again, the parameters a runtime-length slice.
#[differentiable]
fn slice_mlp_loss(#[param] p: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let mut h1 = [0.0; 3];
        for o in 0..3 {
            h1[o] = (p[o * 2] * x[0] + p[o * 2 + 1] * x[1] + p[6 + o]).tanh();
        }
        let mut h2 = [0.0; 2];
        for o in 0..2 {
            let mut z = p[15 + o];
            for i in 0..3 {
                z += p[9 + o * 3 + i] * h1[i];
            }
            h2[o] = z.tanh();
        }
        let out = p[17] * h2[0] + p[18] * h2[1] + p[19];
        total += (out - y) * (out - y);
    }
    total / ys.len() as f64
}

fn network() -> Mlp {
    Mlp {
        w1: [[0.3, -0.7], [0.5, 0.2], [-0.4, 0.9]],
        b1: [0.1, -0.2, 0.05],
        w2: [[0.6, -0.3, 0.8], [-0.5, 0.4, 0.2]],
        b2: vec![0.02, -0.01],
        out: Head {
            w: [1.1, -0.9],
            b: 0.3,
        },
    }
}

const XS: [[f64; 2]; 4] = [[0.0, 1.0], [1.0, -1.0], [0.5, 0.25], [-1.5, 2.0]];
const YS: [f64; 4] = [0.5, -0.25, 1.0, 0.0];

#[test]
fn a_struct_a_flat_array_and_a_slice_give_the_same_gradient_bits() -> Result<(), ScalarAutodiffError>
{
    let p = network();
    let flat: [f64; 20] =
        p.to_flat()
            .try_into()
            .map_err(|_| ScalarAutodiffError::LengthMismatch {
                expected: 20,
                found: 0,
            })?;
    let (value, gradient) = mlp_loss_grad(&p, &XS, &YS)?;
    let (flat_value, flat_gradient) = flat_loss_grad(flat, &XS, &YS)?;
    let (slice_value, slice_gradient) = slice_mlp_loss_grad(&flat, &XS, &YS)?;
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // The plain functions agree bit for bit with the values.
    assert_eq!(value.to_bits(), mlp_loss(&p, &XS, &YS).to_bits());
    assert_eq!(value.to_bits(), flat_value.to_bits());
    assert_eq!(value.to_bits(), slice_value.to_bits());
    assert_eq!(bits(&gradient.to_flat()), bits(&flat_gradient));
    assert_eq!(bits(&flat_gradient), bits(&slice_gradient));
    assert_eq!(gradient.b2.len(), 2);
    // Central differences of the plain function, every parameter.
    let numeric = central_partials(
        |moved| flat_loss(moved.try_into().expect("20 parameters"), &XS, &YS),
        &flat,
        1e-6,
    );
    assert_eq!(numeric.len(), 20);
    for (k, numeric) in numeric.into_iter().enumerate() {
        assert!(
            (flat_gradient[k] - numeric).abs() < 1e-8,
            "{k}: {} vs {numeric}",
            flat_gradient[k]
        );
    }
    // The graph form on the struct's tracked mirror, read back in the struct's shape.
    let tracked = p.variables()?;
    mlp_loss_graph(&tracked, &XS, &YS)?.backward()?;
    let stored = p.gradient_of(&tracked);
    assert_eq!(bits(&stored.to_flat()), bits(&gradient.to_flat()));
    // One SGD step with the gradient in the struct's shape lowers the loss.
    let mut stepped = p.clone();
    stepped.zip_mut(&gradient, |w, g| *w -= 0.1 * g)?;
    assert!(mlp_loss(&stepped, &XS, &YS) < value);
    Ok(())
}

/// A model whose settings are data, with differentiable methods.
struct Model {
    scale: f64,
}

impl Model {
    #[differentiable]
    fn predict(&self, w: [f64; 2], x: f64) -> f64 {
        self.scale * (w[0] * x + w[1])
    }

    #[differentiable]
    fn loss(&self, w: [f64; 2], xs: &[f64]) -> f64 {
        xs.iter().map(|x| self.predict(w, *x).powi(2)).sum::<f64>()
    }

    /// An associated function without `self`.
    #[differentiable]
    fn penalty(w: [f64; 2]) -> f64 {
        w[0] * w[0] + w[1] * w[1]
    }

    #[differentiable]
    fn regularized(&self, w: [f64; 2], xs: &[f64]) -> f64 {
        self.loss(w, xs) + Self::penalty(w)
    }

    /// `regularized` with its method calls written as paths: `Self::loss(self, ..)`.
    #[differentiable]
    fn regularized_by_path(&self, w: [f64; 2], xs: &[f64]) -> f64 {
        Self::loss(self, w, xs) + Self::penalty(w)
    }
}

#[test]
fn methods_and_associated_functions_are_differentiable() -> Result<(), ScalarAutodiffError> {
    let model = Model { scale: 2.0 };
    let xs = [1.0, -0.5, 2.0];
    let w = [0.3, -0.1];
    let (value, gradient) = model.regularized_grad(w, &xs)?;
    assert_eq!(value.to_bits(), model.regularized(w, &xs).to_bits());
    // d/dw0 sum (s (w0 x + w1))^2 = sum 2 s^2 (w0 x + w1) x, plus 2 w0.
    let s2 = model.scale * model.scale;
    let d0: f64 = xs
        .iter()
        .map(|x| 2.0 * s2 * (w[0] * x + w[1]) * x)
        .sum::<f64>()
        + 2.0 * w[0];
    let d1: f64 = xs.iter().map(|x| 2.0 * s2 * (w[0] * x + w[1])).sum::<f64>() + 2.0 * w[1];
    assert!((gradient[0] - d0).abs() < 1e-12 && (gradient[1] - d1).abs() < 1e-12);
    let (p, [g0, g1]) = Model::penalty_grad(w)?;
    assert_eq!((p, g0, g1), (0.1, 0.6, -0.2));
    let (by_path, by_path_gradient) = model.regularized_by_path_grad(w, &xs)?;
    assert_eq!(by_path.to_bits(), value.to_bits());
    assert_eq!(by_path_gradient, gradient);
    Ok(())
}

/// The stable log-sum-exp with its running maximum as a fold: every step is data.
#[differentiable]
fn log_sum_exp(z: [f64; 3]) -> f64 {
    let m = z.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v.detach()));
    m + z.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
}

#[test]
fn a_fold_of_detached_values_is_data() -> Result<(), ScalarAutodiffError> {
    let z = [1.0, 3.0, -2.0];
    let (value, gradient) = log_sum_exp_grad(z)?;
    assert_eq!(value.to_bits(), log_sum_exp(z).to_bits());
    // The gradient of log-sum-exp is the softmax.
    let total: f64 = z.iter().map(|v| v.exp()).sum();
    for (g, v) in gradient.iter().zip(z) {
        assert!((g - v.exp() / total).abs() < 1e-15);
    }
    Ok(())
}

#[differentiable]
fn sum_of_squares(#[param] w: &[f64]) -> f64 {
    w.iter().map(|v| v * v).sum::<f64>()
}

/// Runs `body` on a thread with a 2 MiB stack, the default for spawned threads.
fn on_small_stack<T: Send + 'static>(body: impl FnOnce() -> T + Send + 'static) -> T {
    match std::thread::Builder::new().stack_size(2 << 20).spawn(body) {
        Ok(handle) => handle
            .join()
            .unwrap_or_else(|_| panic!("the thread panicked")),
        Err(error) => panic!("cannot spawn: {error}"),
    }
}

#[test]
fn a_100_000_scalar_slice_runs_on_a_2_mib_stack() {
    let result = on_small_stack(|| {
        let w: Vec<f64> = (0..100_000).map(|i| (i % 7) as f64 - 3.0).collect();
        let (value, gradient) = sum_of_squares_grad(&w)?;
        assert_eq!(value.to_bits(), sum_of_squares(&w).to_bits());
        assert_eq!(gradient.len(), w.len());
        assert!(gradient.iter().zip(&w).all(|(g, v)| *g == 2.0 * v));
        Ok::<(), ScalarAutodiffError>(())
    });
    assert_eq!(result, Ok(()));
}

// (`.flatten()` is not followed by the compiled sweeps: on the tape, as chosen.)
#[differentiable(tape)]
fn squared_norm(w: [[f64; 2]; 2]) -> f64 {
    w.iter().flatten().map(|v| v * v).sum::<f64>() + w.iter().flatten().copied().product::<f64>()
}

#[test]
fn nested_arrays_flatten_in_folds() -> Result<(), ScalarAutodiffError> {
    let w = [[1.0, 2.0], [3.0, 4.0]];
    let (value, gradient) = squared_norm_grad(w)?;
    assert_eq!(value.to_bits(), squared_norm(w).to_bits());
    assert_eq!(value, 30.0 + 24.0);
    assert_eq!(gradient, [2.0 + 24.0, 4.0 + 12.0, 6.0 + 8.0, 8.0 + 6.0]);
    Ok(())
}

/// A helper differentiated by its parameter struct, called with data for it.
#[differentiable]
fn head_score(#[param] head: &Head, h: [f64; 2]) -> f64 {
    head.w[0] * h[0] + head.w[1] * h[1] + head.b
}

#[differentiable]
fn scored(h: [f64; 2], #[constant] head: &Head) -> f64 {
    head_score(head, h) * 2.0
}

#[test]
fn data_passed_for_a_parameter_struct_becomes_constants() -> Result<(), ScalarAutodiffError> {
    let head = Head {
        w: [0.5, -1.5],
        b: 0.25,
    };
    let (value, gradient) = scored_grad([2.0, 1.0], &head)?;
    assert_eq!(value.to_bits(), scored([2.0, 1.0], &head).to_bits());
    assert_eq!(gradient, [1.0, -3.0]);
    Ok(())
}

/// `.map(..).fold(..)`, over data and over a parameter array: the map's value is the fold's
/// item (before, "a loop or fold cannot run over this tracked value").
#[differentiable]
fn map_then_fold(w: [f64; 3], xs: &[f64]) -> f64 {
    let data = xs.iter().map(|x| x * x).fold(0.0, |acc, v| acc + w[0] * v);
    let tracked = w
        .iter()
        .map(|v| v.sin())
        .fold(1.0, |acc, s| acc * (1.0 + s));
    data + tracked
}

/// A fold over a helper's result, with the accumulator's name also used outside the fold.
#[differentiable]
fn fold_over_a_helper(w: [[f64; 2]; 3], b: [f64; 3], x: [f64; 2]) -> f64 {
    let acc = 0.5;
    let total: f64 = dense(w, b, x).iter().sum();
    let squares = dense(w, b, x)
        .iter()
        .map(|h| h * h)
        .fold(acc, |acc, q| acc + q);
    total + squares * acc
}

#[test]
fn map_then_fold_and_folds_over_a_helper_match_central_differences(
) -> Result<(), ScalarAutodiffError> {
    let w = [0.3, -0.7, 1.1];
    let xs = [0.5, -1.5, 2.0];
    let (value, gradient) = map_then_fold_grad(w, &xs)?;
    assert_eq!(value.to_bits(), map_then_fold(w, &xs).to_bits());
    let squares: f64 = xs.iter().map(|x| x * x).sum();
    let factors: Vec<f64> = w.iter().map(|v| 1.0 + v.sin()).collect();
    let product: f64 = factors.iter().product();
    for (k, g) in gradient.iter().enumerate() {
        let expected = product / factors[k] * w[k].cos() + if k == 0 { squares } else { 0.0 };
        assert!((g - expected).abs() < 1e-12, "{k}: {g} vs {expected}");
    }

    let (w, b, x) = (
        [[0.1, -0.2], [0.3, 0.4], [-0.5, 0.6]],
        [0.01, 0.02, -0.03],
        [1.5, -0.5],
    );
    let (value, gradient) = fold_over_a_helper_grad(w, b, x)?;
    assert_eq!(value.to_bits(), fold_over_a_helper(w, b, x).to_bits());
    let flat: Vec<f64> = w.iter().flatten().copied().chain(b).chain(x).collect();
    let eval = |p: &[f64]| {
        let w = [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]];
        fold_over_a_helper(w, [p[6], p[7], p[8]], [p[9], p[10]])
    };
    let numeric = central_partials(eval, &flat, 1e-6);
    assert_eq!(numeric.len(), gradient.len());
    for (k, (g, numeric)) in gradient.iter().zip(numeric).enumerate() {
        assert!((g - numeric).abs() < 1e-8, "{k}: {g} vs {numeric}");
    }
    Ok(())
}
