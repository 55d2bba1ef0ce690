//! Forward mode: a value with its tangent, differentiated through the one table of
//! operations.
//!
//! A [`Dual`] carries a primal value and its directional derivative along a tangent. Every
//! operation computes its value with [`ScalarOperation::apply`] and its tangent as the sum
//! of its local derivatives ([`ScalarOperation::slope`]) times the operands' tangents, in
//! slot order. That is forward mode for `name_jvp` ([`Forward`] runs a generated body on
//! duals, no tape), and, since the local-derivative formulas are themselves written on
//! [`Real`], a formula run on duals gives the derivative of a local derivative: what the
//! second-order pass of `name_hvp` and `name_hessian` needs, with no second table.

use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

use crate::error::ScalarAutodiffError;
use crate::operation::{Operands, ScalarOperation};

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// The numbers the local-derivative formulas are written on: `f64`, and [`Dual`].
pub(crate) trait Real:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
{
    /// A constant.
    fn lift(value: f64) -> Self;
    /// The primal value, for the formulas' branches.
    fn primal(self) -> f64;
    /// The number `value` whose tangent is `self`'s times `slope` (0 where `self`'s is 0,
    /// even for an infinite `slope`): a convention's value with the derivative it has
    /// along `self` alone.
    fn along(self, value: f64, slope: f64) -> Self;
    /// `op` on `operands` (zeros past its arity).
    fn call(op: ScalarOperation, operands: [Self; 3], exponent: i32) -> Self;

    /// `self.powi(n)`.
    #[inline(always)]
    fn powi(self, n: i32) -> Self {
        Self::call(
            ScalarOperation::Powi,
            [self, Self::lift(0.0), Self::lift(0.0)],
            n,
        )
    }
    /// `self.powf(y)`.
    #[inline(always)]
    fn powf(self, y: Self) -> Self {
        Self::call(ScalarOperation::Powf, [self, y, Self::lift(0.0)], 0)
    }
    /// `self.hypot(y)`.
    #[inline(always)]
    fn hypot(self, y: Self) -> Self {
        Self::call(ScalarOperation::Hypot, [self, y, Self::lift(0.0)], 0)
    }
    /// A unary operation.
    #[inline(always)]
    fn unary(self, op: ScalarOperation) -> Self {
        Self::call(op, [self, Self::lift(0.0), Self::lift(0.0)], 0)
    }
    /// `self.sqrt()`.
    #[inline(always)]
    fn sqrt(self) -> Self {
        self.unary(ScalarOperation::Sqrt)
    }
    /// `self.exp()`.
    #[inline(always)]
    fn exp(self) -> Self {
        self.unary(ScalarOperation::Exp)
    }
    /// `self.ln()`.
    #[inline(always)]
    fn ln(self) -> Self {
        self.unary(ScalarOperation::Ln)
    }
    /// `self.sin()`.
    #[inline(always)]
    fn sin(self) -> Self {
        self.unary(ScalarOperation::Sin)
    }
    /// `self.cos()`.
    #[inline(always)]
    fn cos(self) -> Self {
        self.unary(ScalarOperation::Cos)
    }
    /// `self.sinh()`.
    #[inline(always)]
    fn sinh(self) -> Self {
        self.unary(ScalarOperation::Sinh)
    }
    /// `self.cosh()`.
    #[inline(always)]
    fn cosh(self) -> Self {
        self.unary(ScalarOperation::Cosh)
    }
}

impl Real for f64 {
    #[inline(always)]
    fn lift(value: f64) -> f64 {
        value
    }
    #[inline(always)]
    fn primal(self) -> f64 {
        self
    }
    #[inline(always)]
    fn along(self, value: f64, _slope: f64) -> f64 {
        value
    }
    #[inline(always)]
    fn call(op: ScalarOperation, operands: [f64; 3], exponent: i32) -> f64 {
        op.apply(operands, exponent)
    }
}

/// A value and its tangent (its derivative along one direction), and whether it depends
/// on a differentiated input at all: the forward-mode number of `name_jvp`.
///
/// Hidden (`__private`): generated code makes and reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dual {
    /// The primal value.
    pub value: f64,
    /// The directional derivative.
    pub tangent: f64,
    /// Whether some differentiated input reaches it: its local derivatives are then
    /// checked, as the reverse pass checks a tracked edge's, whatever the tangent.
    pub tracked: bool,
}

impl Dual {
    /// A constant: no tangent, not tracked.
    #[inline]
    pub fn constant(value: f64) -> Self {
        Dual {
            value,
            tangent: 0.0,
            tracked: false,
        }
    }

    /// A differentiated input with its tangent.
    #[inline]
    pub fn variable(value: f64, tangent: f64) -> Self {
        Dual {
            value,
            tangent,
            tracked: true,
        }
    }

    /// `op` on `operands` with the tangent of the chain rule; no check.
    #[inline(always)]
    fn eval(op: ScalarOperation, a: [Dual; 3], exponent: i32) -> (Dual, [f64; 3]) {
        let primals = a.map(|operand| operand.value);
        let value = op.apply(primals, exponent);
        let mut slopes = [0.0; 3];
        let mut tangent = 0.0;
        let mut tracked = false;
        for slot in 0..op.arity() {
            if a[slot].tracked {
                slopes[slot] = op.slope(slot, primals, value, exponent);
                tangent += slopes[slot] * a[slot].tangent;
                tracked = true;
            }
        }
        let dual = Dual {
            value,
            tangent,
            tracked,
        };
        (dual, slopes)
    }

    /// `op` on `operands`, checked like the reverse pass checks it: a non-finite value, a
    /// tracked operand's non-finite local derivative, or a non-finite tangent is an error
    /// naming the operation.
    ///
    /// Always inlined: every caller names its operation, and the `match`es of `eval` then
    /// fold to that one arm. Out of line, LLVM hoists the arms' `sin`, `cos`, `ln` and
    /// `exp` (speculatable intrinsics) above the `match`, and every addition paid for them.
    #[inline(always)]
    #[track_caller]
    pub(crate) fn checked(op: ScalarOperation, a: [Dual; 3], exponent: i32) -> Result<Dual> {
        let (dual, slopes) = Self::eval(op, a, exponent);
        if dual.value.is_finite() && dual.tangent.is_finite() {
            return Ok(dual);
        }
        Err(refused(op, a, exponent, dual, slopes).at(std::panic::Location::caller()))
    }
}

/// The error of [`Dual::checked`], out of line.
#[cold]
#[inline(never)]
pub(crate) fn refused(
    op: ScalarOperation,
    a: [Dual; 3],
    exponent: i32,
    dual: Dual,
    slopes: [f64; 3],
) -> ScalarAutodiffError {
    let primals = a.map(|operand| operand.value);
    let count = op.arity();
    if !dual.value.is_finite() {
        return ScalarAutodiffError::non_finite_result(op, &primals[..count], exponent, dual.value);
    }
    let operands = operands(op, primals, exponent);
    match (0..count).find(|&slot| a[slot].tracked && !slopes[slot].is_finite()) {
        Some(operand) => ScalarAutodiffError::NonFiniteSlope {
            operation: op,
            operands,
            operand,
            derivative: slopes[operand],
            location: None,
        },
        None => ScalarAutodiffError::NonFiniteTangent {
            operation: op,
            operands,
            tangent: dual.tangent,
            location: None,
        },
    }
}

/// The operand values as an error reports them (`powi` adds its exponent).
pub(crate) fn operands(op: ScalarOperation, mut values: [f64; 3], exponent: i32) -> Operands {
    if op == ScalarOperation::Powi {
        values[1] = f64::from(exponent);
        return Operands::new(values, 2);
    }
    Operands::new(values, op.arity())
}

impl Real for Dual {
    #[inline(always)]
    fn lift(value: f64) -> Dual {
        Dual {
            value,
            tangent: 0.0,
            tracked: false,
        }
    }
    #[inline(always)]
    fn primal(self) -> f64 {
        self.value
    }
    #[inline(always)]
    fn along(self, value: f64, slope: f64) -> Dual {
        let tangent = match self.tangent {
            0.0 => 0.0,
            tangent => tangent * slope,
        };
        Dual {
            value,
            tangent,
            tracked: self.tracked,
        }
    }
    #[inline(always)]
    fn call(op: ScalarOperation, operands: [Dual; 3], exponent: i32) -> Dual {
        Self::eval(op, operands, exponent).0
    }
}

macro_rules! arithmetic {
    ($($trait:ident $method:ident $op:ident;)*) => {$(
        impl $trait for Dual {
            type Output = Dual;
            #[inline(always)]
            fn $method(self, other: Dual) -> Dual {
                Dual::call(ScalarOperation::$op, [self, other, Dual::lift(0.0)], 0)
            }
        }
    )*};
}

arithmetic! {
    Add add Add;
    Sub sub Subtract;
    Mul mul Multiply;
    Div div Divide;
}

impl Neg for Dual {
    type Output = Dual;
    #[inline(always)]
    fn neg(self) -> Dual {
        self.unary(ScalarOperation::Negate)
    }
}

/// Sums of adjoints in `name_hvp`'s sweeps: plain (value, tangent) sums, whose values are
/// the `f64` sums' bits. (An untracked term's tangent is 0: the table's sum, which checks
/// which term is tracked, would add the same numbers.)
impl AddAssign for Dual {
    #[inline(always)]
    fn add_assign(&mut self, other: Dual) {
        *self = Dual {
            value: self.value + other.value,
            tangent: self.tangent + other.tangent,
            tracked: self.tracked | other.tracked,
        };
    }
}

impl Dual {
    /// The product of an adjoint and a local derivative in `name_hvp`'s sweeps: plain
    /// (value, tangent) arithmetic, the value the `f64` product's bits (see
    /// [`AddAssign`]).
    #[inline(always)]
    pub fn times(self, other: Dual) -> Dual {
        Dual {
            value: self.value * other.value,
            tangent: self.value * other.tangent + self.tangent * other.value,
            tracked: self.tracked | other.tracked,
        }
    }

    /// Whether the value and the tangent are both finite.
    #[inline(always)]
    pub fn is_finite(self) -> bool {
        self.value.is_finite() && self.tangent.is_finite()
    }
}

/// The value (a primal read in data code of `name_hvp`'s sweeps).
impl From<Dual> for f64 {
    #[inline(always)]
    fn from(dual: Dual) -> f64 {
        dual.value
    }
}

/// Runs a generated body on [`Dual`]s: the backend of `name_jvp`. Nothing is recorded.
#[derive(Clone, Copy, Debug, Default)]
pub struct Forward;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation's tangent against a central difference of its value, at points
    /// inside its domain: the table's first derivatives as forward mode uses them.
    #[test]
    fn tangents_match_central_differences() {
        use ScalarOperation as Op;
        let cases: &[(Op, [f64; 3])] = &[
            (Op::Add, [0.3, -1.2, 0.0]),
            (Op::Subtract, [0.3, -1.2, 0.0]),
            (Op::Multiply, [0.3, -1.2, 0.0]),
            (Op::Divide, [0.3, -1.2, 0.0]),
            (Op::Powf, [1.3, 0.7, 0.0]),
            (Op::Log, [2.5, 3.0, 0.0]),
            (Op::Atan2, [0.4, -0.9, 0.0]),
            (Op::Hypot, [0.4, -0.9, 0.0]),
            (Op::MulAdd, [0.4, -0.9, 1.5]),
            (Op::Tanh, [0.4, 0.0, 0.0]),
            (Op::Asin, [0.4, 0.0, 0.0]),
            (Op::Acosh, [1.4, 0.0, 0.0]),
            (Op::Cbrt, [0.4, 0.0, 0.0]),
            (Op::Tan, [0.4, 0.0, 0.0]),
        ];
        let direction = [0.7, -0.4, 0.25];
        for &(op, at) in cases {
            let a = [0, 1, 2].map(|slot| Dual::variable(at[slot], direction[slot]));
            let dual = Dual::checked(op, a, 0).unwrap();
            let h = 1e-6;
            let shifted = |sign: f64| {
                let moved = [0, 1, 2].map(|slot| at[slot] + sign * h * direction[slot]);
                op.apply(moved, 0)
            };
            let central = (shifted(1.0) - shifted(-1.0)) / (2.0 * h);
            assert!(
                (dual.tangent - central).abs() < 1e-7 * (1.0 + central.abs()),
                "{op}: {} against {central}",
                dual.tangent
            );
        }
    }

    /// `slope` on duals: the derivative of a local derivative, against a central
    /// difference of the slope on `f64`.
    #[test]
    fn second_derivatives_match_central_differences() {
        use ScalarOperation as Op;
        let unary = [
            (Op::Sqrt, 1.7),
            (Op::Cbrt, 1.7),
            (Op::Exp, 0.3),
            (Op::Exp2, 0.3),
            (Op::ExpM1, 0.3),
            (Op::Ln, 1.7),
            (Op::Ln1p, 0.7),
            (Op::Log2, 1.7),
            (Op::Log10, 1.7),
            (Op::Sin, 0.3),
            (Op::Cos, 0.3),
            (Op::Tan, 0.3),
            (Op::Asin, 0.3),
            (Op::Acos, 0.3),
            (Op::Atan, 0.3),
            (Op::Sinh, 0.3),
            (Op::Cosh, 0.3),
            (Op::Tanh, 0.3),
            (Op::Asinh, 0.3),
            (Op::Acosh, 1.7),
            (Op::Atanh, 0.3),
            (Op::Recip, 1.7),
            (Op::Powi, 1.7),
        ];
        for (op, x) in unary {
            let exponent = 3;
            let slope_at = |x: f64| {
                let value = op.apply([x, 0.0, 0.0], exponent);
                op.slope(0, [x, 0.0, 0.0], value, exponent)
            };
            let dual = Dual::variable(x, 1.0);
            let zero = Dual::lift(0.0);
            let value = Dual::call(op, [dual, zero, zero], exponent);
            let second = op.slope(0, [dual, zero, zero], value, exponent).tangent;
            let h = 1e-5;
            let central = (slope_at(x + h) - slope_at(x - h)) / (2.0 * h);
            assert!(
                (second - central).abs() < 1e-6 * (1.0 + central.abs()),
                "{op}: {second} against {central}"
            );
        }
    }

    /// `powf`'s base slope at a zero exponent is 0 for every base, but its derivative
    /// along the exponent is `1/x` (`∂²x^y/∂x∂y` at `y = 0`), and 0 along the base.
    #[test]
    fn powf_base_slope_at_a_zero_exponent_has_the_cross_derivative() {
        let op = ScalarOperation::Powf;
        let second = |x: Dual, y: Dual| {
            let zero = Dual::lift(0.0);
            let value = Dual::call(op, [x, y, zero], 0);
            op.slope(0, [x, y, zero], value, 0)
        };
        let along_y = second(Dual::variable(3.0, 0.0), Dual::variable(0.0, 1.0));
        assert_eq!((along_y.value, along_y.tangent), (0.0, 1.0 / 3.0));
        let along_x = second(Dual::variable(3.0, 1.0), Dual::constant(0.0));
        assert_eq!((along_x.value, along_x.tangent), (0.0, 0.0));
        // At the origin with a constant exponent: x^0 is 1 there too, no NaN.
        let origin = second(Dual::variable(0.0, 1.0), Dual::constant(0.0));
        assert_eq!((origin.value, origin.tangent), (0.0, 0.0));
    }
}
