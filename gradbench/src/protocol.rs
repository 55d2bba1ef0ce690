//! GradBench's protocol: the eval sends one JSON message a line on stdin, the tool answers
//! each with one line on stdout carrying the same `id`.
//!
//! | message `kind` | answer |
//! | --- | --- |
//! | `start` | `{"id", "tool"}` |
//! | `define` (a `module`) | `{"id", "success"}`, and an `error` if the module is not here |
//! | `evaluate` (`module`, `function`, `input`) | `{"id", "success", "output", "timings"}`, or an `error` |
//! | anything else (`analysis`, ...) | `{"id"}` |

use std::io::{self, BufRead, Write};
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::evals;

/// The tool's name in GradBench's tables.
pub const TOOL: &str = "scalar-autodiff";

/// What went wrong with one message: answered with `"success": false` and this text,
/// never a panic.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The line is not JSON, or the input not of its eval's shape.
    #[error("the message does not read: {0}")]
    Json(#[from] serde_json::Error),
    /// No eval of this name here.
    #[error("no module `{0}` in this tool")]
    UnknownModule(String),
    /// The module has no such function.
    #[error("module `{module}` has no function `{function}`")]
    UnknownFunction {
        /// The module asked for.
        module: String,
        /// The function asked for.
        function: String,
    },
    /// An input of the right shape that the function cannot take (its sizes disagree).
    #[error("{0}")]
    Input(String),
    /// The library's typed error (a non-finite value, say).
    #[error(transparent)]
    Autodiff(#[from] scalar_autodiff::ScalarAutodiffError),
}

/// How many times to run a function: at least `min_runs` times, and until the runs add
/// up to `min_seconds` (every input carries these two).
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Runs {
    /// The fewest runs.
    #[serde(default = "one")]
    pub min_runs: usize,
    /// The least time the runs add up to.
    #[serde(default)]
    pub min_seconds: f64,
}

fn one() -> usize {
    1
}

/// A function's output and the time of each run, in nanoseconds.
#[derive(Debug)]
pub struct Evaluated {
    /// The output as the eval expects it.
    pub output: Value,
    /// One `evaluate` timing a run: the computation alone, not reading or writing JSON.
    pub timings: Vec<u64>,
}

/// Runs `f` as `runs` asks, timing each run alone; the last run's result.
pub fn measure<T>(
    runs: Runs,
    mut f: impl FnMut() -> Result<T, ToolError>,
) -> Result<(T, Vec<u64>), ToolError> {
    let mut timings = Vec::new();
    let mut total = 0.0;
    loop {
        let start = Instant::now();
        let result = std::hint::black_box(f()?);
        let nanoseconds = start.elapsed().as_nanos();
        timings.push(u64::try_from(nanoseconds).unwrap_or(u64::MAX));
        total += nanoseconds as f64 / 1e9;
        if timings.len() >= runs.min_runs.max(1) && total >= runs.min_seconds {
            return Ok((result, timings));
        }
    }
}

/// The answer to one message line.
pub fn answer(line: &str) -> String {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        // Without an id there is no one to answer: say so with a null id.
        Err(error) => return failure(&Value::Null, &ToolError::Json(error)),
    };
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    let text = |key: &str| message.get(key).and_then(Value::as_str).unwrap_or("");
    let answer = match text("kind") {
        "start" => json!({ "id": id, "tool": TOOL }),
        "define" => match evals::MODULES.contains(&text("module")) {
            true => json!({ "id": id, "success": true }),
            false => return failure(&id, &ToolError::UnknownModule(text("module").into())),
        },
        "evaluate" => {
            let input = message.get("input").cloned().unwrap_or(Value::Null);
            match evals::evaluate(text("module"), text("function"), input) {
                Ok(done) => {
                    let timings: Vec<Value> = done
                        .timings
                        .iter()
                        .map(|ns| json!({ "name": "evaluate", "nanoseconds": ns }))
                        .collect();
                    json!({ "id": id, "success": true, "output": done.output, "timings": timings })
                }
                Err(error) => return failure(&id, &error),
            }
        }
        _ => json!({ "id": id }),
    };
    answer.to_string()
}

fn failure(id: &Value, error: &ToolError) -> String {
    json!({ "id": id, "success": false, "error": error.to_string() }).to_string()
}

/// Answers every line of `input` on `output`, flushing after each (the eval waits for it).
pub fn serve(input: impl BufRead, mut output: impl Write) -> io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        writeln!(output, "{}", answer(&line))?;
        output.flush()?;
    }
    Ok(())
}
