//! GradBench's evals (github.com/gradbench/gradbench) as `#[differentiable]` Rust: each
//! objective written once, as the eval's README and C++ reference define it, every
//! derivative from the functions the attribute generates. [`protocol`] speaks the
//! suite's JSON lines; [`evals`] holds one module per eval.
#![forbid(unsafe_code)]

pub mod evals;
pub mod protocol;
