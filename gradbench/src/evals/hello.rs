//! `hello`: the protocol's smoke test. `square` is `x²`, `double` its derivative.

use scalar_autodiff::differentiable;
use serde_json::Value;

use super::{dispatch, timed};
use crate::protocol::{Evaluated, Runs, ToolError};

/// `x²`.
#[differentiable]
pub fn square(x: f64) -> f64 {
    x * x
}

/// Runs `square` or `double` (square's derivative, from `square_grad`); `None` for
/// another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    // (The input is a bare number: one run each, as the eval asks no more.)
    let runs = Runs {
        min_runs: 1,
        min_seconds: 0.0,
    };
    dispatch(
        function,
        &["square", "double"],
        input,
        |x: f64| match function {
            "square" => timed(runs, || Ok(square(x))),
            _ => timed(runs, || Ok(square_grad(x)?.1[0])),
        },
    )
}
