//! The `#[differentiable]` attribute of [`scalar-autodiff`](https://docs.rs/scalar-autodiff): it turns a
//! plain `f64` function into graph-building code with exact reverse-mode gradients; and
//! `#[derive(Parameters)]`, which makes a struct of parameter shapes one shape.
//!
//! Use them through `scalar-autodiff` (`use scalar_autodiff::{differentiable, Parameters};`): the
//! generated code names the runtime as `::scalar_autodiff`, and the runnable examples live on those
//! re-exports.
//!
//! The crate is laid out like dtolnay's attribute crates: this file only delegates to
//! `expand`, which first measures how deep the item nests (`nesting`: syn's parser recurses
//! on the compiler's stack, so an item nested past a limit is an error rather than a
//! crash), then checks the attribute's arguments (`args`) and the signature (`signature`,
//! which sorts parameters into differentiated ones and data), reads a few forms as others it
//! knows (`desugar`: `.map(..).fold(..)`, a fold over a helper's result, `continue`, `match`
//! on data; `hoist`: folds as loops), rewrites the body
//! (`rewrite`) and emits the generated functions (`emit`). The rewrite classifies each expression by
//! the tracked names it mentions (`mentions`): plain Rust over data is kept as written; the
//! rest becomes graph operations (`expression`, `value`), with statements, branches and
//! loops keeping their shape (`statement`, `branch`, `looping`), conditions read on primal
//! values (`primal`) and calls to other differentiable functions recorded into the same
//! graph (`compose`). Every rejection is worded in `unsupported`, and every error of one
//! function is collected (`errors`) and reported in one compile. The derive lives in
//! `derive`, worded with the same `lesson`s.
#![forbid(unsafe_code)]

mod args;
mod branch;
mod compose;
mod derive;
mod desugar;
mod emit;
mod errors;
mod expand;
mod expression;
mod growable;
mod higher;
mod hoist;
mod lesson;
mod looping;
mod mentions;
mod nesting;
mod ops;
mod plain;
mod primal;
mod rewrite;
mod rule;
mod signature;
mod statement;
mod sweep;
mod unsupported;
mod value;

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
