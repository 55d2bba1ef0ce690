//! How a rejection is worded: what is unsupported, why, and what to write instead.

use proc_macro2::Span;
use quote::ToTokens;

/// One teaching error on `tokens`: a headline saying what is unsupported, a `note:` saying
/// why, and a `help:` saying what to write instead.
pub(crate) fn lesson(tokens: impl ToTokens, what: &str, why: &str, instead: &str) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("{what}\nnote: {why}\nhelp: {instead}"))
}

/// The same lesson on one span, such as a brace that closes a block.
pub(crate) fn lesson_at(span: Span, what: &str, why: &str, instead: &str) -> syn::Error {
    syn::Error::new(span, format!("{what}\nnote: {why}\nhelp: {instead}"))
}

/// Tokens as a person writes them: `&Vec<f64>`, not the token printer's `& Vec < f64 >`.
pub(crate) fn spelled(tokens: impl ToTokens) -> String {
    let mut text = tokens.to_token_stream().to_string();
    for (from, to) in [
        (" < ", "<"),
        ("< ", "<"),
        (" <", "<"),
        (" >", ">"),
        ("& ", "&"),
        (" ,", ","),
        (" ;", ";"),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
        (" :: ", "::"),
        (":: ", "::"),
        ("' ", "'"),
    ] {
        text = text.replace(from, to);
    }
    text
}
