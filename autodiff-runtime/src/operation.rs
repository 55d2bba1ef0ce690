//! The operations a node can record, their stable names, and their local derivatives.

use std::fmt;

use crate::custom::CustomOp;
use crate::dual::Real;

/// The operation that produced a graph node.
///
/// `as_str` gives a stable lower-case name (the `f64` method's name where there is one),
/// used in the ledger, in error messages and in Graphviz output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ScalarOperation {
    /// A tracked leaf made by [`Scalar::variable`](crate::Scalar::variable).
    Variable,
    /// An untracked leaf made by [`Scalar::constant`](crate::Scalar::constant).
    Constant,
    /// An untracked leaf made by [`Scalar::detach`](crate::Scalar::detach).
    Detached,
    /// `a + b`
    Add,
    /// `a - b`
    Subtract,
    /// `a * b`
    Multiply,
    /// `a / b`
    Divide,
    /// `-a`
    Negate,
    /// `let v = a;` in a `#[differentiable]` body: a node of its own with `a`'s value and
    /// slope 1, so that what reads `v` sums apart and reaches `a` as one term.
    Copy,
    /// `1 / a`
    Recip,
    /// `a.powi(n)` with an integer exponent that is not a graph node.
    Powi,
    /// `a.powf(b)`
    Powf,
    /// `a.sqrt()`
    Sqrt,
    /// `a.cbrt()`
    Cbrt,
    /// `a.exp()`
    Exp,
    /// `a.exp2()`
    Exp2,
    /// `a.exp_m1()`
    ExpM1,
    /// `a.ln()`
    Ln,
    /// `a.ln_1p()`
    Ln1p,
    /// `a.log(base)`
    Log,
    /// `a.log2()`
    Log2,
    /// `a.log10()`
    Log10,
    /// `a.sin()`
    Sin,
    /// `a.cos()`
    Cos,
    /// `a.tan()`
    Tan,
    /// `a.asin()`
    Asin,
    /// `a.acos()`
    Acos,
    /// `a.atan()`
    Atan,
    /// `a.atan2(b)`
    Atan2,
    /// `a.sinh()`
    Sinh,
    /// `a.cosh()`
    Cosh,
    /// `a.tanh()`
    Tanh,
    /// `a.asinh()`
    Asinh,
    /// `a.acosh()`
    Acosh,
    /// `a.atanh()`
    Atanh,
    /// `a.abs()`
    Abs,
    /// `a.max(b)`
    Max,
    /// `a.min(b)`
    Min,
    /// `a.hypot(b)`
    Hypot,
    /// `a.mul_add(b, c)`, that is `a * b + c` with one rounding.
    MulAdd,
    /// An operation with a derivative rule of the user's (a [`CustomRule`]), named by it.
    ///
    /// [`CustomRule`]: crate::CustomRule
    Custom(CustomOp),
}

impl ScalarOperation {
    /// A stable, locale-neutral lower-case name, e.g. `"mul"`, `"exp_m1"`, `"mul_add"`;
    /// a custom rule's own name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Variable => "variable",
            Self::Constant => "constant",
            Self::Detached => "detached",
            Self::Add => "add",
            Self::Subtract => "sub",
            Self::Multiply => "mul",
            Self::Divide => "div",
            Self::Negate => "neg",
            Self::Copy => "copy",
            Self::Recip => "recip",
            Self::Powi => "powi",
            Self::Powf => "powf",
            Self::Sqrt => "sqrt",
            Self::Cbrt => "cbrt",
            Self::Exp => "exp",
            Self::Exp2 => "exp2",
            Self::ExpM1 => "exp_m1",
            Self::Ln => "ln",
            Self::Ln1p => "ln_1p",
            Self::Log => "log",
            Self::Log2 => "log2",
            Self::Log10 => "log10",
            Self::Sin => "sin",
            Self::Cos => "cos",
            Self::Tan => "tan",
            Self::Asin => "asin",
            Self::Acos => "acos",
            Self::Atan => "atan",
            Self::Atan2 => "atan2",
            Self::Sinh => "sinh",
            Self::Cosh => "cosh",
            Self::Tanh => "tanh",
            Self::Asinh => "asinh",
            Self::Acosh => "acosh",
            Self::Atanh => "atanh",
            Self::Abs => "abs",
            Self::Max => "max",
            Self::Min => "min",
            Self::Hypot => "hypot",
            Self::MulAdd => "mul_add",
            Self::Custom(op) => op.name(),
        }
    }

    /// How many graph operands the operation records (0 for leaves, 3 for `mul_add`).
    pub const fn arity(self) -> usize {
        match self {
            Self::Variable | Self::Constant | Self::Detached => 0,
            Self::Add
            | Self::Subtract
            | Self::Multiply
            | Self::Divide
            | Self::Powf
            | Self::Log
            | Self::Atan2
            | Self::Max
            | Self::Min
            | Self::Hypot => 2,
            Self::MulAdd => 3,
            Self::Custom(op) => op.arity(),
            _ => 1,
        }
    }

    /// The value of the operation on `a` (the operand values in slot order, zeros past its
    /// arity) with `exponent` for `powi`: the one formula behind [`Scalar`]'s methods, the
    /// trace of `name_grad`'s checked path and its compiled sweeps.
    ///
    /// [`Scalar`]: crate::Scalar
    #[inline(always)]
    pub(crate) fn apply(self, a: [f64; 3], exponent: i32) -> f64 {
        let [x, y, z] = a;
        match self {
            Self::Variable | Self::Constant | Self::Detached => x,
            Self::Add => x + y,
            Self::Subtract => x - y,
            Self::Multiply => x * y,
            Self::Divide => x / y,
            Self::Negate => -x,
            Self::Copy => x,
            Self::Recip => x.recip(),
            Self::Powi => x.powi(exponent),
            Self::Powf => powf(x, y),
            Self::Sqrt => x.sqrt(),
            Self::Cbrt => x.cbrt(),
            Self::Exp => x.exp(),
            Self::Exp2 => x.exp2(),
            Self::ExpM1 => x.exp_m1(),
            Self::Ln => x.ln(),
            Self::Ln1p => x.ln_1p(),
            Self::Log => x.log(y),
            Self::Log2 => x.log2(),
            Self::Log10 => x.log10(),
            Self::Sin => x.sin(),
            Self::Cos => x.cos(),
            Self::Tan => x.tan(),
            Self::Asin => x.asin(),
            Self::Acos => x.acos(),
            Self::Atan => x.atan(),
            Self::Atan2 => x.atan2(y),
            Self::Sinh => x.sinh(),
            Self::Cosh => x.cosh(),
            Self::Tanh => x.tanh(),
            Self::Asinh => x.asinh(),
            Self::Acosh => x.acosh(),
            Self::Atanh => x.atanh(),
            Self::Abs => x.abs(),
            Self::Max => max(x, y),
            Self::Min => min(x, y),
            Self::Hypot => x.hypot(y),
            Self::MulAdd => x.mul_add(y, z),
            // Recorded with the rule's own function (`custom::evaluate`), never through here.
            Self::Custom(op) => op.rule().map_or(f64::NAN, |rule| rule.value(a)),
        }
    }

    /// What the local derivatives of the `tracked` operand slots read: which operand
    /// values, and the result. A compiled sweep keeps exactly these for its reverse half
    /// (a test below checks the table against the formulas).
    #[inline(always)]
    pub(crate) const fn reads(self, tracked: [bool; 3]) -> Reads {
        let [a, b, _] = tracked;
        let (operands, value) = match self {
            Self::Variable | Self::Constant | Self::Detached => ([false; 3], false),
            Self::Add | Self::Subtract | Self::Negate | Self::Copy => ([false; 3], false),
            Self::Multiply => ([b, a, false], false),
            Self::Divide => ([false, a || b, false], b),
            Self::Recip | Self::Sqrt | Self::Cbrt | Self::Exp | Self::Exp2 | Self::Tan => {
                ([false; 3], true)
            }
            Self::Tanh => ([false; 3], true),
            // `i32::MIN` divides the result by the operand.
            Self::Powi => ([true, false, false], true),
            Self::ExpM1
            | Self::Ln
            | Self::Ln1p
            | Self::Log2
            | Self::Log10
            | Self::Sin
            | Self::Cos
            | Self::Asin
            | Self::Acos
            | Self::Atan
            | Self::Sinh
            | Self::Cosh
            | Self::Asinh
            | Self::Acosh
            | Self::Atanh
            | Self::Abs => ([true, false, false], false),
            Self::Powf => ([true, a, false], b),
            Self::Log | Self::Atan2 | Self::Max | Self::Min => ([true, true, false], false),
            Self::Hypot => ([true, true, false], true),
            Self::MulAdd => ([b, a, false], false),
            // Compiled sweeps do not record custom rules.
            Self::Custom(_) => ([true; 3], true),
        };
        Reads { operands, value }
    }

    /// Whether a non-finite operand in `slot` always makes the result non-finite, whatever
    /// the other operands hold (`inf * 0` is NaN, `inf + -inf` is NaN). A compiled sweep
    /// checks such an operand through the result instead of on its own: one check where
    /// the trace makes two. False where some value absorbs it: `x / inf` is 0,
    /// `exp(-inf)` is 0, `tanh(inf)` is 1, `max(-inf, 1)` is 1, `powi(inf, 0)` is 1.
    /// A test tries every operation at infinities and NaN: the table is exact.
    #[inline(always)]
    pub const fn propagates(self, slot: usize) -> bool {
        match self {
            Self::Add | Self::Subtract | Self::Multiply | Self::MulAdd | Self::Hypot => slot < 3,
            Self::Divide | Self::Log => slot == 0,
            Self::Negate
            | Self::Copy
            | Self::Abs
            | Self::Sqrt
            | Self::Cbrt
            | Self::Ln
            | Self::Ln1p
            | Self::Log2
            | Self::Log10
            | Self::Sin
            | Self::Cos
            | Self::Tan
            | Self::Asin
            | Self::Acos
            | Self::Sinh
            | Self::Cosh
            | Self::Asinh
            | Self::Acosh
            | Self::Atanh => slot == 0,
            _ => false,
        }
    }

    /// The derivative of a unary operation: the common ones inline, the rest through
    /// [`local_derivative`](Self::local_derivative).
    #[inline(always)]
    pub(crate) fn unary_derivative(self, x: f64, value: f64, exponent: i32) -> f64 {
        match self {
            Self::Negate => -1.0,
            Self::Copy => 1.0,
            Self::Exp => value,
            Self::Tanh => 1.0 - value * value,
            Self::Sqrt => 0.5 / value,
            Self::Ln => 1.0 / x,
            _ => self.local_derivative(0, [x, 0.0, 0.0], value, exponent),
        }
    }

    /// The derivatives of a binary operation with respect to both operands; the common
    /// ones without dispatching twice. `tracked` says which slopes are needed.
    #[inline]
    pub(crate) fn binary_derivatives(
        self,
        x: f64,
        y: f64,
        value: f64,
        tracked: [bool; 2],
    ) -> [f64; 2] {
        match self {
            Self::Add => [1.0, 1.0],
            Self::Subtract => [1.0, -1.0],
            Self::Multiply => [y, x],
            Self::Divide => [1.0 / y, -(value / y)],
            // As `slope` has them (0.5 to each at a tie): a ReLU's `max` is common enough
            // not to go through the whole table twice.
            Self::Max | Self::Min if x == y => [0.5, 0.5],
            Self::Max => [pick_f64(x > y, 1.0, 0.0), pick_f64(y > x, 1.0, 0.0)],
            Self::Min => [pick_f64(x < y, 1.0, 0.0), pick_f64(y < x, 1.0, 0.0)],
            _ => {
                let slope = |slot: usize| match tracked[slot] {
                    true => self.local_derivative(slot, [x, y, 0.0], value, 0),
                    false => 0.0,
                };
                [slope(0), slope(1)]
            }
        }
    }

    /// The derivative of the result with respect to operand `slot`, from forward values.
    ///
    /// `a` holds the operand values, `value` the result, `exponent` the `powi` exponent.
    /// Conventions where the derivative is undefined follow PyTorch: `abs` has slope 0 at 0,
    /// `max`/`min` split a tie evenly (0.5 to each operand), `hypot` has slope 0 at the
    /// origin, and `powf`'s exponent slope is 0 where the result is 0. Elsewhere a point
    /// without a derivative gives a non-finite number, which the reverse pass rejects.
    #[inline]
    pub(crate) fn local_derivative(
        self,
        slot: usize,
        a: [f64; 3],
        value: f64,
        exponent: i32,
    ) -> f64 {
        self.slope(slot, a, value, exponent)
    }

    /// [`local_derivative`](Self::local_derivative) on any [`Real`]: on `f64` the slope
    /// itself, on a [`Dual`](crate::dual::Dual) the slope and its own directional
    /// derivative, which second-order passes need. One table of formulas for both: the
    /// operations inside a formula (`x.cos()` for `sin`) differentiate themselves through
    /// this same table.
    // Not inlined in debug builds: `dual_slope` pastes it once per operation, and a debug
    // frame holding every copy's locals overflowed a test thread's stack.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn slope<T: Real>(self, slot: usize, a: [T; 3], value: T, exponent: i32) -> T {
        let [x, y, _] = a;
        let first = slot == 0;
        let c = T::lift;
        let pick = |condition: bool, yes: T, no: T| if condition { yes } else { no };
        match self {
            Self::Variable | Self::Constant | Self::Detached => c(0.0),
            Self::Add => c(1.0),
            Self::Subtract => c(pick_f64(first, 1.0, -1.0)),
            Self::Multiply => pick(first, y, x),
            Self::Divide if first => c(1.0) / y,
            Self::Divide => -(value / y),
            Self::Negate => c(-1.0),
            Self::Copy => c(1.0),
            Self::Recip => -(value * value),
            Self::Powi => match exponent.checked_sub(1) {
                _ if exponent == 0 => c(0.0),
                Some(lower) => c(f64::from(exponent)) * x.powi(lower),
                // i32::MIN: x is not 0 here, or the forward value would be infinite.
                None => c(f64::from(exponent)) * value / x,
            },
            // At a zero exponent the slope is 0 for every base (0^0 included), but its
            // derivative along the exponent is not: 1/x, that of `y x^(y-1)`.
            Self::Powf if first => match y.primal() {
                0.0 => y.along(0.0, 1.0 / x.primal()),
                _ => y * x.powf(y - c(1.0)),
            },
            Self::Powf => match value.primal() {
                0.0 => c(0.0),
                _ => value * x.ln(),
            },
            Self::Sqrt => c(0.5) / value,
            Self::Cbrt => c(1.0) / (c(3.0) * value * value),
            Self::Exp => value,
            Self::Exp2 => value * c(std::f64::consts::LN_2),
            Self::ExpM1 => x.exp(),
            Self::Ln => c(1.0) / x,
            Self::Ln1p => c(1.0) / (c(1.0) + x),
            Self::Log if first => c(1.0) / (x * y.ln()),
            Self::Log => -(x.ln() / (y * y.ln() * y.ln())),
            Self::Log2 => c(1.0) / (x * c(std::f64::consts::LN_2)),
            Self::Log10 => c(1.0) / (x * c(std::f64::consts::LN_10)),
            Self::Sin => x.cos(),
            Self::Cos => -x.sin(),
            Self::Tan => c(1.0) + value * value,
            // (1 - x)(1 + x) keeps its digits near ±1, where 1 - x² would not.
            Self::Asin => c(1.0) / ((c(1.0) - x) * (c(1.0) + x)).sqrt(),
            Self::Acos => c(-1.0) / ((c(1.0) - x) * (c(1.0) + x)).sqrt(),
            Self::Atan => c(1.0) / (c(1.0) + x * x),
            // Dividing by the radius twice neither underflows nor overflows like x² + y².
            Self::Atan2 => {
                let radius = x.hypot(y);
                pick(first, y, -x) / radius / radius
            }
            Self::Sinh => x.cosh(),
            Self::Cosh => x.sinh(),
            Self::Tanh => c(1.0) - value * value,
            Self::Asinh => c(1.0) / x.hypot(c(1.0)),
            Self::Acosh => c(1.0) / ((x - c(1.0)).sqrt() * (x + c(1.0)).sqrt()),
            Self::Atanh => c(1.0) / ((c(1.0) - x) * (c(1.0) + x)),
            Self::Abs => match x.primal() {
                0.0 => c(0.0),
                x => c(x.signum()),
            },
            Self::Max | Self::Min => {
                let (x, y) = (x.primal(), y.primal());
                let (mine, other) = if first { (x, y) } else { (y, x) };
                let wins = if self == Self::Max {
                    mine > other
                } else {
                    mine < other
                };
                if mine == other {
                    c(0.5)
                } else {
                    c(pick_f64(wins, 1.0, 0.0))
                }
            }
            Self::Hypot => match value.primal() {
                0.0 => c(0.0),
                _ => pick(first, x, y) / value,
            },
            Self::MulAdd => match slot {
                0 => y,
                1 => x,
                _ => c(1.0),
            },
            // A custom node's slopes are kept on the tape when it is recorded (and its
            // second derivatives come from its rule): never from here. NaN would be an
            // error, never a silently wrong derivative.
            Self::Custom(_) => c(f64::NAN),
        }
    }
}

/// What an operation's local derivatives read (see [`ScalarOperation::reads`]).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads {
    /// The operand values read, by slot.
    pub operands: [bool; 3],
    /// Whether the result is read.
    pub value: bool,
}

fn pick_f64(condition: bool, yes: f64, no: f64) -> f64 {
    if condition {
        yes
    } else {
        no
    }
}

/// `x.powf(y)` as the C library computes it, whatever the operands: beside a literal
/// operand LLVM rewrites `pow(x, 0.5)` to `sqrt(x)`, `pow(x, 2.0)` to `x * x` and
/// `pow(2.0, x)` to `exp2(x)`, each a bit away from `pow` for about one input in a
/// thousand, so code that inlines a constant exponent (compiled sweeps, a trace) would
/// disagree with code that does not. The operands pass through `black_box`.
#[inline]
fn powf(x: f64, y: f64) -> f64 {
    std::hint::black_box(x).powf(std::hint::black_box(y))
}

/// The forward function of `max`: `f64::max` with the sign of equal zeros fixed, as in
/// IEEE 754-2019 `maximum` (`max(-0.0, 0.0)` and `max(0.0, -0.0)` are `0.0`).
///
/// `f64::max` may return either of two equal zeros, and which one depends on how it was
/// compiled (inlined beside a constant operand or called through a function pointer), so
/// two paths computing "the same" `max` disagreed on the sign, and then on `sqrt`'s
/// infinite derivative there. Every path calls this one function.
fn max(a: f64, b: f64) -> f64 {
    if a > b || b.is_nan() {
        a
    } else if b > a || a.is_nan() || a.is_sign_negative() {
        b
    } else {
        a
    }
}

/// The forward function of `min`: `f64::min` with the sign of equal zeros fixed, as in
/// IEEE 754-2019 `minimum` (`min(-0.0, 0.0)` and `min(0.0, -0.0)` are `-0.0`); see [`max`].
fn min(a: f64, b: f64) -> f64 {
    if a < b || b.is_nan() {
        a
    } else if b < a || a.is_nan() || a.is_sign_positive() {
        b
    } else {
        a
    }
}

impl fmt::Display for ScalarOperation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The operand values of one operation, as named in an error message.
///
/// For `powi` the second entry is the integer exponent (exact as an `f64`).
#[derive(Clone, Copy)]
pub struct Operands {
    values: [f64; 3],
    len: u8,
}

/// The operands as a list, `[0.0]`: what an error's `Debug` should show, not the storage.
impl fmt::Debug for Operands {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.as_slice()).finish()
    }
}

/// Equal when the operand values are (the storage past them is not compared).
impl PartialEq for Operands {
    fn eq(&self, other: &Operands) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Operands {
    pub(crate) fn new(values: [f64; 3], len: usize) -> Self {
        Self {
            values,
            len: len.min(3) as u8,
        }
    }

    /// The operand values in operand order.
    pub fn as_slice(&self) -> &[f64] {
        &self.values[..usize::from(self.len)]
    }
}

impl fmt::Display for Operands {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, value) in self.as_slice().iter().enumerate() {
            if index > 0 {
                formatter.write_str(", ")?;
            }
            write!(formatter, "{value:?}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod operands_tests {
    use super::Operands;

    #[test]
    fn operands_debug_and_compare_as_lists() {
        let one = Operands::new([0.0, 7.0, 9.0], 1);
        assert_eq!(format!("{one:?}"), "[0.0]");
        assert_eq!(one, Operands::new([0.0, 1.0, 2.0], 1));
        assert_ne!(one, Operands::new([0.0, 0.0, 0.0], 2));
        assert_eq!(
            format!("{:?}", Operands::new([2.5, -1.0, 0.0], 2)),
            "[2.5, -1.0]"
        );
        assert_eq!(one.to_string(), "0.0");
    }
}

#[cfg(test)]
mod derivatives_tests {
    use super::ScalarOperation;

    /// The reverse pass's shortcut for a binary operation's two slopes gives the table's
    /// (`local_derivative`, which the ledger shows and second-order sweeps use), ties
    /// included.
    #[test]
    fn binary_shortcuts_agree_with_the_table() {
        let pairs: [(f64, f64); 5] = [
            (1.5, -2.0),
            (-2.0, 1.5),
            (0.25, 0.25),
            (-0.0, 0.0),
            (3.0, 3.0),
        ];
        for op in [
            ScalarOperation::Add,
            ScalarOperation::Subtract,
            ScalarOperation::Multiply,
            ScalarOperation::Divide,
            ScalarOperation::Max,
            ScalarOperation::Min,
        ] {
            for (x, y) in pairs {
                let value = match op {
                    ScalarOperation::Add => x + y,
                    ScalarOperation::Subtract => x - y,
                    ScalarOperation::Multiply => x * y,
                    ScalarOperation::Divide => x / y,
                    ScalarOperation::Max => x.max(y),
                    _ => x.min(y),
                };
                let table = [0, 1].map(|slot| op.local_derivative(slot, [x, y, 0.0], value, 0));
                let shortcut = op.binary_derivatives(x, y, value, [true, true]);
                assert_eq!(
                    shortcut.map(f64::to_bits),
                    table.map(f64::to_bits),
                    "{op:?} at ({x}, {y})"
                );
            }
        }
    }
}
