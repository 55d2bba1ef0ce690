//! Every operation's derivative against central differences at several points of its
//! domain, plus its edge conventions and its domain errors.
//!
//! Each operation is one row of a table: how to build it on the graph, the plain `f64`
//! function it must reproduce bit for bit, its derivative written out independently of
//! the runtime, a length scale for the finite-difference step, and the points to try.
//! At every point the reverse-mode gradient of every operand slot is compared with
//!
//! * the formula, to `1e-12` relative (exact where the formula gives 0), and
//! * a 5-point central difference of the plain function with step `h ≈ 1e-3 · length`,
//!   to `1e-9` relative to `max(|gradient|, |f| / length)`. That floor is the size of
//!   the difference quotient's own rounding error (`~ eps · |f| / h`); the stencil's
//!   truncation error is `O((h / length)^4) ≈ 1e-12`.
//!
//! A binary (or ternary) row is checked once with every operand a variable and once per
//! slot with only that slot a variable and the others constants.

use autodiff_runtime::{tape_len, Scalar, ScalarAutodiffError, ScalarOperation};
use std::f64::consts::{FRAC_PI_2, LN_2, PI, SQRT_2};
use std::hint::black_box;

type Result<T, E = ScalarAutodiffError> = std::result::Result<T, E>;

/// Builds an operation's node from its operand leaves.
type Build = fn(&[Scalar]) -> Result<Scalar>;
/// Builds a one-operand operation's node.
type Unary = fn(&Scalar) -> Result<Scalar>;

/// Relative tolerance of the reverse-mode gradient against the formula written here.
const FORMULA_TOLERANCE: f64 = 1e-12;
/// Tolerance of the gradient against the 5-point stencil, relative to
/// `max(|gradient|, |f| / length)`.
const STENCIL_TOLERANCE: f64 = 1e-9;

/// One operation of the table.
struct Case {
    name: &'static str,
    build: Build,
    /// The plain `f64` function the node's value must equal bit for bit.
    plain: fn(&[f64]) -> f64,
    /// The derivative with respect to operand `slot`, written independently of the runtime.
    slope: fn(&[f64], usize) -> f64,
    /// A length over which the function is smooth around the point, along `slot`.
    length: fn(&[f64], usize) -> f64,
    points: &'static [&'static [f64]],
}

/// A unary row whose operation is the `f64` method of the same name.
macro_rules! unary {
    ($method:ident, slope: $slope:expr, length: $length:expr, points: [$($x:expr),+ $(,)?] $(,)?) => {
        Case {
            name: stringify!($method),
            build: |v| v[0].$method(),
            plain: |p| p[0].$method(),
            slope: |p, _| {
                let slope: fn(f64) -> f64 = $slope;
                slope(p[0])
            },
            length: |p, _| {
                let length: fn(f64) -> f64 = $length;
                length(p[0])
            },
            points: &[$(&[$x]),+],
        }
    };
}

/// A `powi` row for the literal exponent `$n`.
macro_rules! powi {
    ($n:literal, length: $length:expr, points: [$($x:expr),+ $(,)?] $(,)?) => {
        Case {
            name: concat!("powi(", stringify!($n), ")"),
            build: |v| v[0].powi($n),
            plain: |p| p[0].powi($n),
            slope: |p, _| f64::from($n) * p[0].powf(f64::from($n) - 1.0),
            // x^n bends over |x| / |n|, not |x|.
            length: |p, _| {
                let length: fn(f64) -> f64 = $length;
                length(p[0]) / f64::from($n).abs().max(1.0)
            },
            points: &[$(&[$x]),+],
        }
    };
}

// Length scales.

/// Periodic or exponential functions: their scale does not grow with the argument.
fn unit(_: f64) -> f64 {
    1.0
}

/// Polynomial-like functions: smooth over a distance proportional to the argument.
fn magnitude(x: f64) -> f64 {
    x.abs().max(1.0)
}

/// Functions singular (or kinked) at 0: the distance to 0.
fn distance_to_zero(x: f64) -> f64 {
    x.abs()
}

/// Functions singular at ±1 (asin, acos, atanh): the distance to the nearer one.
fn distance_to_unit(x: f64) -> f64 {
    (1.0 - x.abs()).min(1.0)
}

/// Functions linear in each operand (add, sub, mul, mul_add): any step is exact in
/// theory, so take one large next to every operand, where the sum's rounding is small.
fn magnitude_of_all(p: &[f64], _: usize) -> f64 {
    p.iter().fold(1.0, |length, x| length.max(x.abs()))
}

/// The 5-point central difference `(f(x-2h) - 8f(x-h) + 8f(x+h) - f(x+2h)) / 12h`, with
/// `h` the largest power of two not above `1e-3 · length`, so that `x ± h` and `x ± 2h`
/// are exact (at every point here `h` is well above the ulp of `x`).
fn stencil(f: impl Fn(f64) -> f64, x: f64, length: f64) -> f64 {
    assert!(length.is_finite() && length > 0.0, "length {length} at {x}");
    let h = (1e-3 * length).log2().floor().exp2();
    (f(x - 2.0 * h) - 8.0 * f(x - h) + 8.0 * f(x + h) - f(x + 2.0 * h)) / (12.0 * h)
}

/// `|actual - expected| <= tolerance · max(|actual|, |expected|, floor)`.
fn close(actual: f64, expected: f64, tolerance: f64, floor: f64) -> bool {
    (actual - expected).abs() <= tolerance * actual.abs().max(expected.abs()).max(floor)
}

const VAR: bool = true;
const CONST: bool = false;

/// Leaves from (value, is variable) pairs.
fn make_leaves(leaves: impl IntoIterator<Item = (f64, bool)>) -> Result<Vec<Scalar>> {
    leaves
        .into_iter()
        .map(|(x, variable)| match variable {
            true => Scalar::variable(x),
            false => Scalar::constant(x),
        })
        .collect()
}

fn check_cases(cases: &[Case]) {
    let mut failures = Vec::new();
    for case in cases {
        for &point in case.points {
            check_point(case, point, &mut failures);
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Checks value and gradients at one point with every operand a variable, then (for more
/// than one operand) with each slot alone a variable and the others constants.
fn check_point(case: &Case, point: &[f64], failures: &mut Vec<String>) {
    let all = vec![true; point.len()];
    let mut configurations = vec![all];
    if point.len() > 1 {
        configurations.extend((0..point.len()).map(|slot| {
            let mut alone = vec![false; point.len()];
            alone[slot] = true;
            alone
        }));
    }
    // `black_box`: in release builds LLVM may constant-fold `powi` with different rounding.
    let value = (case.plain)(black_box(point));
    for tracked in configurations {
        let what = format!("{}{point:?} with variables {tracked:?}", case.name);
        let leaves =
            make_leaves(point.iter().copied().zip(tracked.iter().copied())).expect("finite leaves");
        let output = match (case.build)(&leaves) {
            Ok(output) => output,
            Err(error) => {
                failures.push(format!("{what}: forward failed: {error}"));
                continue;
            }
        };
        if output.value().to_bits() != value.to_bits() {
            failures.push(format!(
                "{what}: value {:e} is not the f64 result {value:e} bit for bit",
                output.value()
            ));
        }
        if let Err(error) = output.backward() {
            failures.push(format!("{what}: backward failed: {error}"));
            continue;
        }
        for (slot, leaf) in leaves.iter().enumerate() {
            let gradient = match (leaf.gradient(), tracked[slot]) {
                (Some(gradient), true) => gradient,
                (None, false) => continue,
                (gradient, _) => {
                    failures.push(format!("{what}: operand {slot} has gradient {gradient:?}"));
                    continue;
                }
            };
            let formula = (case.slope)(point, slot);
            if !close(gradient, formula, FORMULA_TOLERANCE, 0.0) {
                failures.push(format!(
                    "{what}: d/d{slot} = {gradient:e}, formula {formula:e} (relative error {:.1e})",
                    ((gradient - formula) / formula).abs()
                ));
            }
            let length = (case.length)(point, slot);
            let moved = |t: f64| {
                let mut moved = point.to_vec();
                moved[slot] = t;
                (case.plain)(&moved)
            };
            let numerical = stencil(moved, point[slot], length);
            if !close(gradient, numerical, STENCIL_TOLERANCE, value.abs() / length) {
                failures.push(format!(
                    "{what}: d/d{slot} = {gradient:e}, central difference {numerical:e} (step length {length:e})"
                ));
            }
        }
    }
}

#[test]
fn arithmetic_derivatives_match_central_differences() {
    check_cases(&[
        Case {
            name: "add",
            build: |v| v[0].add(&v[1]),
            plain: |p| p[0] + p[1],
            slope: |_, _| 1.0,
            length: magnitude_of_all,
            points: &[
                &[-3.5, 2.25],
                &[1e6, -1e-6],
                &[0.0, 7.0],
                &[-1e-8, 1e8],
                &[1e300, -2e299],
            ],
        },
        Case {
            name: "sub",
            build: |v| v[0].sub(&v[1]),
            plain: |p| p[0] - p[1],
            slope: |_, slot| [1.0, -1.0][slot],
            length: magnitude_of_all,
            points: &[
                &[-3.5, 2.25],
                &[1e6, -1e-6],
                &[0.0, 7.0],
                &[-1e-8, 1e8],
                &[1e300, -2e299],
            ],
        },
        Case {
            name: "mul",
            build: |v| v[0].mul(&v[1]),
            plain: |p| p[0] * p[1],
            slope: |p, slot| p[1 - slot],
            length: magnitude_of_all,
            points: &[
                &[-3.5, 2.25],
                &[1e6, -1e-6],
                &[0.0, 7.0],
                &[-1e-8, 1e8],
                &[1e150, -3e-140],
            ],
        },
        Case {
            name: "div",
            build: |v| v[0].div(&v[1]),
            plain: |p| p[0] / p[1],
            slope: |p, slot| match slot {
                0 => 1.0 / p[1],
                _ => -p[0] / (p[1] * p[1]),
            },
            length: |p, slot| match slot {
                0 => magnitude(p[0]),
                _ => p[1].abs(),
            },
            points: &[
                &[1.0, 3.0],
                &[-2.5, 0.4],
                &[1e6, -1e-3],
                &[1e-7, 250.0],
                &[0.0, -4.0],
            ],
        },
        Case {
            name: "neg",
            build: |v| v[0].neg(),
            plain: |p| -p[0],
            slope: |_, _| -1.0,
            length: magnitude_of_all,
            points: &[&[-3.0], &[0.0], &[1e-8], &[1e12]],
        },
        unary!(
            recip,
            slope: |x| -1.0 / (x * x),
            length: distance_to_zero,
            points: [-1e3, -0.5, 1e-3, 2.0, 1e6],
        ),
        Case {
            name: "mul_add",
            build: |v| v[0].mul_add(&v[1], &v[2]),
            plain: |p| p[0].mul_add(p[1], p[2]),
            slope: |p, slot| [p[1], p[0], 1.0][slot],
            length: magnitude_of_all,
            points: &[
                &[2.0, 3.0, 4.0],
                &[-1e3, 1e-3, 5.0],
                &[0.5, -0.25, -1e6],
                &[1e8, 1e-8, 0.0],
                &[0.1, 0.2, -0.02],
            ],
        },
    ]);
}

#[test]
fn power_and_root_derivatives_match_central_differences() {
    check_cases(&[
        powi!(-3, length: distance_to_zero, points: [-2.5, -0.5, 0.01, 3.0, 1e3]),
        powi!(-1, length: distance_to_zero, points: [-1e5, -0.2, 1e-4, 7.0]),
        powi!(1, length: magnitude, points: [-4.0, 0.0, 0.5, 1e9]),
        powi!(2, length: magnitude, points: [-1e3, -1.5, 0.0, 0.3, 1e5]),
        powi!(3, length: magnitude, points: [-2.0, -0.7, 0.0, 0.3, 1.1, 40.0]),
        powi!(7, length: magnitude, points: [-2.0, -0.7, 0.3, 1.1, 40.0]),
        Case {
            name: "powf",
            build: |v| v[0].powf(&v[1]),
            plain: |p| p[0].powf(p[1]),
            slope: |p, slot| match slot {
                0 => p[1] * p[0].powf(p[1]) / p[0],
                _ => p[0].powf(p[1]) * p[0].ln(),
            },
            // Along the base x^y bends over x / |y|; along the exponent, over 1 / |ln x|.
            length: |p, slot| match slot {
                0 => p[0] / magnitude(p[1]),
                _ => (1.0 / p[0].ln().abs()).min(magnitude(p[1])),
            },
            points: &[
                &[0.5, 2.5],
                &[2.0, -1.5],
                &[1e-3, 0.7],
                &[10.0, 3.0],
                &[1e4, -0.25],
                &[3.7, 0.0],
                &[1.0, 4.5],
                &[1e-200, 1.25],
            ],
        },
        unary!(
            sqrt,
            slope: |x| 0.5 / x.sqrt(),
            length: distance_to_zero,
            points: [1e-300, 1e-8, 0.25, 2.0, 1e10, 1e300],
        ),
        unary!(
            cbrt,
            slope: |x| x.cbrt() / (3.0 * x),
            length: distance_to_zero,
            points: [-27.0, -1e-6, 0.3, 8e9, 1e-300],
        ),
    ]);
}

#[test]
fn exponential_and_logarithm_derivatives_match_central_differences() {
    check_cases(&[
        unary!(exp, slope: f64::exp, length: unit, points: [-700.0, -3.3, 0.0, 0.5, 700.0]),
        unary!(
            exp2,
            slope: |x| x.exp2() * LN_2,
            length: unit,
            points: [-1000.0, -2.5, 0.0, 3.0, 1000.0],
        ),
        unary!(
            exp_m1,
            slope: f64::exp,
            length: unit,
            points: [-50.0, -1e-10, 1e-10, 2.0, 700.0],
        ),
        unary!(
            ln,
            slope: |x| 1.0 / x,
            length: distance_to_zero,
            points: [1e-300, 1e-3, 0.5, 1.0, 7.0, 1e300],
        ),
        unary!(
            ln_1p,
            slope: |x| 1.0 / (1.0 + x),
            length: |x| (1.0 + x).min(magnitude(x)),
            points: [-0.999, -0.5, -1e-10, 1e-10, 3.0, 1e10],
        ),
        unary!(
            log2,
            slope: |x| std::f64::consts::LOG2_E / x,
            length: distance_to_zero,
            points: [1e-300, 1e-3, 0.5, 1.0, 7.0, 1e300],
        ),
        unary!(
            log10,
            slope: |x| std::f64::consts::LOG10_E / x,
            length: distance_to_zero,
            points: [1e-300, 1e-3, 0.5, 1.0, 7.0, 1e300],
        ),
        Case {
            name: "log",
            build: |v| v[0].log(&v[1]),
            plain: |p| p[0].log(p[1]),
            slope: |p, slot| match slot {
                0 => 1.0 / (p[0] * p[1].ln()),
                _ => -p[0].ln() / (p[1] * p[1].ln().powi(2)),
            },
            // Along the base, ln x / ln b is singular at b = 0 and b = 1.
            length: |p, slot| match slot {
                0 => p[0],
                _ => p[1].min((p[1] - 1.0).abs()),
            },
            points: &[
                &[8.0, 2.0],
                &[0.1, 10.0],
                &[5.0, 0.5],
                &[1e10, 1.5],
                &[1.0, 3.0],
                &[1e-200, 1e100],
            ],
        },
    ]);
}

#[test]
fn trigonometric_derivatives_match_central_differences() {
    check_cases(&[
        unary!(
            sin,
            slope: f64::cos,
            length: unit,
            points: [-1e6, -2.1, 0.0, 0.7, 3.0, 1e6],
        ),
        unary!(
            cos,
            slope: |x| -x.sin(),
            length: unit,
            points: [-1e6, -2.1, 0.0, 0.7, 3.0, 1e6],
        ),
        unary!(
            tan,
            slope: |x| 1.0 / x.cos().powi(2),
            length: |x| x.cos().abs().min(1.0),
            points: [-1.5, -0.3, 0.0, 1.2, 1e3],
        ),
        unary!(
            asin,
            slope: |x| 1.0 / ((1.0 - x) * (1.0 + x)).sqrt(),
            length: distance_to_unit,
            points: [-0.99, -0.5, 0.0, 0.3, 0.9, 1e-9],
        ),
        unary!(
            acos,
            slope: |x| -1.0 / ((1.0 - x) * (1.0 + x)).sqrt(),
            length: distance_to_unit,
            points: [-0.99, -0.5, 0.0, 0.3, 0.9, 1e-9],
        ),
        unary!(
            atan,
            slope: |x| 1.0 / x.mul_add(x, 1.0),
            length: magnitude,
            points: [-1e8, -1.0, 0.0, 0.5, 1e4],
        ),
        Case {
            name: "atan2",
            build: |v| v[0].atan2(&v[1]),
            plain: |p| p[0].atan2(p[1]),
            slope: |p, slot| {
                let r = p[0].hypot(p[1]);
                [p[1], -p[0]][slot] / r / r
            },
            // Smooth over the distance to the origin (the points avoid the branch cut).
            length: |p, _| p[0].hypot(p[1]),
            points: &[
                &[1.0, 1.0],
                &[-2.0, 0.5],
                &[0.3, -4.0],
                &[-1e-3, -1e-3],
                &[1e5, 3e5],
                &[0.0, 2.0],
                &[5.0, 0.0],
            ],
        },
    ]);
}

#[test]
fn hyperbolic_derivatives_match_central_differences() {
    check_cases(&[
        unary!(
            sinh,
            slope: f64::cosh,
            length: unit,
            points: [-700.0, -2.0, 0.0, 0.5, 3.0, 700.0],
        ),
        unary!(
            cosh,
            slope: f64::sinh,
            length: unit,
            points: [-700.0, -2.0, 0.0, 0.5, 3.0, 700.0],
        ),
        unary!(
            tanh,
            slope: |x| 1.0 / x.cosh().powi(2),
            length: unit,
            points: [-3.0, -0.5, 0.0, 0.2, 4.0],
        ),
        unary!(
            asinh,
            slope: |x| 1.0 / x.hypot(1.0),
            length: magnitude,
            points: [-1e10, -1.0, 0.0, 0.3, 1e5],
        ),
        unary!(
            acosh,
            slope: |x| 1.0 / ((x - 1.0) * (x + 1.0)).sqrt(),
            length: |x| x - 1.0,
            points: [1.001, 1.5, 10.0, 1e10],
        ),
        unary!(
            atanh,
            slope: |x| 1.0 / ((1.0 - x) * (1.0 + x)),
            length: distance_to_unit,
            points: [-0.99, -0.4, 0.0, 0.5, 0.9],
        ),
    ]);
}

#[test]
fn piecewise_derivatives_match_central_differences_away_from_kinks() {
    check_cases(&[
        unary!(
            abs,
            slope: f64::signum,
            length: distance_to_zero,
            points: [-1e6, -0.5, 1e-9, 3.0],
        ),
        Case {
            name: "max",
            build: |v| v[0].max(&v[1]),
            plain: |p| p[0].max(p[1]),
            slope: |p, slot| if p[slot] > p[1 - slot] { 1.0 } else { 0.0 },
            length: |p, _| (p[0] - p[1]).abs(),
            points: &[
                &[1.0, 2.0],
                &[3.0, -1.0],
                &[-1e6, 1e6],
                &[0.5, 0.25],
                &[-1e-9, -2e-9],
            ],
        },
        Case {
            name: "min",
            build: |v| v[0].min(&v[1]),
            plain: |p| p[0].min(p[1]),
            slope: |p, slot| if p[slot] < p[1 - slot] { 1.0 } else { 0.0 },
            length: |p, _| (p[0] - p[1]).abs(),
            points: &[
                &[1.0, 2.0],
                &[3.0, -1.0],
                &[-1e6, 1e6],
                &[0.5, 0.25],
                &[-1e-9, -2e-9],
            ],
        },
        Case {
            name: "hypot",
            build: |v| v[0].hypot(&v[1]),
            plain: |p| p[0].hypot(p[1]),
            slope: |p, slot| p[slot] / (p[0] * p[0] + p[1] * p[1]).sqrt(),
            length: |p, _| p[0].hypot(p[1]),
            points: &[
                &[3.0, 4.0],
                &[-1e-3, 2e-3],
                &[0.0, 5.0],
                &[-7.0, 0.1],
                &[1e100, -2e100],
                &[1e-100, 1e-100],
            ],
        },
    ]);
}

/// One node in several operand slots: each occurrence is its own edge, and the gradient
/// is their sum, the derivative of `t ↦ f(t, t)`.
#[test]
fn a_node_in_several_slots_gets_the_sum_of_its_edges() -> Result<()> {
    type Same = (&'static str, Build, fn(f64) -> f64, fn(f64) -> f64);
    let cases: [Same; 11] = [
        ("x + x", |v| v[0].add(&v[0]), |t| t + t, |_| 2.0),
        ("x - x", |v| v[0].sub(&v[0]), |t| t - t, |_| 0.0),
        ("x * x", |v| v[0].mul(&v[0]), |t| t * t, |t| 2.0 * t),
        ("x / x", |v| v[0].div(&v[0]), |t| t / t, |_| 0.0),
        (
            "x^x",
            |v| v[0].powf(&v[0]),
            |t| t.powf(t),
            |t| t.powf(t) * (1.0 + t.ln()),
        ),
        ("log_x x", |v| v[0].log(&v[0]), |t| t.log(t), |_| 0.0),
        (
            "atan2(x, x)",
            |v| v[0].atan2(&v[0]),
            |t| t.atan2(t),
            |_| 0.0,
        ),
        ("max(x, x)", |v| v[0].max(&v[0]), |t| t.max(t), |_| 1.0),
        ("min(x, x)", |v| v[0].min(&v[0]), |t| t.min(t), |_| 1.0),
        (
            "hypot(x, x)",
            |v| v[0].hypot(&v[0]),
            |t| t.hypot(t),
            |_| SQRT_2,
        ),
        (
            "x * x + x",
            |v| v[0].mul_add(&v[0], &v[0]),
            |t| t.mul_add(t, t),
            |t| 2.0 * t + 1.0,
        ),
    ];
    for (name, build, plain, slope) in cases {
        for x in [0.3, 1.7, 42.0] {
            let leaf = Scalar::variable(x)?;
            let output = build(std::slice::from_ref(&leaf))?;
            assert_eq!(
                output.value().to_bits(),
                plain(black_box(x)).to_bits(),
                "{name} at {x}"
            );
            output.backward()?;
            let gradient = leaf.gradient().expect("tracked");
            // `log_x x` and `atan2(x, x)` cancel two rounded edges, hence the absolute slack.
            assert!(
                (gradient - slope(x)).abs() <= 1e-12 * slope(x).abs().max(1.0),
                "{name} at {x}: gradient {gradient:e}, formula {:e}",
                slope(x)
            );
            // x^x bends over 1 / (1 + ln x), about 0.2 at 42.
            let length = x.min(0.1);
            let numerical = stencil(plain, x, length);
            assert!(
                close(
                    gradient,
                    numerical,
                    STENCIL_TOLERANCE,
                    plain(x).abs() / length
                ),
                "{name} at {x}: gradient {gradient:e}, central difference {numerical:e}"
            );
        }
    }
    Ok(())
}

/// The gradient of `build` at `x`.
fn slope_at(build: Unary, x: f64) -> Result<f64> {
    let leaf = Scalar::variable(x)?;
    build(&leaf)?.backward()?;
    Ok(leaf.gradient().expect("a variable is tracked"))
}

/// Near ±1 the runtime computes the slopes of asin, acos and atanh from `1 - x²` (and
/// acosh's from `x² - 1`): rounding `x²` costs up to `eps / |1 - x²|` relative, about
/// 5e-10 at `x = 1 - 1e-8`, so the table above stays a little away from ±1. `tanh`'s
/// slope `1 - tanh²` is accurate to `eps` absolutely, not relatively: about 1e-8 relative
/// at 10 and 0 instead of 1.7e-17 at 20. This pins those bounds (which slopes written
/// as `(1 - x)(1 + x)`, `(x - 1)(x + 1)` or `1 / cosh²` would also meet, with room).
#[test]
fn slopes_near_singularities_are_accurate_to_the_cancellation_bound() -> Result<()> {
    for x in [1.0f64 - 1e-4, -(1.0 - 1e-8), 1.0 - 1e-12, -(1.0 - 1e-15)] {
        let gap = (1.0 - x.abs()) * (1.0 + x.abs());
        let bound = f64::EPSILON / gap + FORMULA_TOLERANCE;
        let cases: [(&str, Unary, f64); 3] = [
            ("asin", |v| v.asin(), 1.0 / gap.sqrt()),
            ("acos", |v| v.acos(), -1.0 / gap.sqrt()),
            ("atanh", |v| v.atanh(), 1.0 / gap),
        ];
        for (name, build, exact) in cases {
            let slope = slope_at(build, x)?;
            let error = ((slope - exact) / exact).abs();
            assert!(
                error <= bound,
                "{name}({x}): {slope:e} vs {exact:e}, error {error:.1e} > {bound:.1e}"
            );
        }
    }
    for x in [1.0 + 1e-4, 1.0 + 1e-8, 1.0 + 1e-12, 1.0 + 1e-15] {
        let gap = (x - 1.0) * (x + 1.0);
        let bound = f64::EPSILON / gap + FORMULA_TOLERANCE;
        let (slope, exact) = (slope_at(|v| v.acosh(), x)?, 1.0 / gap.sqrt());
        let error = ((slope - exact) / exact).abs();
        assert!(
            error <= bound,
            "acosh({x}): {slope:e} vs {exact:e}, error {error:.1e} > {bound:.1e}"
        );
    }
    for x in [5.0, 10.0, -15.0, 20.0, -400.0] {
        let (slope, exact) = (slope_at(|v| v.tanh(), x)?, 1.0 / f64::cosh(x).powi(2));
        assert!(
            (slope - exact).abs() <= 2.0 * f64::EPSILON,
            "tanh({x}): {slope:e} vs {exact:e}"
        );
    }
    Ok(())
}

/// Slopes must not square their operands: `atan2` divides by the radius twice rather
/// than by `x * x + y * y` (which underflows below about 1.6e-162, giving a false
/// `NonFiniteDerivative`, and overflows above 1.3e154, giving 0), and `asinh`/`acosh`
/// avoid `sqrt(x * x ± 1)` (0 instead of 1/|x| above 1.3e154).
#[test]
fn slopes_at_extreme_magnitudes_do_not_square_the_operands() -> Result<()> {
    let near =
        |actual: f64, exact: f64| (actual - exact).abs() <= 1e-12 * exact.abs() + f64::MIN_POSITIVE;
    for (y, x) in [
        (1e-200f64, 1e-200),
        (3e-160, -4e-160),
        (1e200, 1e200),
        (1e160, 1.0),
    ] {
        let r = y.hypot(x);
        let exact = [x / r / r, -y / r / r];
        let slopes = gradients(&[(y, VAR), (x, VAR)], |v| v[0].atan2(&v[1]))?.1;
        assert!(
            near(slopes[0].unwrap(), exact[0]) && near(slopes[1].unwrap(), exact[1]),
            "atan2({y:e}, {x:e}): {slopes:?}, exact {exact:?}"
        );
    }
    for x in [1e160, -1e200, 1e300] {
        let (slope, exact) = (slope_at(|v| v.asinh(), x)?, 1.0 / x.abs());
        assert!(
            near(slope, exact),
            "asinh({x:e}): {slope:e}, exact {exact:e}"
        );
    }
    for x in [1e160, 1e200, 1e300] {
        let (slope, exact) = (slope_at(|v| v.acosh(), x)?, 1.0 / x);
        assert!(
            near(slope, exact),
            "acosh({x:e}): {slope:e}, exact {exact:e}"
        );
    }
    Ok(())
}

// Edge conventions.

/// Builds `build(leaves)` from (value, is variable) pairs, runs `backward`, and returns
/// the leaves' gradients (`None` for constants).
fn gradients(leaves: &[(f64, bool)], build: Build) -> Result<(f64, Vec<Option<f64>>)> {
    let leaves = make_leaves(leaves.iter().copied())?;
    let output = build(&leaves)?;
    output.backward()?;
    Ok((
        output.value(),
        leaves.iter().map(Scalar::gradient).collect(),
    ))
}

#[test]
fn abs_has_slope_zero_at_zero() -> Result<()> {
    assert_eq!(
        gradients(&[(0.0, VAR)], |v| v[0].abs())?,
        (0.0, vec![Some(0.0)])
    );
    assert_eq!(
        gradients(&[(-0.0, VAR)], |v| v[0].abs())?,
        (0.0, vec![Some(0.0)])
    );
    assert_eq!(
        gradients(&[(-2.0, VAR)], |v| v[0].abs())?,
        (2.0, vec![Some(-1.0)])
    );
    assert_eq!(
        gradients(&[(2.0, VAR)], |v| v[0].abs())?,
        (2.0, vec![Some(1.0)])
    );
    Ok(())
}

#[test]
fn max_and_min_split_a_tie_evenly_and_otherwise_route_to_the_winner() -> Result<()> {
    let max: Build = |v| v[0].max(&v[1]);
    let min: Build = |v| v[0].min(&v[1]);
    for build in [max, min] {
        // A tie sends half to each operand, whether or not the other one is tracked.
        assert_eq!(
            gradients(&[(2.0, VAR), (2.0, VAR)], build)?.1,
            [Some(0.5), Some(0.5)]
        );
        assert_eq!(
            gradients(&[(2.0, VAR), (2.0, CONST)], build)?.1,
            [Some(0.5), None]
        );
        assert_eq!(
            gradients(&[(2.0, CONST), (2.0, VAR)], build)?.1,
            [None, Some(0.5)]
        );
        // Signed zeros compare equal: still a tie.
        assert_eq!(
            gradients(&[(0.0, VAR), (-0.0, VAR)], build)?.1,
            [Some(0.5), Some(0.5)]
        );
    }
    assert_eq!(
        gradients(&[(3.0, VAR), (1.0, VAR)], max)?,
        (3.0, vec![Some(1.0), Some(0.0)])
    );
    assert_eq!(
        gradients(&[(1.0, VAR), (3.0, VAR)], max)?,
        (3.0, vec![Some(0.0), Some(1.0)])
    );
    assert_eq!(
        gradients(&[(3.0, VAR), (1.0, VAR)], min)?,
        (1.0, vec![Some(0.0), Some(1.0)])
    );
    assert_eq!(
        gradients(&[(1.0, VAR), (3.0, VAR)], min)?,
        (1.0, vec![Some(1.0), Some(0.0)])
    );
    // x.max(constant): 1 when x wins, 0 (a stored zero, not "untracked") when it loses.
    assert_eq!(
        gradients(&[(3.0, VAR), (1.0, CONST)], max)?,
        (3.0, vec![Some(1.0), None])
    );
    assert_eq!(
        gradients(&[(1.0, VAR), (3.0, CONST)], max)?,
        (3.0, vec![Some(0.0), None])
    );
    assert_eq!(
        gradients(&[(1.0, VAR), (3.0, CONST)], min)?,
        (1.0, vec![Some(1.0), None])
    );
    assert_eq!(
        gradients(&[(3.0, VAR), (1.0, CONST)], min)?,
        (1.0, vec![Some(0.0), None])
    );
    Ok(())
}

#[test]
fn hypot_has_slope_zero_at_the_origin() -> Result<()> {
    let hypot: Build = |v| v[0].hypot(&v[1]);
    assert_eq!(
        gradients(&[(0.0, VAR), (0.0, VAR)], hypot)?,
        (0.0, vec![Some(0.0), Some(0.0)])
    );
    assert_eq!(
        gradients(&[(0.0, VAR), (0.0, CONST)], hypot)?,
        (0.0, vec![Some(0.0), None])
    );
    assert_eq!(
        gradients(&[(-0.0, VAR), (-0.0, VAR)], hypot)?,
        (0.0, vec![Some(0.0), Some(0.0)])
    );
    // On an axis away from the origin the slopes are the ordinary ones.
    assert_eq!(
        gradients(&[(0.0, VAR), (-3.0, VAR)], hypot)?,
        (3.0, vec![Some(0.0), Some(-1.0)])
    );
    Ok(())
}

#[test]
fn powf_conventions_at_a_zero_base_and_a_zero_exponent() -> Result<()> {
    let powf: Build = |v| v[0].powf(&v[1]);
    // 0^2 = 0: the base slope is 2·0 = 0 and the exponent slope is 0 (0 · ln 0 taken as 0).
    assert_eq!(
        gradients(&[(0.0, VAR), (2.0, VAR)], powf)?,
        (0.0, vec![Some(0.0), Some(0.0)])
    );
    assert_eq!(
        gradients(&[(0.0, CONST), (2.0, VAR)], powf)?,
        (0.0, vec![None, Some(0.0)])
    );
    assert_eq!(
        gradients(&[(0.0, CONST), (0.5, VAR)], powf)?,
        (0.0, vec![None, Some(0.0)])
    );
    // 0^1: the base slope is 1.
    assert_eq!(
        gradients(&[(0.0, VAR), (1.0, CONST)], powf)?,
        (0.0, vec![Some(1.0), None])
    );
    // x^0 = 1 has base slope 0 everywhere, 0 included (not 0 · 0^-1).
    for x in [0.0, -0.0, -2.0, 3.0] {
        assert_eq!(
            gradients(&[(x, VAR), (0.0, CONST)], powf)?,
            (1.0, vec![Some(0.0), None])
        );
    }
    // With the exponent tracked too, x^0 at x = 3 has exponent slope ln 3.
    let (value, slopes) = gradients(&[(3.0, VAR), (0.0, VAR)], powf)?;
    assert_eq!((value, slopes[0]), (1.0, Some(0.0)));
    assert!((slopes[1].unwrap() - 3f64.ln()).abs() <= 1e-15);
    // A negative base with a constant integer exponent: only the base slope is needed.
    assert_eq!(
        gradients(&[(-2.0, VAR), (3.0, CONST)], powf)?,
        (-8.0, vec![Some(12.0), None])
    );
    assert_eq!(
        gradients(&[(-2.0, VAR), (2.0, CONST)], powf)?,
        (4.0, vec![Some(-4.0), None])
    );
    Ok(())
}

#[test]
fn powi_exponent_zero_has_slope_zero_and_negative_exponents_work() -> Result<()> {
    for x in [0.0, -0.0, -5.0, 1e-300, 1e300] {
        assert_eq!(
            gradients(&[(x, VAR)], |v| v[0].powi(0))?,
            (1.0, vec![Some(0.0)])
        );
    }
    // x^-2 at -2: -2 · (-2)^-3 = 0.25; x^-1 at 4: -1/16; x^-3 at 0.5: -3 · 2^4 = -48.
    assert_eq!(
        gradients(&[(-2.0, VAR)], |v| v[0].powi(-2))?,
        (0.25, vec![Some(0.25)])
    );
    assert_eq!(
        gradients(&[(4.0, VAR)], |v| v[0].powi(-1))?,
        (0.25, vec![Some(-0.0625)])
    );
    assert_eq!(
        gradients(&[(0.5, VAR)], |v| v[0].powi(-3))?,
        (8.0, vec![Some(-48.0)])
    );
    // Positive exponents at 0: slope n · 0^(n-1), which is 1 for n = 1 and 0 above.
    assert_eq!(
        gradients(&[(0.0, VAR)], |v| v[0].powi(1))?,
        (0.0, vec![Some(1.0)])
    );
    assert_eq!(
        gradients(&[(0.0, VAR)], |v| v[0].powi(2))?,
        (0.0, vec![Some(0.0)])
    );
    // Large exponents survive the exponent's trip through the tape.
    let (value, slopes) = gradients(&[(1.0001, VAR)], |v| v[0].powi(-1000))?;
    assert_eq!(value.to_bits(), black_box(1.0001f64).powi(-1000).to_bits());
    let formula = -1000.0 * 1.0001f64.powf(-1001.0);
    assert!((slopes[0].unwrap() - formula).abs() <= 1e-12 * formula.abs());
    let (_, slopes) = gradients(&[(-1.0, VAR)], |v| v[0].powi(i32::MAX))?;
    assert_eq!(slopes, [Some(f64::from(i32::MAX))]);
    Ok(())
}

/// `i32::MIN - 1` does not exist, so the slope `n · x^(n-1)` must not compute `n - 1` in
/// `i32` (it would panic in debug builds and wrap to a wrong slope in release builds).
#[test]
fn powi_slope_at_the_smallest_exponent() -> Result<()> {
    let x = 1.000_000_000_1_f64;
    let (value, slopes) = gradients(&[(x, VAR)], |v| v[0].powi(i32::MIN))?;
    assert_eq!(value.to_bits(), black_box(x).powi(i32::MIN).to_bits());
    let formula = f64::from(i32::MIN) * x.powf(f64::from(i32::MIN) - 1.0);
    let slope = slopes[0].unwrap();
    // powi's repeated squaring may lose up to ~|n|·eps ≈ 5e-7 relative.
    assert!(
        (slope - formula).abs() <= 1e-5 * formula.abs(),
        "slope {slope:e}, formula {formula:e}"
    );
    Ok(())
}

#[test]
fn mul_add_has_slopes_a_x_and_one() -> Result<()> {
    let mul_add: Build = |v| v[0].mul_add(&v[1], &v[2]);
    let (value, slopes) = gradients(&[(2.0, VAR), (-3.0, VAR), (0.5, VAR)], mul_add)?;
    assert_eq!(value, -5.5);
    assert_eq!(slopes, [Some(-3.0), Some(2.0), Some(1.0)]);
    let (_, slopes) = gradients(&[(2.0, CONST), (-3.0, CONST), (0.5, VAR)], mul_add)?;
    assert_eq!(slopes, [None, None, Some(1.0)]);
    let (_, slopes) = gradients(&[(2.0, CONST), (-3.0, VAR), (0.5, CONST)], mul_add)?;
    assert_eq!(slopes, [None, Some(2.0), None]);
    // One rounding: 0.1 · 10 - 1 is not 0 when fused, unlike (0.1 * 10) - 1.
    let (value, _) = gradients(&[(0.1, VAR), (10.0, VAR), (-1.0, VAR)], mul_add)?;
    assert_eq!(value.to_bits(), 0.1f64.mul_add(10.0, -1.0).to_bits());
    assert_ne!(value, 0.1 * 10.0 - 1.0);
    Ok(())
}

// Domain errors.

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|x| x.to_bits()).collect()
}

/// Equal bits, or both NaN (whose payload is not specified).
fn same(actual: f64, expected: f64) -> bool {
    actual.to_bits() == expected.to_bits() || actual.is_nan() && expected.is_nan()
}

/// Checks that `build` on `leaves`, as variables and as constants alike, is refused with
/// a `NonFiniteResult` naming `operation`, `operands` and the `f64` result `expected`,
/// and that the refusal leaves the tape as it was.
fn assert_refused(
    operation: ScalarOperation,
    leaves: &[f64],
    operands: &[f64],
    expected: f64,
    build: &dyn Fn(&[Scalar]) -> Result<Scalar>,
) -> Result<()> {
    let what = format!("{operation}{leaves:?}");
    assert!(!expected.is_finite(), "{what}: f64 gives {expected}");
    for variable in [VAR, CONST] {
        let leaves = make_leaves(leaves.iter().map(|&x| (x, variable)))?;
        let nodes = tape_len();
        let error = build(&leaves).expect_err(&what);
        assert_eq!(
            tape_len(),
            nodes,
            "{what}: a refusal must not grow the tape"
        );
        assert_eq!(error.kind(), "non-finite-result", "{what}");
        let message = error.to_string();
        match error {
            ScalarAutodiffError::NonFiniteResult {
                operation: named,
                operands: named_operands,
                value,
                ..
            } => {
                assert_eq!(named, operation, "{what}");
                assert_eq!(bits(named_operands.as_slice()), bits(operands), "{what}");
                assert!(
                    same(value, expected),
                    "{what}: {value:?}, f64 gives {expected:?}"
                );
                let call = format!("{operation}({named_operands}) produced");
                assert!(message.starts_with(&call), "{message}");
            }
            other => panic!("{what}: unexpected {other:?}"),
        }
    }
    Ok(())
}

#[test]
fn non_finite_results_are_refused_naming_the_operation_and_operands() -> Result<()> {
    use ScalarOperation as Op;
    type OneOperand = (Op, f64, Unary, fn(f64) -> f64);
    let unary: [OneOperand; 19] = [
        (Op::Ln, -1.0, |v| v.ln(), f64::ln),
        (Op::Ln, 0.0, |v| v.ln(), f64::ln),
        (Op::Sqrt, -1.0, |v| v.sqrt(), f64::sqrt),
        (Op::Recip, 0.0, |v| v.recip(), f64::recip),
        (Op::Recip, -0.0, |v| v.recip(), f64::recip),
        (Op::Asin, 2.0, |v| v.asin(), f64::asin),
        (Op::Acos, -2.0, |v| v.acos(), f64::acos),
        (Op::Acosh, 0.5, |v| v.acosh(), f64::acosh),
        (Op::Atanh, 1.0, |v| v.atanh(), f64::atanh),
        (Op::Atanh, -1.0, |v| v.atanh(), f64::atanh),
        (Op::Log2, 0.0, |v| v.log2(), f64::log2),
        (Op::Log10, -1.0, |v| v.log10(), f64::log10),
        (Op::Ln1p, -1.0, |v| v.ln_1p(), f64::ln_1p),
        (Op::Ln1p, -2.0, |v| v.ln_1p(), f64::ln_1p),
        (Op::Exp, 1000.0, |v| v.exp(), f64::exp),
        (Op::Exp2, 1024.0, |v| v.exp2(), f64::exp2),
        (Op::ExpM1, 710.0, |v| v.exp_m1(), f64::exp_m1),
        (Op::Sinh, -711.0, |v| v.sinh(), f64::sinh),
        (Op::Cosh, -711.0, |v| v.cosh(), f64::cosh),
    ];
    for (operation, x, build, plain) in unary {
        assert_refused(operation, &[x], &[x], plain(x), &|v| build(&v[0]))?;
    }
    let max = f64::MAX;
    type TwoOperands = (Op, [f64; 2], Build, fn(f64, f64) -> f64);
    let binary: [TwoOperands; 13] = [
        (Op::Divide, [0.0, 0.0], |v| v[0].div(&v[1]), |a, b| a / b),
        (Op::Divide, [1.0, 0.0], |v| v[0].div(&v[1]), |a, b| a / b),
        (Op::Divide, [-1.0, 0.0], |v| v[0].div(&v[1]), |a, b| a / b),
        (Op::Log, [2.0, 1.0], |v| v[0].log(&v[1]), f64::log),
        (Op::Log, [1.0, 1.0], |v| v[0].log(&v[1]), f64::log),
        (Op::Log, [2.0, -3.0], |v| v[0].log(&v[1]), f64::log),
        (Op::Powf, [-8.0, 1.0 / 3.0], |v| v[0].powf(&v[1]), f64::powf),
        (Op::Powf, [0.0, -1.0], |v| v[0].powf(&v[1]), f64::powf),
        (Op::Powf, [10.0, 400.0], |v| v[0].powf(&v[1]), f64::powf),
        (
            Op::Multiply,
            [1e200, 1e200],
            |v| v[0].mul(&v[1]),
            |a, b| a * b,
        ),
        (Op::Add, [max, max], |v| v[0].add(&v[1]), |a, b| a + b),
        (Op::Subtract, [max, -max], |v| v[0].sub(&v[1]), |a, b| a - b),
        (Op::Hypot, [max, max], |v| v[0].hypot(&v[1]), f64::hypot),
    ];
    for (operation, [a, b], build, plain) in binary {
        assert_refused(operation, &[a, b], &[a, b], plain(a, b), &build)?;
    }
    // powi names its exponent as the second operand.
    assert_refused(Op::Powi, &[0.0], &[0.0, -1.0], f64::INFINITY, &|v| {
        v[0].powi(-1)
    })?;
    assert_refused(Op::Powi, &[1e200], &[1e200, 2.0], f64::INFINITY, &|v| {
        v[0].powi(2)
    })?;
    let fused = [1e200, 1e200, 1.0];
    assert_refused(Op::MulAdd, &fused, &fused, f64::INFINITY, &|v| {
        v[0].mul_add(&v[1], &v[2])
    })?;
    Ok(())
}

#[test]
fn non_finite_result_message_reads_like_the_call() -> Result<()> {
    // The message ends with where the operation was called.
    let (error, line) = (Scalar::variable(-1.0)?.ln().unwrap_err(), line!());
    let at = format!("at {}:{line}:50", file!());
    assert_eq!(
        error.to_string(),
        format!("ln(-1.0) produced non-finite value NaN {at}")
    );
    let (error, line) = (Scalar::constant(0.0)?.powi(-2).unwrap_err(), line!());
    let at = format!("at {}:{line}:49", file!());
    let message = format!("powi(0.0, -2.0) produced non-finite value inf {at}");
    assert_eq!(error.to_string(), message);
    Ok(())
}

/// A finite result whose derivative is not finite: a name, the operation, its leaves as
/// (value, is variable), the first tracked slot without a finite derivative, and that
/// derivative (compared by bits, or as NaN).
type BadSlope = (
    &'static str,
    Build,
    &'static [(f64, bool)],
    ScalarOperation,
    usize,
    f64,
);

#[test]
fn non_finite_derivatives_fail_backward_and_leave_every_gradient_unchanged() -> Result<()> {
    use ScalarOperation as Op;
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    #[rustfmt::skip]
    let cases: [BadSlope; 17] = [
        ("sqrt(0)", |v| v[0].sqrt(), &[(0.0, VAR)], Op::Sqrt, 0, inf),
        ("cbrt(0)", |v| v[0].cbrt(), &[(0.0, VAR)], Op::Cbrt, 0, inf),
        ("cbrt(-0)", |v| v[0].cbrt(), &[(-0.0, VAR)], Op::Cbrt, 0, inf),
        ("asin(1)", |v| v[0].asin(), &[(1.0, VAR)], Op::Asin, 0, inf),
        ("asin(-1)", |v| v[0].asin(), &[(-1.0, VAR)], Op::Asin, 0, inf),
        ("acos(-1)", |v| v[0].acos(), &[(-1.0, VAR)], Op::Acos, 0, -inf),
        ("acos(1)", |v| v[0].acos(), &[(1.0, VAR)], Op::Acos, 0, -inf),
        ("acosh(1)", |v| v[0].acosh(), &[(1.0, VAR)], Op::Acosh, 0, inf),
        ("0^0.5, base", |v| v[0].powf(&v[1]), &[(0.0, VAR), (0.5, CONST)], Op::Powf, 0, inf),
        ("0^0.5, both", |v| v[0].powf(&v[1]), &[(0.0, VAR), (0.5, VAR)], Op::Powf, 0, inf),
        ("0^0, exponent", |v| v[0].powf(&v[1]), &[(0.0, CONST), (0.0, VAR)], Op::Powf, 1, -inf),
        ("(-2)^3, both", |v| v[0].powf(&v[1]), &[(-2.0, VAR), (3.0, VAR)], Op::Powf, 1, nan),
        ("atan2(0, 0), both", |v| v[0].atan2(&v[1]), &[(0.0, VAR), (0.0, VAR)], Op::Atan2, 0, nan),
        ("atan2(0, 0), x", |v| v[0].atan2(&v[1]), &[(0.0, CONST), (0.0, VAR)], Op::Atan2, 1, nan),
        ("recip(1e-160): slope overflows", |v| v[0].recip(), &[(1e-160, VAR)], Op::Recip, 0, -inf),
        ("ln(1e-310): slope overflows", |v| v[0].ln(), &[(1e-310, VAR)], Op::Ln, 0, inf),
        ("1 / 1e-160: divisor slope overflows", |v| v[0].div(&v[1]), &[(1.0, VAR), (1e-160, VAR)], Op::Divide, 1, -inf),
    ];
    for (name, build, values, expected_operation, expected_operand, expected_derivative) in cases {
        let leaves = make_leaves(values.iter().copied())?;
        let scale = Scalar::variable(1.5)?;
        // Give every tracked leaf a non-trivial stored gradient first.
        let warm = leaves
            .iter()
            .try_fold(scale.clone(), |sum, leaf| sum.add(leaf))?;
        warm.backward_with_seed(0.375)?;
        warm.backward_with_seed(-1.0 / 3.0)?;
        drop(warm);

        // Topology: the leaves, `scale`, the failing node, the output.
        let bad = build(&leaves)?;
        let output = bad.mul(&scale)?;
        let nodes: Vec<&Scalar> = leaves.iter().chain([&scale, &bad, &output]).collect();
        let stored = || -> Vec<Option<u64>> {
            nodes
                .iter()
                .map(|node| node.gradient().map(f64::to_bits))
                .collect()
        };
        let before = stored();
        assert!(
            before.iter().flatten().any(|&bits| bits != 0),
            "{name}: warm-up"
        );

        let error = output.backward().expect_err(name);
        assert_eq!(error.kind(), "non-finite-derivative", "{name}");
        assert_eq!(stored(), before, "{name}: a failed pass must store nothing");
        let message = error.to_string();
        match error {
            ScalarAutodiffError::NonFiniteDerivative {
                node,
                operation,
                operand,
                operands,
                derivative,
                ..
            } => {
                assert_eq!(node, leaves.len() + 1, "{name}: topology index");
                assert_eq!(operation, expected_operation, "{name}");
                assert_eq!(operand, expected_operand, "{name}: operand slot");
                let values: Vec<f64> = values.iter().map(|&(x, _)| x).collect();
                assert_eq!(bits(operands.as_slice()), bits(&values), "{name}");
                assert!(
                    same(derivative, expected_derivative),
                    "{name}: derivative {derivative:?}, expected {expected_derivative:?}"
                );
                let call = format!("{operation}({operands}) at topology node {node}");
                assert!(message.starts_with(&call), "{message}");
            }
            other => panic!("{name}: unexpected {other:?}"),
        }

        // The graph is still usable: a pass that avoids the bad node succeeds.
        let stored_scale = scale.gradient().expect("tracked");
        scale.mul(&scale)?.backward()?;
        assert_eq!(scale.gradient(), Some(stored_scale + 3.0), "{name}");
    }
    Ok(())
}

/// The same non-differentiable points are harmless when the operand is untracked: the
/// pass never asks for a slope that nothing receives.
#[test]
fn non_differentiable_points_on_untracked_operands_are_fine() -> Result<()> {
    let x = Scalar::variable(2.0)?;
    let zero = Scalar::constant(0.0)?;
    let one = Scalar::constant(1.0)?;

    // sqrt(0) · x: d/dx = sqrt(0) = 0.
    zero.sqrt()?.mul(&x)?.backward()?;
    assert_eq!(x.gradient(), Some(0.0));
    x.zero_grad();
    // cbrt(0), asin(1), acos(-1), acosh(1), atan2(0, 0) as constant factors or terms.
    let factor = zero.cbrt()?.add(&one.asin()?)?.add(&one.neg()?.acos()?)?;
    let factor = factor.add(&one.acosh()?)?.add(&zero.atan2(&zero)?)?;
    factor.mul(&x)?.backward()?;
    assert_eq!(x.gradient(), Some(FRAC_PI_2 + PI));
    x.zero_grad();
    // A detached copy of a variable at 0 is untracked too.
    let at_zero = Scalar::variable(0.0)?;
    at_zero.detach()?.sqrt()?.add(&x)?.backward()?;
    assert_eq!((x.gradient(), at_zero.gradient()), (Some(1.0), Some(0.0)));
    x.zero_grad();

    // x^2 at x = 0 with a constant exponent: the exponent slope (0 · ln 0) is never needed.
    let base = Scalar::variable(0.0)?;
    base.powf(&Scalar::constant(2.0)?)?.backward()?;
    assert_eq!(base.gradient(), Some(0.0));
    // 0^y with a constant base and a tracked exponent: exponent slope 0 where the result is 0.
    let exponent = Scalar::variable(0.5)?;
    zero.powf(&exponent)?.backward()?;
    assert_eq!(exponent.gradient(), Some(0.0));
    // (-2)^y with a tracked exponent has no slope, but (-2)^3 · x needs none.
    Scalar::constant(-2.0)?
        .powf(&Scalar::constant(3.0)?)?
        .mul(&x)?
        .backward()?;
    assert_eq!(x.gradient(), Some(-8.0));
    Ok(())
}

/// A composition of many operations, each input used several times, against central
/// differences in both inputs.
#[test]
fn a_composition_of_many_operations_matches_central_differences() -> Result<()> {
    fn plain(x: f64, y: f64) -> f64 {
        let a = (x * y).sin() + x.powi(2).ln_1p() * y.atan2(x);
        let b = x.hypot(y).sqrt() - (x / y).tanh() * y.abs().cbrt();
        let c = x.exp2().mul_add(0.25, y.cosh()).ln() - (x * x + 1.0).powf(y.sin());
        let d = x.atan().asinh() * (0.5 * y).tanh().atanh() + x.max(y) / x.min(y).exp();
        let e = (y * y + 2.0).log(x * x + 3.0) + (x - y).exp_m1().recip() - (-y).log10();
        a - b + c * d + e * x.cos() + (1.0 + x * x).acosh().log2()
    }
    fn graph(x: &Scalar, y: &Scalar) -> Result<Scalar> {
        let k = Scalar::constant;
        let a = x
            .mul(y)?
            .sin()?
            .add(&x.powi(2)?.ln_1p()?.mul(&y.atan2(x)?)?)?;
        let b = x
            .hypot(y)?
            .sqrt()?
            .sub(&x.div(y)?.tanh()?.mul(&y.abs()?.cbrt()?)?)?;
        let c = x.exp2()?.mul_add(&k(0.25)?, &y.cosh()?)?.ln()?;
        let c = c.sub(&x.mul(x)?.add(&k(1.0)?)?.powf(&y.sin()?)?)?;
        let d = x.atan()?.asinh()?.mul(&k(0.5)?.mul(y)?.tanh()?.atanh()?)?;
        let d = d.add(&x.max(y)?.div(&x.min(y)?.exp()?)?)?;
        let e = y.mul(y)?.add(&k(2.0)?)?.log(&x.mul(x)?.add(&k(3.0)?)?)?;
        let e = e
            .add(&x.sub(y)?.exp_m1()?.recip()?)?
            .sub(&y.neg()?.log10()?)?;
        let last = k(1.0)?.add(&x.mul(x)?)?.acosh()?.log2()?;
        a.sub(&b)?
            .add(&c.mul(&d)?)?
            .add(&e.mul(&x.cos()?)?)?
            .add(&last)
    }
    for (x0, y0) in [(0.7, -1.3), (-1.2, -0.4), (2.5, -0.8), (0.3, -3.1)] {
        let (x, y) = (Scalar::variable(x0)?, Scalar::variable(y0)?);
        let output = graph(&x, &y)?;
        let value = plain(black_box(x0), black_box(y0));
        assert_eq!(
            output.value().to_bits(),
            value.to_bits(),
            "value at ({x0}, {y0})"
        );
        output.backward()?;
        let along_x = stencil(|t| plain(t, y0), x0, 0.1);
        let along_y = stencil(|t| plain(x0, t), y0, 0.1);
        let (dx, dy) = (x.gradient().unwrap(), y.gradient().unwrap());
        let floor = value.abs() / 0.1;
        assert!(
            close(dx, along_x, STENCIL_TOLERANCE, floor),
            "d/dx at ({x0}, {y0}): {dx:e} vs {along_x:e}"
        );
        assert!(
            close(dy, along_y, STENCIL_TOLERANCE, floor),
            "d/dy at ({x0}, {y0}): {dy:e} vs {along_y:e}"
        );
    }
    Ok(())
}
