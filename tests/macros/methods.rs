//! Every `f64` method the rewrite records, in both forms (`x.exp()` and `f64::exp(x)`),
//! against central differences of the plain function at several points, with the plain
//! function and the graph agreeing bit for bit.

use std::hint::black_box;

use approx::{assert_relative_eq, relative_eq};
use scalar_autodiff::{differentiable, ScalarAutodiffError};

use crate::support::central;

type Plain1 = fn(f64) -> f64;
type Plain2 = fn(f64, f64) -> f64;
type Plain3 = fn(f64, f64, f64) -> f64;
type Grad1 = fn(f64) -> Result<(f64, [f64; 1]), ScalarAutodiffError>;
type Grad2 = fn(f64, f64) -> Result<(f64, [f64; 2]), ScalarAutodiffError>;
type Grad3 = fn(f64, f64, f64) -> Result<(f64, [f64; 3]), ScalarAutodiffError>;

/// A named case: the plain function and its generated gradient.
type Case<P, G> = (&'static str, P, G);
/// A two-parameter case with its evaluation points.
type PairCase = (Case<Plain2, Grad2>, &'static [(f64, f64)]);

/// One function of one variable: its name, plain form and generated gradient.
struct Unary {
    name: &'static str,
    plain: Plain1,
    grad: Grad1,
    points: &'static [f64],
}

fn check_gradient(name: &str, analytic: f64, numerical: f64) {
    assert!(
        relative_eq!(analytic, numerical, epsilon = 1e-6, max_relative = 1e-6),
        "{name}: analytic {analytic} vs central difference {numerical}"
    );
}

/// Generates, for each method, a module holding the method form and the path form.
macro_rules! unary_methods {
    ($($method:ident at $points:expr;)*) => {
        $(
            mod $method {
                use scalar_autodiff::differentiable;

                #[differentiable]
                pub fn method_form(x: f64) -> f64 {
                    x.$method()
                }

                #[differentiable]
                pub fn path_form(x: f64) -> f64 {
                    f64::$method(x)
                }
            }
        )*

        fn unary_cases() -> Vec<Unary> {
            vec![
                $(
                    Unary {
                        name: concat!("x.", stringify!($method), "()"),
                        plain: $method::method_form,
                        grad: $method::method_form_grad,
                        points: $points,
                    },
                    Unary {
                        name: concat!("f64::", stringify!($method), "(x)"),
                        plain: $method::path_form,
                        grad: $method::path_form_grad,
                        points: $points,
                    },
                )*
            ]
        }
    };
}

const ANYWHERE: &[f64] = &[-2.5, -0.7, 0.3, 1.1, 3.0];
const POSITIVE: &[f64] = &[0.2, 0.9, 1.7, 4.5, 30.0];
const OPEN_UNIT: &[f64] = &[-0.9, -0.35, 0.1, 0.6, 0.95];
const ABOVE_ONE: &[f64] = &[1.2, 2.0, 5.5, 40.0];
const NONZERO: &[f64] = &[-3.0, -0.4, 0.25, 2.0, 8.0];
const MODERATE: &[f64] = &[-1.2, -0.5, 0.2, 0.8, 1.3];

unary_methods! {
    recip at NONZERO;
    sqrt at POSITIVE;
    cbrt at NONZERO;
    exp at ANYWHERE;
    exp2 at ANYWHERE;
    exp_m1 at ANYWHERE;
    ln at POSITIVE;
    ln_1p at &[-0.9, -0.2, 0.0, 0.5, 4.0];
    log2 at POSITIVE;
    log10 at POSITIVE;
    sin at ANYWHERE;
    cos at ANYWHERE;
    tan at MODERATE;
    asin at OPEN_UNIT;
    acos at OPEN_UNIT;
    atan at ANYWHERE;
    sinh at ANYWHERE;
    cosh at ANYWHERE;
    tanh at ANYWHERE;
    asinh at ANYWHERE;
    acosh at ABOVE_ONE;
    atanh at OPEN_UNIT;
    abs at NONZERO;
}

#[test]
fn every_unary_method_in_both_forms_matches_central_differences() -> Result<(), ScalarAutodiffError>
{
    let cases = unary_cases();
    assert_eq!(cases.len(), 2 * 23);
    for case in &cases {
        for &x in case.points {
            let x = black_box(x);
            let (value, [dx]) = (case.grad)(x)?;
            assert_eq!(
                value.to_bits(),
                (case.plain)(x).to_bits(),
                "{} at {x}",
                case.name
            );
            check_gradient(case.name, dx, central(case.plain, x));
        }
    }
    Ok(())
}

// Binary methods, in both forms.

#[differentiable]
fn powf_method(x: f64, y: f64) -> f64 {
    x.powf(y)
}
#[differentiable]
fn powf_path(x: f64, y: f64) -> f64 {
    f64::powf(x, y)
}
#[differentiable]
fn log_method(x: f64, base: f64) -> f64 {
    x.log(base)
}
#[differentiable]
fn log_path(x: f64, base: f64) -> f64 {
    f64::log(x, base)
}
#[differentiable]
fn atan2_method(y: f64, x: f64) -> f64 {
    y.atan2(x)
}
#[differentiable]
fn atan2_path(y: f64, x: f64) -> f64 {
    f64::atan2(y, x)
}
#[differentiable]
fn max_method(x: f64, y: f64) -> f64 {
    x.max(y)
}
#[differentiable]
fn max_path(x: f64, y: f64) -> f64 {
    f64::max(x, y)
}
#[differentiable]
fn min_method(x: f64, y: f64) -> f64 {
    x.min(y)
}
#[differentiable]
fn min_path(x: f64, y: f64) -> f64 {
    f64::min(x, y)
}
#[differentiable]
fn hypot_method(x: f64, y: f64) -> f64 {
    x.hypot(y)
}
#[differentiable]
fn hypot_path(x: f64, y: f64) -> f64 {
    f64::hypot(x, y)
}

#[test]
fn every_binary_method_in_both_forms_matches_central_differences() -> Result<(), ScalarAutodiffError>
{
    const POSITIVE_PAIRS: &[(f64, f64)] = &[(0.5, 1.5), (2.0, 0.3), (3.5, 2.5), (1.3, 10.0)];
    const PAIRS: &[(f64, f64)] = &[(-1.5, 0.7), (0.4, -2.0), (2.5, 1.25), (-0.3, -0.9)];
    let cases: &[PairCase] = &[
        (("x.powf(y)", powf_method, powf_method_grad), POSITIVE_PAIRS),
        (
            ("f64::powf(x, y)", powf_path, powf_path_grad),
            POSITIVE_PAIRS,
        ),
        (("x.log(base)", log_method, log_method_grad), POSITIVE_PAIRS),
        (
            ("f64::log(x, base)", log_path, log_path_grad),
            POSITIVE_PAIRS,
        ),
        (("y.atan2(x)", atan2_method, atan2_method_grad), PAIRS),
        (("f64::atan2(y, x)", atan2_path, atan2_path_grad), PAIRS),
        (("x.max(y)", max_method, max_method_grad), PAIRS),
        (("f64::max(x, y)", max_path, max_path_grad), PAIRS),
        (("x.min(y)", min_method, min_method_grad), PAIRS),
        (("f64::min(x, y)", min_path, min_path_grad), PAIRS),
        (("x.hypot(y)", hypot_method, hypot_method_grad), PAIRS),
        (("f64::hypot(x, y)", hypot_path, hypot_path_grad), PAIRS),
    ];
    for &((name, plain, grad), points) in cases {
        for &(a, b) in points {
            let (a, b) = (black_box(a), black_box(b));
            let (value, [da, db]) = grad(a, b)?;
            assert_eq!(
                value.to_bits(),
                plain(a, b).to_bits(),
                "{name} at ({a}, {b})"
            );
            check_gradient(name, da, central(|a| plain(a, b), a));
            check_gradient(name, db, central(|b| plain(a, b), b));
        }
    }
    Ok(())
}

#[differentiable]
fn mul_add_method(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}
#[differentiable]
fn mul_add_path(x: f64, a: f64, b: f64) -> f64 {
    f64::mul_add(x, a, b)
}

#[test]
fn mul_add_in_both_forms_matches_central_differences() -> Result<(), ScalarAutodiffError> {
    let cases: &[Case<Plain3, Grad3>] = &[
        ("x.mul_add(a, b)", mul_add_method, mul_add_method_grad),
        ("f64::mul_add(x, a, b)", mul_add_path, mul_add_path_grad),
    ];
    for &(name, plain, grad) in cases {
        for (x, a, b) in [(0.5, -1.5, 2.0), (3.0, 0.25, -7.0), (-1.1, 2.2, 0.1)] {
            let (x, a, b) = (black_box(x), black_box(a), black_box(b));
            let (value, [dx, da, db]) = grad(x, a, b)?;
            assert_eq!(value.to_bits(), plain(x, a, b).to_bits(), "{name}");
            check_gradient(name, dx, central(|x| plain(x, a, b), x));
            check_gradient(name, da, central(|a| plain(x, a, b), a));
            check_gradient(name, db, central(|b| plain(x, a, b), b));
        }
    }
    Ok(())
}

// `powi` keeps its integer exponent as written; literal operands work anywhere.

#[differentiable]
fn powi_forms(x: f64) -> f64 {
    const TWO: i32 = 2;
    x.powi(3) + f64::powi(x, -2) + x.powi(TWO * 2 - 1) + x.powi(0)
}

#[differentiable]
fn literal_operands(x: f64) -> f64 {
    x.max(0.0) + x.powf(1.5) + 2.0 * x + (1.0 - x) + 2.0f64.powf(x) + f64::hypot(3.0, x) - -0.5 / x
        + x.min(-1.0e-3)
        + 10.0_f64.log(x)
}

#[test]
fn powi_and_literal_operands_match_central_differences() -> Result<(), ScalarAutodiffError> {
    let cases: &[Case<Plain1, Grad1>] = &[
        ("powi forms", powi_forms, powi_forms_grad),
        ("literal operands", literal_operands, literal_operands_grad),
    ];
    for &(name, plain, grad) in cases {
        for x in [0.3, 1.7, 2.5, 6.0] {
            let x = black_box(x);
            let (value, [dx]) = grad(x)?;
            assert_eq!(value.to_bits(), plain(x).to_bits(), "{name} at {x}");
            check_gradient(name, dx, central(plain, x));
        }
    }
    let x = 1.7f64;
    let expected = 3.0 * x * x - 2.0 * x.powi(-3) + 3.0 * x * x;
    assert_relative_eq!(powi_forms_grad(x)?.1[0], expected, max_relative = 1e-14);
    Ok(())
}
