//! How one compiled sweep calls another `#[differentiable]` function: through that
//! function's hidden body, the only name the caller can rely on, on the [`Halves`]
//! backend. The body sees [`Backend::halves`] and runs its own compiled forward or
//! reverse half on the caller's [`Stack`] instead of recording, or gives up (an error
//! the caller never shows: its sweep gives up too, and its checked path decides).
//!
//! The protocol, last in first out on the one stack: the caller's forward half passes
//! [`Whole`] for a tracked argument (its value), the callee's forward half computes with
//! those values, keeps what its reverse half needs and its parameters last, and returns
//! its value. (A value the caller passes again going back, [`Steady`] then [`AdjointsOf`],
//! is not kept.) The caller's reverse half keeps the output's adjoints and calls again with
//! [`Adjoints`] where it passed tracked values: the callee takes the adjoints and its
//! parameters back and adds its contributions into the caller's own adjoints, in the
//! trace's order.

use std::cell::{Cell, RefCell, RefMut};

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::generated::{Argument, Lent, Shaped, Untracked};
use crate::parameters::Parameters;
use crate::sweep::Stack;
use crate::trace::Backend;

type Result<T> = core::result::Result<T, ScalarAutodiffError>;

/// The backend a compiled sweep calls another function's hidden body on: it lends the
/// caller's stack and says which half to run. As a backend of plain `f64`s it only
/// converts arguments; a body without compiled halves refuses it ([`gave_up`]).
///
/// The stack is lent, not moved: a `Stack` moved in and out around every call cost a
/// store-forwarding stall each way (its fields had just been written one word at a
/// time), a fifth of a small helper's call.
#[derive(Debug)]
pub struct Halves<'s> {
    stack: RefCell<&'s mut Stack>,
    reverse: bool,
}

impl<'s> Halves<'s> {
    /// For a call of the forward half, lending `stack` for the call.
    #[inline]
    pub fn forward(stack: &'s mut Stack) -> Halves<'s> {
        Halves {
            stack: RefCell::new(stack),
            reverse: false,
        }
    }

    /// For a call of the reverse half.
    #[inline]
    pub fn reverse(stack: &'s mut Stack) -> Halves<'s> {
        Halves {
            stack: RefCell::new(stack),
            reverse: true,
        }
    }
}

/// What a hidden body sees of the [`Halves`] backend (through [`Backend::halves`]): the
/// stack it lends and which half to run.
pub trait Run {
    /// The stack, for the callee's half (`None` only if borrowed already, which generated
    /// code never does).
    fn stack(&self) -> Option<RefMut<'_, Stack>>;

    /// Whether the reverse half is wanted.
    fn is_reverse(&self) -> bool;
}

impl Run for Halves<'_> {
    #[inline(always)]
    fn stack(&self) -> Option<RefMut<'_, Stack>> {
        let borrowed = self.stack.try_borrow_mut().ok()?;
        Some(RefMut::map(borrowed, |stack| &mut **stack))
    }

    #[inline(always)]
    fn is_reverse(&self) -> bool {
        self.reverse
    }
}

/// A tracked argument of a forward half: the caller's value of the parameter's shape
/// (a scalar, an array, a parameter struct), finite.
#[derive(Debug)]
pub struct Whole<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized> Shaped for Whole<'_, T> {
    type Shape = T;
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for Whole<'a, T> {
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn primal(&self) -> Option<&T> {
        Some(self.0)
    }
}

/// A tracked argument of a forward half that the caller passes again to the reverse half
/// (with [`AdjointsOf`]): a value that does not change, such as the caller's parameter.
#[derive(Debug)]
pub struct Steady<'a, T: ?Sized>(pub &'a T);

impl<T: ?Sized> Shaped for Steady<'_, T> {
    type Shape = T;
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for Steady<'a, T> {
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn primal(&self) -> Option<&T> {
        Some(self.0)
    }

    #[inline]
    fn steady(&self) -> Option<&'a T>
    where
        T: 'a,
    {
        Some(self.0)
    }
}

/// `Argument` for a `Vec` or an array lent going forward where a helper takes a slice, as
/// plain Rust derefs it (`&p.w`, `&w`, `&keys` for `xs: &[f64]`): [`Whole`] lends its
/// value, [`Steady`] its value again too (`steady`: the method that says so).
macro_rules! slice_forward {
    ($($wrapper:ident<$lent:ty> [$($generics:tt)*] $($steady:ident)?;)*) => {$(
        impl<'a, B: Backend, T: Parameters, $($generics)*> Argument<'a, B, [T]>
            for $wrapper<'a, $lent>
        {
            #[inline]
            fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
                Err(gave_up())
            }

            #[inline]
            fn primal(&self) -> Option<&[T]> {
                Some(self.0)
            }

            $(
                #[inline]
                fn $steady(&self) -> Option<&'a [T]>
                where
                    [T]: 'a,
                {
                    Some(self.0)
                }
            )?
        }
    )*};
}

slice_forward! {
    Steady<Vec<T>> [] steady;
    Whole<Vec<T>> [];
    Steady<[T; N]> [const N: usize] steady;
    Whole<[T; N]> [const N: usize];
}

/// Where a reverse half adds the adjoints of a parameter passed as [`Steady`], with its
/// value again.
#[derive(Debug)]
pub struct AdjointsOf<'a, G: ?Sized, T: ?Sized>(pub &'a mut G, pub &'a T);

impl<G: ?Sized, T: ?Sized> Shaped for AdjointsOf<'_, G, T> {
    type Shape = T;
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for AdjointsOf<'a, T::Gradient, T> {
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn steady(&self) -> Option<&'a T>
    where
        T: 'a,
    {
        Some(self.1)
    }

    #[inline]
    fn adjoints(self) -> Option<&'a mut T::Gradient> {
        Some(self.0)
    }
}

/// The adjoints of a `Vec` lent where a helper takes a slice (see [`Steady`]).
impl<'a, B: Backend, T: Parameters> Argument<'a, B, [T]>
    for AdjointsOf<'a, Vec<T::Gradient>, Vec<T>>
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Err(gave_up())
    }

    #[inline]
    fn steady(&self) -> Option<&'a [T]>
    where
        [T]: 'a,
    {
        Some(self.1)
    }

    #[inline]
    fn adjoints(self) -> Option<&'a mut Vec<T::Gradient>> {
        Some(self.0)
    }
}

/// The adjoints of an array lent where a helper takes a slice (see [`Steady`]): copied
/// into the slice's gradient, a `Vec`, and back after the reverse half (see [`Spare`]).
impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
    for AdjointsOf<'a, [T::Gradient; N], [T; N]>
where
    T::Gradient: Clone,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Err(gave_up())
    }

    #[inline]
    fn steady(&self) -> Option<&'a [T]>
    where
        [T]: 'a,
    {
        Some(self.1)
    }

    #[inline]
    fn adjoints_in<'s>(
        self,
        spare: &'s mut Spare<'a, Vec<T::Gradient>>,
    ) -> Option<&'s mut Vec<T::Gradient>>
    where
        Vec<T::Gradient>: 'a,
        'a: 's,
    {
        spare.lease(self.0)
    }
}

/// The adjoints of an array lent where a helper takes a slice, passed where the forward
/// call passed [`Whole`] (see [`AdjointsOf`]).
impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
    for Adjoints<'a, [T::Gradient; N]>
where
    T::Gradient: Clone,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Err(gave_up())
    }

    #[inline]
    fn adjoints_in<'s>(
        self,
        spare: &'s mut Spare<'a, Vec<T::Gradient>>,
    ) -> Option<&'s mut Vec<T::Gradient>>
    where
        Vec<T::Gradient>: 'a,
        'a: 's,
    {
        spare.lease(self.0)
    }
}

/// What a reverse half adds into when the caller's adjoints are not lent as they are (see
/// [`Argument::adjoints_in`]): zeros for data passed for a differentiated parameter, or a
/// copy of an array's adjoints lent to a slice. The copy starts at the caller's sums and
/// goes back after the callee has added to it: the callee's contributions are one run in
/// the trace's reverse order, so the sums are the trace's, bit for bit (an allocation per
/// call, where the shapes differ).
pub struct Spare<'a, G> {
    value: Option<G>,
    back: Option<&'a mut dyn GiveBack<G>>,
}

/// The caller's adjoints a [`Spare`] copy goes back to.
trait GiveBack<G> {
    fn give_back(&mut self, value: G);
}

impl<X: Clone, const N: usize> GiveBack<Vec<X>> for [X; N] {
    #[inline]
    fn give_back(&mut self, value: Vec<X>) {
        self.clone_from_slice(&value);
    }
}

impl<G> Default for Spare<'_, G> {
    #[inline]
    fn default() -> Self {
        Spare {
            value: None,
            back: None,
        }
    }
}

impl<'a, G> Spare<'a, G> {
    /// Holds `zeros` (a data argument's spare adjoints, if it has a value).
    #[inline]
    pub fn hold(&mut self, zeros: Option<G>) -> Option<&mut G> {
        self.value = zeros;
        self.value.as_mut()
    }

    /// After the reverse half: hands a copy back to the caller's adjoints, and says whether
    /// a data argument's spare adjoints stayed finite.
    #[inline]
    pub fn finish(self) -> bool
    where
        G: Parameters,
    {
        match (self.value, self.back) {
            (None, _) => true,
            (Some(value), Some(back)) => {
                back.give_back(value);
                true
            }
            (Some(value), None) => crate::sweep::finite(&value),
        }
    }
}

impl<'a, X: Clone + 'a> Spare<'a, Vec<X>> {
    /// Copies `adjoints` in, to go back on [`finish`](Self::finish).
    fn lease<const N: usize>(&mut self, adjoints: &'a mut [X; N]) -> Option<&mut Vec<X>> {
        self.value = Some(adjoints.to_vec());
        self.back = Some(adjoints);
        self.value.as_mut()
    }
}

/// Where a reverse half adds the adjoints of a differentiated parameter: the caller's own
/// (in the parameter's gradient shape), passed where the forward call passed [`Whole`].
#[derive(Debug)]
pub struct Adjoints<'a, T: ?Sized>(pub &'a mut T);

/// (A gradient of `f64`s has its parameter's shape, an array's or a derived struct's.)
impl<G: Untracked + ?Sized> Shaped for Adjoints<'_, G> {
    type Shape = G::Shape;
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T> for Adjoints<'a, T::Gradient> {
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn adjoints(self) -> Option<&'a mut T::Gradient> {
        Some(self.0)
    }
}

/// The backend a compiled sweep on duals (`name_hvp`'s, forward over reverse) calls
/// another function's hidden body on: [`Halves`]' protocol, with duals for values and
/// adjoints ([`DualWhole`], [`DualAdjoints`]). The body answers it with its halves on
/// duals ([`Backend::dual_halves`]); it records nothing, so a body without them gives up
/// at its first operation.
#[derive(Debug)]
pub struct DualHalves<'s>(Halves<'s>);

impl<'s> DualHalves<'s> {
    /// For a call of the forward half, lending `stack` for the call.
    #[inline]
    pub fn forward(stack: &'s mut Stack) -> DualHalves<'s> {
        DualHalves(Halves::forward(stack))
    }

    /// For a call of the reverse half.
    #[inline]
    pub fn reverse(stack: &'s mut Stack) -> DualHalves<'s> {
        DualHalves(Halves::reverse(stack))
    }
}

impl Run for DualHalves<'_> {
    #[inline(always)]
    fn stack(&self) -> Option<RefMut<'_, Stack>> {
        self.0.stack()
    }

    #[inline(always)]
    fn is_reverse(&self) -> bool {
        self.0.is_reverse()
    }
}

/// A tracked argument of a forward half on duals: the caller's duals, in the shape of
/// the parameter (`D` is `Dual`, or arrays of it).
#[derive(Debug)]
pub struct DualWhole<'a, D: ?Sized>(pub &'a D);

impl<D: Untracked + ?Sized> Shaped for DualWhole<'_, D> {
    type Shape = D::Shape;
}

impl<'a, B: Backend, T, D> Argument<'a, B, T> for DualWhole<'a, D>
where
    T: Parameters<Tracked<Dual> = D> + ?Sized,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn dual_primal(&self) -> Option<Lent<'_, D>> {
        Some(Lent::Borrowed(self.0))
    }
}

/// A tracked argument of a forward half on duals that the caller passes again to the
/// reverse half (with [`DualAdjointsOf`]): as [`Steady`], not kept by the callee (except
/// an array lent to a slice, whose duals the callee copies and keeps).
#[derive(Debug)]
pub struct DualSteady<'a, D>(pub &'a D);

impl<D: Untracked> Shaped for DualSteady<'_, D> {
    type Shape = D::Shape;
}

impl<'a, B: Backend, T, D> Argument<'a, B, T> for DualSteady<'a, D>
where
    T: Parameters<Tracked<Dual> = D> + ?Sized,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn dual_primal(&self) -> Option<Lent<'_, D>> {
        Some(Lent::Borrowed(self.0))
    }

    #[inline]
    fn dual_steady(&self) -> Option<&'a D>
    where
        D: 'a,
    {
        Some(self.0)
    }

    #[inline]
    fn dual_steady_copy(&self) -> Option<D>
    where
        D: Copy,
    {
        Some(*self.0)
    }
}

/// The caller's adjoints on duals and its duals again, passed where the forward call
/// passed [`DualSteady`]: as [`AdjointsOf`].
pub struct DualAdjointsOf<'a, D>(Cell<Option<&'a mut D>>, &'a D);

impl<'a, D> DualAdjointsOf<'a, D> {
    /// Lends `adjoints`, and `value` again, to the callee's reverse half.
    #[inline]
    pub fn of(adjoints: &'a mut D, value: &'a D) -> DualAdjointsOf<'a, D> {
        DualAdjointsOf(Cell::new(Some(adjoints)), value)
    }
}

impl<D> core::fmt::Debug for DualAdjointsOf<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DualAdjointsOf")
    }
}

impl<D: Untracked> Shaped for DualAdjointsOf<'_, D> {
    type Shape = D::Shape;
}

impl<'a, B: Backend, T, D> Argument<'a, B, T> for DualAdjointsOf<'a, D>
where
    T: Parameters<Tracked<Dual> = D> + ?Sized,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn dual_primal(&self) -> Option<Lent<'_, D>> {
        Some(Lent::Borrowed(self.1))
    }

    #[inline]
    fn dual_steady(&self) -> Option<&'a D>
    where
        D: 'a,
    {
        Some(self.1)
    }

    #[inline]
    fn dual_steady_copy(&self) -> Option<D>
    where
        D: Copy,
    {
        Some(*self.1)
    }

    #[inline]
    fn dual_adjoints(&self) -> Option<&'a mut D> {
        self.0.take()
    }
}

/// An array lent on duals where a helper takes a slice (`total(&w)` for
/// `fn total(#[param] xs: &[f64])`): going forward a copy of its duals (a slice's are a
/// `Vec`), which the callee keeps; going back a copy of its adjoints, which goes back
/// after the reverse half ([`Argument::dual_give_back`]), as [`Spare`] does on `f64`s.
macro_rules! dual_array_to_slice {
    (values $($wrapper:ident),*) => {$(
        impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
            for $wrapper<'a, [T::Tracked<Dual>; N]>
        where
            T::Tracked<Dual>: Clone,
        {
            #[inline]
            fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
                Err(gave_up())
            }

            #[inline]
            fn dual_primal(&self) -> Option<Lent<'_, Vec<T::Tracked<Dual>>>> {
                Some(Lent::Owned(self.0.to_vec()))
            }
        }
    )*};
    (adjoints $($wrapper:ident),*) => {$(
        impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
            for $wrapper<'a, [T::Tracked<Dual>; N]>
        where
            T::Tracked<Dual>: Clone,
        {
            #[inline]
            fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
                Err(gave_up())
            }

            #[inline]
            fn dual_adjoints_in<'s>(
                &self,
                spare: &'s mut Option<Vec<T::Tracked<Dual>>>,
            ) -> Option<&'s mut Vec<T::Tracked<Dual>>>
            where
                'a: 's,
                Vec<T::Tracked<Dual>>: 'a,
            {
                // The caller's adjoints stay lent, for the copy to go back to them.
                let adjoints = self.0.take()?;
                *spare = Some(adjoints.to_vec());
                self.0.set(Some(adjoints));
                spare.as_mut()
            }

            #[inline]
            fn dual_give_back(&self, spare: Option<Vec<T::Tracked<Dual>>>) {
                if let (Some(adjoints), Some(spare)) = (self.0.take(), spare) {
                    for (adjoint, sum) in adjoints.iter_mut().zip(spare) {
                        *adjoint = sum;
                    }
                }
            }
        }
    )*};
}

// (`DualSteady`'s duals are copied too, and kept by the callee: a reference to the
// caller's array is not a slice's `Vec`.)
dual_array_to_slice!(values DualWhole, DualSteady);
dual_array_to_slice!(adjoints DualAdjoints, DualAdjointsOf);

/// Where a reverse half on duals adds a parameter's adjoints: the caller's own, passed
/// where the forward call passed [`DualWhole`]. Taken through a shared reference
/// ([`Argument::dual_adjoints`]): the body's halves on duals are a closure, which must
/// leave its arguments to the rest of the body when it is not called.
pub struct DualAdjoints<'a, D: ?Sized>(Cell<Option<&'a mut D>>);

impl<D: ?Sized> core::fmt::Debug for DualAdjoints<'_, D> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DualAdjoints")
    }
}

impl<'a, D: ?Sized> DualAdjoints<'a, D> {
    /// Lends `adjoints` to the callee's reverse half.
    #[inline]
    pub fn of(adjoints: &'a mut D) -> DualAdjoints<'a, D> {
        DualAdjoints(Cell::new(Some(adjoints)))
    }
}

impl<D: Untracked + ?Sized> Shaped for DualAdjoints<'_, D> {
    type Shape = D::Shape;
}

impl<'a, B: Backend, T, D: ?Sized> Argument<'a, B, T> for DualAdjoints<'a, D>
where
    T: Parameters<Tracked<Dual> = D> + ?Sized,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Err(gave_up())
    }

    #[inline]
    fn dual_adjoints(&self) -> Option<&'a mut D> {
        self.0.take()
    }
}

/// Whether a data argument's spare adjoints on duals (see
/// [`Argument::dual_adjoints_in`]) stayed finite, as the trace's constants' must.
#[inline]
pub fn dual_spare_finite<T: Parameters + ?Sized>(spare: &Option<T::Tracked<Dual>>) -> bool {
    let mut finite = true;
    if let Some(spare) = spare {
        T::visit_tracked(spare, &mut |dual: &Dual| finite &= dual.is_finite());
    }
    finite
}

/// A forward half's result on duals as the body's output type (see
/// [`Backend::dual_half_output`]).
#[inline]
pub fn dual_output<B: Backend, T: HalfOutput>(
    backend: &B,
    value: T::Tracked<Dual>,
) -> Result<T::Tracked<B::Value>> {
    backend.dual_half_output::<T>(value)
}

/// Zeros in the gradient shape of `like` (its own shape, a `Vec` for a slice): where a
/// reverse half takes its parameters back, and a data argument's spare adjoints, which
/// must stay finite.
#[inline]
pub fn zeros_of<T: Parameters + ?Sized>(like: &T) -> T::Gradient {
    like.gradient_from(&mut || 0.0)
}

/// Adds `0.0` to every adjoint (as a pass stores its gradients: never -0.0); false if
/// one is not finite.
#[inline]
pub fn settle<P: Parameters + ?Sized>(adjoints: &mut P) -> bool {
    let mut finite = crate::sweep::Finite::default();
    adjoints.visit_runs_mut(&mut |run| finite.settle_run(run));
    finite.all()
}

/// What a body answers a call it has no compiled halves for, and what a half answers
/// when it gives up. Never shown to a user: the caller's sweep gives up in turn.
#[cold]
pub fn gave_up() -> ScalarAutodiffError {
    ScalarAutodiffError::TapeUnavailable
}

/// A forward half's `f64` result as the body's output type.
#[inline]
pub fn output<B: Backend, T: HalfOutput>(backend: &B, value: T) -> Result<T::Tracked<B::Value>> {
    backend.half_output(value)
}

/// What a compiled half returns: `f64`, or arrays of it. On the `Halves` backend, whose
/// values are `f64`s, it is handed on as it is, where rebuilding it element by element
/// (as a recording backend's constants) cost a helper's call a copy of its result.
pub trait HalfOutput: Parameters + Sized {
    /// The value as `f64` values of a body's output type (the same numbers).
    fn into_f64s(self) -> Self::Tracked<f64>;
}

impl HalfOutput for f64 {
    #[inline(always)]
    fn into_f64s(self) -> f64 {
        self
    }
}

impl<T: HalfOutput, const K: usize> HalfOutput for [T; K] {
    #[inline(always)]
    fn into_f64s(self) -> [T::Tracked<f64>; K] {
        self.map(T::into_f64s)
    }
}
