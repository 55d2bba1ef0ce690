//! Calls to other `#[differentiable]` functions and methods: `g(a, xs)`, `Self::g(a)` or
//! `self.g(a)` with a tracked argument records `g`'s operations into the same graph,
//! through `g`'s hidden generic body (`differentiable_g`).
//!
//! The attribute sees only this function's tokens, so it cannot know whether `g` is
//! differentiable. It calls `differentiable_g` (see `emit::body_ident`), which exists only
//! beside a `#[differentiable] fn g`; for any other function, rustc's own error then reads
//! "cannot find function `differentiable_g`", pointing at the call. Each tracked argument is
//! lent as `Tracked(&value)` (a scalar, an array, a row, a field, a whole parameter
//! struct), and data is passed as written; `g`'s signature decides what each becomes
//! (`__private::Argument` for its shape: the caller's values, or constants made from data),
//! so an argument reused across calls is one node whose every use is an edge.

use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprCall, ExprMethodCall};

use crate::emit::body_ident;
use crate::rewrite::value::Value;
use crate::rewrite::{backend, f64_function, unparenthesized, Rewriter};

impl Rewriter<'_> {
    /// Whether `call` names a function by a path, as a `#[differentiable]` callee would be.
    pub(crate) fn composable(&self, call: &ExprCall) -> bool {
        if f64_function(call).is_some() {
            return false;
        }
        let Expr::Path(path) = unparenthesized(&call.func) else {
            return false;
        };
        // A local (such as a closure) is not a function the attribute could have seen.
        let local = self.local_name(path).is_some();
        // (`g::<3>(..)`: sizes or types, no lifetimes.)
        let sizes = |arguments: &syn::PathArguments| match arguments {
            syn::PathArguments::None => true,
            syn::PathArguments::AngleBracketed(sizes) => sizes.args.iter().all(|arg| {
                matches!(
                    arg,
                    syn::GenericArgument::Type(_) | syn::GenericArgument::Const(_)
                )
            }),
            syn::PathArguments::Parenthesized(_) => false,
        };
        path.qself.is_none()
            && !local
            && path
                .path
                .segments
                .last()
                .is_some_and(|segment| sizes(&segment.arguments))
    }

    /// The call of `g`'s hidden generic body on this function's backend.
    pub(crate) fn compose(&mut self, call: &ExprCall) -> Value {
        let Expr::Path(path) = unparenthesized(&call.func) else {
            return self.invalid();
        };
        let mut callee = path.path.clone();
        if let Some(last) = callee.segments.last_mut() {
            // Spanned on the user's callee, so that rustc's error points at the call.
            last.ident = body_ident(&last.ident);
            // `g::<3>` calls `differentiable_g::<_, 3>`: the hidden body's backend comes
            // first (its lifetime is left to inference).
            if let syn::PathArguments::AngleBracketed(sizes) = &mut last.arguments {
                sizes.args.insert(0, syn::parse_quote!(_));
            }
        }
        // `Self::g(self, a)` is the method call `self.g(a)` written as a path: the receiver
        // comes before the backend, as in `g`'s hidden body.
        let receiver = call
            .args
            .first()
            .filter(|first| path.path.segments.len() == 2 && is_self_type(path) && is_self(first));
        let rest = call.args.iter().skip(usize::from(receiver.is_some()));
        let Some(args) = self.composed_args(rest) else {
            return self.invalid();
        };
        let backend = backend();
        let span = call.func.span();
        let receiver = receiver.map(|receiver| quote!(#receiver,));
        Value::Node(quote_spanned!(span=> #callee(#receiver #backend #(, #args)*)?))
    }

    /// Whether `call` is a method call on data with tracked arguments, such as
    /// `self.predict(w, x)`: a call of a `#[differentiable]` method.
    pub(crate) fn composable_method(&self, call: &ExprMethodCall) -> bool {
        let receiver = self.scan(&call.receiver);
        // A closure argument (`xs.iter().map(|x| w * x)`) is an iterator adapter, not a
        // method of the user's.
        call.turbofish.as_ref().is_none_or(|sizes| {
            sizes.args.iter().all(|arg| {
                matches!(
                    arg,
                    syn::GenericArgument::Type(_) | syn::GenericArgument::Const(_)
                )
            })
        }) && receiver.is_plain()
            && call.args.iter().any(|arg| self.scan(arg).tracked)
            && !call.args.iter().any(|arg| matches!(arg, Expr::Closure(_)))
    }

    /// The call of the method's hidden generic body on this function's backend:
    /// `receiver.differentiable_name(__backend, args..)`.
    pub(crate) fn compose_method(&mut self, call: &ExprMethodCall) -> Value {
        let Some(args) = self.composed_args(call.args.iter()) else {
            return self.invalid();
        };
        let (receiver, method) = (&call.receiver, body_ident(&call.method));
        // `self.g::<3>(..)` calls `self.differentiable_g::<_, 3>(..)`, as a path does.
        let turbofish = call.turbofish.as_ref().map(|sizes| {
            let sizes = sizes.args.iter();
            quote!(::<_, #(#sizes),*>)
        });
        let backend = backend();
        let span = call.method.span();
        Value::Node(quote_spanned!(span=> #receiver.#method #turbofish(#backend #(, #args)*)?))
    }

    /// The arguments of a composed call: each tracked one lent as `Tracked(&value)`, data
    /// as written; `None` if one was rejected (and reported).
    fn composed_args<'e>(
        &mut self,
        args: impl Iterator<Item = &'e Expr>,
    ) -> Option<Vec<proc_macro2::TokenStream>> {
        let private = quote!(::scalar_autodiff::__private);
        let mut out = Vec::new();
        let mut valid = true;
        for arg in args {
            // `&p.w`: a tracked value lent by reference, as plain Rust passes a `Vec` field
            // where a helper takes a slice; it is lent as it is.
            let arg = match arg {
                Expr::Reference(reference)
                    if reference.mutability.is_none() && self.scan(&reference.expr).tracked =>
                {
                    &*reference.expr
                }
                _ => arg,
            };
            let value = self.expr(arg);
            if value.is_tracked() {
                let operand = value.operand();
                out.push(quote!(#private::Tracked(#operand)));
            } else if value.is_valid() {
                out.push(value.plain());
            } else {
                valid = false;
            }
        }
        valid.then_some(out)
    }
}

/// Whether `path` starts with `Self`.
fn is_self_type(path: &syn::ExprPath) -> bool {
    path.qself.is_none()
        && path
            .path
            .segments
            .first()
            .is_some_and(|first| first.ident == "Self")
}

/// Whether `expr` is the receiver `self`.
fn is_self(expr: &Expr) -> bool {
    matches!(unparenthesized(expr), Expr::Path(path) if path.qself.is_none() && path.path.is_ident("self"))
}
