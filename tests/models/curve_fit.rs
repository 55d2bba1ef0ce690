//! The curve-fit example: its Jacobian is the analytic one, a fit of exact data recovers
//! the generating parameters, and a fit of wiggled data ends where the gradient of the sum
//! of squares vanishes.

#[allow(dead_code)]
#[path = "../../examples/curve_fit.rs"]
pub(crate) mod curve_fit;

use curve_fit::{fit, points, residuals, residuals_jacobian, POINTS, TRUE};
use scalar_autodiff::ScalarAutodiffError;

#[test]
fn the_jacobian_is_the_analytic_one() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = points(0.02);
    let p = [1.7, 0.9, -0.3];
    let (r, j) = residuals_jacobian(p, &xs, &ys)?;
    assert_eq!(r, residuals(p, &xs, &ys));
    for i in 0..POINTS {
        let e = (-p[1] * xs[i]).exp();
        let expected = [e, -p[0] * xs[i] * e, 1.0];
        for k in 0..3 {
            assert!(
                (j[i][k] - expected[k]).abs() <= 1e-15 * expected[k].abs().max(1.0),
                "j[{i}][{k}] = {} against {}",
                j[i][k],
                expected[k]
            );
        }
    }
    Ok(())
}

#[test]
fn exact_data_gives_back_the_generating_parameters() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = points(0.0);
    let (iterations, p) = fit([1.0, 0.5, 0.0], &xs, &ys, 1e-12, 100)?;
    assert!(iterations.len() < 30, "{} iterations", iterations.len());
    for k in 0..3 {
        assert!((p[k] - TRUE[k]).abs() < 1e-9, "{p:?}");
    }
    Ok(())
}

#[test]
fn wiggled_data_ends_at_a_stationary_point() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = points(0.02);
    let (iterations, p) = fit([1.0, 0.5, 0.0], &xs, &ys, 1e-10, 100)?;
    // The cost never rises from one accepted step to the next.
    assert!(iterations.windows(2).all(|w| w[1].cost <= w[0].cost));
    let (r, j) = residuals_jacobian(p, &xs, &ys)?;
    for k in 0..3 {
        let gradient: f64 = (0..POINTS).map(|i| j[i][k] * r[i]).sum();
        assert!(gradient.abs() < 1e-10, "Jᵀr[{k}] = {gradient}");
    }
    Ok(())
}
