//! One module per GradBench eval: the objective as `#[differentiable]` Rust, and
//! `evaluate`, which reads the eval's input, runs a function as the input's runs ask and
//! gives its output in the eval's shape.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::protocol::{measure, Evaluated, Runs, ToolError};

pub mod ba;
pub mod det;
pub mod gmm;
pub mod hello;
pub mod ht;
pub mod kmeans;
pub mod llsq;
pub mod lse;
pub mod lstm;
pub mod ode;

/// The evals this tool defines.
pub const MODULES: &[&str] = &[
    "hello", "llsq", "lse", "det", "ode", "kmeans", "gmm", "lstm", "ba", "ht",
];

/// Runs `function` of `module` on `input` (an eval's `input` field).
pub fn evaluate(module: &str, function: &str, input: Value) -> Result<Evaluated, ToolError> {
    let unknown = || ToolError::UnknownFunction {
        module: module.into(),
        function: function.into(),
    };
    match module {
        "hello" => hello::evaluate(function, input).ok_or_else(unknown)?,
        "llsq" => llsq::evaluate(function, input).ok_or_else(unknown)?,
        "lse" => lse::evaluate(function, input).ok_or_else(unknown)?,
        "det" => det::evaluate(function, input).ok_or_else(unknown)?,
        "ode" => ode::evaluate(function, input).ok_or_else(unknown)?,
        "kmeans" => kmeans::evaluate(function, input).ok_or_else(unknown)?,
        "gmm" => gmm::evaluate(function, input).ok_or_else(unknown)?,
        "lstm" => lstm::evaluate(function, input).ok_or_else(unknown)?,
        "ba" => ba::evaluate(function, input).ok_or_else(unknown)?,
        "ht" => ht::evaluate(function, input).ok_or_else(unknown)?,
        _ => Err(ToolError::UnknownModule(module.into())),
    }
}

/// An eval's input read into its type.
pub(crate) fn read<T: DeserializeOwned>(input: Value) -> Result<T, ToolError> {
    Ok(serde_json::from_value(input)?)
}

/// The input read as `I` and given to `run`, if `function` is one of `functions`; `None`
/// for another function.
pub(crate) fn dispatch<I: DeserializeOwned>(
    function: &str,
    functions: &[&str],
    input: Value,
    run: impl FnOnce(I) -> Result<Evaluated, ToolError>,
) -> Option<Result<Evaluated, ToolError>> {
    functions
        .contains(&function)
        .then(|| read(input).and_then(run))
}

/// `f` run as `runs` asks, its last result as the output.
pub(crate) fn timed<T: Into<Value>>(
    runs: Runs,
    f: impl FnMut() -> Result<T, ToolError>,
) -> Result<Evaluated, ToolError> {
    let (output, timings) = measure(runs, f)?;
    Ok(Evaluated {
        output: output.into(),
        timings,
    })
}

/// Whether `rows` are `count` rows of `width` numbers each.
pub(crate) fn shaped(rows: &[Vec<f64>], count: usize, width: usize) -> bool {
    rows.len() == count && rows.iter().all(|row| row.len() == width)
}

/// Rows of `width` from flat numbers, as the evals' outputs nest them.
pub(crate) fn rows(flat: &[f64], width: usize) -> Vec<Vec<f64>> {
    match width {
        0 => vec![Vec::new(); flat.len()],
        _ => flat.chunks(width).map(<[f64]>::to_vec).collect(),
    }
}
