//! `Scalar`: a handle to one node of this thread's tape, and the operations that grow it.

use std::fmt;
use std::marker::PhantomData;
use std::panic::Location;

use crate::custom::{padded, CustomRule};
use crate::error::ScalarAutodiffError;
use crate::ledger::BackwardPass;
use crate::operation::ScalarOperation;
use crate::tape::{try_tape, with_tape, Recorded};

/// One value in a differentiable computation: a handle to a node of this thread's graph.
///
/// Leaves are made by [`Scalar::variable`] (tracked: gradients flow to it) and
/// [`Scalar::constant`] (untracked). Every operation takes its operands by reference,
/// records one edge per operand occurrence (`x.mul(&x)` is two edges to one node), and
/// returns a new node, or a typed error if the result is not finite.
///
/// Cloning a `Scalar` copies the handle, not the node: clones are the same node
/// ([`Scalar::is_same_node`]). A `Scalar` belongs to the thread that made it (it is
/// neither `Send` nor `Sync`). A node is freed when its last handle is dropped and every
/// node made after it is gone.
///
/// ```
/// use autodiff_runtime::Scalar;
///
/// let x = Scalar::variable(2.0)?;
/// let square = x.mul(&x)?;
/// let loss = square.add(&square)?;
/// loss.backward()?;
/// assert_eq!(x.gradient(), Some(8.0));
/// assert_eq!(square.gradient(), Some(2.0));
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
pub struct Scalar {
    index: u32,
    thread_bound: PhantomData<*const ()>,
}

impl Scalar {
    pub(crate) fn index(&self) -> u32 {
        self.index
    }

    fn from_index(index: u32) -> Self {
        Self {
            index,
            thread_bound: PhantomData,
        }
    }

    /// Creates a finite leaf whose gradient is tracked.
    #[track_caller]
    pub fn variable(value: f64) -> Result<Self, ScalarAutodiffError> {
        Self::leaf(value, ScalarOperation::Variable)
    }

    /// Creates a finite leaf treated as a constant by the reverse pass.
    #[track_caller]
    pub fn constant(value: f64) -> Result<Self, ScalarAutodiffError> {
        Self::leaf(value, ScalarOperation::Constant)
    }

    #[track_caller]
    fn leaf(value: f64, operation: ScalarOperation) -> Result<Self, ScalarAutodiffError> {
        Self::leaf_noted(value, operation, None)
    }

    /// A leaf; `noted` is where generated code (`name_graph`) wrote it, kept for the ledger
    /// and for errors of a later pass.
    #[track_caller]
    pub(crate) fn leaf_noted(
        value: f64,
        operation: ScalarOperation,
        noted: Option<&'static Location<'static>>,
    ) -> Result<Self, ScalarAutodiffError> {
        if !value.is_finite() {
            let error = ScalarAutodiffError::NonFiniteLeaf {
                operation,
                value,
                location: None,
            };
            return Err(error.at(Location::caller()));
        }
        let made = try_tape(|tape| {
            let index = tape.leaf(value, operation);
            if let (Some(at), Some(index)) = (noted, index) {
                tape.note(index, at);
            }
            index
        });
        match made {
            Some(Some(index)) => Ok(Self::from_index(index)),
            Some(None) => Err(ScalarAutodiffError::tape_full()),
            None => Err(ScalarAutodiffError::TapeUnavailable),
        }
    }

    /// Records `operation` on `operands` with the primal value computed by `forward`.
    #[inline]
    #[track_caller]
    fn record<const N: usize>(
        operation: ScalarOperation,
        operands: [&Scalar; N],
        exponent: i32,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Result<Self, ScalarAutodiffError> {
        Self::record_noted(operation, operands, exponent, forward, None)
    }

    /// [`record`](Self::record); `noted` is where generated code (`name_graph`) wrote the
    /// operation, kept on the tape in the same borrow.
    #[inline]
    #[track_caller]
    pub(crate) fn record_noted<const N: usize>(
        operation: ScalarOperation,
        operands: [&Scalar; N],
        exponent: i32,
        forward: impl FnOnce([f64; 3]) -> f64,
        noted: Option<&'static Location<'static>>,
    ) -> Result<Self, ScalarAutodiffError> {
        let mut indices = [0; 3];
        for (slot, operand) in operands.iter().enumerate() {
            indices[slot] = operand.index;
        }
        let recorded = try_tape(|tape| {
            let recorded = tape.record::<N>(operation, indices, exponent, forward);
            if let (Some(at), Recorded::Node(index)) = (noted, &recorded) {
                tape.note(*index, at);
            }
            recorded
        });
        match recorded {
            Some(Recorded::Node(index)) => Ok(Self::from_index(index)),
            Some(refused) => {
                Err(Self::refusal(operation, &operands, exponent, refused).at(Location::caller()))
            }
            None => Err(ScalarAutodiffError::TapeUnavailable),
        }
    }

    /// The error for an operation that recorded nothing.
    #[cold]
    fn refusal(
        operation: ScalarOperation,
        operands: &[&Scalar],
        exponent: i32,
        refused: Recorded,
    ) -> ScalarAutodiffError {
        match refused {
            Recorded::NonFinite(value) => {
                let values: Vec<f64> = operands.iter().map(|operand| operand.value()).collect();
                ScalarAutodiffError::non_finite_result(operation, &values, exponent, value)
            }
            Recorded::Full | Recorded::Node(..) => ScalarAutodiffError::tape_full(),
        }
    }

    #[track_caller]
    fn unary(&self, operation: ScalarOperation) -> Result<Self, ScalarAutodiffError> {
        Self::record(operation, [self], 0, |a| operation.apply(a, 0))
    }

    #[track_caller]
    fn binary(
        &self,
        other: &Scalar,
        operation: ScalarOperation,
    ) -> Result<Self, ScalarAutodiffError> {
        Self::record(operation, [self, other], 0, |a| operation.apply(a, 0))
    }

    /// The primal value (NaN only while the thread is tearing down its storage).
    pub fn value(&self) -> f64 {
        with_tape(|tape| tape.node(self.index).value).unwrap_or(f64::NAN)
    }

    /// The operation that produced this node.
    pub fn operation(&self) -> ScalarOperation {
        with_tape(|tape| tape.node(self.index).op).unwrap_or(ScalarOperation::Constant)
    }

    /// Whether gradients flow to this node: it is a variable or depends on one.
    pub fn tracks_gradient(&self) -> bool {
        with_tape(|tape| tape.node(self.index).tracked()).unwrap_or(false)
    }

    /// The stored gradient accumulated by completed backward passes, `None` if untracked.
    pub fn gradient(&self) -> Option<f64> {
        with_tape(|tape| {
            let node = tape.node(self.index);
            node.tracked().then_some(tape.grad(self.index))
        })
        .ok()
        .flatten()
    }

    /// Whether both handles name the same graph node (identity, never value equality).
    pub fn is_same_node(&self, other: &Scalar) -> bool {
        self.index == other.index
    }

    /// Replaces the value of a leaf, e.g. to update a parameter in a training loop.
    ///
    /// Refused for results of operations, for non-finite values, and while any live node
    /// was computed from this leaf (its recorded values would go stale). The stored
    /// gradient is kept; call [`zero_grad`](Scalar::zero_grad) to clear it.
    pub fn set_value(&self, value: f64) -> Result<(), ScalarAutodiffError> {
        with_tape(|tape| tape.set_value(self.index, value))?
    }

    /// A stop-gradient: an untracked constant leaf with this node's value and no edge to it.
    pub fn detach(&self) -> Result<Self, ScalarAutodiffError> {
        Self::leaf(self.value(), ScalarOperation::Detached)
    }

    /// One fresh reverse pass seeded with 1; see [`backward_with_seed`](Scalar::backward_with_seed).
    pub fn backward(&self) -> Result<BackwardPass, ScalarAutodiffError> {
        self.backward_with_seed(1.0)
    }

    /// Computes fresh pass-local adjoints of this output under `seed` and adds them to the
    /// stored gradients of every tracked node it depends on.
    ///
    /// Every operand edge adds its contribution, in reverse topological order. Nothing is
    /// stored unless every contribution, pass adjoint and prospective stored gradient is
    /// finite: a failed call leaves every stored gradient bit for bit unchanged. The
    /// returned [`BackwardPass`] builds the per-edge [`Ledger`](crate::Ledger) only when
    /// asked.
    pub fn backward_with_seed(&self, seed: f64) -> Result<BackwardPass, ScalarAutodiffError> {
        let mut committed = Vec::new();
        crate::ledger::run_pass(self, seed, Some(&mut committed))?;
        Ok(BackwardPass::new(self.clone(), seed, committed))
    }

    /// The pass of [`backward`](Scalar::backward) without keeping anything for a ledger.
    ///
    /// For generated code and training loops that only read gradients.
    #[doc(hidden)]
    pub fn backward_without_ledger(&self) -> Result<(), ScalarAutodiffError> {
        crate::ledger::run_pass(self, 1.0, None)
    }

    /// Sets the stored gradient of every tracked node this one depends on (itself
    /// included) to zero, leaving the graph and its values untouched.
    pub fn zero_grad(&self) {
        // Only fails while the thread's storage is torn down, when there is nothing to clear.
        let _ = with_tape(|tape| tape.zero_grad(self.index));
    }
}

macro_rules! unary_operations {
    ($($(#[$doc:meta])* $name:ident => $operation:ident;)*) => {
        impl Scalar {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self) -> Result<Self, ScalarAutodiffError> {
                    self.unary(ScalarOperation::$operation)
                }
            )*
        }
    };
}

macro_rules! binary_operations {
    ($($(#[$doc:meta])* $name:ident => $operation:ident;)*) => {
        impl Scalar {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $name(&self, other: &Scalar) -> Result<Self, ScalarAutodiffError> {
                    self.binary(other, ScalarOperation::$operation)
                }
            )*
        }
    };
}

unary_operations! {
    /// `1 / self`; derivative `-1 / self²`.
    recip => Recip;
    /// Square root; derivative `1 / (2 sqrt(self))`, undefined at 0.
    sqrt => Sqrt;
    /// Cube root; derivative `1 / (3 cbrt(self)²)`, undefined at 0.
    cbrt => Cbrt;
    /// `e^self`; derivative `e^self`.
    exp => Exp;
    /// `2^self`; derivative `2^self ln 2`.
    exp2 => Exp2;
    /// `e^self - 1`, accurate near 0; derivative `e^self`.
    exp_m1 => ExpM1;
    /// Natural logarithm; derivative `1 / self`.
    ln => Ln;
    /// `ln(1 + self)`, accurate near 0; derivative `1 / (1 + self)`.
    ln_1p => Ln1p;
    /// Base-2 logarithm; derivative `1 / (self ln 2)`.
    log2 => Log2;
    /// Base-10 logarithm; derivative `1 / (self ln 10)`.
    log10 => Log10;
    /// Sine; derivative `cos(self)`.
    sin => Sin;
    /// Cosine; derivative `-sin(self)`.
    cos => Cos;
    /// Tangent; derivative `1 + tan²(self)`.
    tan => Tan;
    /// Arcsine; derivative `1 / sqrt(1 - self²)`, undefined at ±1.
    asin => Asin;
    /// Arccosine; derivative `-1 / sqrt(1 - self²)`, undefined at ±1.
    acos => Acos;
    /// Arctangent; derivative `1 / (1 + self²)`.
    atan => Atan;
    /// Hyperbolic sine; derivative `cosh(self)`.
    sinh => Sinh;
    /// Hyperbolic cosine; derivative `sinh(self)`.
    cosh => Cosh;
    /// Hyperbolic tangent; derivative `1 - tanh²(self)`.
    tanh => Tanh;
    /// Inverse hyperbolic sine; derivative `1 / sqrt(self² + 1)`.
    asinh => Asinh;
    /// Inverse hyperbolic cosine; derivative `1 / sqrt(self² - 1)`, undefined at 1.
    acosh => Acosh;
    /// Inverse hyperbolic tangent; derivative `1 / (1 - self²)`.
    atanh => Atanh;
    /// Absolute value; derivative `signum(self)`, and 0 at 0 (PyTorch's convention).
    abs => Abs;
}

#[allow(clippy::should_implement_trait)] // these return `Result`, which the traits cannot
impl Scalar {
    /// `self + other`; derivatives 1 and 1.
    #[track_caller]
    pub fn add(&self, other: &Scalar) -> Result<Self, ScalarAutodiffError> {
        self.binary(other, ScalarOperation::Add)
    }

    /// `self - other`; derivatives 1 and -1.
    #[track_caller]
    pub fn sub(&self, other: &Scalar) -> Result<Self, ScalarAutodiffError> {
        self.binary(other, ScalarOperation::Subtract)
    }

    /// `self * other`; derivatives `other` and `self`.
    #[track_caller]
    pub fn mul(&self, other: &Scalar) -> Result<Self, ScalarAutodiffError> {
        self.binary(other, ScalarOperation::Multiply)
    }

    /// `self / other`; derivatives `1 / other` and `-self / other²`.
    #[track_caller]
    pub fn div(&self, other: &Scalar) -> Result<Self, ScalarAutodiffError> {
        self.binary(other, ScalarOperation::Divide)
    }

    /// `-self`; derivative -1.
    #[track_caller]
    pub fn neg(&self) -> Result<Self, ScalarAutodiffError> {
        self.unary(ScalarOperation::Negate)
    }
}

binary_operations! {
    /// `self^other`; derivatives `other · self^(other-1)` and `self^other · ln(self)`
    /// (0 where the result is 0, PyTorch's convention).
    powf => Powf;
    /// Logarithm of `self` in base `other`, computed as `f64::log` does.
    log => Log;
    /// Four-quadrant arctangent of `self / other`; derivatives `other / r²` and `-self / r²`.
    atan2 => Atan2;
    /// The larger operand; a tie sends half the gradient to each (PyTorch's convention).
    /// Of two equal zeros the result is `0.0` (IEEE 754-2019 `maximum`), whichever order.
    max => Max;
    /// The smaller operand; a tie sends half the gradient to each (PyTorch's convention).
    /// Of two equal zeros the result is `-0.0` (IEEE 754-2019 `minimum`), whichever order.
    min => Min;
    /// `sqrt(self² + other²)` without overflow; derivatives `self / r` and `other / r`,
    /// and 0 at the origin.
    hypot => Hypot;
}

impl Scalar {
    /// `self^n` for an integer `n` (not a graph node); derivative `n · self^(n-1)`.
    #[track_caller]
    pub fn powi(&self, n: i32) -> Result<Self, ScalarAutodiffError> {
        Self::record(ScalarOperation::Powi, [self], n, |a| {
            ScalarOperation::Powi.apply(a, n)
        })
    }

    /// `self * a + b` with one rounding, as `f64::mul_add`; derivatives `a`, `self`, 1.
    #[track_caller]
    pub fn mul_add(&self, a: &Scalar, b: &Scalar) -> Result<Self, ScalarAutodiffError> {
        Self::record(ScalarOperation::MulAdd, [self, a, b], 0, |a| {
            ScalarOperation::MulAdd.apply(a, 0)
        })
    }

    /// The custom operation `rule` on `self` and then `others` (the rule's arity in all):
    /// one node, named by the rule in the ledger and in errors, whose local derivatives are
    /// the rule's slopes at these operands.
    ///
    /// # Errors
    ///
    /// A non-finite value, a wrong number of operands, or a tape that is full or gone.
    #[track_caller]
    pub fn custom(
        &self,
        rule: &'static CustomRule,
        others: &[&Scalar],
    ) -> Result<Self, ScalarAutodiffError> {
        let mut operands = vec![self];
        operands.extend_from_slice(others);
        let at = Location::caller();
        let values = padded(rule, &operands, |operand| operand.value())?;
        let (op, value, slopes) =
            crate::custom::evaluate(rule, values).map_err(|error| error.at(at))?;
        let mut indices = [0; 3];
        for (slot, operand) in operands.iter().enumerate() {
            indices[slot] = operand.index;
        }
        match try_tape(|tape| tape.record_custom(op, indices, value, slopes)) {
            Some(Recorded::Node(index)) => Ok(Self::from_index(index)),
            Some(_) => Err(ScalarAutodiffError::tape_full()),
            None => Err(ScalarAutodiffError::TapeUnavailable),
        }
    }
}

impl Clone for Scalar {
    fn clone(&self) -> Self {
        // Without a tape the node is gone for this thread; the handle stays inert.
        let _ = try_tape(|tape| tape.retain(self.index));
        Self::from_index(self.index)
    }
}

impl Drop for Scalar {
    fn drop(&mut self) {
        // During thread teardown the tape may already be gone; then so is the node.
        let _ = try_tape(|tape| tape.release(self.index));
    }
}

impl fmt::Debug for Scalar {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Scalar")
            .field("node", &self.index)
            .field("operation", &self.operation())
            .field("value", &self.value())
            .field("gradient", &self.gradient())
            .finish()
    }
}
