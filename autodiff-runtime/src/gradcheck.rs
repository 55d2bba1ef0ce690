//! A central-difference cross-check of one analytic derivative.

use crate::error::ScalarAutodiffError;

/// The outcome of [`scalar_gradient_check`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScalarGradientCheck {
    /// The point checked.
    pub input: f64,
    /// The derivative under test (from a reverse pass, say).
    pub analytic: f64,
    /// `(f(input + step) - f(input - step))` over the exact distance between the two
    /// points as rounded (`2 step` up to rounding).
    pub numerical: f64,
    /// `|analytic - numerical| / max(1, |analytic|, |numerical|)`.
    pub scaled_error: f64,
    /// The step used.
    pub step: f64,
    /// The largest scaled error that passes.
    pub tolerance: f64,
    /// `scaled_error <= tolerance`.
    pub passed: bool,
}

/// Compares `analytic` with a central difference of `f` at `input`.
///
/// The check perturbs only the plain function; it never looks at a graph, so agreement is
/// independent evidence (though both share `f64` arithmetic). Errors: a step that is not
/// finite and positive or that vanishes next to `input`, a negative or non-finite
/// tolerance, a non-finite analytic value, or a non-finite evaluation of `f`.
///
/// ```
/// use autodiff_runtime::scalar_gradient_check;
///
/// let check = scalar_gradient_check(2.0, 8.0, 1e-6, 1e-9, |x| 2.0 * x * x)?;
/// assert!(check.passed);
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
pub fn scalar_gradient_check(
    input: f64,
    analytic: f64,
    step: f64,
    tolerance: f64,
    f: impl Fn(f64) -> f64,
) -> Result<ScalarGradientCheck, ScalarAutodiffError> {
    let (above, below) = (input + step, input - step);
    if !(step.is_finite() && step > 0.0 && input.is_finite() && above != input && below != input) {
        return Err(ScalarAutodiffError::InvalidStep { step, input });
    }
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(ScalarAutodiffError::InvalidTolerance { tolerance });
    }
    if !analytic.is_finite() {
        return Err(ScalarAutodiffError::NonFiniteAnalytic { value: analytic });
    }
    let evaluate = |at: f64| {
        let value = f(at);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(ScalarAutodiffError::NonFiniteEvaluation { input: at, value })
        }
    };
    let numerical = (evaluate(above)? - evaluate(below)?) / (above - below);
    if !numerical.is_finite() {
        return Err(ScalarAutodiffError::NonFiniteEvaluation {
            input,
            value: numerical,
        });
    }
    let scaled_error = (analytic - numerical).abs() / 1f64.max(analytic.abs()).max(numerical.abs());
    Ok(ScalarGradientCheck {
        input,
        analytic,
        numerical,
        scaled_error,
        step,
        tolerance,
        passed: scaled_error <= tolerance,
    })
}

/// The scaled error of [`scalar_gradient_check`]: `|a - b| / max(1, |a|, |b|)`.
fn scaled(a: f64, b: f64) -> f64 {
    (a - b).abs() / 1f64.max(a.abs()).max(b.abs())
}

/// `Ok` for a finite, non-negative tolerance.
fn check_tolerance(tolerance: f64) -> Result<(), ScalarAutodiffError> {
    match tolerance.is_finite() && tolerance >= 0.0 {
        true => Ok(()),
        false => Err(ScalarAutodiffError::InvalidTolerance { tolerance }),
    }
}

/// `point ± step · direction`, refused where the step vanishes next to the point (then the
/// difference would divide by a distance of zero).
fn shifted(
    point: &[f64],
    direction: &[f64],
    step: f64,
) -> Result<(Vec<f64>, Vec<f64>), ScalarAutodiffError> {
    let invalid = |input| ScalarAutodiffError::InvalidStep { step, input };
    let size = direction.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    if !(step.is_finite() && step > 0.0 && size > 0.0 && size.is_finite()) {
        return Err(invalid(point.first().copied().unwrap_or(0.0)));
    }
    let above: Vec<f64> = point
        .iter()
        .zip(direction)
        .map(|(p, d)| p + step * d)
        .collect();
    let below: Vec<f64> = point
        .iter()
        .zip(direction)
        .map(|(p, d)| p - step * d)
        .collect();
    if above == point || below == point {
        return Err(invalid(point.first().copied().unwrap_or(0.0)));
    }
    Ok((above, below))
}

/// `Ok` if `found` is `expected`.
fn check_length(expected: usize, found: usize) -> Result<(), ScalarAutodiffError> {
    match expected == found {
        true => Ok(()),
        false => Err(ScalarAutodiffError::LengthMismatch { expected, found }),
    }
}

/// A gradient of `gradient` at `at`, checked finite and of the point's length.
fn gradient_at(
    gradient: &impl Fn(&[f64]) -> Result<Vec<f64>, ScalarAutodiffError>,
    at: &[f64],
) -> Result<Vec<f64>, ScalarAutodiffError> {
    let value = gradient(at)?;
    check_length(at.len(), value.len())?;
    match value.iter().find(|v| !v.is_finite()) {
        Some(&bad) => Err(ScalarAutodiffError::NonFiniteAnalytic { value: bad }),
        None => Ok(value),
    }
}

/// The outcome of [`hessian_check`] and [`hvp_check`]: the worst entry.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SecondOrderCheck {
    /// How many entries were compared.
    pub entries: usize,
    /// The worst entry's place: `(row, column)` of the Hessian, or `(row, 0)` of a product.
    pub worst: (usize, usize),
    /// The analytic value there.
    pub analytic: f64,
    /// The central difference of the gradient there.
    pub numerical: f64,
    /// The largest `|analytic - numerical| / max(1, |analytic|, |numerical|)`.
    pub scaled_error: f64,
    /// The step used.
    pub step: f64,
    /// The largest scaled error that passes.
    pub tolerance: f64,
    /// `scaled_error <= tolerance`.
    pub passed: bool,
}

/// Compares a Hessian-vector product with a central difference of the gradient along
/// `tangent`: `(∇f(p + h t) - ∇f(p - h t)) / 2h`, in the style of PyTorch's
/// `gradgradcheck`. `gradient` returns the flat gradient at a point (for example
/// `|p| Ok(f_grad(p[0], p[1])?.1.to_vec())`), so the check is independent of the
/// second-order pass under test.
///
/// # Errors
///
/// A step that is not finite and positive or that vanishes next to the point, a
/// negative or non-finite tolerance, lengths that do not match, a non-finite analytic
/// value, or an error of `gradient`.
///
/// ```
/// use autodiff_runtime::hvp_check;
///
/// // f(x, y) = x² y: H = [[2y, 2x], [2x, 0]].
/// let gradient = |p: &[f64]| Ok(vec![2.0 * p[0] * p[1], p[0] * p[0]]);
/// let check = hvp_check(&[1.0, 3.0], &[1.0, 0.0], &[6.0, 2.0], 1e-5, 1e-8, gradient)?;
/// assert!(check.passed, "{check:?}");
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
pub fn hvp_check(
    point: &[f64],
    tangent: &[f64],
    product: &[f64],
    step: f64,
    tolerance: f64,
    gradient: impl Fn(&[f64]) -> Result<Vec<f64>, ScalarAutodiffError>,
) -> Result<SecondOrderCheck, ScalarAutodiffError> {
    check_tolerance(tolerance)?;
    check_length(point.len(), tangent.len())?;
    check_length(point.len(), product.len())?;
    let column = central_column(point, tangent, step, &gradient)?;
    worst(
        product.iter().zip(&column).map(|(&a, &n)| (a, n)),
        1,
        step,
        tolerance,
    )
}

/// Compares a Hessian (row-major, `n * n` entries for `n` parameters) with central
/// differences of the gradient along each coordinate, column by column: PyTorch's
/// `gradgradcheck` for a whole Hessian. See [`hvp_check`] for `gradient`.
///
/// # Errors
///
/// As [`hvp_check`].
///
/// ```
/// use autodiff_runtime::hessian_check;
///
/// let gradient = |p: &[f64]| Ok(vec![2.0 * p[0] * p[1], p[0] * p[0]]);
/// let check = hessian_check(&[1.0, 3.0], &[6.0, 2.0, 2.0, 0.0], 1e-5, 1e-8, gradient)?;
/// assert!(check.passed && check.entries == 4, "{check:?}");
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
pub fn hessian_check(
    point: &[f64],
    hessian: &[f64],
    step: f64,
    tolerance: f64,
    gradient: impl Fn(&[f64]) -> Result<Vec<f64>, ScalarAutodiffError>,
) -> Result<SecondOrderCheck, ScalarAutodiffError> {
    check_tolerance(tolerance)?;
    let n = point.len();
    check_length(n * n, hessian.len())?;
    let mut pairs = Vec::with_capacity(n * n);
    let mut unit = vec![0.0; n];
    let mut columns = vec![0.0; n * n];
    for j in 0..n {
        unit[j] = 1.0;
        let column = central_column(point, &unit, step, &gradient)?;
        unit[j] = 0.0;
        for i in 0..n {
            columns[i * n + j] = column[i];
        }
    }
    pairs.extend(hessian.iter().zip(&columns).map(|(&a, &c)| (a, c)));
    worst(pairs.into_iter(), n.max(1), step, tolerance)
}

/// `(∇f(p + h t) - ∇f(p - h t))` over the distance between the two points.
fn central_column(
    point: &[f64],
    tangent: &[f64],
    step: f64,
    gradient: &impl Fn(&[f64]) -> Result<Vec<f64>, ScalarAutodiffError>,
) -> Result<Vec<f64>, ScalarAutodiffError> {
    let (above, below) = shifted(point, tangent, step)?;
    let (up, down) = (
        gradient_at(gradient, &above)?,
        gradient_at(gradient, &below)?,
    );
    Ok(up
        .iter()
        .zip(&down)
        .map(|(u, d)| (u - d) / (2.0 * step))
        .collect())
}

/// The worst of `(analytic, numerical)` pairs, entries numbered row-major by `width`.
fn worst(
    pairs: impl Iterator<Item = (f64, f64)>,
    width: usize,
    step: f64,
    tolerance: f64,
) -> Result<SecondOrderCheck, ScalarAutodiffError> {
    let mut check = SecondOrderCheck {
        entries: 0,
        worst: (0, 0),
        analytic: 0.0,
        numerical: 0.0,
        scaled_error: 0.0,
        step,
        tolerance,
        passed: true,
    };
    for (index, (analytic, numerical)) in pairs.enumerate() {
        if !analytic.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteAnalytic { value: analytic });
        }
        let error = scaled(analytic, numerical);
        if check.entries == 0 || error > check.scaled_error {
            check.worst = (index / width, index % width);
            (check.analytic, check.numerical, check.scaled_error) = (analytic, numerical, error);
        }
        check.entries += 1;
    }
    check.passed = check.scaled_error <= tolerance;
    Ok(check)
}

/// The outcome of [`directional_check`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DirectionalCheck {
    /// How many random directions were tried.
    pub directions: usize,
    /// The largest scaled error between the directional derivative and the gradient
    /// dotted with the direction (two analytic derivatives: this should be rounding).
    pub against_gradient: f64,
    /// The largest scaled error between the directional derivative and a central
    /// difference of the function along the direction.
    pub against_difference: f64,
    /// The direction with the largest of the two.
    pub worst_direction: Vec<f64>,
    /// The step used.
    pub step: f64,
    /// The largest scaled error that passes, for both comparisons.
    pub tolerance: f64,
    /// Both errors are within `tolerance`.
    pub passed: bool,
}

/// Checks a directional derivative along random directions, in the style of JAX's
/// `check_grads`: for each of `directions` directions drawn uniformly from `[-1, 1]ⁿ`
/// (a fixed generator seeded with `seed`, so a failure repeats), compares `jvp(point,
/// direction)` with `gradient · direction` and with a central difference of `f` along the
/// direction.
///
/// # Errors
///
/// A step that is not finite and positive or that vanishes next to the point, a negative
/// or non-finite tolerance, a gradient whose length is not the point's, a non-finite
/// directional derivative or evaluation, or an error of `jvp`.
///
/// ```
/// use autodiff_runtime::directional_check;
///
/// // f(x, y) = x sin(y), gradient (sin y, x cos y) at (2, 0.5).
/// let f = |p: &[f64]| p[0] * p[1].sin();
/// let jvp = |p: &[f64], t: &[f64]| Ok(t[0] * p[1].sin() + t[1] * p[0] * p[1].cos());
/// let gradient = [0.5f64.sin(), 2.0 * 0.5f64.cos()];
/// let check = directional_check(&[2.0, 0.5], &gradient, 8, 7, 1e-6, 1e-8, jvp, f)?;
/// assert!(check.passed, "{check:?}");
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[allow(clippy::too_many_arguments)]
pub fn directional_check(
    point: &[f64],
    gradient: &[f64],
    directions: usize,
    seed: u64,
    step: f64,
    tolerance: f64,
    jvp: impl Fn(&[f64], &[f64]) -> Result<f64, ScalarAutodiffError>,
    f: impl Fn(&[f64]) -> f64,
) -> Result<DirectionalCheck, ScalarAutodiffError> {
    check_tolerance(tolerance)?;
    check_length(point.len(), gradient.len())?;
    let mut state = seed;
    let mut uniform = || {
        // Knuth's MMIX generator; the top 53 bits as a number in [-1, 1).
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    let mut check = DirectionalCheck {
        directions,
        against_gradient: 0.0,
        against_difference: 0.0,
        worst_direction: Vec::new(),
        step,
        tolerance,
        passed: true,
    };
    let mut worst = -1.0;
    for _ in 0..directions {
        let direction: Vec<f64> = point.iter().map(|_| uniform()).collect();
        let derivative = jvp(point, &direction)?;
        if !derivative.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteAnalytic { value: derivative });
        }
        let dot: f64 = gradient.iter().zip(&direction).map(|(g, t)| g * t).sum();
        let (above, below) = shifted(point, &direction, step)?;
        let evaluate = |at: &[f64]| match f(at) {
            value if value.is_finite() => Ok(value),
            value => Err(ScalarAutodiffError::NonFiniteEvaluation {
                input: at.first().copied().unwrap_or(0.0),
                value,
            }),
        };
        let difference = (evaluate(&above)? - evaluate(&below)?) / (2.0 * step);
        let (by_gradient, by_difference) =
            (scaled(derivative, dot), scaled(derivative, difference));
        check.against_gradient = check.against_gradient.max(by_gradient);
        check.against_difference = check.against_difference.max(by_difference);
        if by_gradient.max(by_difference) > worst {
            worst = by_gradient.max(by_difference);
            check.worst_direction = direction;
        }
    }
    check.passed = check.against_gradient <= tolerance && check.against_difference <= tolerance;
    Ok(check)
}
