//! The whole expansion, as a plain function over token streams (callable without rustc).

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::{quote, quote_spanned};
use syn::ItemFn;

use crate::errors::Errors;
use crate::lesson::lesson;
use crate::parse::{args, nesting, signature};
use crate::{desugar, emit, rewrite, rule};

/// What to write instead of a function nested too deep.
const SPLIT: &str = "split the expression into `let` bindings or helper functions";

/// Expands `#[differentiable(args)] item`.
///
/// Never panics: every problem becomes a `compile_error!` spanned on the user's tokens,
/// emitted next to stand-ins for the generated functions so the user's calls still resolve.
pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    // `#[differentiable] use layers::dense;`: the names with their companions.
    if let Ok(import) = syn::parse2::<syn::ItemUse>(item.clone()) {
        if !args.is_empty() {
            let error = lesson(
                &args,
                "`#[differentiable]` on a `use` takes no arguments",
                "on a `use`, the attribute imports each named `#[differentiable]` function \
                 with the functions generated beside it, which callers' bodies call",
                "write `#[differentiable] use path::name;`",
            );
            errors.push(error);
            let errors = errors.into_compile_errors();
            return quote!(#errors #import);
        }
        return crate::imports::companions(import);
    }
    let raw_args = args.clone();
    let args = args::parse(args, &mut errors);
    // syn's parser would overflow the compiler's stack on tokens nested too deep: then parse
    // the function without its body, for the stand-ins, or keep the item as written.
    let too_deep = nesting::too_deep(&item, "the function", SPLIT);
    let whole = too_deep.is_none();
    let parsed = match too_deep {
        None => Some(syn::parse2::<ItemFn>(item.clone())),
        Some(error) => {
            errors.push(error);
            without_body(&item).map(syn::parse2::<ItemFn>)
        }
    };
    let item: ItemFn = match parsed {
        Some(Ok(item)) => item,
        Some(Err(error)) => {
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
        None => {
            let errors = errors.into_compile_errors();
            return quote!(#errors #item);
        }
    };
    // `-> Vec<f64>`: the plain function and `name_vjp`, through a scalar function.
    if whole && crate::vector::returns_vec(&item) {
        if let Some(derivative) = &args.derivative {
            errors.push(lesson(
                derivative,
                "a custom derivative rule is for a function returning `f64`",
                "a rule gives the local derivatives of one `f64` result",
                "write the rule for a scalar function and call it in the vector's body",
            ));
        }
        return crate::vector::expand(raw_args, item, errors);
    }
    let (params, output) = signature::check(&item, &mut errors);
    if !whole {
        return emit::stubs(&item, &params, &output, errors.into_compile_errors());
    }
    let graph_body = match &args.derivative {
        // A custom rule's body is its value, not differentiated.
        Some(_) => {
            rule::check(&item, &params, &output, &mut errors);
            rule::graph_body(&item.sig.ident, &params)
        }
        // A tuple result is reported once, by the signature check: its tail tuple in the
        // body would only repeat it.
        None if returns_tuple(&item) => TokenStream::new(),
        None => {
            let returns_value = !matches!(item.sig.output, syn::ReturnType::Default);
            let scalar = matches!(&item.sig.output, syn::ReturnType::Type(_, ty)
                if matches!(&**ty, syn::Type::Path(path) if path.path.is_ident("f64")));
            let block = desugar::desugar(&item.block, scalar);
            rewrite::graph_body(&block, &params, returns_value, &mut errors)
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
        let functions = emit::functions(item, &params, &output, graph_body, halves, args.tape);
        quote!(#rule #functions)
    } else {
        emit::stubs(&item, &params, &output, errors.into_compile_errors())
    }
}

/// The item with an empty body, `fn name(..) -> f64 {}`, unless it has no body or its
/// signature itself nests too deep.
fn without_body(item: &TokenStream) -> Option<TokenStream> {
    let mut tokens: Vec<TokenTree> = item.clone().into_iter().collect();
    match tokens.last_mut() {
        Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => {
            let mut empty = Group::new(Delimiter::Brace, TokenStream::new());
            empty.set_span(body.span());
            *body = empty;
        }
        _ => return None,
    }
    let signature: TokenStream = tokens.into_iter().collect();
    nesting::too_deep(&signature, "the function", SPLIT)
        .is_none()
        .then_some(signature)
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

/// Whether the function returns a tuple of one or more elements.
fn returns_tuple(item: &ItemFn) -> bool {
    matches!(&item.sig.output, syn::ReturnType::Type(_, ty)
        if matches!(&**ty, syn::Type::Tuple(tuple) if !tuple.elems.is_empty()))
}
