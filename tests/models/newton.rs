//! The Newton example reaches Rosenbrock's minimum in seven steps from (-1.2, 1), and its
//! Hessian is the analytic one at every step.

#[allow(dead_code)]
#[path = "../../examples/newton.rs"]
pub(crate) mod newton;

use newton::{newton, rosenbrock_hessian, NewtonError};

#[test]
fn newton_reaches_the_minimum_in_a_handful_of_steps() -> Result<(), NewtonError> {
    let (steps, end) = newton([-1.2, 1.0], 1e-10, 50)?;
    assert!(steps.len() <= 8, "{} steps", steps.len());
    assert!(
        (end[0] - 1.0).abs() < 1e-12 && (end[1] - 1.0).abs() < 1e-10,
        "{end:?}"
    );
    // Quadratic convergence at the end: each gradient norm about the square of the last.
    let norms: Vec<f64> = steps.iter().map(|step| step.gradient_norm).collect();
    let last = &norms[norms.len() - 2..];
    assert!(last[1] < 1e-3 * last[0], "{norms:?}");
    for step in &steps {
        let [x, y] = step.point;
        let (_, _, h) = rosenbrock_hessian(x, y)?;
        let expected = [
            [2.0 - 400.0 * (y - x * x) + 800.0 * x * x, -400.0 * x],
            [-400.0 * x, 200.0],
        ];
        for i in 0..2 {
            for j in 0..2 {
                let scale = expected[i][j].abs().max(1.0);
                assert!((h[i][j] - expected[i][j]).abs() <= 1e-13 * scale, "{h:?}");
            }
        }
    }
    Ok(())
}
