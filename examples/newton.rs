//! Newton's method on the Rosenbrock function from the classic start (-1.2, 1), with the
//! exact Hessian `#[differentiable]` writes (`rosenbrock_hessian`), printing every step.
//!
//! Each step solves `H d = -g` (a 2 by 2 system, by Cramer's rule) and moves to `x + d`:
//! pure Newton, which from this start reaches the minimum at (1, 1) to the last digit in
//! seven steps, where gradient descent needs thousands. Newton is not a descent method:
//! the third point lies higher than the second (f is 1412 there), and the next step lands
//! in the valley anyway, because the model it minimizes is the function's exact
//! second-order Taylor expansion.
//!
//! Run with `cargo run --release --example newton`.

use scalar_autodiff::{differentiable, ScalarAutodiffError};

/// Rosenbrock's banana-shaped valley, with its minimum 0 at (1, 1).
#[differentiable]
pub fn rosenbrock(x: f64, y: f64) -> f64 {
    (1.0 - x).powi(2) + 100.0 * (y - x * x).powi(2)
}

/// One Newton step as the example prints it.
#[derive(Clone, Debug)]
pub struct Step {
    /// The point before the step.
    pub point: [f64; 2],
    /// The function there.
    pub value: f64,
    /// The gradient's length there.
    pub gradient_norm: f64,
}

/// Why a Newton run stopped early.
#[derive(Debug)]
pub enum NewtonError {
    /// The function or a derivative was refused.
    Autodiff(ScalarAutodiffError),
    /// The Hessian is singular at `point`: no Newton direction.
    Singular {
        /// Where.
        point: [f64; 2],
    },
}

impl From<ScalarAutodiffError> for NewtonError {
    fn from(error: ScalarAutodiffError) -> Self {
        NewtonError::Autodiff(error)
    }
}

/// Newton's method from `start` until the gradient's length is below `tolerance` or after
/// `max_steps` steps: the steps taken and the final point.
///
/// # Errors
///
/// A [`NewtonError`] if a derivative is refused or the Hessian is singular.
pub fn newton(
    start: [f64; 2],
    tolerance: f64,
    max_steps: usize,
) -> Result<(Vec<Step>, [f64; 2]), NewtonError> {
    let mut point = start;
    let mut steps = Vec::new();
    for _ in 0..max_steps {
        let (value, g, h) = rosenbrock_hessian(point[0], point[1])?;
        let gradient_norm = g[0].hypot(g[1]);
        if gradient_norm < tolerance {
            break;
        }
        // H d = -g by Cramer's rule.
        let det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
        if det == 0.0 || !det.is_finite() {
            return Err(NewtonError::Singular { point });
        }
        let d = [
            (-g[0] * h[1][1] + g[1] * h[0][1]) / det,
            (-g[1] * h[0][0] + g[0] * h[1][0]) / det,
        ];
        steps.push(Step {
            point,
            value,
            gradient_norm,
        });
        point = [point[0] + d[0], point[1] + d[1]];
    }
    Ok((steps, point))
}

fn main() -> Result<(), NewtonError> {
    let (steps, end) = newton([-1.2, 1.0], 1e-10, 50)?;
    println!("step  x                    y                    f(x, y)       |grad|");
    for (index, step) in steps.iter().enumerate() {
        println!(
            "{index:>4}  {:<+20.15} {:<+20.15} {:<13.6e} {:.6e}",
            step.point[0], step.point[1], step.value, step.gradient_norm
        );
    }
    let (value, g) = rosenbrock_grad(end[0], end[1])?;
    println!(
        "end   x = {:.15}, y = {:.15}, f = {value:.3e}, |grad| = {:.3e}, after {} Newton steps",
        end[0],
        end[1],
        g[0].hypot(g[1]),
        steps.len()
    );
    Ok(())
}
