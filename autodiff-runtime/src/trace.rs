//! Straight-line graph building without handles, for the code `#[differentiable]` writes.
//!
//! A [`Trace`] borrows this thread's tape once for a whole `name_grad` call. Its values
//! are plain indices ([`Id`], `Copy`), nothing is reference-counted, and everything it
//! recorded is popped at the end, leaving the tape's buffers for the next call. The same
//! generated body runs on [`Handles`] (real [`Scalar`]s) for `name_graph`: both implement
//! [`Backend`], so both record exactly the same nodes and edges.

use std::cell::RefCell;
use std::marker::PhantomData;

use crate::error::ScalarAutodiffError;
use crate::ledger::pass;
use crate::operation::{Operands, ScalarOperation};
use crate::scalar::Scalar;
use crate::tape::{Recorded, Tape, TAPE, TRACKED};

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// A node recorded by a [`Trace`]: an index valid until the trace ends. The lifetime ties
/// it to its trace, so it cannot outlive the nodes it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Id<'t>(u32, PhantomData<&'t ()>);

impl Id<'_> {
    fn new(index: u32) -> Self {
        Self(index, PhantomData)
    }
}

/// Records nodes on a borrowed tape; see the module docs.
#[derive(Debug)]
pub struct Trace<'t> {
    tape: RefCell<&'t mut Tape>,
}

/// Runs `build` on a fresh trace of this thread's tape and pops what it recorded.
///
/// Code inside `build` must not use [`Scalar`]s: the tape is borrowed, so they would
/// fail with [`ScalarAutodiffError::TapeUnavailable`]. An [`Id`] cannot leave its trace:
///
/// ```compile_fail
/// let leaked = autodiff_runtime::__private::trace(|t| t.variable(1.0));
/// ```
#[inline]
pub fn trace<R>(build: impl FnOnce(&Trace<'_>) -> Result<R>) -> Result<R> {
    TAPE.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut tape) => {
            let base = tape.len();
            let outcome = build(&Trace {
                tape: RefCell::new(&mut tape),
            });
            tape.truncate(base);
            outcome
        }
        Err(_) => Err(ScalarAutodiffError::TapeUnavailable),
    })
    .unwrap_or(Err(ScalarAutodiffError::TapeUnavailable))
}

impl<'t> Trace<'t> {
    /// A tracked leaf.
    #[inline]
    pub fn variable(&self, value: f64) -> Result<Id<'t>> {
        self.leaf(value, ScalarOperation::Variable)
    }

    #[inline]
    fn leaf(&self, value: f64, operation: ScalarOperation) -> Result<Id<'t>> {
        if !value.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteLeaf { operation, value });
        }
        let flags = if operation == ScalarOperation::Variable {
            TRACKED
        } else {
            0
        };
        let mut tape = self.tape.borrow_mut();
        match tape.push(value, operation, [0; 3], 0, flags) {
            Some(index) => Ok(Id::new(index)),
            None => Err(ScalarAutodiffError::TapeFull {
                limit: u32::MAX as usize,
            }),
        }
    }

    #[inline]
    fn record<const N: usize>(
        &self,
        operation: ScalarOperation,
        operands: [Id<'t>; N],
        exponent: i32,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Result<Id<'t>> {
        let mut indices = [0; 3];
        for (slot, operand) in operands.iter().enumerate() {
            indices[slot] = operand.0;
        }
        let mut tape = self.tape.borrow_mut();
        match tape.record::<N>(operation, indices, exponent, forward) {
            Recorded::Node(index) => Ok(Id::new(index)),
            refused => Err(refusal(&tape, operation, &indices[..N], exponent, refused)),
        }
    }

    /// One validated reverse pass from `output` (seed 1): its value and the gradients of
    /// `variables`. An output that depends on no variable has an all-zero gradient.
    #[inline]
    pub fn value_and_gradient<const N: usize>(
        &self,
        output: Id<'t>,
        variables: [Id<'t>; N],
    ) -> Result<(f64, [f64; N])> {
        let mut tape = self.tape.borrow_mut();
        let value = tape.node(output.0).value;
        if !tape.node(output.0).tracked() {
            return Ok((value, [0.0; N]));
        }
        pass(&mut tape, output.0, 1.0, None)?;
        let mut gradient = [0.0; N];
        for (slot, variable) in gradient.iter_mut().zip(variables) {
            *slot = tape.node(variable.0).grad;
        }
        Ok((value, gradient))
    }
}

/// The error for an operation that recorded nothing.
#[cold]
fn refusal(
    tape: &Tape,
    operation: ScalarOperation,
    operands: &[u32],
    exponent: i32,
    refused: Recorded,
) -> ScalarAutodiffError {
    match refused {
        Recorded::NonFinite(value) => {
            let mut values = [0.0; 3];
            for (slot, &operand) in operands.iter().enumerate().take(3) {
                values[slot] = tape.node(operand).value;
            }
            let mut count = operands.len();
            if operation == ScalarOperation::Powi {
                values[1] = f64::from(exponent);
                count = 2;
            }
            ScalarAutodiffError::NonFiniteResult {
                operation,
                operands: Operands::new(values, count),
                value,
            }
        }
        Recorded::Full | Recorded::Node(_) => ScalarAutodiffError::TapeFull {
            limit: u32::MAX as usize,
        },
    }
}

/// Builds graphs of [`Scalar`]s: the backend of `name_graph`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handles;

macro_rules! backend {
    (
        unary { $($unary:ident => $unary_op:ident, $unary_f:expr;)* }
        binary { $($binary:ident => $binary_op:ident, $binary_f:expr;)* }
    ) => {
        /// What generated code needs from a graph: one method per operation, with the
        /// same operand order, edges and errors as [`Scalar`]'s own methods.
        pub trait Backend {
            /// A node of this backend's graph.
            type Value: Clone;
            /// An untracked leaf.
            fn constant(&self, value: f64) -> Result<Self::Value>;
            /// A stop-gradient copy of `value`.
            fn detach(&self, value: &Self::Value) -> Result<Self::Value>;
            /// The primal value, for comparisons and plain arithmetic on data.
            fn value(&self, value: &Self::Value) -> f64;
            /// `value.powi(n)`.
            fn powi(&self, value: &Self::Value, n: i32) -> Result<Self::Value>;
            /// `value.mul_add(a, b)`.
            fn mul_add(&self, value: &Self::Value, a: &Self::Value, b: &Self::Value) -> Result<Self::Value>;
            $(
                #[doc = concat!("`", stringify!($unary), "` of one operand.")]
                fn $unary(&self, value: &Self::Value) -> Result<Self::Value>;
            )*
            $(
                #[doc = concat!("`", stringify!($binary), "` of two operands.")]
                fn $binary(&self, left: &Self::Value, right: &Self::Value) -> Result<Self::Value>;
            )*
        }

        impl Backend for Handles {
            type Value = Scalar;
            fn constant(&self, value: f64) -> Result<Scalar> {
                Scalar::constant(value)
            }
            fn detach(&self, value: &Scalar) -> Result<Scalar> {
                value.detach()
            }
            fn value(&self, value: &Scalar) -> f64 {
                value.value()
            }
            fn powi(&self, value: &Scalar, n: i32) -> Result<Scalar> {
                value.powi(n)
            }
            fn mul_add(&self, value: &Scalar, a: &Scalar, b: &Scalar) -> Result<Scalar> {
                value.mul_add(a, b)
            }
            $(
                #[inline]
                fn $unary(&self, value: &Scalar) -> Result<Scalar> {
                    value.$unary()
                }
            )*
            $(
                #[inline]
                fn $binary(&self, left: &Scalar, right: &Scalar) -> Result<Scalar> {
                    left.$binary(right)
                }
            )*
        }

        impl<'t> Backend for Trace<'t> {
            type Value = Id<'t>;
            #[inline]
            fn constant(&self, value: f64) -> Result<Id<'t>> {
                self.leaf(value, ScalarOperation::Constant)
            }
            fn detach(&self, value: &Id<'t>) -> Result<Id<'t>> {
                let primal = self.value(value);
                self.leaf(primal, ScalarOperation::Detached)
            }
            #[inline]
            fn value(&self, value: &Id<'t>) -> f64 {
                self.tape.borrow().node(value.0).value
            }
            fn powi(&self, value: &Id<'t>, n: i32) -> Result<Id<'t>> {
                self.record(ScalarOperation::Powi, [*value], n, |[a, _, _]| a.powi(n))
            }
            fn mul_add(&self, value: &Id<'t>, a: &Id<'t>, b: &Id<'t>) -> Result<Id<'t>> {
                self.record(ScalarOperation::MulAdd, [*value, *a, *b], 0, |[x, y, z]| x.mul_add(y, z))
            }
            $(
                #[inline]
                fn $unary(&self, value: &Id<'t>) -> Result<Id<'t>> {
                    let f: fn(f64) -> f64 = $unary_f;
                    self.record(ScalarOperation::$unary_op, [*value], 0, |[a, _, _]| f(a))
                }
            )*
            $(
                #[inline]
                fn $binary(&self, left: &Id<'t>, right: &Id<'t>) -> Result<Id<'t>> {
                    let f: fn(f64, f64) -> f64 = $binary_f;
                    self.record(ScalarOperation::$binary_op, [*left, *right], 0, |[a, b, _]| f(a, b))
                }
            )*
        }
    };
}

backend! {
    unary {
        neg => Negate, |a| -a;
        recip => Recip, f64::recip;
        sqrt => Sqrt, f64::sqrt;
        cbrt => Cbrt, f64::cbrt;
        exp => Exp, f64::exp;
        exp2 => Exp2, f64::exp2;
        exp_m1 => ExpM1, f64::exp_m1;
        ln => Ln, f64::ln;
        ln_1p => Ln1p, f64::ln_1p;
        log2 => Log2, f64::log2;
        log10 => Log10, f64::log10;
        sin => Sin, f64::sin;
        cos => Cos, f64::cos;
        tan => Tan, f64::tan;
        asin => Asin, f64::asin;
        acos => Acos, f64::acos;
        atan => Atan, f64::atan;
        sinh => Sinh, f64::sinh;
        cosh => Cosh, f64::cosh;
        tanh => Tanh, f64::tanh;
        asinh => Asinh, f64::asinh;
        acosh => Acosh, f64::acosh;
        atanh => Atanh, f64::atanh;
        abs => Abs, f64::abs;
    }
    binary {
        add => Add, |a, b| a + b;
        sub => Subtract, |a, b| a - b;
        mul => Multiply, |a, b| a * b;
        div => Divide, |a, b| a / b;
        powf => Powf, f64::powf;
        log => Log, f64::log;
        atan2 => Atan2, f64::atan2;
        max => Max, f64::max;
        min => Min, f64::min;
        hypot => Hypot, f64::hypot;
    }
}
