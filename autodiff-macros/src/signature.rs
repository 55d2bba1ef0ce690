//! Checks the signature `fn name(a: f64, b: f64, ...) -> f64` and names its parameters.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Safety, Signature, Token, Type};

use crate::errors::Errors;
use crate::lesson::lesson;

/// One `f64` parameter with a plain name, in declaration order.
pub(crate) struct Param {
    /// The user's name, with the user's span.
    pub(crate) ident: Ident,
    /// `mut` if the body reassigns the parameter.
    pub(crate) mutability: Option<Token![mut]>,
}

/// Checks every part of the signature, reporting each problem on its own tokens.
///
/// Returns one entry per non-`self` parameter, `None` where the parameter has no plain
/// name, so that callers can still rewrite the body and size the generated functions.
pub(crate) fn check(item: &ItemFn, errors: &mut Errors) -> Vec<Option<Param>> {
    let sig = &item.sig;
    if let Err(error) = item.modifiers.require_empty() {
        errors.push(error);
    }
    qualifiers(sig, errors);
    if !sig.generics.params.is_empty() {
        errors.push(lesson(
            &sig.generics,
            "generic functions cannot be #[differentiable]",
            "the gradient is computed on concrete `f64` values, one per parameter",
            "remove the generic parameters and write `f64` for every parameter",
        ));
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(lesson(
            where_clause,
            "a `where` clause cannot appear on a #[differentiable] function",
            "its parameters and result are all plain `f64`, so there is nothing to constrain",
            "remove the `where` clause",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(lesson(
            variadic,
            "variadic parameters cannot be #[differentiable]",
            "the gradient has one entry per named `f64` parameter",
            "list every input as `name: f64`",
        ));
    }
    let params = parameters(sig, errors);
    output(sig, errors);
    params
}

fn qualifiers(sig: &Signature, errors: &mut Errors) {
    if let Some(constness) = &sig.constness {
        errors.push(lesson(
            constness,
            "a `const fn` cannot be #[differentiable]",
            "the generated `_graph` and `_grad` functions record graph nodes at run time, \
             which a constant evaluation cannot do",
            "remove `const`; the plain function stays an ordinary `fn`",
        ));
    }
    if let Some(asyncness) = &sig.asyncness {
        errors.push(lesson(
            asyncness,
            "an `async fn` cannot be #[differentiable]",
            "the gradient of an `f64` computation is computed synchronously, and graph nodes \
             belong to one thread",
            "remove `async`; call the function from async code if you need to",
        ));
    }
    match &sig.safety {
        Safety::Unsafe(unsafe_token) => errors.push(lesson(
            unsafe_token,
            "an `unsafe fn` cannot be #[differentiable]",
            "the rewrite accepts only safe `f64` arithmetic, which never needs `unsafe`",
            "remove `unsafe`",
        )),
        Safety::Safe(safe_token) => errors.push(lesson(
            safe_token,
            "a `safe fn` cannot be #[differentiable]",
            "`safe` belongs to items of `extern` blocks, which have no body to rewrite",
            "remove `safe`",
        )),
        _ => {}
    }
    if let Some(abi) = &sig.abi {
        errors.push(lesson(
            abi,
            "an `extern` function cannot be #[differentiable]",
            "the generated `_graph` and `_grad` functions return Rust `Result`s, which have \
             no foreign calling convention",
            "remove the `extern` ABI; wrap the plain function in an `extern` function if \
             foreign code must call it",
        ));
    }
}

fn parameters(sig: &Signature, errors: &mut Errors) -> Vec<Option<Param>> {
    if sig.inputs.is_empty() {
        errors.push(lesson(
            quote!(#sig),
            "a #[differentiable] function needs at least one `f64` parameter",
            "the gradient is taken with respect to the parameters, so without one there is \
             nothing to differentiate",
            "add the inputs the result depends on, e.g. `fn f(x: f64) -> f64`",
        ));
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.push(lesson(
                    receiver,
                    "methods taking `self` cannot be #[differentiable]",
                    "the attribute differentiates free functions of `f64` parameters; a \
                     receiver is not an `f64` it can make a graph variable of",
                    "make it a free function and pass the values it needs as `f64` \
                     parameters",
                ));
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        if let Some(attr) = typed.attrs.first() {
            errors.push(lesson(
                attr,
                "attributes on parameters are not supported by #[differentiable]",
                "every parameter becomes a graph variable and an entry of the gradient, \
                 which an attribute such as `#[cfg]` could silently remove",
                "remove the attribute",
            ));
        }
        params.push(match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(Param {
                ident: pat.ident.clone(),
                mutability: pat.mutability,
            }),
            pat => {
                errors.push(lesson(
                    pat,
                    "parameter patterns are not supported by #[differentiable]",
                    "each parameter needs a plain name: it becomes one graph variable and one \
                     entry of the gradient, in parameter order",
                    "write `name: f64` (or `mut name: f64`)",
                ));
                None
            }
        });
        if !is_f64(&typed.ty) {
            errors.push(lesson(
                &typed.ty,
                "every parameter of a #[differentiable] function must have type `f64`",
                "each parameter becomes a graph variable, and gradients exist only for `f64` \
                 values",
                "write `name: f64`; convert other inputs to `f64` before the call",
            ));
        }
    }
    params
}

fn output(sig: &Signature, errors: &mut Errors) {
    match &sig.output {
        ReturnType::Type(_, ty) if is_f64(ty) => {}
        ReturnType::Type(arrow, ty) => errors.push(lesson(
            quote!(#arrow #ty),
            "the return type of a #[differentiable] function must be `f64`",
            "reverse mode differentiates one `f64` result with respect to the parameters",
            "return the single `f64` to differentiate: `-> f64`",
        )),
        ReturnType::Default => {
            let ident = &sig.ident;
            let inputs = &sig.inputs;
            let mut tokens = quote!(#ident);
            sig.paren_token
                .surround(&mut tokens, |tokens: &mut TokenStream| {
                    tokens.extend(quote!(#inputs))
                });
            errors.push(lesson(
                tokens,
                "a #[differentiable] function must return `f64`, but this one has no return type",
                "reverse mode differentiates one `f64` result with respect to the parameters",
                "add `-> f64` after the parameters",
            ));
        }
    }
}

/// Whether `ty` is spelled `f64` (possibly inside invisible or round parentheses).
pub(crate) fn is_f64(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.qself.is_none() && path.path.is_ident("f64"),
        Type::Group(group) => is_f64(&group.elem),
        Type::Paren(paren) => is_f64(&paren.elem),
        _ => false,
    }
}
