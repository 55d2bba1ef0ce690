//! Each eval's derivative at small sizes: against central differences of its plain
//! function, and bit for bit against `name_graph` + `backward` (the validated tape every
//! compiled sweep must equal). GradBench's own validation is loose for small numbers
//! (1e-4 absolute), so these are what hold the derivatives exact.

use scalar_autodiff::Parameters;
use scalar_autodiff::{Scalar, ScalarAutodiffError};
use scalar_autodiff_gradbench::evals::{ba, det, gmm, ht, kmeans, llsq, lse, lstm, ode};

/// Deterministic inputs in [-1, 1].
fn numbers(count: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Central differences of `f` at `x`, one coordinate at a time.
fn central(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    let mut moved = x.to_vec();
    (0..x.len())
        .map(|i| {
            let h = 1e-6 * x[i].abs().max(1.0);
            moved[i] = x[i] + h;
            let up = f(&moved);
            moved[i] = x[i] - h;
            let down = f(&moved);
            moved[i] = x[i];
            (up - down) / (2.0 * h)
        })
        .collect()
}

fn assert_near(gradient: &[f64], numeric: &[f64], what: &str) {
    assert_eq!(gradient.len(), numeric.len());
    for (i, (g, n)) in gradient.iter().zip(numeric).enumerate() {
        assert!(
            (g - n).abs() <= 1e-6 * (1.0 + n.abs()),
            "{what} [{i}]: {g} against central differences' {n}"
        );
    }
}

/// `name_graph` + `backward` on fresh variables of `x`: the value and gradient as bits.
fn on_the_tape(
    x: &[f64],
    build: impl FnOnce(&Vec<Scalar>) -> Result<Scalar, ScalarAutodiffError>,
) -> Vec<u64> {
    let vars: Vec<Scalar> = x.iter().map(|&v| Scalar::variable(v).unwrap()).collect();
    let out = build(&vars).unwrap();
    out.backward().unwrap();
    let gradient = vars.iter().map(|v| v.gradient().unwrap_or(0.0));
    std::iter::once(out.value())
        .chain(gradient)
        .map(|v| (v + 0.0).to_bits())
        .collect()
}

fn bits(value: f64, gradient: &[f64]) -> Vec<u64> {
    std::iter::once(value)
        .chain(gradient.iter().copied())
        .map(f64::to_bits)
        .collect()
}

#[test]
fn llsq_gradient() {
    for (m, n) in [(1, 2), (5, 16), (7, 33)] {
        let x = numbers(m, 3 + m as u64);
        let (value, gradient) = llsq::llsq_grad(&x, n).unwrap();
        assert_eq!(value, llsq::llsq(&x, n));
        assert_near(&gradient, &central(|x| llsq::llsq(x, n), &x), "llsq");
        assert_eq!(
            bits(value, &gradient),
            on_the_tape(&x, |v| llsq::llsq_graph(v, n))
        );
    }
}

#[test]
fn lse_gradient_is_the_softmax() {
    for n in [1, 2, 9, 40] {
        let x: Vec<f64> = numbers(n, 11 + n as u64).iter().map(|v| v * 5.0).collect();
        let (value, gradient) = lse::lse_grad(&x).unwrap();
        assert_eq!(value, lse::lse(&x));
        let total: f64 = x.iter().map(|v| v.exp()).sum();
        for (g, v) in gradient.iter().zip(&x) {
            assert!((g - v.exp() / total).abs() <= 1e-14);
        }
        assert_near(&gradient, &central(lse::lse, &x), "lse");
        assert_eq!(bits(value, &gradient), on_the_tape(&x, lse::lse_graph));
    }
}

#[test]
fn det_gradient_is_the_cofactors() {
    for ell in 1..=5 {
        let a = numbers(ell * ell, 17 + ell as u64);
        let (value, gradient) = det::det_grad(&a, ell).unwrap();
        assert_eq!(value, det::det(&a, ell));
        assert_near(&gradient, &central(|a| det::det(a, ell), &a), "det");
        assert_eq!(
            bits(value, &gradient),
            on_the_tape(&a, |v| det::det_graph(v, ell))
        );
        // Jacobi's formula: the gradient of det is its cofactor matrix, so
        // Σ_j a_ij cof_ij = det along every row.
        for i in 0..ell {
            let row: f64 = (0..ell)
                .map(|j| a[i * ell + j] * gradient[i * ell + j])
                .sum();
            assert!(
                (row - value).abs() <= 1e-12 * (1.0 + value.abs()),
                "row {i}"
            );
        }
    }
    // The 3 by 3 determinant written out.
    let a = [2.0, 1.0, 0.5, -1.0, 3.0, 0.2, 0.4, 0.1, 1.5];
    assert!((det::det(&a, 3) - 9.89).abs() < 1e-12);
}

#[test]
fn ode_gradient_of_the_last_element() {
    for (n, s) in [(1, 1), (4, 2), (6, 3), (9, 5)] {
        let x = numbers(n, 23 + n as u64);
        let mut last = vec![0.0; n];
        last[n - 1] = 1.0;
        let (y, gradient) = ode::ode_vjp(&x, s, &last).unwrap();
        assert_eq!(y, ode::ode(&x, s));
        assert_near(&gradient, &central(|x| ode::ode(x, s)[n - 1], &x), "ode");
        // Up to degree 4 in t the steps are exact: the gradient of
        // x_0 ⋯ x_{n-1} 2^n / n! is that product over x_i.
        if n <= 4 {
            let factorial: f64 = (1..=n).map(|k| k as f64).product();
            let exact: f64 = x.iter().product::<f64>() * 2f64.powi(n as i32) / factorial;
            for (g, v) in gradient.iter().zip(&x) {
                assert!(
                    (g - exact / v).abs() <= 1e-12 * (1.0 + g.abs()),
                    "{g} {}",
                    exact / v
                );
            }
        }
    }
}

#[test]
fn kmeans_gradient_and_newton_direction() {
    let (k, n, d) = (3, 20, 2);
    let points = numbers(n * d, 31);
    let centroids = numbers(k * d, 37);
    let (value, gradient) = kmeans::cost_grad(&centroids, &points, d).unwrap();
    assert_eq!(value, kmeans::cost(&centroids, &points, d));
    assert_near(
        &gradient,
        &central(|c| kmeans::cost(c, &points, d), &centroids),
        "kmeans",
    );
    assert_eq!(
        bits(value, &gradient),
        on_the_tape(&centroids, |v| kmeans::cost_graph(v, &points, d))
    );
    // By hand: each centroid's points pull it to their mean, so the Newton direction is
    // the centroid minus that mean, the diagonal twice the cluster's size.
    let mut sums = vec![0.0; k * d];
    let mut sizes = vec![0usize; k];
    for i in 0..n {
        let distance = |j: usize| -> f64 {
            (0..d)
                .map(|l| (points[i * d + l] - centroids[j * d + l]).powi(2))
                .sum()
        };
        let closest = (0..k)
            .min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
            .unwrap();
        sizes[closest] += 1;
        for l in 0..d {
            sums[closest * d + l] += points[i * d + l];
        }
    }
    let dir = kmeans::dir(&centroids, &points, d).unwrap();
    for j in 0..k {
        assert!(sizes[j] > 0, "every centroid has a point at this seed");
        for l in 0..d {
            let expected = centroids[j * d + l] - sums[j * d + l] / sizes[j] as f64;
            let got = dir[j * d + l];
            assert!(
                (got - expected).abs() <= 1e-12,
                "{j} {l}: {got} against {expected}"
            );
        }
    }
}

#[test]
fn gmm_gradient() {
    for (d, k, n) in [(1, 2, 3), (2, 3, 5), (4, 2, 6)] {
        let l_size = d * (d - 1) / 2;
        let p = gmm::Gmm {
            alpha: numbers(k, 41),
            mu: numbers(k * d, 43),
            q: numbers(k * d, 47).iter().map(|v| v * 0.3).collect(),
            l: numbers(k * l_size, 53),
        };
        let x = numbers(n * d, 59);
        let (value, gradient) = gmm::objective_grad(&p, &x, d, k, 1.5, 2).unwrap();
        assert_eq!(value, gmm::objective(&p, &x, d, k, 1.5, 2));
        let flat = p.to_flat();
        let at = |flat: &[f64]| {
            let mut q = p.clone();
            q.read_flat(flat).unwrap();
            gmm::objective(&q, &x, d, k, 1.5, 2)
        };
        assert_near(&gradient.to_flat(), &central(at, &flat), "gmm");
        // Bit for bit against the tape.
        let vars = p.variables().unwrap();
        let out = gmm::objective_graph(&vars, &x, d, k, 1.5, 2).unwrap();
        out.backward().unwrap();
        let taped = p.gradient_of(&vars).to_flat();
        assert_eq!(out.value().to_bits(), value.to_bits());
        let bits = |g: &[f64]| g.iter().map(|v| (v + 0.0).to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&gradient.to_flat()), bits(&taped), "d {d}, k {k}");
    }
}

#[test]
fn lstm_gradient() {
    for (l, b, c) in [(1, 2, 2), (2, 3, 4), (3, 2, 5)] {
        let main = numbers(8 * b * l, 61);
        let extra = numbers(3 * b, 67);
        let state = numbers(2 * b * l, 71);
        // One-hot characters, as the eval sends them.
        let sequence: Vec<f64> = (0..c * b)
            .map(|at| {
                if at % b == (at / b * 7 + 3) % b {
                    1.0
                } else {
                    0.0
                }
            })
            .collect();
        let (value, (g_main, g_extra)) =
            lstm::objective_grad(&main, &extra, &state, &sequence, b).unwrap();
        assert_eq!(value, lstm::objective(&main, &extra, &state, &sequence, b));
        let both = [main.clone(), extra.clone()].concat();
        let at = |both: &[f64]| {
            let (main, extra) = both.split_at(main.len());
            lstm::objective(main, extra, &state, &sequence, b)
        };
        let gradient = [g_main.clone(), g_extra.clone()].concat();
        assert_near(&gradient, &central(at, &both), "lstm");
        // Bit for bit against the tape.
        let variables = |xs: &[f64]| -> Vec<Scalar> {
            xs.iter().map(|&v| Scalar::variable(v).unwrap()).collect()
        };
        let (vm, ve) = (variables(&main), variables(&extra));
        let out = lstm::objective_graph(&vm, &ve, &state, &sequence, b).unwrap();
        out.backward().unwrap();
        let taped: Vec<f64> = vm
            .iter()
            .chain(&ve)
            .map(|v| v.gradient().unwrap_or(0.0))
            .collect();
        assert_eq!(
            bits(value, &gradient),
            bits(out.value(), &taped),
            "l {l}, b {b}"
        );
    }
}

#[test]
fn ba_jacobian_of_both_rotations() {
    let feature = [0.3, -0.2];
    let point = [1.5, -0.4, 6.0];
    let mut camera = [0.0; ba::CAMERA];
    camera.copy_from_slice(&numbers(ba::CAMERA, 73));
    camera[5] = -2.0; // The point in front of the camera.
    for rotation in [[camera[0], camera[1], camera[2]], [0.0; 3]] {
        camera[..3].copy_from_slice(&rotation);
        let w = 0.7;
        let (values, jacobian) = ba::reprojection_jacobian(camera, point, w, &feature).unwrap();
        assert_eq!(values, ba::reprojection(camera, point, w, &feature));
        let at: Vec<f64> = camera.iter().chain(&point).copied().chain([w]).collect();
        for (k, row) in jacobian.iter().enumerate() {
            let f = |v: &[f64]| {
                let mut c = [0.0; ba::CAMERA];
                c.copy_from_slice(&v[..ba::CAMERA]);
                ba::reprojection(c, [v[11], v[12], v[13]], v[14], &feature)[k]
            };
            if rotation == [0.0; 3] {
                // (Central differences step off the zero rotation onto the other branch,
                // which meets it smoothly: the same derivatives to their accuracy.)
                assert_near(&row[3..], &central(f, &at)[3..], "ba, no rotation");
            } else {
                assert_near(row, &central(f, &at), "ba");
            }
        }
    }
    let (_, [slope]) = ba::weight_error_grad(0.7).unwrap();
    assert!((slope + 1.4).abs() < 1e-15);
}

/// The small hand model and its 100 points, from the recorded session with `manual`:
/// with `simple`, each point corresponds to its triangle's first vertex and has no
/// coordinates.
fn hand(simple: bool) -> (ht::Data, [f64; ht::THETA], Vec<f64>) {
    let path = format!("{}/tests/data/ht.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let input = text
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find_map(|line| line.get("message")?.get("input").cloned())
        .unwrap();
    let mut data = input["data"].clone();
    let mut us: Vec<Vec<f64>> = serde_json::from_value(input["us"].clone()).unwrap();
    if simple {
        let triangles = data["model"]["triangles"].clone();
        for c in data["correspondences"].as_array_mut().unwrap() {
            *c = triangles[c.as_u64().unwrap() as usize][0].clone();
        }
        us.clear();
    }
    let data: ht::Data = serde_json::from_value(data).unwrap();
    let theta: Vec<f64> = serde_json::from_value(input["theta"].clone()).unwrap();
    (data, theta.try_into().unwrap(), us.concat())
}

#[test]
fn ht_jacobian_forward_equals_reverse_and_central_differences() {
    for simple in [true, false] {
        let (data, theta, us) = hand(simple);
        let n = us.len();
        // Every pose column and every coordinate column, by forward mode on lanes.
        let tangents: Vec<([f64; ht::THETA], Vec<f64>)> = (0..ht::THETA + n)
            .map(|j| {
                let mut unit = ([0.0; ht::THETA], vec![0.0; n]);
                match j < ht::THETA {
                    true => unit.0[j] = 1.0,
                    false => unit.1[j - ht::THETA] = 1.0,
                }
                unit
            })
            .collect();
        let (value, columns) = ht::objective_jvps(theta, &us, &data, &tangents[..]).unwrap();
        assert_eq!(value, ht::objective(theta, &us, &data));
        // Rows by reverse mode, for a sample of residuals: the same derivatives, summed
        // in another order.
        for k in (0..value.len()).step_by(37) {
            let mut unit = vec![0.0; value.len()];
            unit[k] = 1.0;
            let (_, (pose, coordinates)) = ht::objective_vjp(theta, &us, &data, &unit).unwrap();
            let row: Vec<f64> = pose.iter().chain(&coordinates).copied().collect();
            let forward: Vec<f64> = columns.iter().map(|column| column[k]).collect();
            let scale = row.iter().fold(1e-3f64, |m, r| m.max(r.abs()));
            for (j, (a, b)) in forward.iter().zip(&row).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-12 * scale,
                    "row {k} column {j}: {a} against {b}"
                );
            }
        }
        // Pose columns against central differences of a few residuals.
        for j in [0, 2, 4, 7, 13, 25] {
            let f = |x: &[f64]| {
                let mut moved = theta;
                moved[j] = x[0];
                ht::objective(moved, &us, &data)
            };
            let h = 1e-6;
            let (up, down) = (f(&[theta[j] + h]), f(&[theta[j] - h]));
            for k in (0..value.len()).step_by(29) {
                let numeric = (up[k] - down[k]) / (2.0 * h);
                assert!(
                    (columns[j][k] - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
                    "column {j} row {k}: {} against {numeric}",
                    columns[j][k]
                );
            }
        }
        // Each point's coordinates move its own three residuals only: the two compressed
        // columns of the tool are exact.
        if n > 0 {
            let together = (
                [0.0; ht::THETA],
                (0..n).map(|i| f64::from(u8::from(i % 2 == 0))).collect(),
            );
            let (_, compressed) = ht::objective_jvps(theta, &us, &data, &[together]).unwrap();
            for (k, &entry) in compressed[0].iter().enumerate() {
                assert_eq!(
                    entry.to_bits(),
                    columns[ht::THETA + 2 * (k / 3)][k].to_bits()
                );
            }
        }
    }
}
