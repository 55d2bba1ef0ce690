//! The examples' models (each module includes its example's source) and the optimizers
//! that train them: what a user copies trains, matches central differences and runs
//! compiled.

// Each test module includes its example's source under the example's own name
// (`curve_fit::curve_fit`), as the example's users name it.
#![allow(clippy::module_inception)]

#[path = "../support/mod.rs"]
mod support;

mod compiled;
mod curve_fit;
mod linear_regression;
mod microgpt;
mod mlp_moons;
mod newton;
mod optimizers;
mod shared_trunk;
mod softmax_regression;
mod xor_mlp;
