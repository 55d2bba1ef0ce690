//! The rewrite of one expression: plain Rust, or a value of the backend's graph.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::Ident;

use crate::rewrite::{backend, Binding};

/// The rewrite of one expression.
pub(crate) enum Value {
    /// Ordinary Rust over data, of the user's type, evaluated as written. It becomes a
    /// constant where it meets a tracked value; the error is what to report then (an integer
    /// literal, say), if anything.
    Plain(TokenStream, Option<Box<syn::Error>>),
    /// An expression of the backend's value type: a new node, postfix-safe (a call chain
    /// ending in `?`, a block or a branch).
    Node(TokenStream),
    /// A tracked name in scope, referenced where it is used.
    Name(Ident, Binding),
    /// An element of a parameter array, `w[i]`: a place of the backend's value type.
    Element(TokenStream),
    /// `return ..`, `break` or `continue`: never produces a value, so fits any type.
    Diverge(TokenStream),
    /// The expression was rejected; the error is recorded and these tokens are never emitted.
    Invalid,
}

impl Value {
    pub(crate) fn is_valid(&self) -> bool {
        !matches!(self, Value::Invalid)
    }

    /// Whether this is a value of the graph (rather than plain, diverging or invalid).
    pub(crate) fn is_tracked(&self) -> bool {
        matches!(self, Value::Node(_) | Value::Name(..) | Value::Element(_))
    }

    /// The value as an operand: an expression of type `&V`.
    pub(crate) fn operand(&self) -> TokenStream {
        match self {
            Value::Node(node) | Value::Diverge(node) => quote!(&#node),
            Value::Name(name, Binding::Param | Binding::Array) => quote!(#name),
            Value::Name(name, _) => quote!(&#name),
            Value::Element(place) => quote!(&#place),
            Value::Plain(..) => {
                let owned = self.owned();
                quote!(&#owned)
            }
            Value::Invalid => TokenStream::new(),
        }
    }

    /// The value as an owned `V`: a node, another handle to a named node, or a constant.
    pub(crate) fn owned(&self) -> TokenStream {
        match self {
            Value::Node(node) | Value::Diverge(node) => node.clone(),
            Value::Name(name, Binding::Param | Binding::Array) => {
                quote!(::core::clone::Clone::clone(#name))
            }
            Value::Name(name, _) => quote!(::core::clone::Clone::clone(&#name)),
            Value::Element(place) => quote!(::core::clone::Clone::clone(&#place)),
            Value::Plain(plain, _) => {
                let constant = constant(plain);
                quote!(#constant?)
            }
            Value::Invalid => TokenStream::new(),
        }
    }

    /// The value as the function's `Result`: a node's last call returns one already (its
    /// final `?` is dropped, rather than writing `Ok(call?)`); a name is wrapped in `Ok`.
    pub(crate) fn result(&self) -> TokenStream {
        match self {
            Value::Node(node) => {
                let mut tokens: Vec<TokenTree> = node.clone().into_iter().collect();
                if matches!(tokens.last(), Some(TokenTree::Punct(p)) if p.as_char() == '?') {
                    tokens.pop();
                    return tokens.into_iter().collect();
                }
            }
            Value::Plain(plain, _) => return constant(plain),
            Value::Diverge(tokens) => return tokens.clone(),
            _ => {}
        }
        let owned = self.owned();
        quote!(::core::result::Result::Ok(#owned))
    }

    /// The tokens of a plain or diverging value, as written.
    pub(crate) fn plain(&self) -> TokenStream {
        match self {
            Value::Plain(tokens, _) | Value::Diverge(tokens) => tokens.clone(),
            _ => self.owned(),
        }
    }
}

/// `plain` as a constant node: `::scalar_autodiff::__private::constant(__backend, plain)`, a
/// `Result`, spanned on the plain value so a type error points at it.
fn constant(plain: &TokenStream) -> TokenStream {
    let span = plain
        .clone()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |token| token.span());
    let backend = backend();
    quote_spanned!(span=> ::scalar_autodiff::__private::constant(#backend, #plain))
}
