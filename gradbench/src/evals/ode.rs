//! `ode`: `s` Runge-Kutta steps (order 4) to `t = 2` of `y_0' = x_0`, `y_i' = x_i y_{i-1}`
//! from `y = 0`; `primal` is the solution, `gradient` the gradient of its last element.

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// The solution after `s` steps, as the C++ reference computes it (its `ode_fun` written
/// out at each of the four stages). `ode_vjp` gives the gradient of any combination of
/// its elements.
#[differentiable]
pub fn ode(#[param] x: &[f64], s: usize) -> Vec<f64> {
    let n = x.len();
    let h = 2.0 / s as f64;
    let mut y = vec![0.0; n];
    let mut k1 = vec![0.0; n];
    let mut k2 = vec![0.0; n];
    let mut k3 = vec![0.0; n];
    let mut k4 = vec![0.0; n];
    let mut tmp = vec![0.0; n];
    for _ in 0..s {
        k1[0] = x[0];
        for i in 1..n {
            k1[i] = x[i] * y[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + h * k1[i] / 2.0;
        }
        k2[0] = x[0];
        for i in 1..n {
            k2[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + h * k2[i] / 2.0;
        }
        k3[0] = x[0];
        for i in 1..n {
            k3[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            tmp[i] = y[i] + h * k3[i];
        }
        k4[0] = x[0];
        for i in 1..n {
            k4[i] = x[i] * tmp[i - 1];
        }
        for i in 0..n {
            y[i] += h * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]) / 6.0;
        }
    }
    y
}

#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    s: usize,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `primal` or `gradient`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["primal", "gradient"],
        input,
        |Input { x, s, runs }| {
            if x.is_empty() || s == 0 {
                return Err(ToolError::Input(
                    "an ODE of at least one equation and one step".into(),
                ));
            }
            match function {
                "primal" => timed(runs, || Ok(ode(&x, s))),
                _ => {
                    // The last element's gradient: the cotangent's last unit vector.
                    let mut last = vec![0.0; x.len()];
                    last[x.len() - 1] = 1.0;
                    timed(runs, || Ok(ode_vjp(&x, s, &last)?.1))
                }
            }
        },
    )
}
