//! `llsq`: linear least squares. `n` points `t_i` evenly spaced over [-1, 1], the target
//! the sign of `t_i`, the model a polynomial with the `m` coefficients `x`:
//! `½ Σ_i (sign(t_i) - Σ_j x_j t_i^j)²` and its gradient in `x`.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// The objective, as the eval's C++ reference computes it (the powers of `t_i` built up
/// by multiplication, the inner sum subtracted term by term).
#[differentiable]
pub fn llsq(#[param] x: &[f64], n: usize) -> f64 {
    let mut sum = 0.0;
    for i in 0..n {
        let t = -1.0 + i as f64 * 2.0 / (n as f64 - 1.0);
        let mut inner = if t > 0.0 {
            1.0
        } else if t < 0.0 {
            -1.0
        } else {
            0.0
        };
        let mut power = 1.0;
        for j in 0..x.len() {
            inner -= x[j] * power;
            power *= t;
        }
        sum += inner * inner;
    }
    sum / 2.0
}

#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    n: usize,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `primal` or `gradient`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["primal", "gradient"],
        input,
        |Input { x, n, runs }| match function {
            "primal" => timed(runs, || Ok(llsq(&x, n))),
            _ => timed(runs, || Ok(llsq_grad(&x, n)?.1)),
        },
    )
}
