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

/// A rotation of each point by one angle, through an array-valued helper: a Jacobian
/// with one column per parameter, as forward mode computes it.
#[differentiable]
fn rotate(angle: f64, p: [f64; 2]) -> [f64; 2] {
    let (c, s) = (angle.cos(), angle.sin());
    [c * p[0] - s * p[1], s * p[0] + c * p[1]]
}

/// Each point rotated by `angle[0]`, scaled by `angle[1]` and moved by its own offset
/// `offsets[i]`: element `2i + d` depends on the two angles and on `offsets[i]` only.
#[differentiable]
fn placed(angle: [f64; 2], #[param] offsets: &[f64], points: &[[f64; 2]]) -> Vec<f64> {
    let mut out = vec![0.0; 2 * points.len()];
    for i in 0..points.len() {
        let q = rotate(angle[0], points[i]);
        out[2 * i] = angle[1] * q[0] + offsets[i];
        out[2 * i + 1] = angle[1] * q[1] - offsets[i] * offsets[i];
    }
    out
}

#[test]
fn a_tangent_gives_the_jacobian_times_it_as_each_elements_jvp() {
    let mut rng = XorShift::new(11);
    let w = vec![0.3, -1.1, 0.8];
    let xs: Vec<f64> = (0..7).map(|_| rng.unit() * 4.0 - 2.0).collect();
    let ys: Vec<f64> = (0..7).map(|_| rng.unit()).collect();
    let tangent = vec![0.5, -0.25, 2.0];
    let (value, along) = residuals_jvp(&w, &xs, &ys, tangent.clone()).unwrap();
    assert_eq!(value, residuals(&w, &xs, &ys));
    for k in 0..xs.len() {
        // The scalar function's forward mode, bit for bit: the same operations on duals.
        let (element, expected) = residual_jvp(&w, &xs, &ys, k, tangent.clone()).unwrap();
        assert_eq!(element.to_bits(), value[k].to_bits());
        assert_eq!(along[k].to_bits(), expected.to_bits(), "element {k}");
        // And the reverse sweep's row dotted with the tangent.
        let mut unit = vec![0.0; xs.len()];
        unit[k] = 1.0;
        let row = residuals_vjp(&w, &xs, &ys, &unit).unwrap().1;
        let dotted: f64 = row.iter().zip(&tangent).map(|(r, t)| r * t).sum();
        assert!((along[k] - dotted).abs() <= 1e-12 * (1.0 + dotted.abs()));
    }
    // Nothing recorded.
    let (_, traced) = counted(|| residuals_jvp(&w, &xs, &ys, tangent.clone()));
    assert_eq!(traced, 0);
}

#[test]
fn unit_tangents_give_the_jacobians_columns_and_several_at_once_when_disjoint() {
    let points = [[0.4, -1.2], [1.5, 0.3], [-0.7, 0.9]];
    let angle = [0.6, 1.3];
    let offsets = vec![0.1, -0.2, 0.35];
    let n = points.len();
    let plain = placed(angle, &offsets, &points);
    // Columns by central differences, in all five inputs.
    let at: Vec<f64> = angle.iter().chain(&offsets).copied().collect();
    let column = |j: usize| -> Vec<f64> {
        let h = 1e-6;
        let shifted = |sign: f64| {
            let mut v = at.clone();
            v[j] += sign * h;
            placed([v[0], v[1]], &v[2..], &points)
        };
        let (up, down) = (shifted(1.0), shifted(-1.0));
        up.iter()
            .zip(&down)
            .map(|(u, d)| (u - d) / (2.0 * h))
            .collect()
    };
    for j in 0..2 + n {
        let mut unit_angle = [0.0; 2];
        let mut unit_offsets = vec![0.0; n];
        match j {
            0 | 1 => unit_angle[j] = 1.0,
            _ => unit_offsets[j - 2] = 1.0,
        }
        let (value, along) =
            placed_jvp(angle, &offsets, &points, (unit_angle, unit_offsets)).unwrap();
        assert_eq!(value, plain);
        for (got, expected) in along.iter().zip(column(j)) {
            assert!(
                (got - expected).abs() < 1e-7,
                "column {j}: {got} against {expected}"
            );
        }
    }
    // Every offset at once: no element depends on two offsets, so each element's tangent
    // is its own offset's column entry (a compressed Jacobian, one sweep).
    let (_, together) = placed_jvp(angle, &offsets, &points, ([0.0; 2], vec![1.0; n])).unwrap();
    for i in 0..n {
        let own = placed_jvp(
            angle,
            &offsets,
            &points,
            ([0.0; 2], {
                let mut unit = vec![0.0; n];
                unit[i] = 1.0;
                unit
            }),
        )
        .unwrap()
        .1;
        assert_eq!(together[2 * i].to_bits(), own[2 * i].to_bits());
        assert_eq!(together[2 * i + 1].to_bits(), own[2 * i + 1].to_bits());
    }
    // A tangent of the wrong size, and a non-finite one, are typed errors.
    let short = placed_jvp(angle, &offsets, &points, ([1.0, 0.0], vec![0.0; n - 1]));
    assert!(matches!(
        short,
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 5,
            found: 4
        })
    ));
    let bad = placed_jvp(angle, &offsets, &points, ([f64::NAN, 0.0], vec![0.0; n]));
    assert!(bad.is_err());
}

#[test]
fn several_tangents_at_once_give_each_tangents_jvp_bit_for_bit() {
    let points = [[0.4, -1.2], [1.5, 0.3], [-0.7, 0.9]];
    let angle = [0.6, 1.3];
    let offsets = vec![0.1, -0.2, 0.35];
    let n = points.len();
    // Every unit tangent and two mixed ones: 7 tangents, then 21 (more than a sweep's
    // lanes, so several sweeps).
    let mut tangents: Vec<([f64; 2], Vec<f64>)> = (0..2 + n)
        .map(|j| {
            let mut unit = ([0.0; 2], vec![0.0; n]);
            match j {
                0 | 1 => unit.0[j] = 1.0,
                _ => unit.1[j - 2] = 1.0,
            }
            unit
        })
        .collect();
    tangents.push(([0.5, -2.0], vec![1.0, 0.25, -0.75]));
    tangents.push(([0.0; 2], vec![1.0; n]));
    for copies in [1, 3] {
        let many: Vec<_> = (0..copies).flat_map(|_| tangents.clone()).collect();
        let (value, columns) = placed_jvps(angle, &offsets, &points, &many).unwrap();
        assert_eq!(value, placed(angle, &offsets, &points));
        assert_eq!(columns.len(), many.len());
        for (tangent, column) in many.iter().zip(&columns) {
            let (_, one) = placed_jvp(angle, &offsets, &points, tangent.clone()).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(column), bits(&one));
        }
    }
    // No tangent: the vector alone. A tangent of the wrong size, or non-finite, is an error.
    let (value, columns) = placed_jvps(angle, &offsets, &points, &[]).unwrap();
    assert_eq!(
        (value, columns.len()),
        (placed(angle, &offsets, &points), 0)
    );
    let short = placed_jvps(angle, &offsets, &points, &[([1.0, 0.0], vec![0.0; n - 1])]);
    assert!(matches!(
        short,
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 5,
            found: 4
        })
    ));
    let bad = placed_jvps(
        angle,
        &offsets,
        &points,
        &[([f64::INFINITY, 0.0], vec![0.0; n])],
    );
    assert!(bad.is_err());
    // Nothing recorded.
    let (_, traced) = counted(|| placed_jvps(angle, &offsets, &points, &tangents));
    assert_eq!(traced, 0);
    // A single `#[param]` slice: the tangents are slices' shapes.
    let w = vec![0.3, -1.1, 0.8];
    let xs = [0.5, -1.0, 2.0];
    let ys = [0.1, 0.2, 0.3];
    let units: Vec<Vec<f64>> = (0..3)
        .map(|j| (0..3).map(|i| f64::from(u8::from(i == j))).collect())
        .collect();
    let (_, columns) = residuals_jvps(&w, &xs, &ys, &units).unwrap();
    for (j, unit) in units.iter().enumerate() {
        assert_eq!(
            columns[j],
            residuals_jvp(&w, &xs, &ys, unit.clone()).unwrap().1
        );
    }
}

#[test]
fn a_sweep_carries_the_lanes_the_rustdoc_says() {
    // `name_jvps`'s rustdoc (written by the macro) and the README say eight.
    assert_eq!(scalar_autodiff::__private::LANES, 8);
}

/// A data parameter the body counts down: each of `name_jvps`'s sweeps starts from the
/// caller's value.
#[differentiable]
fn countdown(x: [f64; 2], mut steps: usize) -> Vec<f64> {
    let mut out = vec![0.0; 3];
    let mut k = 0;
    while steps > 0 {
        out[k % 3] += x[0] * x[1] * steps as f64;
        steps -= 1;
        k += 1;
    }
    out
}

#[test]
fn every_sweep_starts_from_the_callers_data() {
    let x = [0.7, -1.3];
    // Eleven tangents: two sweeps, the second of which once saw `steps` at 0.
    let tangents: Vec<[f64; 2]> = (0..11).map(|j| [1.0, j as f64 * 0.5]).collect();
    let (value, columns) = countdown_jvps(x, 5, &tangents).unwrap();
    assert_eq!(value, countdown(x, 5));
    for (tangent, column) in tangents.iter().zip(&columns) {
        assert_eq!(*column, countdown_jvp(x, 5, *tangent).unwrap().1);
        assert!(column.iter().any(|&entry| entry != 0.0));
    }
}
