//! Special functions with their derivative rules, from [`libm`]: `erf`, `erfc`,
//! `ln_gamma` (with `digamma`, its derivative) and the logistic `sigmoid`.
//!
//! Each is a `#[differentiable(derivative = ...)]` function, so inside any
//! `#[differentiable]` body `erf(x)` records one node named `erf` whose local derivative
//! is exact, on every path (`_graph` and its ledger, `_grad`, `_jvp`). Their slope
//! functions are `#[differentiable]` too, so `_hvp` and `_hessian` work through them.
//! Behind the default `libm` feature.
//!
//! A body that calls one needs its hidden body too (`differentiable_erf`): call it by path,
//! `special::erf(x)`, or import the module's functions with a glob, as here. (Importing
//! `erf` alone makes rustc say it cannot find `differentiable_erf`.)
//!
//! ```
//! use scalar_autodiff::differentiable;
//! use scalar_autodiff::special::*;
//!
//! /// The normal distribution's CDF at `x` for mean `mu`, scale `s`.
//! #[differentiable]
//! fn normal_cdf(mu: f64, s: f64, x: f64) -> f64 {
//!     0.5 * (1.0 + erf((x - mu) / (s * std::f64::consts::SQRT_2)))
//! }
//!
//! let (value, gradient) = normal_cdf_grad(0.0, 1.0, 0.0)?;
//! assert_eq!(value, 0.5);
//! // d/dx at the mean is the density there, 1/sqrt(2 pi).
//! let density = 1.0 / (2.0 * std::f64::consts::PI).sqrt();
//! assert!((gradient[2] - density).abs() < 1e-15);
//! assert!((gradient[0] + density).abs() < 1e-15);
//! assert_eq!(sigmoid(0.0), 0.5);
//! # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
//! ```

use std::f64::consts::{FRAC_2_SQRT_PI, PI};

use crate::differentiable;

/// The error function, `erf(x) = 2/sqrt(pi) ∫₀ˣ e^(-t²) dt` (`libm::erf`).
#[differentiable(derivative = erf_slope)]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}

/// The derivative of [`erf`]: `2/sqrt(pi) e^(-x²)`.
#[differentiable]
pub fn erf_slope(x: f64, _value: f64) -> f64 {
    FRAC_2_SQRT_PI * (-(x * x)).exp()
}

/// The complementary error function, `1 - erf(x)`, accurate where that difference is
/// tiny (`libm::erfc`).
#[differentiable(derivative = erfc_slope)]
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}

/// The derivative of [`erfc`]: `-2/sqrt(pi) e^(-x²)`.
#[differentiable]
pub fn erfc_slope(x: f64, _value: f64) -> f64 {
    -FRAC_2_SQRT_PI * (-(x * x)).exp()
}

/// The logistic sigmoid `1 / (1 + e^(-x))`, computed without overflow for any `x`.
#[differentiable(derivative = sigmoid_slope)]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// The derivative of [`sigmoid`], from its value: `value (1 - value)`.
#[differentiable]
pub fn sigmoid_slope(_x: f64, value: f64) -> f64 {
    value * (1.0 - value)
}

/// `ln |Γ(x)|`, the logarithm of the gamma function's magnitude (`libm::lgamma`). Its
/// poles (0, -1, -2, ...) give an infinite value, which is an error like any other.
#[differentiable(derivative = ln_gamma_slope)]
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma(x)
}

/// The derivative of [`ln_gamma`]: [`digamma`].
#[differentiable]
pub fn ln_gamma_slope(x: f64, _value: f64) -> f64 {
    digamma(x)
}

/// The digamma function `ψ(x) = Γ'(x)/Γ(x)`, the derivative of [`ln_gamma`]; its
/// derivative is the trigamma function.
#[differentiable(derivative = digamma_slope)]
pub fn digamma(x: f64) -> f64 {
    psi(x, 0)
}

/// The derivative of [`digamma`]: the trigamma function `ψ'(x)`. Its own derivative is
/// not provided, so third derivatives of [`ln_gamma`] are an error.
pub fn digamma_slope(x: f64, _value: f64) -> f64 {
    psi(x, 1)
}

/// `B_2k / 2k` for k = 1..=7 (B_2k the Bernoulli numbers): the digamma series.
const DIGAMMA: [f64; 7] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
];

/// `B_2k` for k = 1..=7: the trigamma series.
const TRIGAMMA: [f64; 7] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
];

/// `ψ(x)` (`order` 0) or `ψ'(x)` (`order` 1): reflected to `x > 0` below 0, shifted up to
/// `x >= 10` by the recurrences `ψ(x) = ψ(x+1) - 1/x` and `ψ'(x) = ψ'(x+1) + 1/x²`, then
/// the asymptotic series to `x^-15` (its first omitted term is below 1e-16 at 10). NaN at
/// poles.
fn psi(x: f64, order: u8) -> f64 {
    if x <= 0.0 && x == x.floor() {
        return f64::NAN;
    }
    if x < 0.0 {
        // Reflection: ψ(1-x) - ψ(x) = π cot(πx), ψ'(1-x) + ψ'(x) = π² / sin²(πx).
        let (s, c) = (PI * x).sin_cos();
        return match order {
            0 => psi(1.0 - x, 0) - PI * c / s,
            _ => -psi(1.0 - x, 1) + (PI / s).powi(2),
        };
    }
    let (mut x, mut shift) = (x, 0.0);
    while x < 10.0 {
        shift += match order {
            0 => -1.0 / x,
            _ => 1.0 / (x * x),
        };
        x += 1.0;
    }
    let (inv, inv2) = (1.0 / x, 1.0 / (x * x));
    // Σ c_k x^-2k, k = 1..=7, by Horner's rule.
    let tail = |c: [f64; 7]| inv2 * c.iter().rev().fold(0.0, |sum, c| sum * inv2 + c);
    let series = match order {
        // ln x - 1/2x - Σ B_2k / (2k x^2k)
        0 => x.ln() - 0.5 * inv - tail(DIGAMMA),
        // 1/x + 1/2x² + Σ B_2k / x^(2k+1)
        _ => inv + 0.5 * inv2 + inv * tail(TRIGAMMA),
    };
    series + shift
}
