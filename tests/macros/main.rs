//! `#[differentiable]` on the forms people write: each module a family of bodies, checked
//! against plain Rust, central differences and the tape. One test binary for all of them
//! (each file in `tests/` is a crate of its own, compiled and linked apart).

// The deepest bodies of `robustness` and the long chains of `chain` and `long_sum` expand
// past rustc's default limit of 128.
#![recursion_limit = "2048"]

#[path = "../support/mod.rs"]
mod support;

mod arrays;
mod branches;
mod chain;
mod chapter;
mod compose;
mod custom_rules;
mod data;
mod error_locations;
mod functions;
mod long_sum;
mod loops;
mod methods;
mod models;
mod parameters;
mod robustness;
mod vectors;
