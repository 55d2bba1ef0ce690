//! What the code `#[differentiable]` generates calls besides a backend's operations:
//! lending arguments to a body, making variables and constants of any parameter shape,
//! folds. Hidden (`__private`): not a public API.

use crate::dual::Dual;
use crate::error::ScalarAutodiffError;
use crate::operation::{Operands, ScalarOperation};
use crate::parameters::Parameters;
use crate::trace::{Backend, Id, Trace};
use core::ops::Deref;

type Result<T> = core::result::Result<T, ScalarAutodiffError>;

/// A tracked value of the caller (a scalar, an array, a tracked struct), lent to a
/// composed `#[differentiable]` function so that it records into the caller's graph.
#[derive(Debug)]
pub struct Tracked<'a, T: ?Sized>(pub &'a T);

/// A differentiated parameter as the body sees it: the caller's tracked value, or the
/// tracked copy of data made of constants.
#[derive(Debug)]
pub enum Lent<'a, T> {
    /// The caller's own tracked value.
    Borrowed(&'a T),
    /// Constants made from data.
    Owned(T),
}

impl<T> Deref for Lent<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        match self {
            Lent::Borrowed(value) => value,
            Lent::Owned(value) => value,
        }
    }
}

/// What a composed `#[differentiable]` function accepts for a differentiated parameter
/// of shape `T`: a tracked value of the caller, or data of that shape (constants).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a differentiated `{T}` parameter of a \
               #[differentiable] function",
    label = "expected a tracked value of the caller or `{T}` data",
    note = "the parameter is a graph input: pass a value of the calling function's graph, \
            or data of the parameter's type (its scalars become constants)"
)]
pub trait Argument<'a, B: Backend, T: Parameters + ?Sized> {
    /// The argument as `T`'s shape of `backend` values.
    fn lend(self, backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>>;

    /// The value a compiled forward half computes with: the caller's for
    /// [`Whole`](crate::halves::Whole), the data itself if every scalar is finite (as
    /// the trace's constants must be), none for a tracked value of a graph.
    #[inline]
    fn primal(&self) -> Option<&T> {
        None
    }

    /// The caller's value again, where the caller can pass it to both halves
    /// ([`Steady`](crate::halves::Steady) going forward, [`AdjointsOf`](crate::halves::AdjointsOf)
    /// going back): the callee then keeps no copy of it for its reverse half.
    #[inline]
    fn steady(&self) -> Option<&'a T>
    where
        T: 'a,
    {
        None
    }

    /// A scalar's value again, where the caller can pass it to both halves: as
    /// [`steady`](Self::steady), and data too (the caller's reverse half passes data again
    /// as it is written), so that a helper keeps no copy of either.
    #[inline]
    fn steady_copy(&self) -> Option<T>
    where
        T: Copy + 'a,
    {
        self.steady().copied()
    }

    /// Where a compiled reverse half adds this parameter's adjoints: the caller's own
    /// for [`Adjoints`](crate::halves::Adjoints), none for data.
    #[inline]
    fn adjoints(self) -> Option<&'a mut T::Gradient>
    where
        Self: Sized,
    {
        None
    }

    /// The positions of this parameter's adjoints in the buffer of a reverse call over
    /// shared adjoints: some only for [`Mapped`](crate::shared::Mapped) and
    /// [`DualMapped`](crate::shared::DualMapped).
    #[inline]
    fn map(&self) -> Option<&'a [usize]> {
        None
    }

    /// The value a compiled forward half on duals (`name_hvp`'s) computes with: the
    /// caller's for [`DualWhole`](crate::halves::DualWhole), the data's as constants,
    /// none for a tracked value of a graph.
    #[inline]
    fn dual_primal(&self) -> Option<Lent<'_, T::Tracked<Dual>>> {
        let data = self.primal()?;
        let duals = data.try_track(&mut |value| Ok(Dual::constant(value)));
        duals.ok().map(Lent::Owned)
    }

    /// The caller's duals again, where the caller passes them to both halves on duals
    /// ([`DualSteady`](crate::halves::DualSteady) going forward,
    /// [`DualAdjointsOf`](crate::halves::DualAdjointsOf) going back): as
    /// [`steady`](Self::steady).
    #[inline]
    fn dual_steady(&self) -> Option<&'a T::Tracked<Dual>>
    where
        T::Tracked<Dual>: 'a,
    {
        None
    }

    /// A scalar's dual again: as [`steady_copy`](Self::steady_copy), data too.
    #[inline]
    fn dual_steady_copy(&self) -> Option<T::Tracked<Dual>>
    where
        T::Tracked<Dual>: Copy,
    {
        None
    }

    /// Where a compiled reverse half on duals adds this parameter's adjoints: the
    /// caller's own for [`DualAdjoints`](crate::halves::DualAdjoints) and
    /// [`DualAdjointsOf`](crate::halves::DualAdjointsOf) (once), none for data.
    #[inline]
    fn dual_adjoints(&self) -> Option<&'a mut T::Tracked<Dual>> {
        None
    }

    /// After the reverse half on duals: a copy [`dual_adjoints_in`](Self::dual_adjoints_in)
    /// made of the caller's adjoints (an array's, lent to a slice) goes back to them;
    /// nothing for any other argument.
    #[inline]
    fn dual_give_back(&self, spare: Option<T::Tracked<Dual>>) {
        let _ = spare;
    }

    /// What a reverse half on duals adds into: [`dual_adjoints`](Self::dual_adjoints),
    /// or `spare`: zeros for data, or a copy of an array's adjoints lent to a slice (which
    /// goes back with [`dual_give_back`](Self::dual_give_back)). A spare must stay finite
    /// (see [`dual_spare_finite`](crate::halves::dual_spare_finite)).
    #[inline]
    fn dual_adjoints_in<'s>(
        &self,
        spare: &'s mut Option<T::Tracked<Dual>>,
    ) -> Option<&'s mut T::Tracked<Dual>>
    where
        'a: 's,
        T::Tracked<Dual>: 'a,
    {
        match self.dual_adjoints() {
            Some(adjoints) => Some(adjoints),
            None => {
                let zeros = crate::sweep::dual_zeros(self.primal()?)?;
                Some(spare.insert(zeros))
            }
        }
    }

    /// What a reverse half adds into: [`adjoints`](Self::adjoints), or spare zeros for
    /// data (which must stay finite), or the caller's adjoints copied into `spare` where
    /// their shape is not the parameter's (an array lent to a slice) and copied back by
    /// [`Spare::finish`](crate::halves::Spare::finish).
    #[inline]
    fn adjoints_in<'s>(
        self,
        spare: &'s mut crate::halves::Spare<'a, T::Gradient>,
    ) -> Option<&'s mut T::Gradient>
    where
        Self: Sized,
        T::Gradient: 'a,
        'a: 's,
    {
        let zeros = self.primal().map(crate::halves::zeros_of);
        match self.adjoints() {
            Some(adjoints) => Some(adjoints),
            None => spare.hold(zeros),
        }
    }
}

/// A tracked array lent where a helper takes a slice (`total(&w)` for
/// `fn total(#[param] xs: &[f64])`), as plain Rust coerces it: its values, copied.
impl<'a, B: Backend, T: Parameters, const N: usize> Argument<'a, B, [T]>
    for Tracked<'a, [T::Tracked<B::Value>; N]>
where
    T::Tracked<B::Value>: Clone,
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, Vec<T::Tracked<B::Value>>>> {
        Ok(Lent::Owned(self.0.to_vec()))
    }
}

impl<'a, B: Backend, T: Parameters + ?Sized> Argument<'a, B, T>
    for Tracked<'a, T::Tracked<B::Value>>
{
    #[inline]
    fn lend(self, _backend: &B) -> Result<Lent<'a, T::Tracked<B::Value>>> {
        Ok(Lent::Borrowed(self.0))
    }
}

/// The constants of `data` (a `Parameters` value passed as data for a differentiated
/// parameter), lent to a body.
#[inline]
pub fn lend_data<'a, B: Backend, T: Parameters + ?Sized>(
    data: &T,
    backend: &B,
) -> Result<Lent<'a, T::Tracked<B::Value>>> {
    let constants = data.try_track(&mut |value| backend.constant(value))?;
    Ok(Lent::Owned(constants))
}

/// The shape of a value a body computes with, tracked or not: `[[f64; 3]; 2]` for
/// `[[Scalar; 3]; 2]`, `[[Id; 3]; 2]` or `[[f64; 3]; 2]`. Through [`Shaped`] it lets rustc
/// infer a const generic function's sizes from its arguments (`linear(w, x)` for
/// `fn linear<const I: usize, const O: usize>(w: [[f64; I]; O], ..)`), which the
/// `Parameters::Tracked` projection alone cannot.
pub trait Untracked {
    /// The value's shape, made of `f64`.
    type Shape: ?Sized;
}

macro_rules! scalar_untracked {
    ($([$($generics:tt)*] $value:ty;)*) => {$(
        impl<$($generics)*> Untracked for $value {
            type Shape = f64;
        }
    )*};
}

scalar_untracked! {
    [] f64;
    [] crate::scalar::Scalar;
    ['t] Id<'t>;
    [] Dual;
    [const K: usize] crate::lanes::Lanes<K>;
}

impl<T: Untracked, const N: usize> Untracked for [T; N]
where
    T::Shape: Sized,
{
    type Shape = [T::Shape; N];
}

impl<T: Untracked> Untracked for [T]
where
    T::Shape: Sized,
{
    type Shape = [T::Shape];
}

impl<T: Untracked> Untracked for Vec<T>
where
    T::Shape: Sized,
{
    type Shape = Vec<T::Shape>;
}

/// The parameter shape an argument of a composed call stands for (see [`Untracked`]): a
/// const generic function's hidden body bounds each parameter whose type names a size on
/// it.
pub trait Shaped {
    /// The shape of the differentiated parameter the argument is passed for.
    type Shape: ?Sized;
}

impl<T: Untracked + ?Sized> Shaped for Tracked<'_, T> {
    type Shape = T::Shape;
}

/// A value of `T` for rustc's inference only, in code that never runs (it takes a
/// value that cannot exist).
#[inline(always)]
pub fn witness<T: ?Sized + 'static>(never: core::convert::Infallible) -> &'static T {
    match never {}
}

/// The shape of `value` (`[f64; 3]` of `[Dual; 3]`), for rustc's inference only, in code
/// that never runs: a growable vector's rows in `name_hvp`'s sweeps are duals, and a call's
/// result is typed from an `f64` call.
#[inline(always)]
pub fn shape_witness<T: Untracked + ?Sized>(
    _value: &T,
    never: core::convert::Infallible,
) -> &'static T::Shape
where
    T::Shape: 'static,
{
    match never {}
}

/// `Argument` for data of shape `$shape` passed as `$data`: its scalars become constants.
/// (One impl per type rather than a blanket impl, which would overlap the `Tracked` one.)
/// (`$view` makes `&$shape` of `$value: &$data`.)
macro_rules! data_argument {
    ($([$($generics:tt)*] $data:ty => $shape:ty, |$value:ident| $view:expr;)*) => {$(
        impl<'a, B: Backend, $($generics)*> Argument<'a, B, $shape> for $data {
            #[inline]
            fn lend(
                self,
                backend: &B,
            ) -> Result<Lent<'a, <$shape as Parameters>::Tracked<B::Value>>> {
                let $value = &self;
                let data: &$shape = $view;
                lend_data(data, backend)
            }

            #[inline]
            fn primal(&self) -> Option<&$shape> {
                let $value = self;
                let data: &$shape = $view;
                crate::sweep::finite(data).then_some(data)
            }

            #[inline]
            fn steady_copy(&self) -> Option<$shape>
            where
                $shape: Copy + 'a,
            {
                <Self as Argument<'a, B, $shape>>::primal(self).copied()
            }

            #[inline]
            fn dual_steady_copy(&self) -> Option<<$shape as Parameters>::Tracked<Dual>>
            where
                <$shape as Parameters>::Tracked<Dual>: Copy,
            {
                <Self as Argument<'a, B, $shape>>::dual_primal(self).map(|duals| *duals)
            }
        }
    )*};
}

/// `Shaped` for data passed as `$data`: the shape it is lent as where that is one.
macro_rules! data_shaped {
    ($([$($generics:tt)*] $data:ty => $shape:ty;)*) => {$(
        impl<$($generics)*> Shaped for $data {
            type Shape = $shape;
        }
    )*};
}

data_shaped! {
    [] f64 => f64;
    [] &f64 => f64;
    [T: Parameters, const K: usize] [T; K] => [T; K];
    [T: Parameters, const K: usize] &[T; K] => [T; K];
    [T: Parameters] &[T] => [T];
    [T: Parameters] Vec<T> => Vec<T>;
    [T: Parameters] &Vec<T> => Vec<T>;
}

data_argument! {
    [] f64 => f64, |data| data;
    [] &f64 => f64, |data| *data;
    [T: Parameters, const K: usize] [T; K] => [T; K], |data| data;
    [T: Parameters, const K: usize] &[T; K] => [T; K], |data| *data;
    [T: Parameters] &[T] => [T], |data| *data;
    [T: Parameters] Vec<T> => Vec<T>, |data| data;
    [T: Parameters] &Vec<T> => Vec<T>, |data| *data;
    [T: Parameters] &Vec<T> => [T], |data| data.as_slice();
    [T: Parameters, const K: usize] &[T; K] => [T], |data| &data[..];
}

/// Fresh variables of `trace` for every scalar of `value`, in order.
#[inline]
pub fn variables<'t, T: Parameters + ?Sized>(
    trace: &Trace<'t>,
    value: &T,
) -> Result<T::Tracked<Id<'t>>> {
    value.try_track(&mut |value| trace.variable(value))
}

/// The scalars of `value` (a tangent, shaped like a gradient), appended to `flat` in order.
#[inline]
pub fn flatten_into<T: Parameters + ?Sized>(flat: &mut Vec<f64>, value: &T) {
    value.visit(&mut |scalar| flat.push(scalar));
}

/// `Ok` if a tangent of `found` scalars fits parameters of `expected` scalars.
#[inline]
pub fn check_length(expected: usize, found: usize) -> Result<()> {
    match expected == found {
        true => Ok(()),
        false => Err(ScalarAutodiffError::LengthMismatch { expected, found }),
    }
}

/// Forward-mode inputs for every scalar of `value`, their tangents taken from `tangents`
/// in order (which [`check_length`] sized).
///
/// # Errors
///
/// [`ScalarAutodiffError::NonFiniteLeaf`] for a non-finite value,
/// [`ScalarAutodiffError::NonFiniteTangent`] for a non-finite tangent.
#[inline]
pub fn duals<T: Parameters + ?Sized>(
    value: &T,
    tangents: &mut core::slice::Iter<'_, f64>,
) -> Result<T::Tracked<Dual>> {
    value.try_track(&mut |value| {
        let operation = ScalarOperation::Variable;
        let tangent = tangents.next().copied().unwrap_or(0.0);
        if !value.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteLeaf {
                operation,
                value,
                location: None,
            });
        }
        if !tangent.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteTangent {
                operation,
                operands: Operands::new([value, 0.0, 0.0], 1),
                tangent,
                location: None,
            });
        }
        Ok(Dual::variable(value, tangent))
    })
}

/// Forward-mode inputs on `K` tangents at once for every scalar of `value`: lane `k`'s
/// tangent of its `i`-th scalar is `tangents[k][next + i]` (0 past the tangents given), and
/// `next` moves past `value`'s scalars.
///
/// # Errors
///
/// As [`duals`]: a non-finite value or tangent.
#[inline]
pub fn lanes<T: Parameters + ?Sized, const K: usize>(
    value: &T,
    tangents: &[Vec<f64>],
    next: &mut usize,
) -> Result<T::Tracked<crate::lanes::Lanes<K>>> {
    value.try_track(&mut |value| {
        let operation = ScalarOperation::Variable;
        let at = *next;
        *next += 1;
        let mut lanes = [0.0; K];
        for (lane, tangent) in lanes.iter_mut().zip(tangents) {
            *lane = tangent.get(at).copied().unwrap_or(0.0);
        }
        if !value.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteLeaf {
                operation,
                value,
                location: None,
            });
        }
        if let Some(&tangent) = lanes.iter().find(|tangent| !tangent.is_finite()) {
            return Err(ScalarAutodiffError::NonFiniteTangent {
                operation,
                operands: Operands::new([value, 0.0, 0.0], 1),
                tangent,
                location: None,
            });
        }
        Ok(crate::lanes::Lanes::variable(value, lanes))
    })
}

/// The values of a vector output on lanes, and each of its first `count` lanes' tangents
/// appended to `columns` (`0 + tangent`, never `-0.0`).
pub fn lane_columns<const K: usize>(
    output: &[crate::lanes::Lanes<K>],
    count: usize,
    columns: &mut Vec<Vec<f64>>,
) -> Vec<f64> {
    for lane in 0..count.min(K) {
        columns.push(output.iter().map(|out| 0.0 + out.tangents[lane]).collect());
    }
    output.iter().map(|out| out.value).collect()
}

/// The value and directional derivative of a forward-mode output (`0 + tangent`, as a
/// stored gradient is: never `-0.0`).
#[inline]
pub fn value_and_tangent(output: &Dual) -> (f64, f64) {
    (output.value, 0.0 + output.tangent)
}

/// The values and directional derivatives of a forward-mode vector output, each as
/// [`value_and_tangent`] gives it.
pub fn values_and_tangents(output: &[Dual]) -> (Vec<f64>, Vec<f64>) {
    output.iter().map(value_and_tangent).unzip()
}

/// A gradient of `count` scalars as `[f64; N]`, or a length error (never: generated
/// code passes `N`).
#[inline]
pub fn fixed<const N: usize>(flat: &[f64]) -> Result<[f64; N]> {
    flat.try_into()
        .map_err(|_| ScalarAutodiffError::LengthMismatch {
            expected: N,
            found: flat.len(),
        })
}

/// An `N` by `N` matrix of zeros on the heap: a Hessian of a thousand parameters would
/// not fit a thread's stack.
#[inline]
pub fn square<const N: usize>() -> Result<Box<[[f64; N]; N]>> {
    vec![[0.0; N]; N]
        .into_boxed_slice()
        .try_into()
        .map_err(
            |rows: Box<[[f64; N]]>| ScalarAutodiffError::LengthMismatch {
                expected: N,
                found: rows.len(),
            },
        )
}

/// An `M` by `N` matrix of zeros on the heap (see [`square`]).
#[inline]
pub fn rectangle<const N: usize, const M: usize>() -> Result<Box<[[f64; N]; M]>> {
    vec![[0.0; N]; M]
        .into_boxed_slice()
        .try_into()
        .map_err(
            |rows: Box<[[f64; N]]>| ScalarAutodiffError::LengthMismatch {
                expected: M,
                found: rows.len(),
            },
        )
}

/// A row-major `count` by `count` matrix as rows.
#[inline]
pub fn rows(flat: &[f64], count: usize) -> Vec<Vec<f64>> {
    flat.chunks(count.max(1)).map(<[f64]>::to_vec).collect()
}

/// An `f64` computed from data alone, which enters the graph as a constant where it
/// meets a tracked value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an `f64`, so it cannot meet a tracked value",
    label = "this value is computed from data alone and meets a tracked value here",
    note = "in a #[differentiable] function, a value computed from data enters the graph as \
            an `f64` constant where it meets a parameter; other types carry no gradient",
    note = "convert it first, e.g. `n as f64`, or write a float literal such as `2.0`"
)]
pub trait PlainF64 {
    /// The `f64` itself.
    fn to_f64(self) -> f64;
}

impl PlainF64 for f64 {
    fn to_f64(self) -> f64 {
        self
    }
}

impl PlainF64 for &f64 {
    fn to_f64(self) -> f64 {
        *self
    }
}

/// `value` as a constant node of `backend`.
#[inline]
#[track_caller]
pub fn constant<B: Backend>(backend: &B, value: impl PlainF64) -> Result<B::Value> {
    backend.constant(value.to_f64())
}

/// A tracked value a statement copies (`let v = y;`, `v = y;`, `a[i] = y;`): a scalar
/// becomes a node of its own, a `copy` with slope 1, so that what reads `v` sums apart
/// from what reads `y` and reaches `y` as one term, as a variable of the compiled sweeps
/// does. An array (a row `m[j]`, a local array that does not change) is another name of
/// the same nodes; one that changes later is copied by [`copied_each`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied into a tracked variable",
    label = "this value is copied here",
    note = "in a #[differentiable] function, a tracked variable holds an `f64`, an array of \
            them or a `Vec` of such rows"
)]
pub trait Copied<V>: Sized {
    /// The copy, recorded on `backend`.
    fn copied<B: Backend<Value = V>>(&self, backend: &B) -> Result<Self>;
}

macro_rules! scalar_copied {
    ($([$($generics:tt)*] $value:ty;)*) => {$(
        impl<$($generics)*> Copied<$value> for $value {
            #[inline(always)]
            #[track_caller]
            fn copied<B: Backend<Value = $value>>(&self, backend: &B) -> Result<Self> {
                backend.copy(self)
            }
        }
    )*};
}

scalar_copied! {
    [] f64;
    [] crate::scalar::Scalar;
    ['t] Id<'t>;
    [] Dual;
    [const K: usize] crate::lanes::Lanes<K>;
}

impl<V, T: Clone, const N: usize> Copied<V> for [T; N] {
    #[inline(always)]
    fn copied<B: Backend<Value = V>>(&self, _: &B) -> Result<Self> {
        Ok(self.clone())
    }
}

impl<V, T: Clone> Copied<V> for Vec<T> {
    #[inline(always)]
    fn copied<B: Backend<Value = V>>(&self, _: &B) -> Result<Self> {
        Ok(self.clone())
    }
}

/// `value`, copied by a statement of a generated body (see [`Copied`]).
#[inline(always)]
#[track_caller]
pub fn copied<B: Backend, T: Copied<B::Value>>(backend: &B, value: &T) -> Result<T> {
    value.copied(backend)
}

/// A tracked value that changes later, copied whole by a statement (`let prev = h;` of a
/// `let mut h`): each scalar becomes a `copy` node of its own, as [`copied`] makes of a
/// scalar, so that the copy keeps `h`'s values of that moment as variables of their own,
/// which the compiled sweeps (a function's halves too) follow element by element.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied into a tracked variable",
    label = "this value is copied here",
    note = "in a #[differentiable] function, a tracked variable holds an `f64`, an array of \
            them or a `Vec` of such rows"
)]
pub trait CopiedEach<V>: Sized {
    /// The copy, recorded on `backend`.
    fn copied_each<B: Backend<Value = V>>(&self, backend: &B) -> Result<Self>;
}

macro_rules! scalar_copied_each {
    ($([$($generics:tt)*] $value:ty;)*) => {$(
        impl<$($generics)*> CopiedEach<$value> for $value {
            #[inline(always)]
            #[track_caller]
            fn copied_each<B: Backend<Value = $value>>(&self, backend: &B) -> Result<Self> {
                backend.copy(self)
            }
        }
    )*};
}

scalar_copied_each! {
    [] f64;
    [] crate::scalar::Scalar;
    ['t] Id<'t>;
    [] Dual;
    [const K: usize] crate::lanes::Lanes<K>;
}

impl<V, T: CopiedEach<V> + Clone, const N: usize> CopiedEach<V> for [T; N] {
    #[inline(always)]
    fn copied_each<B: Backend<Value = V>>(&self, backend: &B) -> Result<Self> {
        let mut out = self.clone();
        for (copy, element) in out.iter_mut().zip(self) {
            *copy = element.copied_each(backend)?;
        }
        Ok(out)
    }
}

impl<V, T: CopiedEach<V>> CopiedEach<V> for Vec<T> {
    #[inline(always)]
    fn copied_each<B: Backend<Value = V>>(&self, backend: &B) -> Result<Self> {
        self.iter()
            .map(|element| element.copied_each(backend))
            .collect()
    }
}

/// `value`, copied whole by a statement of a generated body (see [`CopiedEach`]).
#[inline(always)]
#[track_caller]
pub fn copied_each<B: Backend, T: CopiedEach<B::Value>>(backend: &B, value: &T) -> Result<T> {
    value.copied_each(backend)
}

/// Data beside tracked values in an array literal: an `f64`, or a row of them (`[r, m[k]]`
/// after `let r = [0.5, 2.0];`), which enters the graph as constants of its shape.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an `f64` or an array of them, so it cannot meet a tracked value",
    label = "this value is computed from data alone and meets tracked values in this array",
    note = "in a #[differentiable] function, a value computed from data enters the graph as \
            `f64` constants where it meets a parameter; other types carry no gradient",
    note = "convert it first, e.g. `n as f64`, or write a float literal such as `2.0`"
)]
pub trait PlainElement {
    /// The value's shape.
    type Shape: Parameters;
    /// The value as constants of `backend`.
    ///
    /// # Errors
    ///
    /// A non-finite value.
    #[track_caller]
    fn element<B: Backend>(
        self,
        backend: &B,
    ) -> Result<<Self::Shape as Parameters>::Tracked<B::Value>>;
}

impl PlainElement for f64 {
    type Shape = f64;
    #[track_caller]
    fn element<B: Backend>(self, backend: &B) -> Result<B::Value> {
        backend.constant(self)
    }
}

impl PlainElement for &f64 {
    type Shape = f64;
    #[track_caller]
    fn element<B: Backend>(self, backend: &B) -> Result<B::Value> {
        backend.constant(*self)
    }
}

impl<T: Parameters, const K: usize> PlainElement for [T; K] {
    type Shape = [T; K];
    fn element<B: Backend>(self, backend: &B) -> Result<[T::Tracked<B::Value>; K]> {
        self.try_track(&mut |value| backend.constant(value))
    }
}

impl<T: Parameters, const K: usize> PlainElement for &[T; K] {
    type Shape = [T; K];
    fn element<B: Backend>(self, backend: &B) -> Result<[T::Tracked<B::Value>; K]> {
        self.try_track(&mut |value| backend.constant(value))
    }
}

/// `value`, data in an array literal with tracked values, as constants of `backend` in
/// its shape (see [`PlainElement`]).
#[inline]
#[track_caller]
pub fn constant_element<B: Backend, P: PlainElement>(
    backend: &B,
    value: P,
) -> Result<<P::Shape as Parameters>::Tracked<B::Value>> {
    value.element(backend)
}

/// `error` with its location named after `function`, the generated body it passed
/// through, unless an inner body named it first.
#[cold]
#[inline(never)]
pub fn in_function(error: ScalarAutodiffError, function: &'static str) -> ScalarAutodiffError {
    error.in_function(function)
}

/// Data of some shape (an array of `f64`, nested to any depth) that a local holding
/// tracked values starts from.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold tracked values",
    label = "this local is assigned tracked values, so it starts as constants of this value",
    note = "a local that holds tracked values starts from an `f64` or an array of `f64` \
            (such as `[0.0; N]`)"
)]
pub trait PlainShape {
    /// The value's shape.
    type Shape: Parameters + ?Sized;
    /// The value as its shape.
    fn shape(&self) -> &Self::Shape;
}

impl PlainShape for f64 {
    type Shape = f64;
    fn shape(&self) -> &f64 {
        self
    }
}

impl<T: Parameters, const K: usize> PlainShape for [T; K] {
    type Shape = [T; K];
    fn shape(&self) -> &[T; K] {
        self
    }
}

impl<T: Parameters> PlainShape for Vec<T> {
    type Shape = Vec<T>;
    fn shape(&self) -> &Vec<T> {
        self
    }
}

impl<P: PlainShape> PlainShape for &P {
    type Shape = P::Shape;
    fn shape(&self) -> &P::Shape {
        (**self).shape()
    }
}

/// A growable local of tracked values in `S`'s shape (`let mut keys: Vec<[f64; D]> =
/// Vec::new();`), typed by its shape so that it can be read before the first `push`.
#[inline(always)]
pub fn growable<S: Parameters, B: Backend>(
    _backend: &B,
    start: Vec<S::Tracked<B::Value>>,
) -> Vec<S::Tracked<B::Value>> {
    start
}

/// A growable local of tracked values whose type is inferred from its pushes (`let mut
/// keys = Vec::new();`): the vector as it is, marked for the compiled sweeps.
#[inline(always)]
pub fn grown<B: Backend, T>(_backend: &B, start: Vec<T>) -> Vec<T> {
    start
}

/// `value` as constants of `backend`, in its shape.
#[inline]
pub fn constants<B: Backend, P: PlainShape>(
    backend: &B,
    value: P,
) -> Result<<P::Shape as Parameters>::Tracked<B::Value>> {
    value
        .shape()
        .try_track(&mut |value| backend.constant(value))
}

/// The argument of a `name_grad` that cannot exist: the function returns an array. Named
/// as the sentence it is, since rustc's error names it; at the crate root for the same
/// reason (hidden there).
#[diagnostic::on_unimplemented(
    message = "a #[differentiable] function that returns an array has no `_grad` function",
    label = "this function returns an array, not the one `f64` a gradient is taken of",
    note = "for the derivatives of every output, call its `_jacobian` function: the \
            outputs' values and one gradient row per output",
    note = "or call it from a #[differentiable] function that reduces its outputs to one \
            `f64` (a loss) and differentiate that one"
)]
pub trait ArrayOutputHasNoGrad {
    /// Never called: nothing implements the trait.
    fn never(self) -> core::convert::Infallible;
}

/// `[value; N]` for a constant: `N` uses of one node.
#[inline]
pub fn repeat<V: Clone, const N: usize>(value: V) -> [V; N] {
    core::array::from_fn(|_| value.clone())
}

/// `[value; N]` for a tracked value: `N` copies of it (see [`Copied`]), one per element, as
/// `N` statements `a[k] = value;` would make, so that each element's reads sum apart.
#[inline]
#[track_caller]
pub fn repeated<B: Backend, T: Copied<B::Value> + Clone, const N: usize>(
    backend: &B,
    value: &T,
) -> Result<[T; N]> {
    let mut out: [T; N] = core::array::from_fn(|_| value.clone());
    for element in &mut out {
        *element = value.copied(backend)?;
    }
    Ok(out)
}

/// The running sum or product of an iterator fold (`.sum()`, `.product()`), with the
/// neutral start that `f64`'s `Sum` and `Product` use: `-0.0 + x` and `1.0 * x` are `x`
/// bit for bit, so the first item starts the total and no node is spent on the start.
#[derive(Debug)]
pub struct Fold<V>(Option<V>);

impl<V> Fold<V> {
    /// An empty fold.
    #[inline]
    pub fn new() -> Self {
        Fold(None)
    }

    /// Adds `item` to the sum.
    #[inline]
    pub fn add<B: Backend<Value = V>>(&mut self, backend: &B, item: V) -> Result<()> {
        self.0 = Some(match self.0.take() {
            Some(total) => backend.add(&total, &item)?,
            None => item,
        });
        Ok(())
    }

    /// Multiplies the product by `item`.
    #[inline]
    pub fn mul<B: Backend<Value = V>>(&mut self, backend: &B, item: V) -> Result<()> {
        self.0 = Some(match self.0.take() {
            Some(total) => backend.mul(&total, &item)?,
            None => item,
        });
        Ok(())
    }

    /// The sum: `-0.0` for no items, as `f64`'s `Sum`.
    #[inline]
    pub fn sum<B: Backend<Value = V>>(self, backend: &B) -> Result<V> {
        match self.0 {
            Some(total) => Ok(total),
            None => backend.constant(-0.0),
        }
    }

    /// The product: `1.0` for no items.
    #[inline]
    pub fn product<B: Backend<Value = V>>(self, backend: &B) -> Result<V> {
        match self.0 {
            Some(total) => Ok(total),
            None => backend.constant(1.0),
        }
    }
}

impl<V> Default for Fold<V> {
    fn default() -> Self {
        Self::new()
    }
}
