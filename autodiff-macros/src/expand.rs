//! The whole expansion, as a plain function over token streams (callable without rustc).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ItemFn;

use crate::errors::Errors;
use crate::lesson::lesson;
use crate::{args, emit, rewrite, rule, signature};

/// Expands `#[differentiable(args)] item`.
///
/// Never panics: every problem becomes a `compile_error!` spanned on the user's tokens,
/// emitted next to stand-ins for the generated functions so the user's calls still resolve.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let args = args::parse(args, &mut errors);
    let item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(error) => {
            errors.push(lesson(
                first_token(&item, &error),
                "#[differentiable] applies to a function with a body",
                "it rewrites the body of `fn name(x: f64, ...) -> f64 { ... }` into graph \
                 operations",
                "put the attribute on such a function",
            ));
            let errors = errors.into_compile_errors();
            return quote!(#errors #item);
        }
    };
    let (params, output) = signature::check(&item, &mut errors);
    let graph_body = match &args.derivative {
        // A custom rule's body is its value, not differentiated.
        Some(_) => {
            rule::check(&item, &params, &output, &mut errors);
            rule::graph_body(&item.sig.ident, &params)
        }
        None => {
            let returns_value = !matches!(item.sig.output, syn::ReturnType::Default);
            rewrite::graph_body(&item.block, &params, returns_value, &mut errors)
        }
    };
    if errors.is_empty() {
        let rule = args
            .derivative
            .as_ref()
            .map(|derivative| rule::items(&item, derivative, &params));
        let halves = args
            .derivative
            .as_ref()
            .map(|_| rule::halves(&item.sig.ident, &params));
        let functions = emit::functions(item, &params, &output, graph_body, halves);
        quote!(#rule #functions)
    } else {
        emit::stubs(&item, &params, &output, errors.into_compile_errors())
    }
}

/// The tokens to blame when the item is not a function: its head up to the first brace or
/// `;` (such as `pub struct Point`), after any attributes.
fn first_token(item: &TokenStream, error: &syn::Error) -> TokenStream {
    let mut tokens = item.clone().into_iter().peekable();
    while matches!(tokens.peek(), Some(TokenTree::Punct(punct)) if punct.as_char() == '#') {
        tokens.next();
        tokens.next();
    }
    let head: TokenStream = tokens
        .take_while(|token| match token {
            TokenTree::Group(group) => group.delimiter() != Delimiter::Brace,
            TokenTree::Punct(punct) => punct.as_char() != ';',
            _ => true,
        })
        .take(6)
        .collect();
    if head.is_empty() {
        let span = error.span();
        quote_spanned!(span=> item)
    } else {
        head
    }
}
