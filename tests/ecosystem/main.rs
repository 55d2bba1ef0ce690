//! The optional integrations: argmin's solvers (feature `argmin`) and rayon's batched
//! gradients (feature `rayon`). Each module compiles to nothing without its feature.

#[path = "../support/mod.rs"]
mod support;

mod argmin_problem;
mod parallel;
