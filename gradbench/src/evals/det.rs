//! `det`: the determinant of an `ell` by `ell` matrix by expansion by minors (`ell!`
//! products, chosen by the eval as a source of operations, not as a good algorithm), and
//! its gradient, every entry's cofactor.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// The determinant of the minor of `a` (`n` by `n`, row-major) made of rows `row..n` and
/// of the columns not in `used` (a bit a column), expanded along its first row: the C++
/// reference's `det_of_minor`, its linked lists of rows and columns a bit set here. The
/// signed terms are added in column order as there, so the numbers are the same.
#[differentiable]
fn minor(#[param] a: &[f64], n: usize, row: usize, used: u64) -> f64 {
    let mut det = 0.0;
    if row + 1 == n {
        for column in 0..n {
            if used & (1 << column) == 0 {
                det = a[row * n + column];
            }
        }
        return det;
    }
    let mut sign = 1.0;
    for column in 0..n {
        if used & (1 << column) == 0 {
            det += sign * a[row * n + column] * minor(a, n, row + 1, used | (1 << column));
            sign = -sign;
        }
    }
    det
}

/// The determinant of `a`, `ell` by `ell` in row-major order (`ell` from 1 to 64).
#[differentiable]
pub fn det(#[param] a: &[f64], ell: usize) -> f64 {
    minor(a, ell, 0, 0)
}

#[derive(Deserialize)]
struct Input {
    #[serde(rename = "A")]
    a: Vec<f64>,
    ell: usize,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `primal` or `gradient`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["primal", "gradient"],
        input,
        |Input { a, ell, runs }| {
            if !(1..=64).contains(&ell) || ell.checked_mul(ell) != Some(a.len()) {
                return Err(ToolError::Input(format!(
                    "a {ell} by {ell} matrix (from 1 to 64) of {} numbers",
                    a.len()
                )));
            }
            match function {
                "primal" => timed(runs, || Ok(det(&a, ell))),
                _ => timed(runs, || Ok(det_grad(&a, ell)?.1)),
            }
        },
    )
}
