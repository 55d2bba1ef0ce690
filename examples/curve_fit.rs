//! Levenberg-Marquardt fit of a decaying exponential `y = a e^(-b x) + c` to 24 points,
//! with the exact Jacobian of the residuals that `#[differentiable]` writes
//! (`residuals_jacobian`), printing every iteration.
//!
//! Each iteration solves `(JᵀJ + λ diag(JᵀJ)) d = -Jᵀr` and keeps the step if it lowers
//! the sum of squares (then `λ` shrinks tenfold, towards Gauss-Newton), or else raises
//! `λ` tenfold and tries again (towards a short gradient step): Marquardt's method.
//!
//! Run with `cargo run --release --example curve_fit`.

use scalar_autodiff::{differentiable, ScalarAutodiffError};

/// The number of points.
pub const POINTS: usize = 24;
/// The parameters the points are generated with: `a`, `b`, `c`.
pub const TRUE: [f64; 3] = [2.5, 1.3, 0.5];

/// The residuals `model(x_i) - y_i` of `p = [a, b, c]`: one output per point, so the
/// Jacobian is 24 by 3.
#[differentiable]
pub fn residuals(p: [f64; 3], xs: &[f64; POINTS], ys: &[f64; POINTS]) -> [f64; POINTS] {
    let mut r = [0.0; POINTS];
    for i in 0..POINTS {
        r[i] = p[0] * (-p[1] * xs[i]).exp() + p[2] - ys[i];
    }
    r
}

/// The points: `x` evenly over [0, 4], `y` on the true curve plus a small fixed wiggle
/// (`noise` times a sine), so that a fit with `noise = 0` recovers [`TRUE`] exactly.
pub fn points(noise: f64) -> ([f64; POINTS], [f64; POINTS]) {
    let xs = std::array::from_fn(|i| 4.0 * i as f64 / (POINTS - 1) as f64);
    let ys = std::array::from_fn(|i| {
        let x: f64 = xs[i];
        TRUE[0] * (-TRUE[1] * x).exp() + TRUE[2] + noise * (7.0 * x).sin()
    });
    (xs, ys)
}

/// One iteration as the example prints it.
#[derive(Clone, Debug)]
pub struct Iteration {
    /// The parameters before the iteration.
    pub p: [f64; 3],
    /// Half the sum of squared residuals there.
    pub cost: f64,
    /// The damping the accepted step used.
    pub lambda: f64,
}

/// Half the sum of squares of `r`.
fn cost(r: &[f64]) -> f64 {
    0.5 * r.iter().map(|v| v * v).sum::<f64>()
}

/// Solves the 3 by 3 system `a d = b` by Gaussian elimination with partial pivoting;
/// `None` if it is singular.
fn solve(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col] == 0.0 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let pivot_row = a[col];
        for row in col + 1..3 {
            let factor = a[row][col] / pivot_row[col];
            for (entry, &above) in a[row].iter_mut().zip(&pivot_row).skip(col) {
                *entry -= factor * above;
            }
            b[row] -= factor * b[col];
        }
    }
    let mut d = [0.0; 3];
    for row in (0..3).rev() {
        let rest: f64 = (row + 1..3).map(|k| a[row][k] * d[k]).sum();
        d[row] = (b[row] - rest) / a[row][row];
    }
    Some(d)
}

/// Levenberg-Marquardt from `start` until the step is below `tolerance` relative to `p`
/// or after `max_iterations`: the iterations and the final parameters.
///
/// # Errors
///
/// A [`ScalarAutodiffError`] if the residuals or their Jacobian are refused.
pub fn fit(
    start: [f64; 3],
    xs: &[f64; POINTS],
    ys: &[f64; POINTS],
    tolerance: f64,
    max_iterations: usize,
) -> Result<(Vec<Iteration>, [f64; 3]), ScalarAutodiffError> {
    let mut p = start;
    let mut lambda = 1e-3;
    let mut iterations = Vec::new();
    for _ in 0..max_iterations {
        let (r, j) = residuals_jacobian(p, xs, ys)?;
        let now = cost(&r);
        // JᵀJ and Jᵀr.
        let mut jtj = [[0.0; 3]; 3];
        let mut jtr = [0.0; 3];
        for (row, residual) in j.iter().zip(&r) {
            for a in 0..3 {
                jtr[a] += row[a] * residual;
                for b in 0..3 {
                    jtj[a][b] += row[a] * row[b];
                }
            }
        }
        let mut step = None;
        while lambda < 1e12 {
            let mut damped = jtj;
            for a in 0..3 {
                damped[a][a] += lambda * jtj[a][a];
            }
            if let Some(d) = solve(damped, jtr.map(|v| -v)) {
                let next = [p[0] + d[0], p[1] + d[1], p[2] + d[2]];
                // The plain function: an overflow is an infinite cost, and NaN compares false.
                if cost(&residuals(next, xs, ys)) <= now {
                    step = Some((next, d));
                    break;
                }
            }
            lambda *= 10.0;
        }
        let Some((next, d)) = step else { break };
        iterations.push(Iteration {
            p,
            cost: now,
            lambda,
        });
        p = next;
        lambda = (lambda / 10.0).max(1e-12);
        let size = d
            .iter()
            .zip(&p)
            .map(|(d, p)| (d / p.abs().max(1.0)).abs())
            .fold(0.0, f64::max);
        if size < tolerance {
            break;
        }
    }
    Ok((iterations, p))
}

fn main() -> Result<(), ScalarAutodiffError> {
    let (xs, ys) = points(0.02);
    let (iterations, p) = fit([1.0, 0.5, 0.0], &xs, &ys, 1e-10, 100)?;
    println!("iter  a                  b                  c                  cost          lambda");
    for (index, it) in iterations.iter().enumerate() {
        println!(
            "{index:>4}  {:<18.12} {:<18.12} {:<18.12} {:<13.6e} {:.0e}",
            it.p[0], it.p[1], it.p[2], it.cost, it.lambda
        );
    }
    let (r, _) = residuals_jacobian(p, &xs, &ys)?;
    println!(
        "fit   a = {:.9}, b = {:.9}, c = {:.9} (generated with {:?} and a wiggle of 0.02), cost {:.6e}",
        p[0],
        p[1],
        p[2],
        TRUE,
        cost(&r)
    );
    Ok(())
}
