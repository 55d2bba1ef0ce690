//! Stand-ins for a rejected function: the user's calls still resolve, so rustc adds no
//! errors of its own to the macro's.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;

use super::const_generics;
use super::grad::grad_params;
use super::graph::graph_params;
use super::hidden::{backend_type, body_ident, body_params, callable_fn, lent_lifetime};
use super::shapes::{gradient_type, output_type};
use crate::parse::signature::{self, Output, Param};

/// The function as written (without `#[constant]`), without its body, plus stand-ins for
/// the generated functions, so that the user's calls still resolve and rustc adds no
/// secondary errors to the ones in `errors`.
pub(crate) fn stubs(
    item: &ItemFn,
    params: &[Param],
    output: &Output,
    errors: TokenStream,
) -> TokenStream {
    let ItemFn {
        attrs, vis, sig, ..
    } = item;
    let plain_sig = signature::without_constant(sig);
    let ident = &sig.ident;
    let graph = format_ident!("{}_graph", ident, span = ident.span());
    let grad = format_ident!("{}_grad", ident, span = ident.span());
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let float = quote!(::core::primitive::f64);
    let rejected = "#[differentiable] rejected this function at compile time";
    let body = body_ident(ident);
    let kind = backend_type();
    let lent = lent_lifetime();
    let body_params = body_params(params, Some(()));
    let graph_params = graph_params(params);
    let grad_params = grad_params(params);
    let tracked: Vec<&Param> = params.iter().filter(|param| param.is_tracked()).collect();
    let gradient_type = gradient_type(&tracked);
    let body_output = output_type(output, &quote!(#kind::Value));
    let graph_output = output_type(output, &quote!(::scalar_autodiff::Scalar));
    let receiver = signature::receiver(sig).map(|receiver| quote!(#receiver,));
    // (A type parameter is an error of its own: the stand-ins keep only the sizes.)
    let (generics, _) = const_generics(&sig.generics);
    let generic_list = (!generics.is_empty()).then(|| quote!(<#(#generics),*>));
    let higher = (matches!(output, Output::Scalar) && generics.is_empty()).then(|| {
        crate::emit::higher::stubs(&crate::emit::higher::StubContext {
            ident,
            vis,
            receiver: receiver.clone(),
            grad_params: &grad_params,
            gradient_type: gradient_type.clone(),
        })
    });
    let callable_fn = callable_fn(ident, vis, signature::receiver(sig), None);
    quote! {
        #errors

        #(#attrs)*
        #[allow(unused_variables, unused_mut)]
        #vis #plain_sig {
            ::core::panic!(#rejected)
        }

        #[doc(hidden)]
        #[allow(dead_code, non_snake_case, unused_variables)]
        #vis fn #body<#lent, #kind: ::scalar_autodiff::__private::Backend #(, #generics)*>(
            #receiver
            _backend: &#kind,
            #(#body_params),*
        ) -> ::core::result::Result<#body_output, #error>
        where
            #kind::Value: #lent
        {
            ::core::panic!(#rejected)
        }
        #callable_fn

        #[allow(dead_code, unused_variables, unused_mut, clippy::ptr_arg)]
        #vis fn #graph #generic_list(#receiver #(#graph_params),*) -> ::core::result::Result<#graph_output, #error> {
            ::core::panic!(#rejected)
        }

        #[allow(dead_code, unused_variables, unused_mut)]
        #vis fn #grad #generic_list(#receiver #(#grad_params),*)
            -> ::core::result::Result<(#float, #gradient_type), #error>
        {
            ::core::panic!(#rejected)
        }

        #higher
    }
}
