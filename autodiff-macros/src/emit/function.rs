//! What every generated function of one `#[differentiable] fn` is written from: its name
//! and signature, the rewritten body spanned like the user's, and how `_graph`, `_grad` and
//! `_jvp` run that body (inline, or through the hidden body).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Attribute, Block, ConstParam, Ident, Signature, Visibility};

use super::shapes::output_type;
use super::{const_generics, mentions_self};
use crate::parse::signature::{self, Kind, Output, Param};
use crate::rewrite;
use crate::sweep::Analysis;

/// One accepted function, as the emitters see it.
pub(crate) struct Function<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) vis: &'a Visibility,
    pub(crate) sig: &'a Signature,
    /// The attributes every generated function repeats (see [`is_forwarded`]).
    pub(crate) forwarded: Vec<&'a Attribute>,
    pub(crate) params: &'a [Param],
    pub(crate) output: &'a Output,
    /// The differentiated parameters.
    pub(crate) tracked: Vec<&'a Param>,
    /// The rewritten body (see `rewrite`), spanned like the user's body.
    pub(crate) graph_body: TokenStream,
    /// The span of the user's body.
    pub(crate) body_span: Span,
    /// The signature or the body names `Self` or `self`: the function is inside an `impl`.
    pub(crate) in_impl: bool,
    /// How `_graph` and `_grad` call the hidden body, or `None` where they inline it.
    pub(crate) call_path: Option<TokenStream>,
    /// The const generic parameters, and the turbofish passing them on.
    pub(crate) generics: Vec<&'a ConstParam>,
    pub(crate) turbofish: Option<TokenStream>,
    /// `#[differentiable(tape)]`: every call on the tape, as the user chose.
    pub(crate) on_tape: bool,
    /// The body analysed once, for the sweeps and for the halves (see `sweep::Analysis`).
    pub(crate) analysis: Analysis,
}

impl<'a> Function<'a> {
    pub(crate) fn new(
        (vis, sig, attrs, block): (&'a Visibility, &'a Signature, &'a [Attribute], &Block),
        params: &'a [Param],
        output: &'a Output,
        graph_body: TokenStream,
        (on_tape, rule): (bool, bool),
    ) -> Function<'a> {
        // The hidden body's name is spanned on the user's body: rustc then never offers it
        // as a "similarly named function" for a missing callee inside that body (see
        // `rewrite/compose.rs`).
        let body_span = block.brace_token.span.join();
        let graph_body: TokenStream = graph_body
            .into_iter()
            .map(|mut token| {
                token.set_span(body_span);
                token
            })
            .collect();
        let in_impl = mentions_self(sig, block);
        let body = super::hidden::body_ident(&sig.ident);
        // How `_graph` and `_grad` run the body. A call of the hidden body needs `Self::`
        // inside an `impl` and no `Self::` outside, and an attribute cannot see which it is
        // in: a receiver or a `Self` in the function says `impl`. Otherwise a short body
        // runs inline in each (a block: the body sees `Self` and `self` as written, and the
        // hidden body is the one other differentiable functions call), and a long one,
        // whose copies would multiply its compile time, is called as a free function.
        let call_path = if in_impl {
            Some(quote!(Self::#body))
        } else if rewrite::is_long(&graph_body) {
            Some(quote!(#body))
        } else {
            None
        };
        let (generics, turbofish) = const_generics(&sig.generics);
        // The sweeps of a scalar function, and the halves of any (a custom rule's are
        // written by `rule`), unless the user chose the tape.
        let array_output = match output {
            Output::Array(_) => Some(output_type(output, &quote!(f64))),
            _ => None,
        };
        let analysis = Analysis::of(
            &graph_body,
            params,
            &sig.generics,
            array_output.as_ref(),
            (
                matches!(output, Output::Scalar) && !on_tape,
                !rule && !matches!(output, Output::Invalid) && !on_tape,
            ),
        );
        Function {
            ident: &sig.ident,
            vis,
            sig,
            forwarded: attrs.iter().filter(|attr| is_forwarded(attr)).collect(),
            params,
            output,
            tracked: params.iter().filter(|param| param.is_tracked()).collect(),
            graph_body,
            body_span,
            in_impl,
            call_path,
            generics,
            turbofish,
            on_tape,
            analysis,
        }
    }

    /// `<const N: usize, ..>`, if the function has const generics.
    pub(crate) fn generic_list(&self) -> Option<TokenStream> {
        let generics = &self.generics;
        (!generics.is_empty()).then(|| quote!(<#(#generics),*>))
    }

    /// The receiver as the generated functions take it (`&self,`), if any.
    pub(crate) fn receiver(&self) -> Option<TokenStream> {
        signature::receiver(self.sig).map(|receiver| quote!(#receiver,))
    }

    /// The differentiated parameters, as a list for the docs (`` `x`, `w` ``), and a note
    /// on data parameters if there are any.
    pub(crate) fn doc_lists(&self) -> (String, String) {
        let list = self
            .tracked
            .iter()
            .filter_map(|param| param.ident.as_ref())
            .map(|name| format!("`{name}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let data = if self.tracked.len() == self.params.len() {
            String::new()
        } else {
            " Data parameters are passed through as they are.".to_owned()
        };
        (list, data)
    }

    /// `run`, with an error from an operation of this body named after this function
    /// (unless a helper's body named it first: the innermost body is where the operation is
    /// written). A trace that locates also names the operations of a body that returned,
    /// for an error of the pass that follows.
    ///
    /// A hidden body (whose output's shape is `plain`) called by another body hands back a
    /// parameter returned as it is as a node of its own, as the halves hand it on (see
    /// `Backend::returned`).
    pub(crate) fn named(
        &self,
        run: TokenStream,
        output: TokenStream,
        plain: Option<TokenStream>,
    ) -> TokenStream {
        let private = quote!(::scalar_autodiff::__private);
        let error = quote!(::scalar_autodiff::ScalarAutodiffError);
        let backend = rewrite::backend();
        let name = self.ident.to_string();
        let (value, failure, mark, nest) = (
            Ident::new("value", Span::mixed_site()),
            Ident::new("error", Span::mixed_site()),
            Ident::new("mark", Span::mixed_site()),
            Ident::new("nest", Span::mixed_site()),
        );
        let returned = match plain {
            Some(plain) => {
                quote!(<#plain as #private::Returned>::returned(#value, #backend, &#nest))
            }
            None => quote!(#value),
        };
        quote! {
            let #nest = #private::Backend::nest(#backend);
            let #mark = #private::Backend::enter(#backend);
            match (|| -> ::core::result::Result<#output, #error> { #run })() {
                ::core::result::Result::Ok(#value) => {
                    #private::Backend::leave(#backend, #mark, #name);
                    ::core::result::Result::Ok(#returned)
                }
                ::core::result::Result::Err(#failure) => {
                    ::core::result::Result::Err(#private::in_function(#failure, #name))
                }
            }
        }
    }

    /// The body run on `backend_value` with `args` for the parameters: a call of the
    /// hidden body, or the body inline.
    pub(crate) fn run(&self, backend_value: TokenStream, args: &[TokenStream]) -> TokenStream {
        let backend = rewrite::backend();
        if let Some(path) = &self.call_path {
            let receiver_arg = signature::receiver(self.sig).map(|_| quote!(self,));
            return quote!(#path(#receiver_arg #backend_value, #(#args),*));
        }
        // Data is captured as it is; each differentiated parameter becomes its argument.
        let (names, args): (Vec<_>, Vec<_>) = self
            .params
            .iter()
            .zip(args)
            .filter(|(param, _)| param.is_tracked())
            .map(|(param, arg)| (&param.ident, arg))
            .unzip();
        let run = self.named(self.graph_body.clone(), quote!(_), None);
        let private = quote!(::scalar_autodiff::__private);
        quote! {{
            use #private::Backend as _;
            let #backend = #backend_value;
            #(let #names = #args;)*
            #run
        }}
    }

    /// The names `name_grad` gives the variables made of each parameter.
    pub(crate) fn copies(&self) -> Vec<Ident> {
        (0..self.params.len())
            .map(|index| Ident::new(&format!("tracked_{index}"), Span::mixed_site()))
            .collect()
    }

    /// The arguments `name_grad` (and `name_jvp`) run the body with: data as it is, each
    /// differentiated parameter as its variables ([`Function::copies`]).
    pub(crate) fn variable_args(&self) -> Vec<TokenStream> {
        let private = quote!(::scalar_autodiff::__private);
        self.params
            .iter()
            .zip(self.copies())
            .map(|(param, copy)| {
                let name = &param.ident;
                match param.kind {
                    Kind::Data => quote!(#name),
                    _ => quote!(#private::Tracked(&#copy)),
                }
            })
            .collect()
    }
}

/// The name of parameter `index`: the user's, or a stand-in for a pattern.
pub(crate) fn param_name(param: &Param, index: usize) -> Ident {
    param
        .ident
        .clone()
        .unwrap_or_else(|| Ident::new(&format!("_arg{index}"), Span::mixed_site()))
}

/// `mut` on a data parameter the body reassigns: the inline body of `_graph` and `_grad`
/// changes the captured parameter itself.
pub(crate) fn data_mutability(param: &Param) -> Option<syn::Token![mut]> {
    match param.kind {
        Kind::Data => param.mutability,
        _ => None,
    }
}

/// Attributes that apply to all generated functions: configuration, lint levels,
/// deprecation.
fn is_forwarded(attr: &Attribute) -> bool {
    [
        "cfg",
        "cfg_attr",
        "allow",
        "expect",
        "warn",
        "deny",
        "forbid",
        "deprecated",
    ]
    .iter()
    .any(|name| attr.path().is_ident(name))
}
