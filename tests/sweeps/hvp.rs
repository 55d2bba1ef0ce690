//! `name_hvp`'s compiled sweeps (forward over reverse: `name_grad`'s sweeps on duals)
//! against the Hessian `name_hessian` records on the tape: the same gradient bits as
//! `name_grad`, and `H v` equal to the Hessian's columns to rounding, on bodies with
//! loops, branches, local arrays, `detach`, folds and parameter structs; and where the
//! sweeps give up, the same typed errors as the tape's.

use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError};

use crate::support::Lcg;

/// `H e_j` from `hvp` against column `j` of `hessian`, for every `j`; the gradient's and
/// the value's bits against `grad`'s.
pub(crate) fn check_columns(
    count: usize,
    hvp: impl Fn(&[f64]) -> Result<(f64, Vec<f64>, Vec<f64>), ScalarAutodiffError>,
    hessian: &[Vec<f64>],
    grad: (f64, &[f64]),
) -> Result<(), ScalarAutodiffError> {
    let scale = hessian
        .iter()
        .flatten()
        .fold(0.0f64, |most, h| most.max(h.abs()));
    for j in 0..count {
        let mut direction = vec![0.0; count];
        direction[j] = 1.0;
        let (value, gradient, product) = hvp(&direction)?;
        assert_eq!(
            value.to_bits(),
            grad.0.to_bits(),
            "the value, direction {j}"
        );
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&gradient), bits(grad.1), "the gradient, direction {j}");
        for i in 0..count {
            let expected = hessian[i][j];
            assert!(
                (product[i] - expected).abs() <= 1e-13 * scale,
                "(H e_{j})[{i}] = {} against the recorded Hessian's {expected}",
                product[i]
            );
        }
    }
    Ok(())
}

const INPUTS: usize = 3;
const HIDDEN: usize = 4;
const OUTPUTS: usize = 3;

/// A small MLP batch loss written as the benches' `mlp_batch`: nested loops, local arrays,
/// running sums, `detach`, `max`, a data index.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn mlp(
    w1: [[f64; INPUTS]; HIDDEN],
    b1: [f64; HIDDEN],
    w2: [[f64; HIDDEN]; OUTPUTS],
    xs: &[[f64; INPUTS]],
    labels: &[usize],
) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let mut h = [0.0; HIDDEN];
        for j in 0..HIDDEN {
            let mut s = b1[j];
            for i in 0..INPUTS {
                s += w1[j][i] * x[i];
            }
            h[j] = s.tanh();
        }
        let mut z = [0.0; OUTPUTS];
        for k in 0..OUTPUTS {
            let mut s = 0.0;
            for j in 0..HIDDEN {
                s += w2[k][j] * h[j];
            }
            z[k] = s;
        }
        let mut m = z[0].detach();
        for k in 1..OUTPUTS {
            m = m.max(z[k].detach());
        }
        let mut sum = 0.0;
        for k in 0..OUTPUTS {
            sum += (z[k] - m).exp();
        }
        total += m + sum.ln() - z[label];
    }
    total / xs.len() as f64
}

#[test]
fn an_mlp_batch_hvp_is_the_recorded_hessian() -> Result<(), ScalarAutodiffError> {
    let mut rng = Lcg::new(7);
    let mut next = || rng.signed();
    let w1: [[f64; INPUTS]; HIDDEN] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
    let b1: [f64; HIDDEN] = std::array::from_fn(|_| next());
    let w2: [[f64; HIDDEN]; OUTPUTS] = std::array::from_fn(|_| std::array::from_fn(|_| next()));
    let xs: Vec<[f64; INPUTS]> = (0..5)
        .map(|_| std::array::from_fn(|_| 2.0 * next()))
        .collect();
    let labels = [0, 2, 1, 1, 0];
    let (_, gradient, hessian) = mlp_hessian(w1, b1, w2, &xs, &labels)?;
    let (value, grad) = mlp_grad(w1, b1, w2, &xs, &labels)?;
    assert_eq!(gradient, grad);
    let count = grad.len();
    check_columns(
        count,
        |direction| {
            let tangent: [f64; INPUTS * HIDDEN + HIDDEN + OUTPUTS * HIDDEN] =
                direction.try_into().expect("the direction's length");
            let (value, gradient, product) = mlp_hvp(w1, b1, w2, &xs, &labels, tangent)?;
            Ok((value, gradient.to_vec(), product.to_vec()))
        },
        &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
        (value, &grad),
    )
}

/// A branch in a loop, a copy of a parameter's element (`let mut s = p[i]`), `powi`,
/// `powf`, `atan2`, `mul_add`, `abs`, a `sum` fold and a constant local array.
#[differentiable]
fn mixed(p: [f64; 4], data: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let mut total = 0.0;
    for i in 0..4 {
        let mut s = p[i];
        if data[i] > 0.0 {
            s = s * data[i] + p[(i + 1) % 4].powi(3);
        } else {
            s = s.atan2(p[(i + 2) % 4]) - s.abs().powf(1.5);
        }
        acc[i] = s.mul_add(p[i], 0.25);
        total += acc[i].sin();
    }
    let spread: f64 = acc.iter().map(|a| (a - total).powi(2)).sum();
    spread.sqrt() + total
}

#[test]
fn branches_copies_and_folds_hvp_is_the_recorded_hessian() -> Result<(), ScalarAutodiffError> {
    let data = [0.5, -1.0, 2.0, -0.25];
    for p in [[0.3, -0.8, 1.1, 0.6], [-1.3, 0.4, 0.9, -0.2]] {
        let (_, gradient, hessian) = mixed_hessian(p, &data)?;
        let (value, grad) = mixed_grad(p, &data)?;
        assert_eq!(gradient, grad);
        check_columns(
            4,
            |direction| {
                let tangent: [f64; 4] = direction.try_into().expect("four");
                let (value, gradient, product) = mixed_hvp(p, &data, tangent)?;
                Ok((value, gradient.to_vec(), product.to_vec()))
            },
            &hessian.iter().map(|row| row.to_vec()).collect::<Vec<_>>(),
            (value, &grad),
        )?;
    }
    Ok(())
}

#[derive(Parameters, Clone, Debug)]
struct Layer {
    w: [[f64; 2]; 2],
    b: [f64; 2],
}

/// A parameter struct and a slice of weights: their adjoints are duals of their shapes.
#[differentiable]
fn layered(#[param] layer: &Layer, #[param] scales: &[f64], x: &[f64; 2]) -> f64 {
    let mut out = 0.0;
    for k in 0..2 {
        let z = layer.w[k][0] * x[0] + layer.w[k][1] * x[1] + layer.b[k];
        out += scales[k] * z.tanh() + scales[k + 1].exp() * z * z;
    }
    out
}

#[test]
fn struct_and_slice_parameters_hvp_is_the_recorded_hessian() -> Result<(), ScalarAutodiffError> {
    let layer = Layer {
        w: [[0.4, -0.7], [1.2, 0.3]],
        b: [0.1, -0.5],
    };
    let scales = vec![0.9, -0.6, 0.2];
    let x = [0.8, -1.4];
    let (_, gradient, hessian) = layered_hessian(&layer, &scales, &x)?;
    let (value, (g_layer, g_scales)) = layered_grad(&layer, &scales, &x)?;
    let grad = [g_layer.to_flat(), g_scales.clone()].concat();
    assert_eq!(gradient, grad);
    check_columns(
        grad.len(),
        |direction| {
            let (d_layer, d_scales) = direction.split_at(6);
            let mut tangent = (layer.clone(), d_scales.to_vec());
            tangent.0.read_flat(d_layer)?;
            let (value, (gl, gs), (pl, ps)) = layered_hvp(&layer, &scales, &x, tangent)?;
            Ok((
                value,
                [gl.to_flat(), gs].concat(),
                [pl.to_flat(), ps].concat(),
            ))
        },
        &hessian,
        (value, &grad),
    )
}

/// `sqrt` at 0 inside a loop: the sweeps give up, and the tape names the operation.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn roots(p: [f64; 3]) -> f64 {
    let mut total = 0.0;
    for i in 0..3 {
        total += (p[i] * p[i]).sqrt();
    }
    total
}

/// `x^1.5` at 0: a finite slope (0) whose own derivative is infinite, along a direction
/// that does not move `x`. The recorded Hessian refuses it whatever the direction; the
/// compiled sweeps must not answer where it does not.
#[differentiable]
fn corner(x: f64, y: f64) -> f64 {
    x.powf(1.5) + y * y
}

#[test]
fn where_the_sweeps_give_up_the_errors_are_the_tapes() {
    assert!(matches!(
        roots_hvp([1.0, 0.0, 2.0], [1.0, 1.0, 1.0]),
        Err(ScalarAutodiffError::NonFiniteSlope { .. }
            | ScalarAutodiffError::NonFiniteDerivative { .. })
    ));
    let along_y = corner_hvp(0.0, 1.0, [0.0, 1.0]);
    let hessian = corner_hessian(0.0, 1.0);
    assert!(
        matches!(
            (&along_y, &hessian),
            (
                Err(ScalarAutodiffError::NonFiniteSecondOrder { .. }),
                Err(ScalarAutodiffError::NonFiniteSecondOrder { .. })
            )
        ),
        "{along_y:?}, {hessian:?}"
    );
    // Away from the corner, both answer.
    let (_, gradient, product) = corner_hvp(0.5, 1.0, [1.0, 0.0]).expect("finite");
    assert_eq!(gradient, [1.5 * 0.5f64.sqrt(), 2.0]);
    assert!((product[0] - 0.75 / 0.5f64.sqrt()).abs() < 1e-15);
    assert_eq!(product[1], 0.0);
}

/// A `#[param]` reference written by a `macro_rules!` macro reaches the attribute as a
/// grouped type (`$ty:ty`): still a reference.
macro_rules! scaled_norm {
    ($name:ident, $model:ty) => {
        #[differentiable]
        fn $name(#[param] model: $model, x: f64) -> f64 {
            (model.w[0] * x).powi(2) + (model.w[1] * x).sin() + model.b
        }
    };
}

#[derive(Parameters, Clone, Debug)]
struct Pair {
    w: [f64; 2],
    b: f64,
}

scaled_norm!(pair_loss, &Pair);

#[test]
fn a_param_reference_from_a_macro_rules_macro() -> Result<(), ScalarAutodiffError> {
    let pair = Pair {
        w: [0.5, -1.5],
        b: 0.25,
    };
    let (value, gradient) = pair_loss_grad(&pair, 2.0)?;
    assert_eq!(value, 1.0 + (-3.0f64).sin() + 0.25);
    assert_eq!(gradient.0.w, [2.0 * 1.0 * 2.0, 2.0 * (-3.0f64).cos()]);
    assert_eq!(gradient.0.b, 1.0);
    assert_eq!(gradient.1, 2.0 * 0.25 * 2.0 - 1.5 * (-3.0f64).cos());
    let tangent = Pair {
        w: [1.0, 0.0],
        b: 0.0,
    };
    let (_, _, product) = pair_loss_hvp(&pair, 2.0, (tangent, 0.0))?;
    // ∂²/∂w0² = 2 x² = 8, ∂²/∂x∂w0 = 4 w0 x = 4; the rest of the column is 0.
    assert_eq!(
        (product.0.w, product.0.b, product.1),
        ([8.0, 0.0], 0.0, 4.0)
    );
    Ok(())
}

/// A layer at any size: a const-generic helper returning an array, with a loop.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn dense<const I: usize, const O: usize>(w: [[f64; I]; O], b: [f64; O], x: [f64; I]) -> [f64; O] {
    let mut y = [0.0; O];
    for o in 0..O {
        let mut s = b[o];
        for i in 0..I {
            s += w[o][i] * x[i];
        }
        y[o] = s.tanh();
    }
    y
}

/// A scalar helper whose loop runs a data-dependent number of times, on a `mut`
/// parameter (its first iteration reads the parameter's own node).
#[differentiable]
fn damped(mut v: f64, limit: f64) -> f64 {
    let mut steps = 0;
    while v.abs() > limit && steps < 8 {
        v = v * 0.5 + v.sin() * 0.25;
        steps += 1;
    }
    v * v
}

/// A helper that calls helpers.
#[differentiable]
fn block(w1: [[f64; 3]; 2], b1: [f64; 2], w2: [[f64; 2]; 2], x: [f64; 3]) -> [f64; 2] {
    let h = dense(w1, b1, x);
    dense(w2, b1, h)
}

struct Scaled {
    scale: f64,
}

impl Scaled {
    #[differentiable]
    fn squash(&self, v: f64) -> f64 {
        (v * self.scale).exp().ln_1p()
    }

    /// Methods calling methods and free helpers, on duals.
    #[differentiable]
    fn loss(&self, w1: [[f64; 3]; 2], b1: [f64; 2], w2: [[f64; 2]; 2], x: [f64; 3]) -> f64 {
        let y = block(w1, b1, w2, x);
        self.squash(y[0]) + damped(y[1] * 3.0, 0.2) + self.squash(y[0] * y[1])
    }

    /// The same body on the tape: the reference.
    #[differentiable(tape)]
    fn loss_recorded(
        &self,
        w1: [[f64; 3]; 2],
        b1: [f64; 2],
        w2: [[f64; 2]; 2],
        x: [f64; 3],
    ) -> f64 {
        let y = block(w1, b1, w2, x);
        self.squash(y[0]) + damped(y[1] * 3.0, 0.2) + self.squash(y[0] * y[1])
    }
}

/// `name_hvp` through helpers runs their halves on duals: no trace on a warm call, the
/// gradient's bits `name_grad`'s, and `H v` the recorded Hessian's columns to rounding
/// (and, at these points, the same bits as the same body's on the tape).
#[test]
fn hvp_through_helpers_runs_compiled() -> Result<(), ScalarAutodiffError> {
    use scalar_autodiff::__private::traces;
    const COUNT: usize = 6 + 2 + 4 + 3;
    let model = Scaled { scale: 0.7 };
    let w1 = [[0.3, -0.8, 0.5], [1.1, 0.2, -0.4]];
    let b1 = [0.05, -0.3];
    let w2 = [[0.9, -1.3], [0.6, 0.8]];
    let x = [0.7, -1.2, 2.0];
    let (value, gradient) = model.loss_grad(w1, b1, w2, x)?;
    let (_, _, hessian) = model.loss_recorded_hessian(w1, b1, w2, x)?;
    let hessian: Vec<Vec<f64>> = hessian.iter().map(|row| row.to_vec()).collect();
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut rng = Lcg::new(0x5EED_4E55);
    let mut compiled_traces = 0;
    for _ in 0..4 {
        let direction: [f64; COUNT] = std::array::from_fn(|_| rng.signed());
        let before = traces();
        let (v, g, product) = model.loss_hvp(w1, b1, w2, x, direction)?;
        compiled_traces += traces() - before;
        let before = traces();
        let (rv, rg, recorded) = model.loss_recorded_hvp(w1, b1, w2, x, direction)?;
        assert!(traces() > before, "the tape twin records");
        assert_eq!(
            (v.to_bits(), rv.to_bits()),
            (value.to_bits(), value.to_bits())
        );
        assert_eq!(bits(&g), bits(&gradient));
        assert_eq!(bits(&rg), bits(&gradient));
        assert_eq!(bits(&product), bits(&recorded));
    }
    // (The first call may only grow the value stack.)
    assert_eq!(
        compiled_traces, 0,
        "name_hvp through helpers recorded a trace"
    );
    check_columns(
        COUNT,
        |direction| {
            let direction: [f64; COUNT] = direction.try_into().expect("COUNT long");
            let (v, g, p) = model.loss_hvp(w1, b1, w2, x, direction)?;
            Ok((v, g.to_vec(), p.to_vec()))
        },
        &hessian,
        (value, &gradient),
    )
}

/// `sqrt` at 0 inside a helper: its halves on duals give up, and the tape names the
/// operation, as for a body without helpers.
#[differentiable]
fn root(v: f64) -> f64 {
    v.sqrt()
}

#[differentiable]
fn through_root(x: f64, y: f64) -> f64 {
    root(x * y) + y
}

#[test]
fn where_a_helpers_halves_give_up_the_errors_are_the_tapes() {
    let product = through_root_hvp(0.0, 1.0, [1.0, 0.0]);
    assert!(
        matches!(
            product,
            Err(ScalarAutodiffError::NonFiniteSlope { .. }
                | ScalarAutodiffError::NonFiniteDerivative { .. })
        ),
        "{product:?}"
    );
    let (_, gradient, product) = through_root_hvp(2.0, 0.5, [1.0, 0.0]).expect("finite");
    // d/dx sqrt(xy) = y / (2 sqrt(xy)) at xy = 1; its x-derivative -y^2 / (4 (xy)^1.5).
    assert_eq!(gradient[0], 0.25);
    assert!((product[0] + 0.0625).abs() < 1e-15, "{product:?}");
}

#[derive(Parameters, Clone, Debug)]
struct Unit {
    w: [f64; 2],
    b: f64,
}

/// A helper over a parameter struct.
#[differentiable]
fn unit(#[param] u: &Unit, x: f64) -> f64 {
    (u.w[0] * x + u.w[1]).tanh() + u.b * x
}

/// A helper over a slice.
#[differentiable]
fn wavy(#[param] xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += x * x.sin();
    }
    total
}

/// The caller's own struct and slice, lent to helpers.
#[differentiable]
fn lent_whole(#[param] u: &Unit, x: f64, #[param] s: &[f64]) -> f64 {
    unit(u, x) * unit(u, x * 2.0) + wavy(s) * x
}

#[differentiable(tape)]
fn lent_whole_recorded(#[param] u: &Unit, x: f64, #[param] s: &[f64]) -> f64 {
    unit(u, x) * unit(u, x * 2.0) + wavy(s) * x
}

/// `name_hvp` through helpers over a parameter struct and a slice, lent the caller's own:
/// compiled, and (at these points) the bits of the same body on the tape.
#[test]
fn hvp_through_struct_and_slice_helpers_runs_compiled() -> Result<(), ScalarAutodiffError> {
    use scalar_autodiff::__private::traces;
    let u = Unit {
        w: [0.3, -0.2],
        b: 0.7,
    };
    let s = vec![0.5, 1.5, -0.25];
    let directions = [
        (u.clone(), 1.0, vec![1.0, 0.0, 0.5]),
        (
            Unit {
                w: [0.5, 1.0],
                b: -0.3,
            },
            0.0,
            vec![0.2, -1.0, 0.0],
        ),
    ];
    let _ = lent_whole_hvp(&u, 0.4, &s, directions[0].clone())?;
    for direction in directions {
        let before = traces();
        let compiled = lent_whole_hvp(&u, 0.4, &s, direction.clone())?;
        assert_eq!(traces(), before, "name_hvp recorded a trace");
        let recorded = lent_whole_recorded_hvp(&u, 0.4, &s, direction)?;
        assert_eq!(format!("{compiled:?}"), format!("{recorded:?}"));
    }
    Ok(())
}

/// A helper over rows.
#[differentiable]
fn rowwise(#[param] rows: &[[f64; 2]]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        total += row[0] * row[1].cos();
    }
    total
}

/// Arrays lent to slice helpers: a parameter array, a local one, a matrix as rows.
#[differentiable]
fn lent_arrays(w: [f64; 3], m: [[f64; 2]; 2]) -> f64 {
    let mut v = [0.0; 3];
    v[0] = w[0] * 2.0;
    v[1] = w[1].exp();
    v[2] = w[2] * 1.0;
    wavy(&v) * wavy(&w) + rowwise(&m) * w[0]
}

#[differentiable(tape)]
fn lent_arrays_recorded(w: [f64; 3], m: [[f64; 2]; 2]) -> f64 {
    let mut v = [0.0; 3];
    v[0] = w[0] * 2.0;
    v[1] = w[1].exp();
    v[2] = w[2] * 1.0;
    wavy(&v) * wavy(&w) + rowwise(&m) * w[0]
}

/// Arrays lent to slice helpers on duals: a copy of their duals going forward, of their
/// adjoints going back (given back after the call), compiled, and (at these points) the
/// tape's bits.
#[test]
fn hvp_through_arrays_lent_to_slices_runs_compiled() -> Result<(), ScalarAutodiffError> {
    use scalar_autodiff::__private::traces;
    let (w, m) = ([0.1, 0.2, 0.3], [[0.5, -1.0], [2.0, 0.25]]);
    let directions = [
        [1.0, 0.5, 0.2, 0.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0, -1.0, 0.5, 0.3],
        [0.3, -0.1, 0.7, 0.2, 0.0, -0.4, 1.0],
    ];
    let _ = lent_arrays_hvp(w, m, directions[0])?;
    for direction in directions {
        let before = traces();
        let compiled = lent_arrays_hvp(w, m, direction)?;
        assert_eq!(traces(), before, "name_hvp recorded a trace");
        let recorded = lent_arrays_recorded_hvp(w, m, direction)?;
        assert_eq!(format!("{compiled:?}"), format!("{recorded:?}"));
    }
    Ok(())
}
