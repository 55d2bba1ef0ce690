//! `name_jvp`, `name_hvp` and `name_hessian` against analytic derivatives, central
//! differences of `name_grad`, and each other.

// Hessians are read as `h[i][j]`, as the formulas write them; the bodies are the math as a
// user writes it.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError};

use crate::support::central_jacobian;

#[differentiable]
fn rosenbrock(x: f64, y: f64) -> f64 {
    (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2)
}

/// Rosenbrock's analytic Hessian.
fn rosenbrock_analytic(x: f64, y: f64) -> [[f64; 2]; 2] {
    [
        [2.0 - 400.0 * (y - x * x) + 800.0 * x * x, -400.0 * x],
        [-400.0 * x, 200.0],
    ]
}

#[differentiable]
fn rosenbrock_n(x: [f64; 10]) -> f64 {
    let mut total = 0.0;
    for i in 0..9 {
        total = total + 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

/// The N-dimensional Rosenbrock function's analytic Hessian (tridiagonal).
fn rosenbrock_n_analytic(x: &[f64; 10]) -> [[f64; 10]; 10] {
    let mut h = [[0.0; 10]; 10];
    for i in 0..9 {
        h[i][i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        h[i + 1][i + 1] += 200.0;
        h[i][i + 1] += -400.0 * x[i];
        h[i + 1][i] += -400.0 * x[i];
    }
    h
}

fn close(found: f64, expected: f64, relative: f64) -> bool {
    (found - expected).abs() <= relative * expected.abs().max(1.0)
}

fn assert_symmetric_bits<const N: usize>(h: &[[f64; N]; N]) {
    for i in 0..N {
        for j in 0..N {
            assert_eq!(h[i][j].to_bits(), h[j][i].to_bits(), "h[{i}][{j}]");
        }
    }
}

#[test]
fn rosenbrock_hessian_is_the_analytic_one() -> Result<(), ScalarAutodiffError> {
    for (x, y) in [(-1.2, 1.0), (1.0, 1.0), (0.3, -0.7), (2.5, 6.0), (0.0, 0.0)] {
        let (value, gradient, h) = rosenbrock_hessian(x, y)?;
        let (grad_value, grad) = rosenbrock_grad(x, y)?;
        assert_eq!(value.to_bits(), grad_value.to_bits());
        assert_eq!(gradient.map(f64::to_bits), grad.map(f64::to_bits));
        let expected = rosenbrock_analytic(x, y);
        for i in 0..2 {
            for j in 0..2 {
                assert!(
                    close(h[i][j], expected[i][j], 1e-14),
                    "at ({x}, {y}): h[{i}][{j}] = {} against {}",
                    h[i][j],
                    expected[i][j]
                );
            }
        }
        assert_symmetric_bits(&h);
    }
    Ok(())
}

#[test]
fn ten_dimensional_rosenbrock_hessian_is_the_analytic_one() -> Result<(), ScalarAutodiffError> {
    let x = [-1.2, 1.0, 0.5, -0.3, 2.0, 1.5, 0.0, -2.0, 0.7, 1.1];
    let (_, _, h) = rosenbrock_n_hessian(x)?;
    let expected = rosenbrock_n_analytic(&x);
    for i in 0..10 {
        for j in 0..10 {
            assert!(close(h[i][j], expected[i][j], 1e-14), "h[{i}][{j}]");
        }
    }
    assert_symmetric_bits(&h);
    Ok(())
}

#[test]
fn jvp_is_the_gradient_dotted_with_the_tangent() -> Result<(), ScalarAutodiffError> {
    let x = [-1.2, 1.0, 0.5, -0.3, 2.0, 1.5, 0.0, -2.0, 0.7, 1.1];
    let (grad_value, grad) = rosenbrock_n_grad(x)?;
    for seed in 0..20u64 {
        let tangent: [f64; 10] = std::array::from_fn(|i| {
            let bits = (seed * 31 + i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
            bits as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        });
        let (value, derivative) = rosenbrock_n_jvp(x, tangent)?;
        assert_eq!(value.to_bits(), grad_value.to_bits());
        let dot: f64 = grad.iter().zip(&tangent).map(|(g, t)| g * t).sum();
        let scale: f64 = grad.iter().zip(&tangent).map(|(g, t)| (g * t).abs()).sum();
        assert!(
            (derivative - dot).abs() <= 1e-14 * scale,
            "{derivative} against {dot}"
        );
        // And the Hessian-vector product is the Hessian times the tangent.
        let (_, gradient, product) = rosenbrock_n_hvp(x, tangent)?;
        assert_eq!(gradient.map(f64::to_bits), grad.map(f64::to_bits));
        let h = rosenbrock_n_analytic(&x);
        for i in 0..10 {
            let expected: f64 = (0..10).map(|j| h[i][j] * tangent[j]).sum();
            let scale: f64 = (0..10).map(|j| (h[i][j] * tangent[j]).abs()).sum();
            assert!((product[i] - expected).abs() <= 1e-13 * scale.max(1.0));
        }
    }
    Ok(())
}

/// A softmax cross-entropy over three classes of a two-feature linear model.
#[differentiable]
fn cross_entropy(w: [[f64; 2]; 3], b: [f64; 3], x: &[f64; 2], label: usize) -> f64 {
    let mut logits = [0.0; 3];
    for k in 0..3 {
        logits[k] = w[k][0] * x[0] + w[k][1] * x[1] + b[k];
    }
    let top = logits[0].max(logits[1]).max(logits[2]).detach();
    let mut total = 0.0;
    for k in 0..3 {
        total = total + (logits[k] - top).exp();
    }
    total.ln() + top - logits[label]
}

/// Central differences of `name_grad` along each coordinate: column `j` of the Hessian.
fn central_hessian<const N: usize>(
    point: [f64; N],
    grad: impl Fn([f64; N]) -> Result<(f64, [f64; N]), ScalarAutodiffError>,
) -> Result<[[f64; N]; N], ScalarAutodiffError> {
    let mut h = [[0.0; N]; N];
    for j in 0..N {
        let step = 1e-5 * point[j].abs().max(1.0);
        let (mut up, mut down) = (point, point);
        up[j] += step;
        down[j] -= step;
        let (_, g_up) = grad(up)?;
        let (_, g_down) = grad(down)?;
        for i in 0..N {
            h[i][j] = (g_up[i] - g_down[i]) / (2.0 * step);
        }
    }
    Ok(h)
}

fn flat_cross_entropy(p: [f64; 9]) -> ([[f64; 2]; 3], [f64; 3]) {
    (
        [[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]],
        [p[6], p[7], p[8]],
    )
}

#[test]
fn cross_entropy_hessian_matches_central_differences() -> Result<(), ScalarAutodiffError> {
    let x = [0.8, -1.3];
    let point = [0.2, -0.4, 0.9, 0.1, -0.6, 0.5, 0.05, -0.1, 0.3];
    for label in 0..3 {
        let (w, b) = flat_cross_entropy(point);
        let (_, gradient, h) = cross_entropy_hessian(w, b, &x, label)?;
        let (_, grad) = cross_entropy_grad(w, b, &x, label)?;
        assert_eq!(gradient.map(f64::to_bits), grad.map(f64::to_bits));
        let central = central_hessian(point, |p| {
            let (w, b) = flat_cross_entropy(p);
            cross_entropy_grad(w, b, &x, label)
        })?;
        for i in 0..9 {
            for j in 0..9 {
                assert!(
                    (h[i][j] - central[i][j]).abs() < 1e-8,
                    "label {label}: h[{i}][{j}] = {} against {}",
                    h[i][j],
                    central[i][j]
                );
            }
        }
        assert_symmetric_bits(&h);
        // The bias block of a softmax's Hessian is diag(p) - p pᵀ: rows sum to zero.
        for i in 6..9 {
            let row: f64 = (6..9).map(|j| h[i][j]).sum();
            assert!(row.abs() < 1e-15, "row {i} sums to {row}");
        }
    }
    Ok(())
}

#[derive(Parameters, Clone, Debug, PartialEq)]
struct Quadratic {
    a: [f64; 2],
    c: f64,
}

#[differentiable]
fn bowl(#[param] q: &Quadratic, x: f64) -> f64 {
    q.a[0] * q.a[0] * q.c + (q.a[1] * x).sin() * q.c.exp()
}

#[differentiable]
fn spread(#[param] ps: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 1..ps.len() {
        total = total + (ps[i] - ps[i - 1]).powi(2) * ps[i].cosh();
    }
    total
}

#[test]
fn struct_and_slice_parameters_have_vec_hessians() -> Result<(), ScalarAutodiffError> {
    let q = Quadratic {
        a: [0.7, -0.4],
        c: 0.3,
    };
    let x = 1.5;
    let (value, gradient, h) = bowl_hessian(&q, x)?;
    let (grad_value, grad) = bowl_grad(&q, x)?;
    assert_eq!(value.to_bits(), grad_value.to_bits());
    let flat_grad = [grad.0.to_flat(), vec![grad.1]].concat();
    assert_eq!(gradient, flat_grad);
    // In parameter order: a0, a1, c, then x.
    let [a0, a1, c] = [q.a[0], q.a[1], q.c];
    let (s, co, e) = ((a1 * x).sin(), (a1 * x).cos(), c.exp());
    let expected = [
        [2.0 * c, 0.0, 2.0 * a0, 0.0],
        [0.0, -x * x * s * e, x * co * e, co * e - a1 * x * s * e],
        [2.0 * a0, x * co * e, s * e, a1 * co * e],
        [0.0, co * e - a1 * x * s * e, a1 * co * e, -a1 * a1 * s * e],
    ];
    assert_eq!(h.len(), 4);
    for i in 0..4 {
        for j in 0..4 {
            assert!(close(h[i][j], expected[i][j], 1e-14), "h[{i}][{j}]");
            assert_eq!(h[i][j].to_bits(), h[j][i].to_bits());
        }
    }
    // The tangent is shaped like the gradient: here a tuple of the struct and the scalar.
    let tangent = (
        Quadratic {
            a: [1.0, 0.5],
            c: -2.0,
        },
        0.25,
    );
    let (_, grad_again, product) = bowl_hvp(&q, x, tangent.clone())?;
    assert_eq!(grad_again, grad);
    let t = [tangent.0.to_flat(), vec![tangent.1]].concat();
    let product = [product.0.to_flat(), vec![product.1]].concat();
    for i in 0..4 {
        let expected: f64 = (0..4).map(|j| h[i][j] * t[j]).sum();
        assert!(close(product[i], expected, 1e-14), "product[{i}]");
    }
    let (_, derivative) = bowl_jvp(&q, x, tangent)?;
    let dot: f64 = flat_grad.iter().zip(&t).map(|(g, t)| g * t).sum();
    assert!(close(derivative, dot, 1e-14));

    let ps = vec![0.3, -0.2, 0.9, 1.4];
    let (_, _, h) = spread_hessian(&ps)?;
    // Column j of the Hessian: central differences of the gradient along parameter j.
    let columns = central_jacobian(
        |p| spread_grad(p).map_or_else(|_| vec![f64::NAN; 4], |(_, g)| g),
        &ps,
        1e-5,
    );
    for i in 0..4 {
        for j in 0..4 {
            assert!((h[i][j] - columns[j][i]).abs() < 1e-7, "h[{i}][{j}]");
        }
    }
    // A tangent of the wrong length is refused, not cut short.
    assert!(matches!(
        spread_hvp(&ps, vec![1.0; 3]),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 4,
            found: 3
        })
    ));
    assert!(matches!(
        spread_jvp(&ps, vec![1.0; 5]),
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 4,
            found: 5
        })
    ));
    Ok(())
}

#[differentiable]
fn helper(u: f64, v: f64) -> f64 {
    u * v.exp()
}

#[differentiable]
fn composed(x: f64, y: f64) -> f64 {
    helper(x * x, y) + x * y.detach()
}

struct Scale {
    k: f64,
}

impl Scale {
    #[differentiable]
    fn energy(&self, x: f64, y: f64) -> f64 {
        self.k * x * x * y + Self::bias(y)
    }

    #[differentiable]
    fn bias(y: f64) -> f64 {
        y.powi(3)
    }
}

#[test]
fn composition_detach_and_methods() -> Result<(), ScalarAutodiffError> {
    let (x, y) = (0.7, -0.3);
    // helper(x², y) = x² e^y; x · detach(y) has no y-derivative and no second derivative.
    let (_, _, h) = composed_hessian(x, y)?;
    let e = y.exp();
    let expected = [[2.0 * e, 2.0 * x * e], [2.0 * x * e, x * x * e]];
    for i in 0..2 {
        for j in 0..2 {
            assert!(close(h[i][j], expected[i][j], 1e-15), "h[{i}][{j}]");
        }
    }
    let scale = Scale { k: 2.0 };
    let (_, _, h) = scale.energy_hessian(x, y)?;
    let expected = [[2.0 * 2.0 * y, 2.0 * 2.0 * x], [2.0 * 2.0 * x, 6.0 * y]];
    for i in 0..2 {
        for j in 0..2 {
            assert!(close(h[i][j], expected[i][j], 1e-15), "h[{i}][{j}]");
        }
    }
    let (value, derivative) = scale.energy_jvp(x, y, [1.0, 0.0])?;
    assert!(close(value, 2.0 * x * x * y + y.powi(3), 1e-15));
    assert!(close(derivative, 2.0 * 2.0 * x * y, 1e-15));
    let (_, d) = Scale::bias_jvp(y, [2.0])?;
    assert!(close(d, 2.0 * 3.0 * y * y, 1e-15));
    Ok(())
}

#[differentiable]
fn root(x: f64) -> f64 {
    x.sqrt()
}

#[differentiable]
fn lonely(x: f64, y: f64) -> f64 {
    x.ln() + y
}

#[test]
fn non_finite_numbers_are_typed_errors() {
    // sqrt at 0: no first derivative, in every mode.
    assert_eq!(root_grad(0.0).unwrap_err().kind(), "non-finite-derivative");
    assert_eq!(root_jvp(0.0, [1.0]).unwrap_err().kind(), "non-finite-slope");
    assert_eq!(
        root_hessian(0.0).unwrap_err().kind(),
        "non-finite-derivative"
    );
    // A tangent along which x does not move still checks x's path, as `_grad` does.
    assert_eq!(
        lonely_jvp(-1.0, 0.0, [0.0, 1.0]).unwrap_err().kind(),
        "non-finite-result"
    );
    // sqrt near 0: the slope 0.5 / sqrt(x) is finite, its derivative overflows.
    let tiny = 1e-300;
    assert!(root_grad(tiny).is_ok());
    assert!(matches!(
        root_hessian(tiny),
        Err(ScalarAutodiffError::NonFiniteSecondOrder { .. })
    ));
    // A large slope times a large tangent overflows the tangent.
    assert_eq!(
        root_jvp(1e-300, [1e300]).unwrap_err().kind(),
        "non-finite-tangent"
    );
    // Non-finite tangents and arguments are refused up front.
    assert_eq!(
        root_jvp(1.0, [f64::NAN]).unwrap_err().kind(),
        "non-finite-tangent"
    );
    assert_eq!(
        root_hvp(f64::INFINITY, [1.0]).unwrap_err().kind(),
        "non-finite-leaf"
    );
}

#[differentiable]
#[allow(unused_variables)]
fn flat_in_x(x: f64, y: f64) -> f64 {
    (y * 3.0).exp() + 2.0
}

#[differentiable]
fn constant_output(x: f64) -> f64 {
    x.detach() * 2.0
}

#[test]
fn parameters_the_result_ignores_have_zero_rows() -> Result<(), ScalarAutodiffError> {
    let (_, gradient, h) = flat_in_x_hessian(0.4, 0.2)?;
    assert_eq!(gradient[0], 0.0);
    assert_eq!(h[0], [0.0, 0.0]);
    assert_eq!(h[1][0], 0.0);
    assert!(close(h[1][1], 9.0 * 0.6f64.exp(), 1e-15));
    let (value, gradient, h) = constant_output_hessian(3.0)?;
    assert_eq!((value, gradient, *h), (6.0, [0.0], [[0.0]]));
    assert_eq!(constant_output_jvp(3.0, [1.0])?, (6.0, 0.0));
    Ok(())
}

// Outputs that are parameters, or made before the last parameter: the second-order sweeps
// still read and write every parameter's place (this once indexed past their scratch).

#[differentiable]
fn first(x: f64, y: f64) -> f64 {
    let _ = y * 2.0;
    x
}

#[differentiable]
#[allow(unused_variables)]
fn id(x: f64, y: f64) -> f64 {
    x
}

#[differentiable]
fn first_of_first(w: [f64; 2], v: [f64; 3]) -> f64 {
    let _ = v[2] * w[1];
    w[0]
}

#[differentiable]
fn early(x: f64, y: f64, z: f64) -> f64 {
    let s = x * x;
    let _ = y * z;
    s
}

#[differentiable]
fn pick(x: f64, xs: &[f64]) -> f64 {
    x * xs[3]
}

#[test]
fn outputs_before_the_last_parameter_have_hessians() -> Result<(), ScalarAutodiffError> {
    assert_eq!(first_grad(1.0, 2.0)?, (1.0, [1.0, 0.0]));
    assert_eq!(
        first_hvp(1.0, 2.0, [1.0, 1.0])?,
        (1.0, [1.0, 0.0], [0.0, 0.0])
    );
    let (value, gradient, h) = first_hessian(1.0, 2.0)?;
    assert_eq!((value, gradient, *h), (1.0, [1.0, 0.0], [[0.0; 2]; 2]));
    assert_eq!(first_jvp(1.0, 2.0, [0.5, 3.0])?, (1.0, 0.5));

    assert_eq!(id_grad(-4.0, 2.0)?, (-4.0, [1.0, 0.0]));
    assert_eq!(
        id_hvp(-4.0, 2.0, [1.0, -1.0])?,
        (-4.0, [1.0, 0.0], [0.0, 0.0])
    );
    let (value, gradient, h) = id_hessian(-4.0, 2.0)?;
    assert_eq!((value, gradient, *h), (-4.0, [1.0, 0.0], [[0.0; 2]; 2]));

    let (w, v) = ([3.0, -1.0], [0.5, 0.25, 2.0]);
    let one_hot = [1.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(first_of_first_grad(w, v)?, (3.0, one_hot));
    let (value, gradient, product) = first_of_first_hvp(w, v, [1.0; 5])?;
    assert_eq!((value, gradient, product), (3.0, one_hot, [0.0; 5]));
    let (value, gradient, h) = first_of_first_hessian(w, v)?;
    assert_eq!((value, gradient, *h), (3.0, one_hot, [[0.0; 5]; 5]));

    // A real second derivative on the first place, with two later parameters.
    let (value, gradient, product) = early_hvp(3.0, 2.0, 5.0, [1.0, 1.0, 1.0])?;
    assert_eq!(
        (value, gradient, product),
        (9.0, [6.0, 0.0, 0.0], [2.0, 0.0, 0.0])
    );
    let (_, _, h) = early_hessian(3.0, 2.0, 5.0)?;
    assert_eq!(*h, [[2.0, 0.0, 0.0], [0.0; 3], [0.0; 3]]);
    Ok(())
}

#[test]
fn a_panic_inside_a_call_leaves_no_nodes_on_the_tape() -> Result<(), ScalarAutodiffError> {
    let before = scalar_autodiff::tape_len();
    // The user's own indexing panics (`xs` is too short) while the call is recording.
    let outcome = std::panic::catch_unwind(|| pick_hvp(2.0, &[1.0], [1.0]));
    assert!(outcome.is_err());
    assert_eq!(scalar_autodiff::tape_len(), before);
    // And the tape still works.
    assert_eq!(
        pick_hvp(2.0, &[0.0, 0.0, 0.0, 1.5], [1.0])?,
        (3.0, [1.5], [0.0])
    );
    Ok(())
}

#[differentiable]
fn polar(r: f64, theta: f64) -> [f64; 3] {
    [r * theta.cos(), r * theta.sin(), r * r]
}

#[differentiable]
fn dense(w: [[f64; 3]; 2], b: [f64; 2], x: &[f64; 3]) -> [f64; 2] {
    let mut out = [0.0; 2];
    for k in 0..2 {
        let mut s = b[k];
        for i in 0..3 {
            s += w[k][i] * x[i];
        }
        out[k] = s.tanh();
    }
    out
}

#[differentiable]
fn pairs(#[param] ps: &[f64]) -> [f64; 2] {
    let mut sum = 0.0;
    let mut squares = 0.0;
    for p in ps {
        sum += p;
        squares += p * p;
    }
    [sum, squares.sqrt()]
}

#[test]
fn jacobians_forward_and_reverse() -> Result<(), ScalarAutodiffError> {
    // Two inputs, three outputs: forward sweeps.
    let (r, t) = (2.0, 0.5);
    let (values, j) = polar_jacobian(r, t)?;
    assert_eq!(values, polar(r, t));
    let expected = [
        [t.cos(), -r * t.sin()],
        [t.sin(), r * t.cos()],
        [2.0 * r, 0.0],
    ];
    for i in 0..3 {
        for k in 0..2 {
            assert!(close(j[i][k], expected[i][k], 1e-15), "j[{i}][{k}]");
        }
    }
    // Eight inputs, two outputs: reverse passes, each row `name_grad` of that output.
    let w = [[0.1, 0.2, 0.3], [-0.1, 0.4, 0.2]];
    let b = [0.0, 0.1];
    let x = [1.0, 2.0, -1.0];
    let (values, j) = dense_jacobian(w, b, &x)?;
    assert_eq!(values, dense(w, b, &x));
    for k in 0..2 {
        let slope = 1.0 - values[k] * values[k];
        for i in 0..3 {
            assert!(close(j[k][k * 3 + i], slope * x[i], 1e-15));
            assert_eq!(j[k][(1 - k) * 3 + i], 0.0);
        }
        assert!(close(j[k][6 + k], slope, 1e-15));
        assert_eq!(j[k][6 + (1 - k)], 0.0);
    }
    // A slice parameter: rows as `Vec`s of its length.
    let ps = vec![3.0, 4.0];
    let (values, j) = pairs_jacobian(&ps)?;
    assert_eq!(values, [7.0, 5.0]);
    let expected = [[1.0, 1.0], [0.6, 0.8]];
    assert_eq!(j.len(), 2);
    for i in 0..2 {
        assert_eq!(j[i].len(), 2);
        for k in 0..2 {
            assert!(close(j[i][k], expected[i][k], 1e-15), "j[{i}][{k}]");
        }
    }
    // A point without a derivative is a typed error on both paths.
    assert!(pairs_jacobian(&[0.0, 0.0]).is_err());
    assert_eq!(
        polar_jacobian(f64::NAN, 0.0).unwrap_err().kind(),
        "non-finite-leaf"
    );
    Ok(())
}

/// A reprojection-like residual with a data branch: more inputs than outputs.
#[differentiable]
fn residual(cam: [f64; 5], x: [f64; 2], w: f64, feature: &[f64; 2]) -> [f64; 2] {
    let spin = cam[0] * cam[0] + cam[1] * cam[1];
    let mut c = 1.0;
    let mut s = 0.0;
    if spin != 0.0 {
        c = spin.sqrt().cos();
        s = spin.sqrt().sin();
    }
    let u = (x[0] - cam[2]) * c - (x[1] - cam[3]) * s;
    let v = (x[0] - cam[2]) * s + (x[1] - cam[3]) * c;
    [
        w * (u * cam[4] - feature[0]),
        w * (v / (1.0 + u * u) - feature[1]),
    ]
}

#[test]
fn reverse_jacobian_rows_run_compiled_with_the_tapes_bits() -> Result<(), ScalarAutodiffError> {
    let feature = [0.3, -0.2];
    for cam in [[0.4, -0.3, 0.1, 0.2, 1.5], [0.0, 0.0, 0.1, 0.2, 1.5]] {
        let (x, w) = ([1.2, -0.7], 0.8);
        let (values, j) = residual_jacobian(cam, x, w, &feature)?;
        assert_eq!(values, residual(cam, x, w, &feature));
        // Each row the bits of one reverse pass on the tape seeded at that output.
        for row in 0..2 {
            let vars: Vec<scalar_autodiff::Scalar> = cam
                .iter()
                .chain(&x)
                .chain([&w])
                .map(|&v| scalar_autodiff::Scalar::variable(v))
                .collect::<Result<_, _>>()?;
            let c: [scalar_autodiff::Scalar; 5] = std::array::from_fn(|i| vars[i].clone());
            let out = residual_graph(&c, &[vars[5].clone(), vars[6].clone()], &vars[7], &feature)?;
            out[row].backward()?;
            for (k, v) in vars.iter().enumerate() {
                let taped = v.gradient().unwrap_or(0.0) + 0.0;
                assert_eq!(j[row][k].to_bits(), taped.to_bits(), "row {row}, input {k}");
            }
        }
        // A warm call records nothing: the rows come from the compiled halves.
        let before = scalar_autodiff::__private::traces();
        residual_jacobian(cam, x, w, &feature)?;
        assert_eq!(scalar_autodiff::__private::traces(), before);
    }
    Ok(())
}

#[test]
fn the_public_checks_pass_real_derivatives_and_catch_wrong_ones() -> Result<(), ScalarAutodiffError>
{
    use scalar_autodiff::{directional_check, hessian_check, hvp_check};
    let x = [-1.2, 1.0, 0.5, -0.3, 2.0, 1.5, 0.0, -2.0, 0.7, 1.1];
    let gradient = |p: &[f64]| {
        let point: [f64; 10] = p.try_into().expect("ten scalars");
        Ok(rosenbrock_n_grad(point)?.1.to_vec())
    };
    let (_, g, h) = rosenbrock_n_hessian(x)?;
    let flat: Vec<f64> = h.iter().flatten().copied().collect();
    let check = hessian_check(&x, &flat, 1e-5, 1e-7, gradient)?;
    assert!(check.passed && check.entries == 100, "{check:?}");
    // One entry off by one part in a thousand fails, and the check says which.
    let mut wrong = flat.clone();
    wrong[3 * 10 + 4] *= 1.001;
    let check = hessian_check(&x, &wrong, 1e-5, 1e-7, gradient)?;
    assert!(!check.passed && check.worst == (3, 4), "{check:?}");

    let tangent = [0.3, -0.1, 0.7, 0.2, -0.5, 0.9, -0.4, 0.6, 0.1, -0.8];
    let (_, _, product) = rosenbrock_n_hvp(x, tangent)?;
    assert!(hvp_check(&x, &tangent, &product, 1e-5, 1e-7, gradient)?.passed);
    let mut off = product;
    off[9] += 0.01;
    assert!(!hvp_check(&x, &tangent, &off, 1e-5, 1e-7, gradient)?.passed);

    let jvp = |p: &[f64], t: &[f64]| {
        let point: [f64; 10] = p.try_into().expect("ten scalars");
        let direction: [f64; 10] = t.try_into().expect("ten scalars");
        Ok(rosenbrock_n_jvp(point, direction)?.1)
    };
    let f = |p: &[f64]| rosenbrock_n(p.try_into().expect("ten scalars"));
    let check = directional_check(&x, &g, 16, 42, 1e-6, 1e-7, jvp, f)?;
    assert!(check.passed, "{check:?}");
    assert!(check.against_gradient < 1e-14, "{check:?}");
    // A directional derivative that drops one parameter's path fails.
    let dropped = |p: &[f64], t: &[f64]| Ok(jvp(p, t)? - g[5] * t[5]);
    assert!(!directional_check(&x, &g, 16, 42, 1e-6, 1e-7, dropped, f)?.passed);

    // Bad arguments are typed errors.
    assert_eq!(
        hessian_check(&x, &flat[..99], 1e-5, 1e-7, gradient)
            .unwrap_err()
            .kind(),
        "length-mismatch"
    );
    assert_eq!(
        hvp_check(&x, &tangent, &product, 0.0, 1e-7, gradient)
            .unwrap_err()
            .kind(),
        "invalid-step"
    );
    assert_eq!(
        directional_check(&x, &g, 4, 1, 1e-6, f64::NAN, jvp, f)
            .unwrap_err()
            .kind(),
        "invalid-tolerance"
    );
    Ok(())
}
