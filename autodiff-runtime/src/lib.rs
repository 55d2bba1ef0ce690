//! The scalar graph behind `scalar-autodiff`: reverse-mode gradients with a validated pass.
//!
//! A [`Scalar`] is a handle to a node on this thread's tape. Operations record one edge
//! per operand occurrence; [`Scalar::backward`] computes fresh pass-local adjoints in
//! reverse topological order and stores them only if every number is finite.
//!
//! ```
//! use autodiff_runtime::Scalar;
//!
//! let x = Scalar::variable(0.5)?;
//! let y = x.tanh()?.exp()?;
//! y.backward()?;
//! let expected = 0.5f64.tanh().exp() * (1.0 - 0.5f64.tanh().powi(2));
//! assert!((x.gradient().unwrap() - expected).abs() < 1e-15);
//! # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod custom;
mod dual;
mod error;
mod generated;
mod gradcheck;
mod halves;
mod lanes;
mod ledger;
mod operation;
mod optim;
mod parameters;
mod scalar;
mod second;
mod shared;
mod sweep;
mod tape;
mod trace;

pub use custom::{CustomOp, CustomRule};
pub use error::{ScalarAutodiffError, SourceLocation};
#[doc(hidden)]
pub use generated::ArrayOutputHasNoGrad;
pub use gradcheck::{
    directional_check, hessian_check, hvp_check, scalar_gradient_check, DirectionalCheck,
    ScalarGradientCheck, SecondOrderCheck,
};
pub use ledger::{BackwardPass, Ledger, LedgerEdge, LedgerNode, Page, Panel};
pub use operation::{Operands, ScalarOperation};
pub use optim::{Adam, Sgd};
pub use parameters::Parameters;
pub use scalar::Scalar;
pub use tape::tape_len;

/// Support for the code `#[differentiable]` generates; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::custom::{
        dual_slopes, rule_dual_forward, rule_dual_reverse, stand_in, IntoDualSlopes,
        NotDifferentiable,
    };
    pub use crate::dual::{Dual, Forward};
    pub use crate::generated::*;
    pub use crate::halves::{
        dual_output, dual_spare_finite, gave_up, output, settle, zeros_of, Adjoints, AdjointsOf,
        DualAdjoints, DualAdjointsOf, DualHalves, DualSteady, DualWhole, Halves, Run, Spare,
        Steady, Whole,
    };
    pub use crate::lanes::{ForwardLanes, Lanes, LANES};
    pub use crate::operation::Reads;
    pub use crate::shared::{
        gather, kept, map_range, same_type, spare_map, spares_finite, take_like, unsteady,
        DualMapped, Flat, Kept, Mapped, SharedHalves, Unaliased,
    };
    pub use crate::sweep::{
        detached, dual_zeros, finite, gradient_into, kept_reads, pairs_into, propagates, reads,
        slopes, sweep, value, zero_of, zeros_like, Lift, Number, Numbers, Stack, Zero,
    };
    pub use crate::trace::{
        op, trace, trace_located, traces, Backend, CallableVector, Gradients, Handles, Id, Nest,
        Outlined, Primal, Recordable, Returned, Trace,
    };
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
