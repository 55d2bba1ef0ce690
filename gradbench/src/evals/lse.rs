//! `lse`: log-sum-exp, `ln Σ exp(x_i)`, computed stably around the largest `x_i`, and
//! its gradient (the softmax of `x`).

use scalar_autodiff::differentiable;
use serde::Deserialize;
use serde_json::Value;

use super::{dispatch, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// `A + ln Σ exp(x_i - A)` with `A` the largest `x_i` (the C++ reference's order). `A`
/// is detached: the value does not depend on it (its two paths' derivatives cancel
/// exactly), so the gradient is the softmax either way, and the reverse sweep need not
/// walk back the chain of maxima.
#[differentiable]
pub fn lse(#[param] x: &[f64]) -> f64 {
    let mut a = x[0].detach();
    for i in 1..x.len() {
        a = a.max(x[i].detach());
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += (x[i] - a).exp();
    }
    s.ln() + a
}

#[derive(Deserialize)]
struct Input {
    x: Vec<f64>,
    #[serde(flatten)]
    runs: Runs,
}

/// Runs `primal` or `gradient`; `None` for another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    dispatch(
        function,
        &["primal", "gradient"],
        input,
        |Input { x, runs }| {
            if x.is_empty() {
                return Err(ToolError::Input("lse of no numbers".into()));
            }
            match function {
                "primal" => timed(runs, || Ok(lse(&x))),
                _ => timed(runs, || Ok(lse_grad(&x)?.1)),
            }
        },
    )
}
