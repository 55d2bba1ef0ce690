//! The examples' models (each module includes its example's source) and the optimizers
//! that train them: what a user copies trains, matches central differences and runs
//! compiled.

#[path = "../support/mod.rs"]
mod support;

mod compiled;
mod curve_fit;
mod linear_regression;
mod mlp_moons;
mod newton;
mod optimizers;
mod shared_trunk;
mod softmax_regression;
mod xor_mlp;
