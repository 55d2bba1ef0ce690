//! GradBench's evals (github.com/gradbench/gradbench) as `#[differentiable]` Rust: each
//! objective written once, as the eval's README and C++ reference define it, every
//! derivative from the functions the attribute generates. [`protocol`] speaks the
//! suite's JSON lines; [`evals`] holds one module per eval.
#![forbid(unsafe_code)]
// The objectives index their arrays as the evals' C++ references do.
#![allow(clippy::needless_range_loop)]

pub mod evals;
pub mod protocol;
