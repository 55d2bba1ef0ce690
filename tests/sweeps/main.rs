//! The compiled sweeps of `name_grad`, `name_jvp` and `name_hvp` on hand-picked bodies, and
//! the second-order forms (`name_hessian`, `name_jacobian`) against central differences.
//! The random programs are `tests/sweep_bits_*.rs`, binaries of their own because they take
//! most of the compile time.

#[path = "../support/mod.rs"]
mod support;

mod aliasing;
mod cases;
mod control;
mod copies;
mod generic;
mod growable;
mod guard;
mod helpers;
mod hvp;
mod long;
mod second_order;
