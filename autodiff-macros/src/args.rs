//! The attribute's arguments: `#[differentiable]` accepts none yet.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Meta, Token};

use crate::errors::Errors;
use crate::lesson::lesson;

const NOTE: &str = "an argument it does not know is an error rather than silently ignored, so \
     a typo never changes what gets differentiated";
const HELP: &str = "write the attribute alone: `#[differentiable]`";

/// Checks the tokens between the attribute's parentheses, reporting each unknown argument
/// on its own span.
pub(crate) fn check(args: TokenStream, errors: &mut Errors) {
    if args.is_empty() {
        return;
    }
    match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args.clone()) {
        Ok(metas) => {
            for meta in metas {
                let name = meta
                    .path()
                    .get_ident()
                    .map_or_else(|| quote::quote!(#meta).to_string(), ToString::to_string);
                errors.push(lesson(
                    &meta,
                    &format!("unknown argument `{name}`: #[differentiable] takes no arguments yet"),
                    NOTE,
                    HELP,
                ));
            }
        }
        Err(_) => errors.push(lesson(
            &args,
            "#[differentiable] takes no arguments yet",
            NOTE,
            HELP,
        )),
    }
}
