//! How one compiled sweep calls another `#[differentiable]` function: through that
//! function's hidden body, the only name the caller can rely on, on the [`Halves`]
//! backend. The body sees [`Backend::halves`] and runs its own compiled forward or
//! reverse half on the caller's [`Stack`] instead of recording, or gives up (an error
//! the caller never shows: its sweep gives up too, and its checked path decides).
//!
//! The protocol, last in first out on the one stack: the forward half lends its
//! differentiated arguments (pushed, then popped into its parameters), keeps what its
//! reverse half needs and its parameters last, and returns its value. The caller's
//! reverse half pushes the output's adjoint and calls again with [`Adjoints`] where it
//! passed tracked values: the callee pops the adjoint and its parameters and adds its
//! contributions into the caller's own adjoints, in the trace's order.

use std::cell::{RefCell, RefMut};

use crate::error::ScalarAutodiffError;
use crate::generated::{Argument, Lent};
use crate::parameters::Parameters;
use crate::sweep::Stack;
use crate::trace::Backend;

type Result<T> = core::result::Result<T, ScalarAutodiffError>;

/// The backend a compiled sweep calls another function's hidden body on: it carries the
/// caller's stack and which half to run. As a backend of plain `f64`s it only converts
/// arguments; a body without compiled halves refuses it ([`gave_up`]).
#[derive(Debug)]
pub struct Halves {
    stack: RefCell<Stack>,
    reverse: bool,
}

impl Halves {
    /// For a call of the forward half, holding `stack` until [`Halves::into_stack`].
    #[inline]
    pub fn forward(stack: Stack) -> Halves {
        Halves {
            stack: RefCell::new(stack),
            reverse: false,
        }
    }

    /// For a call of the reverse half.
    #[inline]
    pub fn reverse(stack: Stack) -> Halves {
        Halves {
            stack: RefCell::new(stack),
            reverse: true,
        }
    }

    /// Whether the reverse half is wanted.
    #[inline]
    pub fn is_reverse(&self) -> bool {
        self.reverse
    }

    /// The stack, for the callee's half (`None` only if borrowed already, which generated
    /// code never does).
    #[inline]
    pub fn stack(&self) -> Option<RefMut<'_, Stack>> {
        self.stack.try_borrow_mut().ok()
    }

    /// The stack back, for the caller.
    #[inline]
    pub fn into_stack(self) -> Stack {
        self.stack.into_inner()
    }
}

/// Where a reverse half adds the adjoints of a differentiated parameter: the caller's own
/// (a scalar or an array of them), passed where the forward call passed the tracked
/// value.
#[derive(Debug)]
pub struct Adjoints<'a, T: ?Sized>(pub &'a mut T);

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for Adjoints<'a, T::Tracked<f64>> {
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn adjoints(self) -> Option<&'a mut T::Tracked<f64>> {
        Some(self.0)
    }
}

/// What a body answers a call it has no compiled halves for, and what a half answers
/// when it gives up. Never shown to a user: the caller's sweep gives up in turn.
#[cold]
pub fn gave_up() -> ScalarAutodiffError {
    ScalarAutodiffError::TapeUnavailable
}

/// Pushes every scalar of a lent argument on `stack`, in order.
#[inline]
pub fn push_lent<B: Backend, T: Parameters + ?Sized>(
    stack: &mut Stack,
    backend: &B,
    lent: &T::Tracked<B::Value>,
) {
    T::visit_tracked(lent, &mut |value| stack.push(backend.value(value)));
}

/// A forward half's `f64` result as the body's output type.
#[inline]
pub fn output<B: Backend, T: Parameters + ?Sized>(
    backend: &B,
    value: &T,
) -> Result<T::Tracked<B::Value>> {
    value.try_track(&mut |value| backend.constant(value))
}
