//! Growable locals: `let mut keys = Vec::new();` (or `Vec::with_capacity(n)`, `vec![]`)
//! filled with `keys.push(k)` of tracked values, as a KV cache is built position by
//! position, and read as `keys[t][j]`, `keys.len()`, `keys.iter()`.
//!
//! The `let` starts as data; the first `push` of a tracked value promotes it (see
//! `rewrite::graph_body`), and from its declaration on it is a `Vec` of the backend's
//! values, read as any tracked local array is.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, ExprMethodCall, Type};

use crate::rewrite::value::Value;
use crate::rewrite::{backend, unparenthesized, Binding, Rewriter};

/// What a growable local starts as: `Vec::new()`, `Vec::with_capacity(n)` or `vec![]`,
/// rewritten (the capacity is data, as written).
pub(crate) fn new_vec(init: &Expr) -> Option<TokenStream> {
    match unparenthesized(init) {
        Expr::Call(call) => {
            let Expr::Path(path) = unparenthesized(&call.func) else {
                return None;
            };
            let names: Vec<String> = path
                .path
                .segments
                .iter()
                .map(|segment| segment.ident.to_string())
                .collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let tail = match names.as_slice() {
                [.., "Vec", tail] => *tail,
                _ => return None,
            };
            match (tail, call.args.len()) {
                ("new", 0) => Some(quote!(::std::vec::Vec::new())),
                ("with_capacity", 1) => {
                    let capacity = &call.args[0];
                    Some(quote!(::std::vec::Vec::with_capacity(#capacity)))
                }
                _ => None,
            }
        }
        Expr::Macro(mac) if mac.mac.path.is_ident("vec") && mac.mac.tokens.is_empty() => {
            Some(quote!(::std::vec::Vec::new()))
        }
        _ => None,
    }
}

/// The element shape a growable local's type names (`Vec<[f64; D]>`: `[f64; D]`), if it
/// names one.
pub(crate) fn element_shape(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = crate::parse::signature::ungrouped(ty) else {
        return None;
    };
    let last = path.path.segments.last()?;
    if last.ident != "Vec" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.first() {
        Some(syn::GenericArgument::Type(elem))
            if args.args.len() == 1
                && (crate::parse::signature::is_f64(elem)
                    || crate::parse::signature::is_f64_array(elem)) =>
        {
            Some(elem)
        }
        _ => None,
    }
}

/// A growable local's declaration: empty, of the backend's values in `shape` where the
/// type names it (so that reads before the first `push` in the text type-check), marked
/// for the sweeps either way.
pub(crate) fn declaration(start: &TokenStream, shape: Option<&Type>) -> TokenStream {
    let backend = backend();
    match shape {
        Some(shape) => {
            quote!(::scalar_autodiff::__private::growable::<#shape, _>(#backend, #start))
        }
        None => quote!(::scalar_autodiff::__private::grown(#backend, #start)),
    }
}

impl Rewriter<'_> {
    /// Whether `call` is `name.push(value)` on a local that is or may become growable.
    pub(crate) fn pushes(&self, call: &ExprMethodCall) -> bool {
        call.method == "push"
            && call.args.len() == 1
            && call.turbofish.is_none()
            && matches!(unparenthesized(&call.receiver), Expr::Path(path)
                if matches!(self.local_name(path), Some((_, Binding::Plain(Some(_)) | Binding::Local))))
    }

    /// `name.push(value)`: on a growable local, the value as an owned node (data as
    /// constants); on a data local, a tracked value promotes it (the pass is redone).
    pub(crate) fn push(&mut self, call: &ExprMethodCall) -> Value {
        let Expr::Path(path) = unparenthesized(&call.receiver) else {
            return self.invalid();
        };
        let value = self.expr(&call.args[0]);
        match self.local_name(path) {
            Some((name, Binding::Local)) => {
                let owned = match value {
                    Value::Plain(plain, None) => {
                        let backend = backend();
                        quote!(::scalar_autodiff::__private::constants(#backend, #plain)?)
                    }
                    value => {
                        let value = self.track(value);
                        if !value.is_valid() {
                            return value;
                        }
                        value.owned()
                    }
                };
                Value::Plain(quote!(#name.push(#owned)), None)
            }
            Some((_, Binding::Plain(Some(key)))) if value.is_tracked() => {
                self.promote(key);
                Value::Plain(quote!(()), None)
            }
            _ if !value.is_valid() => value,
            _ => {
                let receiver = &call.receiver;
                let arg = value.plain();
                Value::Plain(quote!(#receiver.push(#arg)), None)
            }
        }
    }
}
