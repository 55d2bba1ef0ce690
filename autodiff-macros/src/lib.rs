//! The `#[differentiable]` attribute of [`scalar-autodiff`](https://docs.rs/scalar-autodiff): it turns a
//! plain `f64` function into graph-building code with exact reverse-mode gradients; and
//! `#[derive(Parameters)]`, which makes a struct of parameter shapes one shape.
//!
//! Use them through `scalar-autodiff` (`use scalar_autodiff::{differentiable, Parameters};`): the
//! generated code names the runtime as `::scalar_autodiff`, and the runnable examples live on those
//! re-exports.
//!
//! The crate reads as its phases. This file only delegates to `expand`, which runs them in
//! order for one function:
//!
//! 1. **`parse`**: how deep the item nests (`nesting`: syn's parser recurses on the
//!    compiler's stack, so an item nested past a limit is an error rather than a crash), the
//!    attribute's arguments (`args`), and the signature (`signature`: which parameters are
//!    differentiated, in which shape, and which are data).
//! 2. **`desugar`**: forms read as others the later phases know (`continue`, `break` and
//!    `return` at any depth as flags, `match` on data as an `if` chain, `.map(..).fold(..)`,
//!    folds as loops in `hoist`).
//! 3. **`rewrite`**: the body as graph operations on a backend, the hidden generic body that
//!    `_graph`, the tape and callers run. Each expression is classified by the tracked names
//!    it mentions (`mentions`): plain Rust over data is kept as written; the rest becomes
//!    operations (`expression`, `value`), with statements, branches and loops keeping their
//!    shape (`statement`, `branch`, `looping`), conditions read on primal values
//!    (`primal`), calls to other differentiable functions recorded into the same graph
//!    (`compose`), and growable vectors (`growable`). Every rejection is worded in
//!    `unsupported`.
//! 4. **`sweep`**: the compiled sweeps of `_grad` and `_hvp`, and the halves other sweeps
//!    call. `lower` reads the rewritten body into the analysed form of `ir` (tracked
//!    variables, operations in recording order, statements, calls, loops); `analyse` does
//!    so once per function for the sweeps and once for the halves, checks the copies, and
//!    adds what may be recomputed (`names`) and where numbers are checked (`checks`);
//!    `emit` writes the forward and reverse sweeps from it, on `f64`s and on duals from
//!    the same program.
//! 5. **`emit`**: the generated functions, one file per form (`plain`, `hidden`, `graph`,
//!    `grad`, `higher`, and `stubs` for a rejected function).
//!
//! A `while` loop, for example, is rewritten in `rewrite/looping.rs`, lowered to a
//! `Stmt::For` with `condition` set in `sweep/lower.rs` (`while_loop`), and swept forward
//! and back in `sweep/emit.rs`. The operations the runtime records are one table, `ops`.
//! Every error of one function is collected (`errors`) and reported in one compile, worded
//! as a `lesson`; custom derivative rules live in `rule`, the derive in `derive`, and the
//! attribute on a `use` (helpers imported by name with their companions) in `imports`.
#![forbid(unsafe_code)]

mod derive;
mod desugar;
mod emit;
mod errors;
mod expand;
mod imports;
mod lesson;
mod ops;
mod parse;
mod rewrite;
mod rule;
mod sweep;
mod vector;

#[cfg(test)]
mod expansions;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Defined in `autodiff-macros`: depend on `scalar-autodiff` and use it as
/// `scalar_autodiff::differentiable`, since the generated code names the runtime as `::scalar_autodiff`.
/// The full description, with runnable examples, is on that re-export.
#[proc_macro_attribute]
pub fn differentiable(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}

/// Defined in `autodiff-macros`: depend on `scalar-autodiff` and use it as `scalar_autodiff::Parameters`
/// (`#[derive(scalar_autodiff::Parameters)]`), since the generated code names the runtime as
/// `::scalar_autodiff`. The full description, with runnable examples, is on that re-export.
#[proc_macro_derive(Parameters)]
pub fn derive_parameters(item: TokenStream) -> TokenStream {
    derive::derive(item.into()).into()
}
