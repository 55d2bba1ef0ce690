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
    /// An operation's new node in a flattened body, computed in steps: `lets` binds
    /// operands of operations inside to locals of their own (`let __part_7 =
    /// &__backend.mul(..)?;`), in evaluation order, and `last` is the final call, ending in
    /// `?`, nesting `nested` operations (with no `lets`, the call alone, as a
    /// [`Value::Node`]). A long expression, such as a sum of a thousand products, nested
    /// as written keeps every intermediate node a temporary of one statement, and rustc's
    /// borrow checker is quadratic in them: `cargo check` of a 1,000-term sum (4,000
    /// operations) took 45 s and 1.9 GB nested, 4.6 s and 0.6 GB in steps.
    Steps {
        lets: TokenStream,
        last: TokenStream,
        nested: usize,
    },
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
        matches!(
            self,
            Value::Node(_) | Value::Steps { .. } | Value::Name(..) | Value::Element(_)
        )
    }

    /// How many operations the value's expression nests: its `last` for steps, one for
    /// another node (a constant, a call), none for a name.
    pub(crate) fn nested(&self) -> usize {
        match self {
            Value::Steps { nested, .. } => *nested,
            Value::Node(_) | Value::Plain(..) => 1,
            _ => 0,
        }
    }

    /// The value as an operand: an expression of type `&V`.
    pub(crate) fn operand(&self) -> TokenStream {
        match self {
            Value::Node(node) | Value::Diverge(node) => quote!(&#node),
            Value::Steps { lets, last, .. } if lets.is_empty() => quote!(&#last),
            Value::Steps { lets, last, .. } => quote!(&{ #lets #last }),
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
            Value::Steps { lets, last, .. } if lets.is_empty() => last.clone(),
            Value::Steps { lets, last, .. } => quote!({ #lets #last }),
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

    /// The value as a statement copies it into a tracked variable (`let v = y;`,
    /// `v = y;`, `a[i] = y;`, see `Rewriter::copy_of`): a name or an element becomes a
    /// node of its own where it is a scalar (`__private::copied`), so that the variable's
    /// reads sum apart from the source's, as the compiled sweeps' variables do, and a
    /// local that changes later becomes one for each of its scalars
    /// (`__private::copied_each`); anything else as [`owned`](Self::owned).
    pub(crate) fn copied(&self) -> TokenStream {
        match self {
            // (A local that changes later, an array too: each scalar a copy of its own,
            // see `__private::CopiedEach`.)
            Value::Name(_, Binding::Local) => {
                let (backend, operand) = (backend(), self.operand());
                quote!(::scalar_autodiff::__private::copied_each(#backend, #operand)?)
            }
            Value::Name(_, Binding::Param | Binding::Fixed) | Value::Element(_) => {
                let (backend, operand) = (backend(), self.operand());
                quote!(::scalar_autodiff::__private::copied(#backend, #operand)?)
            }
            _ => self.owned(),
        }
    }

    /// The value as the function's `Result`: a node's last call returns one already (its
    /// final `?` is dropped, rather than writing `Ok(call?)`); a name is wrapped in `Ok`.
    pub(crate) fn result(&self) -> TokenStream {
        match self {
            Value::Node(node) => {
                if let Some(call) = without_question_mark(node) {
                    return call;
                }
            }
            Value::Steps { lets, last, .. } => {
                if let Some(call) = without_question_mark(last) {
                    return if lets.is_empty() {
                        call
                    } else {
                        quote!({ #lets #call })
                    };
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

/// `node` without its final `?`, if it ends in one: the call's `Result` itself.
fn without_question_mark(node: &TokenStream) -> Option<TokenStream> {
    let mut tokens: Vec<TokenTree> = node.clone().into_iter().collect();
    match tokens.pop() {
        Some(TokenTree::Punct(p)) if p.as_char() == '?' => Some(tokens.into_iter().collect()),
        _ => None,
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
