//! How a rejection is worded: what is unsupported, why, and what to write instead.

use quote::ToTokens;

/// One teaching error on `tokens`: a headline saying what is unsupported, a `note:` saying
/// why, and a `help:` saying what to write instead.
pub(crate) fn lesson(tokens: impl ToTokens, what: &str, why: &str, instead: &str) -> syn::Error {
    syn::Error::new_spanned(tokens, format!("{what}\nnote: {why}\nhelp: {instead}"))
}
