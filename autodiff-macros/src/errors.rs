//! The error collector: every rejection of one function, combined into one report.

use proc_macro2::TokenStream;

/// Collects every `syn::Error` found in one function so the user sees all of them in one
/// compile, not only the first.
#[derive(Default)]
pub(crate) struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records one more error.
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records every error of `other`.
    pub(crate) fn append(&mut self, other: Errors) {
        if let Some(error) = other.combined {
            self.push(error);
        }
    }

    /// Whether nothing has been recorded.
    pub(crate) fn is_empty(&self) -> bool {
        self.combined.is_none()
    }

    /// One `compile_error!` per recorded error, each spanned on the offending tokens.
    pub(crate) fn into_compile_errors(self) -> TokenStream {
        self.combined
            .map(syn::Error::into_compile_error)
            .unwrap_or_default()
    }
}
