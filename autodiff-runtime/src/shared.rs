//! A call that lends one value twice (`dot(v, v)`, `mul(x, x)`, `mix([x, x])`), from a
//! compiled sweep: on the tape, the callee's nodes have edges from both parameters
//! straight to the one node, and its adjoint sums their contributions one by one in the
//! trace's order. Two `&mut` of one adjoint cannot say that, so such a call's reverse
//! half adds into one buffer instead: the caller copies the adjoints of every value it
//! lends into [`SharedHalves`]' buffer (each value once), hands each argument the
//! positions of its scalars there ([`Mapped`]), and copies the sums back after the call.
//! A parameter lent twice then has the same positions twice, and the callee's reverse
//! half (`__shared[__map_k[i]]`) adds into one sum in the trace's order.

use std::cell::RefCell;

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::generated::{Argument, Lent, Shaped};
use crate::parameters::Parameters;
use crate::sweep::{Number, Stack};
use crate::trace::Backend;

type Result<T> = core::result::Result<T, ScalarAutodiffError>;

/// The backend of a reverse call whose arguments share adjoints: it lends the caller's
/// stack and the buffer of adjoints ([`Backend::shared_halves`] on `f64`s,
/// [`Backend::dual_shared_halves`] on duals). It records nothing: a body without a
/// reverse half over shared adjoints gives up at its first operation, and a caller's
/// call of one is a compile error first (see [`Unaliased`]).
#[derive(Debug)]
pub struct SharedHalves<'s, N> {
    stack: RefCell<&'s mut Stack>,
    adjoints: RefCell<&'s mut Vec<N>>,
}

impl<'s, N> SharedHalves<'s, N> {
    /// For a reverse call, lending `stack` and the buffer `adjoints`.
    #[inline]
    pub fn reverse(stack: &'s mut Stack, adjoints: &'s mut Vec<N>) -> SharedHalves<'s, N> {
        SharedHalves {
            stack: RefCell::new(stack),
            adjoints: RefCell::new(adjoints),
        }
    }

    /// Runs `run` on the stack and the buffer (`None` if either is borrowed already,
    /// which generated code never does).
    #[inline]
    pub(crate) fn run<R>(&self, run: impl FnOnce(&mut Stack, &mut Vec<N>) -> R) -> Option<R> {
        let mut stack = self.stack.try_borrow_mut().ok()?;
        let mut adjoints = self.adjoints.try_borrow_mut().ok()?;
        Some(run(&mut stack, &mut adjoints))
    }
}

/// The backends a body without a reverse half over shared adjoints can be called on:
/// every one but [`SharedHalves`]. A caller that lends one value twice checks the callee
/// with it at the call, so that such a callee is a compile error there rather than a
/// sweep that gives up on every call.
#[diagnostic::on_unimplemented(
    message = "this helper cannot take one tracked value twice in a compiled sweep",
    label = "this call lends one value twice, or two elements of one array (`[w[0], w[1]]`, \
             `[w, v]`), whose adjoints it shares",
    note = "a helper takes one value twice compiled when its differentiated parameters are \
            `f64`s or arrays of them and its body lends none of them on to another helper",
    note = "lend a copy of the scalar (`let y = x;` is a node of its own) or a new value \
            (`x * 1.0`), or write `#[differentiable(tape)]` on the caller to record every \
            call on the tape knowingly"
)]
pub trait Unaliased {}

#[diagnostic::do_not_recommend]
impl Unaliased for crate::trace::Handles {}
#[diagnostic::do_not_recommend]
impl Unaliased for crate::trace::Trace<'_> {}
#[diagnostic::do_not_recommend]
impl<const CHECKED: bool> Unaliased for crate::trace::Primal<CHECKED> {}
#[diagnostic::do_not_recommend]
impl Unaliased for crate::dual::Forward {}
#[diagnostic::do_not_recommend]
impl<const K: usize> Unaliased for crate::lanes::ForwardLanes<K> {}
#[diagnostic::do_not_recommend]
impl<B: Unaliased> Unaliased for crate::trace::Outlined<'_, B> {}
#[diagnostic::do_not_recommend]
impl Unaliased for crate::halves::Halves<'_> {}
#[diagnostic::do_not_recommend]
impl Unaliased for crate::halves::DualHalves<'_> {}

/// A tracked argument of a reverse call over shared adjoints: the positions of its
/// scalars in the buffer, in order, and its value where the caller passes it again
/// (`None`: the callee's forward half kept it).
#[derive(Debug)]
pub struct Mapped<'a, T: ?Sized>(pub &'a [usize], pub Option<&'a T>);

impl<T: ?Sized> Shaped for Mapped<'_, T> {
    type Shape = T;
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for Mapped<'a, T> {
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(crate::halves::gave_up())
    }

    #[inline]
    fn steady(&self) -> Option<&'a T>
    where
        T: 'a,
    {
        self.1
    }

    #[inline]
    fn map(&self) -> Option<&'a [usize]> {
        Some(self.0)
    }
}

/// An array's positions where a helper takes a slice (`total(&[w[0], w[1]])`), as
/// [`Mapped`] passes them for the array itself.
impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]> for Mapped<'a, [T; N]> {
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Err(crate::halves::gave_up())
    }

    #[inline]
    fn steady(&self) -> Option<&'a [T]>
    where
        [T]: 'a,
    {
        self.1.map(|array| &array[..])
    }

    #[inline]
    fn map(&self) -> Option<&'a [usize]> {
        Some(self.0)
    }
}

/// [`Mapped`]'s array-for-a-slice on duals: the positions, and a copy of the caller's
/// duals (a slice's are a `Vec`).
impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
    for DualMapped<'a, [T::Tracked<Dual>; N]>
where
    T::Tracked<Dual>: Clone,
{
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Err(crate::halves::gave_up())
    }

    #[inline]
    fn dual_primal(&self) -> Option<Lent<'_, Vec<T::Tracked<Dual>>>> {
        self.1.map(|array| Lent::Owned(array.to_vec()))
    }

    #[inline]
    fn map(&self) -> Option<&'a [usize]> {
        Some(self.0)
    }
}

/// A data argument of a helper that the caller's reverse sweep passes again but that may
/// change before then (a loop's counter, `x.detach().ceil()`): kept on the value stack
/// as the bits of an `f64`, exactly.
#[diagnostic::on_unimplemented(
    message = "the compiled sweeps keep this argument for the reverse sweep, which they do \
               for numbers and `bool` only",
    label = "this value may change before the call's reverse sweep passes it again",
    note = "pass a value the body does not change (a parameter, a `let` outside the loop), \
            or write `#[differentiable(tape)]` on the caller"
)]
pub trait Kept: Copy {
    /// The value as an `f64`'s bits.
    fn keep(self) -> f64;
    /// The value back from [`Kept::keep`].
    fn take(kept: f64) -> Self;
}

macro_rules! kept_integers {
    ($($int:ty),*) => {$(
        impl Kept for $int {
            #[inline]
            fn keep(self) -> f64 {
                // (Sign-extended, then the bits: exact for every value.)
                f64::from_bits(self as i64 as u64)
            }
            #[inline]
            fn take(kept: f64) -> Self {
                kept.to_bits() as i64 as $int
            }
        }
    )*};
}
kept_integers!(usize, isize, u8, u16, u32, u64, i8, i16, i32, i64);

impl Kept for f64 {
    #[inline]
    fn keep(self) -> f64 {
        self
    }
    #[inline]
    fn take(kept: f64) -> Self {
        kept
    }
}

impl Kept for f32 {
    #[inline]
    fn keep(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn take(kept: f64) -> Self {
        kept as f32
    }
}

impl Kept for bool {
    #[inline]
    fn keep(self) -> f64 {
        f64::from(u8::from(self))
    }
    #[inline]
    fn take(kept: f64) -> Self {
        kept != 0.0
    }
}

/// `value`, checked [`Kept`].
#[inline]
pub fn kept<T: Kept>(value: T) -> T {
    value
}

/// Gives `witness` the type of `value` (the forward sweep's kept value), and nothing else.
#[inline]
pub fn same_type<T>(_witness: &mut Option<T>, _value: &T) {}

/// The value [`Kept::keep`] kept, of `witness`'s type.
#[inline]
pub fn take_like<T: Kept>(kept: f64, _witness: &Option<T>) -> T {
    T::take(kept)
}

/// No value, of the type of `witness` (a local's adjoints, which have its primal's type):
/// the `None` of a [`Mapped`] or [`DualMapped`] from which rustc infers a const-generic
/// callee's sizes.
#[inline]
pub fn unsteady<'a, T: ?Sized>(_witness: &T) -> Option<&'a T> {
    None
}

/// [`Mapped`] on duals: the positions, and the caller's duals where it passes them
/// again.
#[derive(Debug)]
pub struct DualMapped<'a, D: ?Sized>(pub &'a [usize], pub Option<&'a D>);

impl<D: crate::generated::Untracked + ?Sized> Shaped for DualMapped<'_, D> {
    type Shape = D::Shape;
}

impl<'a, B: Backend, T, D> Argument<'a, B, T> for DualMapped<'a, D>
where
    T: Parameters<Tracked<Dual> = D> + ?Sized,
    D: ?Sized,
{
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(crate::halves::gave_up())
    }

    #[inline]
    fn dual_steady(&self) -> Option<&'a T::Tracked<Dual>>
    where
        T::Tracked<Dual>: 'a,
    {
        self.1
    }

    #[inline]
    fn dual_steady_copy(&self) -> Option<T::Tracked<Dual>>
    where
        T::Tracked<Dual>: Copy,
    {
        self.1.copied()
    }

    #[inline]
    fn map(&self) -> Option<&'a [usize]> {
        Some(self.0)
    }
}

/// An adjoint of any array shape as its numbers in order: what a caller copies into the
/// buffer of a call over shared adjoints, and back.
pub trait Flat<N> {
    /// How many numbers.
    fn flat_len(&self) -> usize;
    /// Appends every number to `buffer`, in order.
    fn gather(&self, buffer: &mut Vec<N>);
    /// Overwrites every number from `from`, in order; how many it read.
    fn scatter(&mut self, from: &[N]) -> usize;
}

// Concrete impls, numbers and arrays of them up to three levels, so that an array's
// numbers copy as one slice (`extend_from_slice`, `copy_from_slice`).
macro_rules! flat {
    ($($number:ty),*) => {$(
        impl Flat<$number> for $number {
            #[inline(always)]
            fn flat_len(&self) -> usize {
                1
            }
            #[inline(always)]
            fn gather(&self, buffer: &mut Vec<$number>) {
                buffer.push(*self);
            }
            #[inline(always)]
            fn scatter(&mut self, from: &[$number]) -> usize {
                if let Some(number) = from.first() {
                    *self = *number;
                }
                1
            }
        }

        flat!(@slices [const K: usize] $number, [$number; K] => |numbers| numbers.as_slice(),
            |numbers| numbers.as_mut_slice());
        flat!(@slices [const J: usize, const K: usize] $number, [[$number; J]; K] => |numbers| numbers.as_flattened(),
            |numbers| numbers.as_flattened_mut());
        flat!(@slices [const I: usize, const J: usize, const K: usize] $number, [[[$number; I]; J]; K] => |numbers| numbers.as_flattened().as_flattened(),
            |numbers| numbers.as_flattened_mut().as_flattened_mut());
        flat!(@slices [] $number, Vec<$number> => |numbers| numbers.as_slice(),
            |numbers| numbers.as_mut_slice());
        flat!(@slices [const J: usize] $number, Vec<[$number; J]> => |numbers| numbers.as_flattened(),
            |numbers| numbers.as_flattened_mut());
        flat!(@slices [const I: usize, const J: usize] $number, Vec<[[$number; I]; J]> => |numbers| numbers.as_flattened().as_flattened(),
            |numbers| numbers.as_flattened_mut().as_flattened_mut());
    )*};
    (@slices [$($generics:tt)*] $number:ty, $shape:ty => $numbers:expr, $numbers_mut:expr) => {
        impl<$($generics)*> Flat<$number> for $shape {
            #[inline]
            fn flat_len(&self) -> usize {
                let numbers: fn(&Self) -> &[$number] = $numbers;
                numbers(self).len()
            }
            #[inline]
            fn gather(&self, buffer: &mut Vec<$number>) {
                let numbers: fn(&Self) -> &[$number] = $numbers;
                buffer.extend_from_slice(numbers(self));
            }
            #[inline]
            fn scatter(&mut self, from: &[$number]) -> usize {
                let numbers: fn(&mut Self) -> &mut [$number] = $numbers_mut;
                let numbers = numbers(self);
                let count = numbers.len().min(from.len());
                numbers[..count].copy_from_slice(&from[..count]);
                numbers.len()
            }
        }
    };
}

flat!(f64, Dual);

/// Appends `adjoints`' numbers to `buffer`; where they start.
#[inline]
pub fn gather<N, F: Flat<N> + ?Sized>(adjoints: &F, buffer: &mut Vec<N>) -> usize {
    let at = buffer.len();
    adjoints.gather(buffer);
    at
}

/// Appends the positions `at..at + count` to `maps`.
#[inline]
pub fn map_range(maps: &mut Vec<usize>, at: usize, count: usize) {
    maps.extend(at..at + count);
}

/// Spare adjoints in the buffer for data passed for a differentiated parameter of
/// `count` numbers: zeros appended, and their positions.
pub fn spare_map<N: Number>(buffer: &mut Vec<N>, count: usize) -> Vec<usize> {
    let at = buffer.len();
    buffer.resize(at + count, N::ZERO);
    (at..at + count).collect()
}

/// Whether the numbers of the buffer from `from` on (spares) are finite, as data's
/// spare adjoints must stay; then they are dropped.
pub fn spares_finite<N: Number>(buffer: &mut Vec<N>, from: usize) -> bool {
    let finite = buffer
        .get(from..)
        .is_none_or(|spares| spares.iter().all(|number| number.finite()));
    buffer.truncate(from);
    finite
}

impl Stack {
    /// The buffer and the positions of a call over shared adjoints on `f64`s, empty,
    /// taken out of the stack and given back with [`Stack::return_shared`] (their
    /// capacity stays for the next call).
    pub fn shared(&mut self) -> (Vec<f64>, Vec<usize>) {
        let (mut adjoints, mut maps) = core::mem::take(&mut self.shared);
        adjoints.clear();
        maps.clear();
        (adjoints, maps)
    }

    /// Gives back what [`Stack::shared`] handed out.
    pub fn return_shared(&mut self, shared: (Vec<f64>, Vec<usize>)) {
        self.shared = shared;
    }

    /// [`Stack::shared`] on duals.
    pub fn dual_shared(&mut self) -> (Vec<Dual>, Vec<usize>) {
        let (mut adjoints, mut maps) = core::mem::take(&mut self.dual_shared);
        adjoints.clear();
        maps.clear();
        (adjoints, maps)
    }

    /// Gives back what [`Stack::dual_shared`] handed out.
    pub fn return_dual_shared(&mut self, shared: (Vec<Dual>, Vec<usize>)) {
        self.dual_shared = shared;
    }
}

/// A number's primal value (the backend's `value` of [`SharedHalves`]).
#[inline]
pub(crate) fn primal_of<N: Into<f64> + Copy>(number: &N) -> f64 {
    (*number).into()
}
