//! The `#[differentiable]` attribute of `autodiff` (work in progress).
#![forbid(unsafe_code)]
