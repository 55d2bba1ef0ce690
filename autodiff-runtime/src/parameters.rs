//! Shapes of differentiated parameters: `f64`, arrays, nested arrays, `Vec`s, slices and
//! the structs `#[derive(Parameters)]` describes.
//!
//! A shape is walked in one fixed order (fields in declaration order, elements in index
//! order, row-major for nested arrays), the order of a flat gradient. The same walk makes
//! a tracked copy of the shape (every `f64` a graph value), reads a gradient back into the
//! shape, and visits or updates the scalars in an optimizer step.

use crate::error::ScalarAutodiffError;
use crate::scalar::Scalar;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// Values a `#[differentiable]` function can differentiate: `f64`, arrays and nested arrays
/// of `f64`, `Vec<f64>`, slices, and structs with `#[derive(scalar_autodiff::Parameters)]`.
///
/// Every scalar has one place in a fixed order: fields in declaration order, elements in
/// index order (row-major for nested arrays). A flat gradient lists them in that order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter shape a #[differentiable] function can differentiate",
    label = "not `f64`, an array or `Vec` of them, or a `#[derive(Parameters)]` struct",
    note = "parameters are `f64`, `[f64; K]` (nested to any depth), `Vec<f64>`, slices of \
            them, and structs whose fields are all of these, with \
            `#[derive(scalar_autodiff::Parameters)]`"
)]
pub trait Parameters {
    /// The same shape with every `f64` replaced by `V`: `V` for `f64`, `[T::Tracked<V>; K]`
    /// for `[T; K]`, `Vec<T::Tracked<V>>` for `Vec<T>` and `[T]`, and a generated mirror
    /// struct for a derived one.
    type Tracked<V>;

    /// The shape a gradient of these parameters has: `Self` for sized shapes, a `Vec` for a
    /// slice.
    type Gradient;

    /// The number of scalars.
    fn parameter_count(&self) -> usize;

    /// Calls `f` on every scalar, in order.
    fn visit(&self, f: &mut impl FnMut(f64));

    /// Calls `f` on every scalar by mutable reference, in order.
    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64));

    /// The tracked copy: `make` is called once per scalar, in order; the first error stops
    /// it.
    ///
    /// # Errors
    ///
    /// The first error `make` returns.
    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<Self::Tracked<V>>;

    /// A gradient shaped like `self`, taking its scalars from `next`, in order.
    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> Self::Gradient;

    /// Calls `f` on every value of a tracked copy, in order.
    fn visit_tracked<V>(tracked: &Self::Tracked<V>, f: &mut impl FnMut(&V));

    /// Its scalars as one slice, in order, when they lie side by side (arrays of `f64`,
    /// nested or not); `None` otherwise. A compiled sweep copies such a shape onto its
    /// value stack and back in one go.
    fn as_flat(&self) -> Option<&[f64]> {
        None
    }

    /// [`Parameters::as_flat`], writable.
    fn as_flat_mut(&mut self) -> Option<&mut [f64]> {
        None
    }

    /// Calls `f` on its scalars in runs that lie side by side, in order: the scalars
    /// [`Parameters::visit`] walks, in as few slices as the shape shows (one for an array
    /// of `f64`, nested or not, a slice or a `Vec` of them; one per such field of a
    /// derived struct). An optimizer copies parameters in and out a run at a time.
    fn visit_runs(&self, f: &mut impl FnMut(&[f64])) {
        match self.as_flat() {
            Some(flat) => f(flat),
            None => self.visit(&mut |scalar| f(core::slice::from_ref(&scalar))),
        }
    }

    /// [`Parameters::visit_runs`], writable.
    fn visit_runs_mut(&mut self, f: &mut impl FnMut(&mut [f64])) {
        match self.as_flat_mut() {
            Some(flat) => f(flat),
            None => self.visit_mut(&mut |scalar| f(core::slice::from_mut(scalar))),
        }
    }

    /// The scalars of a slice of `Self`s as one slice, when they lie side by side (what
    /// an array's [`Parameters::as_flat`] asks of its items).
    fn flat_items(items: &[Self]) -> Option<&[f64]>
    where
        Self: Sized,
    {
        let _ = items;
        None
    }

    /// [`Parameters::flat_items`], writable.
    fn flat_items_mut(items: &mut [Self]) -> Option<&mut [f64]>
    where
        Self: Sized,
    {
        let _ = items;
        None
    }

    /// Fresh graph variables with these values, for a `name_graph` function.
    ///
    /// # Errors
    ///
    /// [`ScalarAutodiffError::NonFiniteLeaf`] for a non-finite value, or a tape error.
    fn variables(&self) -> Result<Self::Tracked<Scalar>> {
        self.try_track(&mut Scalar::variable)
    }

    /// The stored gradients of `tracked` (variables made by [`Parameters::variables`]) in the
    /// shape of `self`; a variable without a stored gradient counts as 0.
    fn gradient_of(&self, tracked: &Self::Tracked<Scalar>) -> Self::Gradient {
        let mut stored = Vec::with_capacity(self.parameter_count());
        Self::visit_tracked(tracked, &mut |scalar| {
            stored.push(scalar.gradient().unwrap_or(0.0));
        });
        let mut stored = stored.into_iter();
        self.gradient_from(&mut || stored.next().unwrap_or(0.0))
    }

    /// The scalars, in order: `parameter_count()` values.
    fn to_flat(&self) -> Vec<f64> {
        let mut flat = Vec::with_capacity(self.parameter_count());
        self.visit_runs(&mut |run| flat.extend_from_slice(run));
        flat
    }

    /// Writes the scalars, in order, into `out`, which must hold exactly
    /// `parameter_count()` values.
    ///
    /// # Errors
    ///
    /// [`ScalarAutodiffError::LengthMismatch`] if `out.len()` is not `parameter_count()`;
    /// then nothing is written.
    fn write_flat(&self, out: &mut [f64]) -> Result<()> {
        check_length(self.parameter_count(), out.len())?;
        let mut rest = out;
        self.visit_runs(&mut |run| {
            let (slots, after) = core::mem::take(&mut rest).split_at_mut(run.len());
            slots.copy_from_slice(run);
            rest = after;
        });
        Ok(())
    }

    /// Sets the scalars, in order, from `flat`, which must hold exactly
    /// `parameter_count()` values (the inverse of [`Parameters::to_flat`]).
    ///
    /// # Errors
    ///
    /// [`ScalarAutodiffError::LengthMismatch`] if `flat.len()` is not `parameter_count()`;
    /// then nothing is changed.
    fn read_flat(&mut self, flat: &[f64]) -> Result<()> {
        check_length(self.parameter_count(), flat.len())?;
        let mut rest = flat;
        self.visit_runs_mut(&mut |run| {
            let (values, after) = rest.split_at(run.len());
            run.copy_from_slice(values);
            rest = after;
        });
        Ok(())
    }

    /// Calls `f` on every scalar of `self` with the scalar in the same place of `gradient`,
    /// in order: an optimizer step, such as `params.zip_mut(&grad, |w, g| *w -= rate * g)?`.
    ///
    /// The scalars are paired by their place in the order of a flat gradient. When
    /// `gradient` has exactly the shape of `self` (every `Vec` of the same length), as a
    /// gradient of these parameters has, the two are walked side by side without allocating
    /// (for shapes that implement [`Parameters::can_zip_in_place`], as every shape of this
    /// crate and every derived struct does). Otherwise the gradient's scalars are copied out
    /// once and paired by place, which only requires the same number of scalars.
    ///
    /// # Errors
    ///
    /// [`ScalarAutodiffError::LengthMismatch`] if `gradient` does not have
    /// `parameter_count()` scalars (such as a `Vec` field of another length); then nothing
    /// is changed.
    fn zip_mut(&mut self, gradient: &Self::Gradient, mut f: impl FnMut(&mut f64, f64)) -> Result<()>
    where
        Self::Gradient: Parameters,
    {
        if self.can_zip_in_place(gradient) {
            self.zip_in_place(gradient, &mut f);
            return Ok(());
        }
        check_length(self.parameter_count(), gradient.parameter_count())?;
        let mut values = gradient.to_flat().into_iter();
        self.visit_mut(&mut |scalar| {
            if let Some(value) = values.next() {
                f(scalar, value);
            }
        });
        Ok(())
    }

    /// Whether [`Parameters::zip_in_place`] can walk `gradient` side by side with `self`:
    /// `true` when `gradient` has exactly the shape of `self`.
    ///
    /// A building block of [`Parameters::zip_mut`], which calls `zip_in_place` only after
    /// this returned `true`. Implement both or neither: the default, `false`, makes
    /// `zip_mut` copy the gradient's scalars out once instead.
    fn can_zip_in_place(&self, gradient: &Self::Gradient) -> bool {
        let _ = gradient;
        false
    }

    /// Calls `f` on every scalar of `self` with the scalar in the same place of `gradient`,
    /// in order, walking both side by side; only called after
    /// [`Parameters::can_zip_in_place`] returned `true`.
    ///
    /// A building block of [`Parameters::zip_mut`]; call that instead. The default does
    /// nothing, matching the default `can_zip_in_place`.
    fn zip_in_place(&mut self, gradient: &Self::Gradient, f: &mut impl FnMut(&mut f64, f64)) {
        let _ = (gradient, f);
    }
}

/// Whether `gradients` has one item per item of `items`, each of which fits it, for
/// [`Parameters::can_zip_in_place`] on arrays, slices and `Vec`s.
fn items_fit<T: Parameters>(items: &[T], gradients: &[T::Gradient]) -> bool {
    items.len() == gradients.len()
        && items
            .iter()
            .zip(gradients)
            .all(|(item, gradient)| item.can_zip_in_place(gradient))
}

/// [`Parameters::zip_in_place`] of every item with its gradient, in order.
fn zip_items<T: Parameters>(
    items: &mut [T],
    gradients: &[T::Gradient],
    f: &mut impl FnMut(&mut f64, f64),
) {
    items
        .iter_mut()
        .zip(gradients)
        .for_each(|(item, gradient)| item.zip_in_place(gradient, f));
}

/// `Ok` if a flat list of `found` scalars fits parameters of `expected` scalars.
fn check_length(expected: usize, found: usize) -> Result<()> {
    if expected == found {
        Ok(())
    } else {
        Err(ScalarAutodiffError::LengthMismatch { expected, found })
    }
}

impl Parameters for f64 {
    type Tracked<V> = V;
    type Gradient = f64;

    fn parameter_count(&self) -> usize {
        1
    }

    #[inline]
    fn visit(&self, f: &mut impl FnMut(f64)) {
        f(*self);
    }

    #[inline]
    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        f(self);
    }

    #[inline]
    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<V> {
        make(*self)
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> f64 {
        next()
    }

    fn visit_tracked<V>(tracked: &V, f: &mut impl FnMut(&V)) {
        f(tracked);
    }

    // (A single number keeps `as_flat`'s `None`: a push is cheaper than a copy of one.)

    #[inline]
    fn flat_items(items: &[f64]) -> Option<&[f64]> {
        Some(items)
    }

    #[inline]
    fn flat_items_mut(items: &mut [f64]) -> Option<&mut [f64]> {
        Some(items)
    }

    fn can_zip_in_place(&self, _gradient: &f64) -> bool {
        true
    }

    fn zip_in_place(&mut self, gradient: &f64, f: &mut impl FnMut(&mut f64, f64)) {
        f(self, *gradient);
    }
}

impl<T: Parameters, const K: usize> Parameters for [T; K] {
    type Tracked<V> = [T::Tracked<V>; K];
    type Gradient = [T::Gradient; K];

    // An array walks as the slice of its elements.
    fn parameter_count(&self) -> usize {
        self.as_slice().parameter_count()
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        self.as_slice().visit(f);
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        self.as_mut_slice().visit_mut(f);
    }

    fn visit_runs(&self, f: &mut impl FnMut(&[f64])) {
        self.as_slice().visit_runs(f);
    }

    fn visit_runs_mut(&mut self, f: &mut impl FnMut(&mut [f64])) {
        self.as_mut_slice().visit_runs_mut(f);
    }

    #[inline]
    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<[T::Tracked<V>; K]> {
        // Stable Rust has no fallible `array::from_fn`. An `ArrayVec` of `K` items fills
        // on the stack: a helper's array result crosses here on every compiled call, where
        // a `Vec` cost an allocation each time.
        let mut items = arrayvec::ArrayVec::<T::Tracked<V>, K>::new();
        for item in self {
            let tracked = item.try_track(make)?;
            items
                .try_push(tracked)
                .map_err(|_| ScalarAutodiffError::LengthMismatch {
                    expected: K,
                    found: K + 1,
                })?;
        }
        items
            .into_inner()
            .map_err(|items| ScalarAutodiffError::LengthMismatch {
                expected: K,
                found: items.len(),
            })
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> [T::Gradient; K] {
        // `from_fn` visits the indices in order.
        core::array::from_fn(|index| self[index].gradient_from(next))
    }

    fn visit_tracked<V>(tracked: &[T::Tracked<V>; K], f: &mut impl FnMut(&V)) {
        tracked.iter().for_each(|item| T::visit_tracked(item, f));
    }

    #[inline]
    fn as_flat(&self) -> Option<&[f64]> {
        T::flat_items(self.as_slice())
    }

    #[inline]
    fn as_flat_mut(&mut self) -> Option<&mut [f64]> {
        T::flat_items_mut(self.as_mut_slice())
    }

    #[inline]
    fn flat_items(items: &[[T; K]]) -> Option<&[f64]> {
        T::flat_items(items.as_flattened())
    }

    #[inline]
    fn flat_items_mut(items: &mut [[T; K]]) -> Option<&mut [f64]> {
        T::flat_items_mut(items.as_flattened_mut())
    }

    fn can_zip_in_place(&self, gradient: &[T::Gradient; K]) -> bool {
        items_fit(self, gradient)
    }

    fn zip_in_place(&mut self, gradient: &[T::Gradient; K], f: &mut impl FnMut(&mut f64, f64)) {
        zip_items(self, gradient, f);
    }
}

impl<T: Parameters> Parameters for [T] {
    type Tracked<V> = Vec<T::Tracked<V>>;
    type Gradient = Vec<T::Gradient>;

    fn parameter_count(&self) -> usize {
        self.iter().map(Parameters::parameter_count).sum()
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        self.iter().for_each(|item| item.visit(f));
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        self.iter_mut().for_each(|item| item.visit_mut(f));
    }

    // One run where the items' scalars lie side by side, else each item's runs.
    fn visit_runs(&self, f: &mut impl FnMut(&[f64])) {
        match T::flat_items(self) {
            Some(flat) => f(flat),
            None => self.iter().for_each(|item| item.visit_runs(f)),
        }
    }

    fn visit_runs_mut(&mut self, f: &mut impl FnMut(&mut [f64])) {
        if T::flat_items(self).is_some() {
            if let Some(flat) = T::flat_items_mut(self) {
                f(flat);
            }
            return;
        }
        self.iter_mut().for_each(|item| item.visit_runs_mut(f));
    }

    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<Vec<T::Tracked<V>>> {
        let mut items = Vec::with_capacity(self.len());
        for item in self {
            items.push(item.try_track(make)?);
        }
        Ok(items)
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> Vec<T::Gradient> {
        self.iter().map(|item| item.gradient_from(next)).collect()
    }

    fn visit_tracked<V>(tracked: &Vec<T::Tracked<V>>, f: &mut impl FnMut(&V)) {
        tracked.iter().for_each(|item| T::visit_tracked(item, f));
    }

    fn can_zip_in_place(&self, gradient: &Vec<T::Gradient>) -> bool {
        items_fit(self, gradient)
    }

    fn zip_in_place(&mut self, gradient: &Vec<T::Gradient>, f: &mut impl FnMut(&mut f64, f64)) {
        zip_items(self, gradient, f);
    }
}

impl<T: Parameters> Parameters for Vec<T> {
    type Tracked<V> = Vec<T::Tracked<V>>;
    type Gradient = Vec<T::Gradient>;

    fn parameter_count(&self) -> usize {
        self.as_slice().parameter_count()
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        self.as_slice().visit(f);
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        self.as_mut_slice().visit_mut(f);
    }

    fn visit_runs(&self, f: &mut impl FnMut(&[f64])) {
        self.as_slice().visit_runs(f);
    }

    fn visit_runs_mut(&mut self, f: &mut impl FnMut(&mut [f64])) {
        self.as_mut_slice().visit_runs_mut(f);
    }

    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<Vec<T::Tracked<V>>> {
        self.as_slice().try_track(make)
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> Vec<T::Gradient> {
        self.as_slice().gradient_from(next)
    }

    fn visit_tracked<V>(tracked: &Vec<T::Tracked<V>>, f: &mut impl FnMut(&V)) {
        <[T]>::visit_tracked(tracked, f);
    }

    fn can_zip_in_place(&self, gradient: &Vec<T::Gradient>) -> bool {
        items_fit(self, gradient)
    }

    fn zip_in_place(&mut self, gradient: &Vec<T::Gradient>, f: &mut impl FnMut(&mut f64, f64)) {
        zip_items(self, gradient, f);
    }
}
