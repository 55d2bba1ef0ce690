//! `scalar_autodiff::argmin::Problem` drives argmin's solvers: L-BFGS fits the logistic curve
//! of `examples/lbfgs_fit.rs` and minimises Rosenbrock in 10 dimensions, a trust region
//! with Steihaug's method uses the exact Hessian, both over `Vec<f64>` and over ndarray's
//! `Array1<f64>` (the route the module documentation gives), and a refused derivative or a
//! NaN cost reaches the caller as a typed `ScalarAutodiffError`.
#![cfg(feature = "argmin")]

#[allow(dead_code)]
#[path = "../../examples/lbfgs_fit.rs"]
mod lbfgs_fit;

use argmin::core::{CostFunction, Executor, Gradient, Hessian, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use argmin::solver::trustregion::{Steihaug, TrustRegion};
use ndarray::{Array1, Array2};
use scalar_autodiff::argmin::Problem;
use scalar_autodiff::{differentiable, ScalarAutodiffError};

/// Rosenbrock's function in `w.len()` dimensions, minimum 0 at (1, ..., 1).
#[differentiable]
fn rosenbrock(#[param] w: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..w.len() - 1 {
        total += 100.0 * (w[i + 1] - w[i] * w[i]).powi(2) + (1.0 - w[i]).powi(2);
    }
    total
}

/// Its gradient by hand, to check what the adapter hands argmin.
fn rosenbrock_gradient(w: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; w.len()];
    for i in 0..w.len() - 1 {
        let inner = w[i + 1] - w[i] * w[i];
        g[i] += -400.0 * w[i] * inner - 2.0 * (1.0 - w[i]);
        g[i + 1] += 200.0 * inner;
    }
    g
}

fn start() -> Vec<f64> {
    (0..10)
        .map(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
        .collect()
}

#[test]
fn lbfgs_fits_the_logistic_curve_to_its_known_parameters() {
    let (w, cost, iterations) = lbfgs_fit::fit(false).unwrap();
    for (fitted, truth) in w.iter().zip(lbfgs_fit::TRUTH) {
        approx::assert_relative_eq!(*fitted, truth, max_relative = 1e-9);
    }
    assert!(cost < 1e-20, "loss {cost:e}");
    assert!(iterations < 100, "{iterations} iterations");
}

#[test]
fn lbfgs_minimises_rosenbrock_in_ten_dimensions() {
    let problem = Problem::new(
        |w: &Vec<f64>| rosenbrock(w),
        |w: &Vec<f64>| rosenbrock_grad(w),
    );
    let w = start();
    assert_eq!(problem.cost(&w).unwrap(), rosenbrock(&w));
    let gradient = problem.gradient(&w).unwrap();
    for (got, expected) in gradient.iter().zip(rosenbrock_gradient(&w)) {
        approx::assert_relative_eq!(*got, expected, max_relative = 1e-14);
    }

    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-12)
        .unwrap();
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(start()).max_iters(500))
        .run()
        .unwrap();
    let best = result.state().get_best_param().unwrap();
    assert!(best.iter().all(|w| (w - 1.0).abs() < 1e-8), "{best:?}");
    assert!(result.state().get_best_cost() < 1e-16);
}

#[test]
fn a_trust_region_uses_the_exact_hessian() {
    let problem = Problem::new(
        |w: &Vec<f64>| rosenbrock(w),
        |w: &Vec<f64>| rosenbrock_grad(w),
    )
    .with_hessian(|w: &Vec<f64>| rosenbrock_hessian(w));
    // The Hessian's corner entries by hand: d2f/dw0^2 = 1200 w0^2 - 400 w1 + 2 and
    // d2f/dw0 dw1 = -400 w0.
    let w = start();
    let h = problem.hessian(&w).unwrap();
    assert_eq!(h.len(), 10);
    approx::assert_relative_eq!(h[0][0], 1200.0 * 1.44 - 400.0 + 2.0, max_relative = 1e-14);
    approx::assert_relative_eq!(h[0][1], 480.0, max_relative = 1e-14);
    assert_eq!(h[0][2], 0.0);

    // From the origin (from the classic start it finds the local minimum near
    // (-1, 1, ..., 1) that Rosenbrock has from four dimensions on).
    let solver = TrustRegion::new(Steihaug::new().with_max_iters(20));
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(vec![0.0; 10]).max_iters(200))
        .run()
        .unwrap();
    let best = result.state().get_best_param().unwrap();
    assert!(best.iter().all(|w| (w - 1.0).abs() < 1e-6), "{best:?}");
}

/// Rosenbrock over ndarray's parameters, the route of the module documentation:
/// `as_slice()` into `name_grad`, the gradient back as an `Array1`, the Hessian's rows as
/// an `Array2`. (The return type spells out the three closures a user's `Problem` holds.)
#[allow(clippy::type_complexity)]
fn ndarray_rosenbrock() -> Problem<
    Array1<f64>,
    impl Fn(&Array1<f64>) -> f64,
    impl Fn(&Array1<f64>) -> Result<(f64, Array1<f64>), ScalarAutodiffError>,
    impl Fn(&Array1<f64>) -> Result<(f64, Vec<f64>, Array2<f64>), ScalarAutodiffError>,
> {
    fn slice(w: &Array1<f64>) -> &[f64] {
        w.as_slice().expect("argmin's parameters are contiguous")
    }
    Problem::new(
        |w: &Array1<f64>| rosenbrock(slice(w)),
        |w: &Array1<f64>| rosenbrock_grad(slice(w)).map(|(v, g)| (v, Array1::from(g))),
    )
    .with_hessian(|w: &Array1<f64>| {
        let (v, g, h) = rosenbrock_hessian(slice(w))?;
        Ok((
            v,
            g,
            Array2::from_shape_fn((h.len(), h.len()), |(i, j)| h[i][j]),
        ))
    })
}

#[test]
fn ndarray_parameters_take_the_documented_route() {
    let problem = ndarray_rosenbrock();
    let w = Array1::from(start());
    assert_eq!(problem.cost(&w).unwrap(), rosenbrock(&start()));
    let gradient = problem.gradient(&w).unwrap();
    for (got, expected) in gradient.iter().zip(rosenbrock_gradient(&start())) {
        approx::assert_relative_eq!(*got, expected, max_relative = 1e-14);
    }
    let h = problem.hessian(&w).unwrap();
    assert_eq!(h.dim(), (10, 10));
    approx::assert_relative_eq!(h[(0, 0)], 1200.0 * 1.44 - 400.0 + 2.0, max_relative = 1e-14);
    approx::assert_relative_eq!(h[(1, 0)], 480.0, max_relative = 1e-14);

    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(1e-12)
        .unwrap();
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(Array1::from(start())).max_iters(500))
        .run()
        .unwrap();
    let best = result.state().get_best_param().unwrap();
    assert!(best.iter().all(|w| (w - 1.0).abs() < 1e-8), "{best}");

    let solver = TrustRegion::new(Steihaug::new().with_max_iters(20));
    let result = Executor::new(ndarray_rosenbrock(), solver)
        .configure(|state| state.param(Array1::zeros(10)).max_iters(200))
        .run()
        .unwrap();
    let best = result.state().get_best_param().unwrap();
    assert!(best.iter().all(|w| (w - 1.0).abs() < 1e-6), "{best}");
}

#[test]
fn refusals_reach_the_caller_typed() {
    #[differentiable]
    fn log_loss(#[param] w: &[f64]) -> f64 {
        w[0].ln() + w[1] * w[1]
    }
    let problem = Problem::new(|w: &Vec<f64>| log_loss(w), |w: &Vec<f64>| log_loss_grad(w));

    let error = problem.gradient(&vec![0.0, 1.0]).unwrap_err();
    let typed = error.downcast_ref::<ScalarAutodiffError>().unwrap();
    assert_eq!(typed.kind(), "non-finite-result");
    assert_eq!(
        typed.location().and_then(|at| at.function()),
        Some("log_loss")
    );

    let error = problem.cost(&vec![-1.0, 1.0]).unwrap_err();
    let typed = error.downcast_ref::<ScalarAutodiffError>().unwrap();
    assert!(matches!(typed, ScalarAutodiffError::NonFiniteCost { value } if value.is_nan()));
    assert_eq!(error.to_string(), "the cost function returned NaN");
}
