//! The `#[differentiable]` attribute of [`autodiff`](https://docs.rs/autodiff): it turns a
//! plain `f64` function into graph-building code with exact reverse-mode gradients.
//!
//! Use it through `autodiff` (`use autodiff::differentiable;`): the generated code names the
//! runtime as `::autodiff`, and the runnable examples live on that re-export.
//!
//! The crate is laid out like dtolnay's attribute crates: this file only delegates to
//! `expand`, which checks the attribute's arguments (`args`) and the signature
//! (`signature`), rewrites the body (`rewrite`, with every rejection worded in
//! `unsupported`) and emits the three functions (`emit`). Every error of one function is
//! collected (`errors`) and reported in one compile.
#![forbid(unsafe_code)]

mod args;
mod emit;
mod errors;
mod expand;
mod lesson;
mod ops;
mod plain;
mod rewrite;
mod signature;
mod unsupported;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;

/// Defined in `autodiff-macros`: depend on `autodiff` and use it as
/// `autodiff::differentiable`, since the generated code names the runtime as `::autodiff`.
/// The full description, with runnable examples, is on that re-export.
#[proc_macro_attribute]
pub fn differentiable(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::expand(args.into(), item.into()).into()
}
