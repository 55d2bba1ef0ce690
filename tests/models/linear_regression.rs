//! The linear-regression example recovers the line it was generated from, its loss falls at
//! every report, and its gradient matches central differences.

#[allow(dead_code)]
#[path = "../../examples/linear_regression.rs"]
pub(crate) mod linear_regression;

use linear_regression::{fit, loss, loss_grad, points, TRUE_B, TRUE_W};
use scalar_autodiff::{scalar_gradient_check, ScalarAutodiffError};

#[test]
fn gradient_descent_recovers_the_line() -> Result<(), ScalarAutodiffError> {
    let fit = fit(80, 0.5, 10)?;
    assert!((fit.w - TRUE_W).abs() < 1e-6, "w = {}", fit.w);
    assert!((fit.b - TRUE_B).abs() < 1e-6, "b = {}", fit.b);
    // The loss falls at every report, from about 3 to below 1e-20.
    let losses: Vec<f64> = fit.history.iter().map(|(_, value)| *value).collect();
    assert!(
        losses.windows(2).all(|pair| pair[1] < pair[0]),
        "{losses:?}"
    );
    assert!(
        losses[0] > 1.0 && losses[losses.len() - 1] < 1e-20,
        "{losses:?}"
    );
    Ok(())
}

#[test]
fn the_loss_gradient_matches_central_differences() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = points();
    assert_eq!(xs.len(), 200);
    for (w, b) in [(0.0, 0.0), (1.0, 2.0), (2.4, -0.9), (-3.0, 0.5)] {
        let (value, [dw, db]) = loss_grad(w, b, &xs, &ys)?;
        assert_eq!(value.to_bits(), loss(w, b, &xs, &ys).to_bits());
        let check = scalar_gradient_check(w, dw, 1e-6, 1e-7, |v| loss(v, b, &xs, &ys))?;
        assert!(check.passed, "{check:?}");
        let check = scalar_gradient_check(b, db, 1e-6, 1e-7, |v| loss(w, v, &xs, &ys))?;
        assert!(check.passed, "{check:?}");
    }
    Ok(())
}
