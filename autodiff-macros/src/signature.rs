//! Checks the signature and classifies its parameters: `f64` and `[f64; K]` parameters are
//! differentiated, every other parameter (and any marked `#[constant]`) is data.

use proc_macro2::TokenStream;
use quote::quote;
use syn::visit::Visit;
use syn::{
    Attribute, Expr, FnArg, Ident, ItemFn, Meta, Pat, ReturnType, Safety, Signature, Token, Type,
};

use crate::errors::Errors;
use crate::lesson::lesson;

/// What a parameter is to the gradient.
pub(crate) enum Kind {
    /// `x: f64`: one graph variable and one entry of the gradient.
    Scalar,
    /// `w: [f64; K]`: `K` graph variables and `K` entries of the gradient; holds `K` as
    /// written (a literal or a constant).
    Array(Expr),
    /// Anything else, or `#[constant]`: passed through untouched, no entry of the gradient.
    Data,
}

/// One parameter, in declaration order.
pub(crate) struct Param {
    /// The user's name, with the user's span; `None` for a pattern (reported).
    pub(crate) ident: Option<Ident>,
    /// `mut` if the body reassigns the parameter.
    pub(crate) mutability: Option<Token![mut]>,
    /// The type as written.
    pub(crate) ty: Type,
    /// How the parameter takes part in the gradient.
    pub(crate) kind: Kind,
}

impl Param {
    /// Whether the parameter is differentiated (a scalar or an array).
    pub(crate) fn is_tracked(&self) -> bool {
        !matches!(self.kind, Kind::Data)
    }
}

/// Checks every part of the signature, reporting each problem on its own tokens.
///
/// Returns one entry per non-`self` parameter, so that callers can still rewrite the body
/// and shape the stand-in functions when something was reported.
pub(crate) fn check(item: &ItemFn, errors: &mut Errors) -> Vec<Param> {
    let sig = &item.sig;
    if let Err(error) = item.modifiers.require_empty() {
        errors.push(error);
    }
    for attr in item.attrs.iter().filter(|attr| is_constant(attr)) {
        errors.push(stray_constant(attr));
    }
    qualifiers(sig, errors);
    if !sig.generics.params.is_empty() {
        errors.push(lesson(
            &sig.generics,
            "generic functions cannot be #[differentiable]",
            "the gradient is computed on concrete `f64` values, one per parameter",
            "remove the generic parameters and write concrete types for every parameter",
        ));
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(lesson(
            where_clause,
            "a `where` clause cannot appear on a #[differentiable] function",
            "its parameters and result have concrete types, so there is nothing to constrain",
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
    StrayConstant { errors }.visit_block(&item.block);
    params
}

/// The signature with every `#[constant]` removed from the parameters: the attribute is
/// this macro's, so rustc must not see it.
pub(crate) fn without_constant(sig: &Signature) -> Signature {
    let mut sig = sig.clone();
    for input in &mut sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed.attrs.retain(|attr| !is_constant(attr));
        }
    }
    sig
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

fn parameters(sig: &Signature, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                errors.push(lesson(
                    receiver,
                    "methods taking `self` cannot be #[differentiable]",
                    "the attribute differentiates free functions of their parameters; a \
                     receiver is not an `f64` it can make a graph variable of",
                    "make it a free function and pass the values it needs as parameters",
                ));
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let mut constant = false;
        for attr in &typed.attrs {
            if !is_constant(attr) {
                errors.push(lesson(
                    attr,
                    "attributes on parameters are not supported by #[differentiable], except \
                     `#[constant]`",
                    "every `f64` parameter becomes a graph variable and an entry of the \
                     gradient, which an attribute such as `#[cfg]` could silently remove",
                    "remove the attribute; write `#[constant]` to keep an `f64` parameter out \
                     of the gradient",
                ));
            } else if !matches!(attr.meta, Meta::Path(_)) {
                errors.push(lesson(
                    attr,
                    "`#[constant]` takes no arguments",
                    "it only marks the parameter as data, left out of the gradient",
                    "write `#[constant] name: f64`",
                ));
            } else {
                constant = true;
            }
        }
        let (ident, mutability) = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (Some(pat.ident.clone()), pat.mutability)
            }
            pat => {
                errors.push(lesson(
                    pat,
                    "parameter patterns are not supported by #[differentiable]",
                    "each parameter needs a plain name: the generated `_graph` and `_grad` \
                     functions pass it on by that name",
                    "write `name: f64` (or `mut name: f64`), and destructure in the body",
                ));
                (None, None)
            }
        };
        let ty = (*typed.ty).clone();
        let kind = match (is_f64(&ty), f64_array(&ty)) {
            _ if constant => Kind::Data,
            (true, _) => Kind::Scalar,
            (false, Some(len)) => Kind::Array(len.clone()),
            (false, None) => Kind::Data,
        };
        match &kind {
            Kind::Data if constant && !is_f64(&ty) && f64_array(&ty).is_none() => {
                if let Some(attr) = typed.attrs.iter().find(|attr| is_constant(attr)) {
                    errors.push(lesson(
                        attr,
                        "`#[constant]` applies to `f64` and `[f64; K]` parameters only",
                        "a parameter of any other type is data already: it is passed through \
                         untouched and has no entry in the gradient",
                        "remove `#[constant]`",
                    ));
                }
            }
            Kind::Array(_) => {
                if let Some(mutability) = mutability {
                    errors.push(lesson(
                        mutability,
                        "a parameter array of a #[differentiable] function cannot be `mut`",
                        "its elements are graph variables, read in the body as `w[i]`; \
                         assigning to one would replace a variable the gradient is taken for",
                        "remove `mut`, and copy an element into a `let mut` local to change it",
                    ));
                }
            }
            _ => {}
        }
        params.push(Param {
            ident,
            mutability,
            ty,
            kind,
        });
    }
    if sig.inputs.is_empty() {
        errors.push(lesson(
            quote!(#sig),
            "a #[differentiable] function needs at least one `f64` parameter",
            "the gradient is taken with respect to the parameters, so without one there is \
             nothing to differentiate",
            "add the inputs the result depends on, e.g. `fn f(x: f64) -> f64`",
        ));
    } else if !params.is_empty()
        && !params.iter().any(Param::is_tracked)
        && params.iter().all(|param| param.ident.is_some())
    {
        let inputs = &sig.inputs;
        errors.push(lesson(
            inputs,
            "a #[differentiable] function needs at least one `f64` or `[f64; K]` parameter to \
             differentiate",
            "every parameter here is data (of another type, or marked `#[constant]`), so the \
             gradient would have no entries",
            "add the inputs the result is differentiated by, as `name: f64` or `name: [f64; K]`",
        ));
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

/// The length `K` of a type spelled `[f64; K]`.
fn f64_array(ty: &Type) -> Option<&Expr> {
    match ty {
        Type::Array(array) if is_f64(&array.elem) => Some(&array.len),
        Type::Group(group) => f64_array(&group.elem),
        Type::Paren(paren) => f64_array(&paren.elem),
        _ => None,
    }
}

fn is_constant(attr: &Attribute) -> bool {
    attr.path().is_ident("constant")
}

fn stray_constant(attr: &Attribute) -> syn::Error {
    lesson(
        attr,
        "`#[constant]` marks a parameter of a #[differentiable] function, and cannot appear here",
        "it keeps an `f64` parameter out of the gradient (a hyperparameter such as a learning \
         rate); inside the body, values are constants or not by what they are computed from",
        "put it on an `f64` parameter, `#[constant] rate: f64`; for a value without gradient \
         inside the body write `value.detach()`",
    )
}

/// Reports every `#[constant]` inside the body.
struct StrayConstant<'a> {
    errors: &'a mut Errors,
}

impl<'ast> Visit<'ast> for StrayConstant<'_> {
    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if is_constant(attr) {
            self.errors.push(stray_constant(attr));
        }
    }
}
