//! Random programs, compiled and compared: the second family, functions in the forms the
//! compiled sweeps of `name_grad` cover.
//!
//! The tests are `bits` (`name_grad` against `name_graph` + `backward()`, bit for bit;
//! see `tests/random_programs/bits.rs`) and `second_order` (`name_jvp` and `name_hvp`
//! against `name_grad`). `tests/sweep_bits_language.rs` and `tests/sweep_bits_checks.rs` run
//! them on the other families: one binary per family, so that they compile at once.

// Each family uses part of it (and under clippy, with a stand-in for the programs, none).
#[allow(dead_code)]
#[path = "random_programs/support.rs"]
mod support;

#[rustfmt::skip]
#[cfg(not(clippy))]
#[path = "random_programs/generated_sweeps.rs"]
mod generated;

/// What clippy sees instead of the generated programs. They allow every clippy lint (they are
/// random code, `x * 1.0` and all), so linting them finds nothing, and type-checking their
/// expansion is minutes of each clippy run: the test build compiles and runs them, and
/// clippy lints the harness around them.
#[cfg(clippy)]
mod generated {
    pub const PROGRAMS: &[crate::support::Program] = &[];
    pub const ALL_PROGRAMS: usize = 0;
    pub const ON_THE_TAPE: &[&str] = &[];
    pub const FILE: &str = "";
}

#[path = "random_programs/bits.rs"]
mod bits;

#[path = "random_programs/second_order.rs"]
mod second_order;
