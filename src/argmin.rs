//! [argmin](https://argmin-rs.org)'s problem traits for a `#[differentiable]` function:
//! [`Problem`] implements `CostFunction`, `Gradient` and (with
//! [`Problem::with_hessian`]) `Hessian`, so L-BFGS, BFGS, Newton, a line search or
//! Nelder-Mead minimise it with exact derivatives. Turn it on with the `argmin` feature.
//!
//! ```
//! use argmin::core::{Executor, State};
//! use argmin::solver::linesearch::MoreThuenteLineSearch;
//! use argmin::solver::quasinewton::LBFGS;
//! use scalar_autodiff::{argmin::Problem, differentiable};
//!
//! /// Squared distance of `w` from `target`: data, captured below.
//! #[differentiable]
//! fn loss(#[param] w: &[f64], target: &[f64]) -> f64 {
//!     let mut total = 0.0;
//!     for (wi, ti) in w.iter().zip(target) {
//!         total += (wi - ti) * (wi - ti) * (1.0 + wi * wi);
//!     }
//!     total
//! }
//!
//! let target = vec![1.0, -2.0, 0.5];
//! let problem = Problem::new(
//!     |w: &Vec<f64>| loss(w, &target),
//!     |w: &Vec<f64>| loss_grad(w, &target),
//! );
//! let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5);
//! let result = Executor::new(problem, solver)
//!     .configure(|state| state.param(vec![0.0; 3]).max_iters(100))
//!     .run()?;
//! let best = result.state().get_best_param().unwrap();
//! assert!(best.iter().zip(&target).all(|(w, t)| (w - t).abs() < 1e-8));
//! # Ok::<(), argmin::core::Error>(())
//! ```
//!
//! The closures capture the data, so one `Problem` is one fit. The cost closure is the
//! plain function (the same bits as the graph's value, and no tape); the gradient closure
//! is `name_grad` (its value is dropped, since argmin asks for the cost separately).
//! Parameters are whatever the closures take: a `Vec<f64>` with argmin-math's `vec`
//! feature, as above, or an `ndarray::Array1<f64>` with its `ndarray_latest-nolinalg`
//! feature (`ndarray_latest` adds ndarray-linalg, and a LAPACK, for Newton's method), as
//! argmin's own examples use:
//!
//! ```
//! use argmin::core::{Executor, State};
//! use argmin::solver::linesearch::MoreThuenteLineSearch;
//! use argmin::solver::quasinewton::LBFGS;
//! use ndarray::{array, Array1, Array2};
//! use scalar_autodiff::{argmin::Problem, differentiable, ScalarAutodiffError};
//!
//! #[differentiable]
//! fn loss(#[param] w: &[f64], target: &[f64]) -> f64 {
//!     let mut total = 0.0;
//!     for (wi, ti) in w.iter().zip(target) {
//!         total += (wi - ti) * (wi - ti) * (1.0 + wi * wi);
//!     }
//!     total
//! }
//!
//! let target = [1.0, -2.0, 0.5];
//! // `name_grad` takes a `#[param] w: &[f64]`; argmin's `Array1`s are contiguous.
//! fn slice(w: &Array1<f64>) -> &[f64] {
//!     w.as_slice().expect("a contiguous array")
//! }
//! let problem = Problem::new(
//!     |w: &Array1<f64>| loss(slice(w), &target),
//!     |w: &Array1<f64>| loss_grad(slice(w), &target).map(|(v, g)| (v, Array1::from(g))),
//! )
//! // For a solver that asks for the Hessian (a trust region), as an `Array2`.
//! .with_hessian(|w: &Array1<f64>| -> Result<_, ScalarAutodiffError> {
//!     let (v, g, h) = loss_hessian(slice(w), &target)?;
//!     Ok((v, g, Array2::from_shape_fn((h.len(), h.len()), |(i, j)| h[i][j])))
//! });
//! let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5);
//! let result = Executor::new(problem, solver)
//!     .configure(|state| state.param(array![0.0, 0.0, 0.0]).max_iters(100))
//!     .run()?;
//! let best = result.state().get_best_param().unwrap();
//! assert!(best.iter().zip(&target).all(|(w, t)| (w - t).abs() < 1e-8));
//! # Ok::<(), argmin::core::Error>(())
//! ```
//!
//! (`tests/ecosystem/argmin_problem.rs` runs this route with L-BFGS and a trust region.)
//!
//! A [`ScalarAutodiffError`] from the gradient or Hessian, and
//! [`ScalarAutodiffError::NonFiniteCost`] for a cost that is NaN or infinite, reach the
//! caller as argmin's `Error`; `error.downcast_ref::<ScalarAutodiffError>()` gets the typed
//! error back.

use std::marker::PhantomData;

use ::argmin::core::{CostFunction, Error, Gradient, Hessian};

use crate::ScalarAutodiffError;

/// A function argmin can minimise: a cost closure, a gradient closure and, optionally, a
/// Hessian closure over the same parameters `P`. See the [module](self) for an example.
pub struct Problem<P, C, G, H = NoHessian> {
    cost: C,
    gradient: G,
    hessian: H,
    parameters: PhantomData<fn(&P)>,
}

/// The Hessian of a [`Problem`] made without [`Problem::with_hessian`]: it has none, and
/// solvers that need one (Newton) do not accept it.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHessian;

impl<P, C, G> Problem<P, C, G>
where
    C: Fn(&P) -> f64,
{
    /// The problem of minimising `cost`, with `gradient` its derivative: typically
    /// `|w: &Vec<f64>| loss(w, &data)` and `|w: &Vec<f64>| loss_grad(w, &data)`.
    pub fn new(cost: C, gradient: G) -> Self {
        Self {
            cost,
            gradient,
            hessian: NoHessian,
            parameters: PhantomData,
        }
    }
}

impl<P, C, G, H> Problem<P, C, G, H> {
    /// The same problem with a Hessian, for Newton's method: typically
    /// `|w: &Vec<f64>| loss_hessian(w, &data)`, whose `Vec` of rows is what argmin-math's
    /// `vec` feature calls a matrix.
    pub fn with_hessian<K>(self, hessian: K) -> Problem<P, C, G, K> {
        Problem {
            cost: self.cost,
            gradient: self.gradient,
            hessian,
            parameters: PhantomData,
        }
    }
}

impl<P, C, G, H> CostFunction for Problem<P, C, G, H>
where
    C: Fn(&P) -> f64,
{
    type Param = P;
    type Output = f64;

    fn cost(&self, param: &P) -> Result<f64, Error> {
        match (self.cost)(param) {
            value if value.is_finite() => Ok(value),
            value => Err(ScalarAutodiffError::NonFiniteCost { value }.into()),
        }
    }
}

impl<P, C, G, D, H> Gradient for Problem<P, C, G, H>
where
    G: Fn(&P) -> Result<(f64, D), ScalarAutodiffError>,
{
    type Param = P;
    type Gradient = D;

    fn gradient(&self, param: &P) -> Result<D, Error> {
        let (_value, gradient) = (self.gradient)(param)?;
        Ok(gradient)
    }
}

impl<P, C, G, H, D, M> Hessian for Problem<P, C, G, H>
where
    H: Fn(&P) -> Result<(f64, D, M), ScalarAutodiffError>,
{
    type Param = P;
    type Hessian = M;

    fn hessian(&self, param: &P) -> Result<M, Error> {
        let (_value, _gradient, hessian) = (self.hessian)(param)?;
        Ok(hessian)
    }
}
