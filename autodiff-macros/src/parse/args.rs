//! The attribute's arguments: none, `derivative = path` for a custom derivative rule, or
//! `tape` to run `name_grad` on the tape where the compiled sweeps do not cover the body.

use proc_macro2::TokenStream;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Expr, Meta, Path, Token};

use crate::errors::Errors;
use crate::lesson::lesson;

const NOTE: &str = "an argument it does not know is an error rather than silently ignored, so \
     a typo never changes what gets differentiated";
const HELP: &str = "write the attribute alone, `#[differentiable]`, give the derivative of \
     an operation it cannot see through, `#[differentiable(derivative = erf_slope)]`, or \
     accept the tape for a body the compiled sweeps do not cover, `#[differentiable(tape)]`";

/// What the attribute was given.
#[derive(Default)]
pub(crate) struct Args {
    /// `derivative = path`: the function's local derivatives come from `path`.
    pub(crate) derivative: Option<Path>,
    /// `tape`: a body the compiled sweeps do not cover runs `name_grad` on the tape, as
    /// the user chose, rather than being an error.
    pub(crate) tape: bool,
}

/// Reads the tokens between the attribute's parentheses, reporting each unknown or
/// malformed argument on its own span.
pub(crate) fn parse(args: TokenStream, errors: &mut Errors) -> Args {
    let mut parsed = Args::default();
    if args.is_empty() {
        return parsed;
    }
    let Ok(metas) = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args.clone()) else {
        errors.push(lesson(
            &args,
            "#[differentiable] takes no arguments but `derivative = slope_function` and `tape`",
            NOTE,
            HELP,
        ));
        return parsed;
    };
    for meta in metas {
        match &meta {
            Meta::Path(path) if path.is_ident("tape") => {
                if parsed.tape {
                    errors.push(lesson(
                        &meta,
                        "`tape` is given twice",
                        "it says once that `name_grad` may run on the tape",
                        "keep one `tape`",
                    ));
                }
                parsed.tape = true;
            }
            Meta::NameValue(pair) if pair.path.is_ident("derivative") => {
                let path = match &pair.value {
                    Expr::Path(path) if path.qself.is_none() => Some(path.path.clone()),
                    _ => None,
                };
                match (path, &parsed.derivative) {
                    (Some(path), None) => parsed.derivative = Some(path),
                    (Some(_), Some(_)) => errors.push(lesson(
                        &meta,
                        "`derivative` is given twice",
                        "a custom rule has one slope function",
                        "keep one `derivative = ...`",
                    )),
                    (None, _) => errors.push(lesson(
                        &pair.value,
                        "`derivative` names the slope function by its path",
                        "the slope function is a plain function of the operands and the value, \
                         such as `fn erf_slope(x: f64, value: f64) -> f64`",
                        "write `derivative = erf_slope`",
                    )),
                }
            }
            _ => {
                let name = meta
                    .path()
                    .get_ident()
                    .map_or_else(|| quote::quote!(#meta).to_string(), ToString::to_string);
                errors.push(lesson(
                    &meta,
                    &format!(
                        "unknown argument `{name}`: #[differentiable] takes no arguments but \
                         `derivative = slope_function` and `tape`"
                    ),
                    NOTE,
                    HELP,
                ));
            }
        }
    }
    parsed
}
