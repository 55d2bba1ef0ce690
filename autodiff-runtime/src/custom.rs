//! Custom derivative rules: an operation whose value and local derivatives the user
//! supplies (`erf` through `libm`, a special function, a solver), recorded as one node.
//!
//! A [`CustomRule`] lives in a `static`. The first time one is used it is given a small
//! number ([`CustomOp`]), so that [`ScalarOperation::Custom`] stays three bytes and a tape
//! node stays 40; the number finds the rule again (its name for the ledger and errors, its
//! second derivatives for Hessians). The local derivatives are computed once, when the
//! node is recorded, and kept beside the tape until the node is popped.

use std::fmt;
use std::sync::{OnceLock, PoisonError, RwLock};

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::operation::ScalarOperation;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// The user's functions, by number of operands.
#[derive(Clone, Copy)]
enum Functions {
    One(fn(f64) -> f64, fn(f64, f64) -> f64),
    Two(fn(f64, f64) -> f64, fn(f64, f64, f64) -> [f64; 2]),
    Three(fn(f64, f64, f64) -> f64, fn(f64, f64, f64, f64) -> [f64; 3]),
}

/// Local second derivatives, for Hessians: the slopes evaluated on duals.
pub(crate) type DualSlopes = fn([Dual; 3], Dual) -> Result<[Dual; 3]>;

/// An operation of one to three `f64` operands with a derivative rule of the user's.
///
/// `#[differentiable(derivative = slope)]` writes one for a function; a program that
/// builds [`Scalar`](crate::Scalar) graphs by hand can write one too and record it with
/// [`Scalar::custom`](crate::Scalar::custom). The slope function receives the operands and
/// the operation's value (which many derivatives reuse: the logistic sigmoid's is
/// `value * (1 - value)`) and returns one partial derivative per operand. A non-finite
/// slope on a path to a variable is the same typed error as a built-in operation's.
///
/// ```
/// use autodiff_runtime::{CustomRule, Scalar};
///
/// fn softplus(x: f64) -> f64 {
///     x.exp().ln_1p()
/// }
/// fn softplus_slope(x: f64, _value: f64) -> f64 {
///     1.0 / (1.0 + (-x).exp())
/// }
/// static SOFTPLUS: CustomRule = CustomRule::unary("softplus", softplus, softplus_slope);
///
/// let x = Scalar::variable(0.5)?;
/// let y = x.custom(&SOFTPLUS, &[])?;
/// y.backward()?;
/// assert_eq!(y.operation().as_str(), "softplus");
/// assert_eq!(x.gradient(), Some(softplus_slope(0.5, y.value())));
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
pub struct CustomRule {
    name: &'static str,
    functions: Functions,
    second: Option<DualSlopes>,
    op: OnceLock<Option<CustomOp>>,
}

impl CustomRule {
    /// A rule for `value(x)` whose derivative is `slope(x, value)`.
    pub const fn unary(
        name: &'static str,
        value: fn(f64) -> f64,
        slope: fn(f64, f64) -> f64,
    ) -> Self {
        Self::new(name, Functions::One(value, slope))
    }

    /// A rule for `value(x, y)` whose partial derivatives are `slopes(x, y, value)`.
    pub const fn binary(
        name: &'static str,
        value: fn(f64, f64) -> f64,
        slopes: fn(f64, f64, f64) -> [f64; 2],
    ) -> Self {
        Self::new(name, Functions::Two(value, slopes))
    }

    /// A rule for `value(x, y, z)` whose partial derivatives are `slopes(x, y, z, value)`.
    pub const fn ternary(
        name: &'static str,
        value: fn(f64, f64, f64) -> f64,
        slopes: fn(f64, f64, f64, f64) -> [f64; 3],
    ) -> Self {
        Self::new(name, Functions::Three(value, slopes))
    }

    const fn new(name: &'static str, functions: Functions) -> Self {
        Self {
            name,
            functions,
            second: None,
            op: OnceLock::new(),
        }
    }

    /// The rule with its slopes' own derivatives, for Hessians: `#[differentiable]` gives
    /// the slope function's body run on duals.
    #[doc(hidden)]
    pub const fn with_second(mut self, second: DualSlopes) -> Self {
        self.second = Some(second);
        self
    }

    /// The operation's name, as the ledger and errors show it.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// How many operands it takes (1 to 3).
    pub const fn arity(&self) -> usize {
        match self.functions {
            Functions::One(..) => 1,
            Functions::Two(..) => 2,
            Functions::Three(..) => 3,
        }
    }

    /// The value on `a` (operands in slot order, zeros past the arity).
    pub(crate) fn value(&self, a: [f64; 3]) -> f64 {
        let [x, y, z] = a;
        match self.functions {
            Functions::One(value, _) => value(x),
            Functions::Two(value, _) => value(x, y),
            Functions::Three(value, _) => value(x, y, z),
        }
    }

    /// The local derivatives on `a` with the operation's `value` (zeros past the arity).
    pub(crate) fn slopes(&self, a: [f64; 3], value: f64) -> [f64; 3] {
        let [x, y, z] = a;
        match self.functions {
            Functions::One(_, slope) => [slope(x, value), 0.0, 0.0],
            Functions::Two(_, slopes) => {
                let [dx, dy] = slopes(x, y, value);
                [dx, dy, 0.0]
            }
            Functions::Three(_, slopes) => slopes(x, y, z, value),
        }
    }

    /// The local derivatives on duals: each one's tangent is its derivative along the
    /// operands' tangents (and the value's). An error if the slope function cannot be
    /// differentiated.
    pub(crate) fn dual_slopes(&self, a: [Dual; 3], value: Dual) -> Result<[Dual; 3]> {
        match self.second {
            Some(second) => second(a, value),
            None => Err(ScalarAutodiffError::NoSecondDerivative {
                operation: self.name,
                location: None,
            }),
        }
    }

    /// This rule's operation; an error only past 16,383 rules in one program.
    pub(crate) fn op(&'static self) -> Result<ScalarOperation> {
        let op = self.op.get_or_init(|| {
            let mut rules = RULES.write().unwrap_or_else(PoisonError::into_inner);
            let index = u16::try_from(rules.len()).ok().filter(|&i| i < 1 << 14)?;
            rules.push(self);
            let arity = self.arity() as u16;
            Some(CustomOp((index | arity << 14).to_le_bytes()))
        });
        op.map(ScalarOperation::Custom)
            .ok_or(ScalarAutodiffError::TooManyCustomRules { limit: 1 << 14 })
    }
}

impl fmt::Debug for CustomRule {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("CustomRule")
            .field("name", &self.name)
            .field("arity", &self.arity())
            .field("second_order", &self.second.is_some())
            .finish()
    }
}

/// Every rule used so far, by number.
static RULES: RwLock<Vec<&'static CustomRule>> = RwLock::new(Vec::new());

/// The number of a [`CustomRule`] in this program: what [`ScalarOperation::Custom`]
/// holds. Its arity is in the top two bits, its index below; two bytes aligned to one, so
/// that the operation stays small.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CustomOp([u8; 2]);

impl CustomOp {
    fn bits(self) -> u16 {
        u16::from_le_bytes(self.0)
    }

    /// How many operands the operation takes.
    pub const fn arity(self) -> usize {
        (self.0[1] >> 6) as usize
    }

    /// The rule.
    pub fn rule(self) -> Option<&'static CustomRule> {
        let rules = RULES.read().unwrap_or_else(PoisonError::into_inner);
        rules.get(usize::from(self.bits() & 0x3FFF)).copied()
    }

    /// The rule's name.
    pub fn name(self) -> &'static str {
        self.rule().map_or("custom", CustomRule::name)
    }
}

impl fmt::Debug for CustomOp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "CustomOp({:?})", self.name())
    }
}

/// The values of `operands` (`rule`'s arity of them) padded to three, no allocation.
pub(crate) fn padded<T>(
    rule: &CustomRule,
    operands: &[T],
    value: impl Fn(&T) -> f64,
) -> Result<[f64; 3]> {
    if operands.len() != rule.arity() {
        return Err(ScalarAutodiffError::LengthMismatch {
            expected: rule.arity(),
            found: operands.len(),
        });
    }
    let mut values = [0.0; 3];
    for (slot, operand) in values.iter_mut().zip(operands) {
        *slot = value(operand);
    }
    Ok(values)
}

/// The value and local derivatives of `rule` on `values`, the value checked.
pub(crate) fn evaluate(
    rule: &'static CustomRule,
    values: [f64; 3],
) -> Result<(ScalarOperation, f64, [f64; 3])> {
    let op = rule.op()?;
    let value = rule.value(values);
    if !value.is_finite() {
        return Err(ScalarAutodiffError::non_finite_result(
            op,
            &values[..rule.arity()],
            0,
            value,
        ));
    }
    Ok((op, value, rule.slopes(values, value)))
}

/// A rule's forward half on duals (`name_hvp`'s sweeps calling it): its value on
/// `operands`, which it keeps on `stack` with the value for [`rule_dual_reverse`]; `None`
/// where the trace must decide (a non-finite number).
pub fn rule_dual_forward(
    rule: &'static CustomRule,
    operands: &[&Dual],
    stack: &mut crate::sweep::Stack,
) -> Option<Dual> {
    let value = forward(rule, operands).ok()?;
    for operand in operands {
        crate::sweep::Number::push(**operand, stack);
    }
    crate::sweep::Number::push(value, stack);
    Some(value)
}

/// A rule's reverse half on duals: what each operand's adjoint receives from `upstream`,
/// `upstream` times the slope on duals (its tangent through the slope function), as the
/// sweeps on duals add a built-in operation's. `None` where the trace must decide.
pub fn rule_dual_reverse(
    rule: &'static CustomRule,
    upstream: Dual,
    stack: &mut crate::sweep::Stack,
) -> Option<[Dual; 3]> {
    let value: Dual = crate::sweep::Number::pop(stack);
    let mut operands = [<Dual as crate::sweep::Number>::ZERO; 3];
    for slot in (0..rule.arity()).rev() {
        operands[slot] = crate::sweep::Number::pop(stack);
    }
    let slopes = rule.dual_slopes(operands, value).ok()?;
    let mut contributions = [<Dual as crate::sweep::Number>::ZERO; 3];
    for slot in 0..rule.arity() {
        contributions[slot] = upstream.times(slopes[slot]);
        if !contributions[slot].is_finite() {
            return None;
        }
    }
    Some(contributions)
}

/// `rule` on duals (the backend of `name_jvp`), checked as [`Dual`]'s built-in operations
/// are: a tracked operand's non-finite slope or a non-finite tangent is an error.
pub(crate) fn forward(rule: &'static CustomRule, a: &[&Dual]) -> Result<Dual> {
    let values = padded(rule, a, |dual| dual.value)?;
    let (op, value, slopes) = evaluate(rule, values)?;
    let mut tangent = 0.0;
    let mut tracked = false;
    let operands = crate::operation::Operands::new(values, rule.arity());
    for (slot, operand) in a.iter().enumerate() {
        if operand.tracked {
            if !slopes[slot].is_finite() {
                return Err(ScalarAutodiffError::NonFiniteSlope {
                    operation: op,
                    operands,
                    operand: slot,
                    derivative: slopes[slot],
                    location: None,
                });
            }
            tangent += slopes[slot] * operand.tangent;
            tracked = true;
        }
    }
    if !tangent.is_finite() {
        return Err(ScalarAutodiffError::NonFiniteTangent {
            operation: op,
            operands,
            tangent,
            location: None,
        });
    }
    Ok(Dual {
        value,
        tangent,
        tracked,
    })
}

/// What a slope function's hidden body gives on duals, as three local derivatives.
#[doc(hidden)]
pub trait IntoDualSlopes {
    /// The slopes, padded with constants.
    fn into_dual_slopes(self) -> Result<[Dual; 3]>;
}

impl IntoDualSlopes for Dual {
    fn into_dual_slopes(self) -> Result<[Dual; 3]> {
        Ok([self, Dual::constant(0.0), Dual::constant(0.0)])
    }
}

impl<const K: usize> IntoDualSlopes for [Dual; K] {
    fn into_dual_slopes(self) -> Result<[Dual; 3]> {
        let mut slopes = [Dual::constant(0.0); 3];
        for (slot, slope) in self.into_iter().enumerate().take(3) {
            slopes[slot] = slope;
        }
        Ok(slopes)
    }
}

/// What stands in for a slope function that is not `#[differentiable]`: its rule has no
/// second derivatives, and `name_hvp` or `name_hessian` through it is an error.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct NotDifferentiable;

impl IntoDualSlopes for NotDifferentiable {
    fn into_dual_slopes(self) -> Result<[Dual; 3]> {
        // Named by `dual_slopes`, which knows the rule.
        Err(ScalarAutodiffError::NoSecondDerivative {
            operation: "",
            location: None,
        })
    }
}

/// The stand-ins for the hidden body of a slope function that is not `#[differentiable]`,
/// by its number of arguments (the backend, the operands and the value). One item each, so
/// that two rules of one module that name the same slope glob-import the same stand-in,
/// which is not ambiguous.
#[doc(hidden)]
pub mod stand_in {
    use super::{NotDifferentiable, Result};

    /// One operand.
    pub fn one<B, X, V>(_: &B, _: X, _: V) -> Result<NotDifferentiable> {
        Ok(NotDifferentiable)
    }

    /// Two operands.
    pub fn two<B, X, Y, V>(_: &B, _: X, _: Y, _: V) -> Result<NotDifferentiable> {
        Ok(NotDifferentiable)
    }

    /// Three operands.
    pub fn three<B, X, Y, Z, V>(_: &B, _: X, _: Y, _: Z, _: V) -> Result<NotDifferentiable> {
        Ok(NotDifferentiable)
    }
}

/// The second-order hook of the rule named `name`: the slope function's result on duals.
#[doc(hidden)]
pub fn dual_slopes<S: IntoDualSlopes>(name: &'static str, slopes: Result<S>) -> Result<[Dual; 3]> {
    match slopes?.into_dual_slopes() {
        Err(ScalarAutodiffError::NoSecondDerivative { .. }) => {
            Err(ScalarAutodiffError::NoSecondDerivative {
                operation: name,
                location: None,
            })
        }
        slopes => slopes,
    }
}
