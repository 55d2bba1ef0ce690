//! The generated functions of an accepted `#[differentiable] fn`, one file per form:
//!
//! - `plain`: the function as written, `.detach()` removed;
//! - `hidden`: the hidden generic body every other form runs, with the compiled halves it
//!   answers other functions' sweeps with;
//! - `graph`: `name_graph`, the body recorded on the caller's nodes;
//! - `grad`: `name_grad`, the compiled sweeps (written by `sweep`) with the trace behind
//!   them;
//! - `higher`: `name_jvp`, `name_hvp`, `name_hessian` and an array's `name_jacobian`;
//! - `stubs`: stand-ins for a rejected function.
//!
//! `function` holds what they are all written from, and `shapes` the types their signatures
//! spell out.

mod function;
mod grad;
mod graph;
mod hidden;
pub(crate) mod higher;
pub(crate) mod plain;
mod shapes;
mod stubs;

use proc_macro2::{TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::ItemFn;

use crate::parse::signature::{Output, Param};
use function::Function;

pub(crate) use hidden::{backend_type, body_ident, callable_ident, lent_lifetime};
pub(crate) use shapes::{
    array_len, by_reference, f64_shape, gradient_len, gradient_type, gradient_value, is_flat,
};
pub(crate) use stubs::stubs;

/// The functions of an accepted `#[differentiable] fn`, from its rewritten body
/// (`graph_body`). `halves` is what the hidden body answers another function's compiled
/// sweep, when the body's own sweeps do not say it (a custom rule's). `on_tape`: the user
/// chose the tape for every call.
pub(crate) fn functions(
    item: ItemFn,
    params: &[Param],
    output: &Output,
    graph_body: TokenStream,
    halves: Option<TokenStream>,
    on_tape: bool,
) -> TokenStream {
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
        ..
    } = item;
    let rule = halves.is_some();
    let function = Function::new(
        (&vis, &sig, &attrs, &block),
        params,
        output,
        graph_body,
        (on_tape, rule),
    );
    let hidden = hidden::items(&function, halves);
    let grad = grad::function(&function, rule);
    let graph = graph::function(&function);
    let higher = higher::of(&function);
    let uncovered = grad
        .uncovered
        .or(hidden.uncallable)
        .map(|error| error.to_compile_error());
    let plain = plain::function(&attrs, &vis, &sig, *block);
    let (hidden, grad) = (hidden.items, grad.function);
    quote! {
        #uncovered
        #plain
        #hidden
        #graph
        #grad
        #higher
    }
}

/// The function's const generic parameters (`const N: usize`, the only generics it may
/// have), and the turbofish that passes them on (`::<N>`), if any.
pub(crate) fn const_generics(
    generics: &syn::Generics,
) -> (Vec<&syn::ConstParam>, Option<TokenStream>) {
    let consts: Vec<&syn::ConstParam> = generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Const(constant) => Some(constant),
            _ => None,
        })
        .collect();
    let names = consts.iter().map(|constant| &constant.ident);
    let turbofish = (!consts.is_empty()).then(|| quote!(::<#(#names),*>));
    (consts, turbofish)
}

/// Whether the signature or the body names `Self` or `self`: then the function is inside
/// an `impl`.
pub(crate) fn mentions_self(sig: &syn::Signature, block: &syn::Block) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => ident == "Self" || ident == "self",
            TokenTree::Group(group) => walk(group.stream()),
            _ => false,
        })
    }
    walk(sig.to_token_stream()) || walk(block.to_token_stream())
}

/// The lints a generated derivative function silences: its body is the user's, rewritten,
/// and what the user wrote is linted on the plain function.
pub(crate) fn generated_lints() -> TokenStream {
    quote! {
        #[allow(
            dead_code,
            unused_mut,
            unused_variables,
            unused_assignments,
            unused_parens,
            unused_braces,
            non_snake_case,
            clippy::all
        )]
    }
}
