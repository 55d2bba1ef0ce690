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
/// of `f64`, `Vec<f64>`, slices, and structs with `#[derive(autodiff::Parameters)]`.
///
/// Every scalar has one place in a fixed order: fields in declaration order, elements in
/// index order (row-major for nested arrays). A flat gradient lists them in that order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a parameter shape a #[differentiable] function can differentiate",
    label = "not `f64`, an array or `Vec` of them, or a `#[derive(Parameters)]` struct",
    note = "parameters are `f64`, `[f64; K]` (nested to any depth), `Vec<f64>`, slices of \
            them, and structs whose fields are all of these, with \
            `#[derive(autodiff::Parameters)]`"
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
}

impl Parameters for f64 {
    type Tracked<V> = V;
    type Gradient = f64;

    fn parameter_count(&self) -> usize {
        1
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        f(*self);
    }

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
}

impl<T: Parameters, const K: usize> Parameters for [T; K] {
    type Tracked<V> = [T::Tracked<V>; K];
    type Gradient = [T::Gradient; K];

    fn parameter_count(&self) -> usize {
        self.iter().map(Parameters::parameter_count).sum()
    }

    fn visit(&self, f: &mut impl FnMut(f64)) {
        self.iter().for_each(|item| item.visit(f));
    }

    fn visit_mut(&mut self, f: &mut impl FnMut(&mut f64)) {
        self.iter_mut().for_each(|item| item.visit_mut(f));
    }

    fn try_track<V>(
        &self,
        make: &mut impl FnMut(f64) -> Result<V>,
    ) -> Result<[T::Tracked<V>; K]> {
        let items = self.as_slice().try_track(make)?;
        // Stable Rust has no fallible `array::from_fn`; the `Vec` has exactly `K` items.
        let found = items.len();
        items
            .try_into()
            .map_err(|_| ScalarAutodiffError::LengthMismatch { expected: K, found })
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> [T::Gradient; K] {
        // `from_fn` visits the indices in order.
        core::array::from_fn(|index| self[index].gradient_from(next))
    }

    fn visit_tracked<V>(tracked: &[T::Tracked<V>; K], f: &mut impl FnMut(&V)) {
        tracked.iter().for_each(|item| T::visit_tracked(item, f));
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

    fn try_track<V>(&self, make: &mut impl FnMut(f64) -> Result<V>) -> Result<Vec<T::Tracked<V>>> {
        self.as_slice().try_track(make)
    }

    fn gradient_from(&self, next: &mut impl FnMut() -> f64) -> Vec<T::Gradient> {
        self.as_slice().gradient_from(next)
    }

    fn visit_tracked<V>(tracked: &Vec<T::Tracked<V>>, f: &mut impl FnMut(&V)) {
        <[T]>::visit_tracked(tracked, f);
    }
}
