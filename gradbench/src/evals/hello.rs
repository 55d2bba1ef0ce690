//! `hello`: the protocol's smoke test. `square` is `x²`, `double` its derivative.

use scalar_autodiff::differentiable;
use serde_json::Value;

use super::read;
use crate::protocol::{measure, Evaluated, Runs, ToolError};

/// `x²`.
#[differentiable]
pub fn square(x: f64) -> f64 {
    x * x
}

/// Runs `square` or `double` (square's derivative, from `square_grad`); `None` for
/// another function.
pub fn evaluate(function: &str, input: Value) -> Option<Result<Evaluated, ToolError>> {
    // (The input is a bare number: one run each, as the eval asks no more.)
    let run = |x: f64| -> Result<Evaluated, ToolError> {
        let runs = Runs {
            min_runs: 1,
            min_seconds: 0.0,
        };
        let (output, timings) = match function {
            "square" => measure(runs, || Ok(square(x)))?,
            _ => measure(runs, || Ok(square_grad(x)?.1[0]))?,
        };
        Ok(Evaluated {
            output: output.into(),
            timings,
        })
    };
    match function {
        "square" | "double" => Some(read(input).and_then(run)),
        _ => None,
    }
}
