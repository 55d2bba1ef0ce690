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
