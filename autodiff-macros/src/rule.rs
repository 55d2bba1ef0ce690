//! Custom derivative rules: `#[differentiable(derivative = erf_slope)] fn erf(x: f64) -> f64`.
//!
//! The body is not differentiated: it is the operation's value, and `erf_slope(x, value)`
//! its local derivative. The attribute writes a `static` [`CustomRule`] for the pair and a
//! graph body that records one node of it, then emits every generated function from that
//! body as for any other function: callers record `erf(x)` as one node named `erf`.
//!
//! A caller's compiled sweeps call the rule's hidden body on the `Halves` backend, as any
//! helper's: its halves (written here, not lowered from a body) keep the slopes going
//! forward and hand them back going back.
//!
//! Second derivatives (`name_hvp`, `name_hessian`) differentiate the slope function: the
//! rule calls its hidden body on duals, `differentiable_erf_slope`, which exists only if
//! `erf_slope` is `#[differentiable]`. The attribute cannot see that, so it also defines a
//! stand-in of that name, glob-imported: an item of the module shadows a glob import, so
//! the stand-in is used exactly when there is no real one (one runtime item per arity, so
//! that two rules naming one slope import the same item), and it makes the second-order
//! passes through the rule a typed error (`NoSecondDerivative`) rather than a compile
//! error in code that never asks for them.
//!
//! [`CustomRule`]: https://docs.rs/scalar-autodiff/latest/scalar_autodiff/struct.CustomRule.html

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, Path};

use crate::emit::body_ident;
use crate::errors::Errors;
use crate::lesson::lesson;
use crate::parse::signature::{Kind, Output, Param};
use crate::rewrite::backend;

/// Checks what a custom rule needs beyond a plain signature: a free function of one to
/// three `f64` operands returning `f64`.
pub(crate) fn check(item: &ItemFn, params: &[Param], output: &Output, errors: &mut Errors) {
    let sig = &item.sig;
    if sig.receiver().is_some() || crate::emit::mentions_self(sig, &item.block) {
        errors.push(lesson(
            &sig.ident,
            "a custom derivative rule cannot be a method or an associated function",
            "the rule is one operation on `f64` operands, recorded as one node wherever it \
             is called",
            "make it a free function of its operands, outside the `impl`: \
             `fn erf(x: f64) -> f64`",
        ));
    }
    let count = params.len();
    if !(1..=3).contains(&count) {
        errors.push(lesson(
            &sig.inputs,
            &format!("a custom derivative rule takes one to three `f64` operands, not {count}"),
            "its node keeps up to three operands, each with the slope the rule gives it",
            "split the operation, or pass data that is not differentiated as constants of \
             the body",
        ));
    }
    for param in params {
        if !matches!(param.kind, Kind::Scalar) {
            errors.push(lesson(
                &param.ty,
                "every operand of a custom derivative rule is an `f64`",
                "the slope function returns one partial derivative per operand",
                "take each operand as `x: f64`",
            ));
        }
    }
    if !matches!(output, Output::Scalar) {
        errors.push(lesson(
            &sig.output,
            "a custom derivative rule returns `f64`",
            "its value is one number, and its slopes are the derivatives of that number",
            "write `-> f64`",
        ));
    }
}

/// The name of the rule's `static`.
fn rule_ident(ident: &Ident) -> Ident {
    format_ident!("__autodiff_rule_{}", ident)
}

/// The name of the slope function's pointer: the one place its signature is checked (the
/// rule and the compiled halves both call through it, so a wrong signature is one error).
fn slope_ident(ident: &Ident) -> Ident {
    format_ident!("__AUTODIFF_SLOPE_{}", ident)
}

/// The slope function's pointer type for `count` operands.
fn slope_type(count: usize) -> TokenStream {
    let operands = (0..count).map(|_| quote!(f64));
    match count {
        1 => quote!(fn(f64, f64) -> f64),
        _ => quote!(fn(#(#operands,)* f64) -> [f64; #count]),
    }
}

/// The graph body: the parameters lent as in any body, then one custom node of them.
pub(crate) fn graph_body(ident: &Ident, params: &[Param]) -> TokenStream {
    let backend = backend();
    let private = quote!(::scalar_autodiff::__private);
    let rule = rule_ident(ident);
    let mut prologue = TokenStream::new();
    let mut operands = Vec::new();
    for (index, param) in params.iter().enumerate() {
        let Some(name) = &param.ident else { continue };
        let lent = Ident::new(&format!("lent_{index}"), Span::mixed_site());
        prologue.extend(quote! {
            let #lent = <_ as #private::Argument<'_, _, f64>>::lend(#name, #backend)?;
        });
        operands.push(quote!(&*#lent));
    }
    quote!({
        #prologue
        #private::Backend::custom(#backend, &#rule, &[#(#operands),*])
    })
}

/// What the rule's hidden body answers another function's compiled sweep (see the runtime's
/// `halves`): going forward, the value, keeping the slopes on the caller's stack; going
/// back, each operand's adjoint plus the upstream adjoint times its slope, in slot order,
/// as the tape's reverse pass adds them.
pub(crate) fn halves(ident: &Ident, params: &[Param]) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let backend = backend();
    let kind = crate::emit::backend_type();
    let lent = crate::emit::lent_lifetime();
    let count = params.len();
    let halves = Ident::new("__halves", Span::mixed_site());
    let borrowed = Ident::new("__borrowed", Span::mixed_site());
    let stack = Ident::new("__stack", Span::mixed_site());
    let upstream = Ident::new("__upstream", Span::mixed_site());
    let slopes = Ident::new("__slopes", Span::mixed_site());
    let values = Ident::new("__values", Span::mixed_site());
    let value = Ident::new("__value", Span::mixed_site());
    let spare = Ident::new("__spare", Span::mixed_site());
    let adjoint = Ident::new("__adjoint", Span::mixed_site());
    let give_up = quote!(return ::core::result::Result::Err(#private::gave_up()));
    let argument = quote!(<_ as #private::Argument<#lent, #kind, f64>>);
    let names: Vec<&Ident> = params
        .iter()
        .filter_map(|param| param.ident.as_ref())
        .collect();
    let indices: Vec<usize> = (0..count).collect();
    let dual = dual_halves(ident, &names);
    let slope = slope_ident(ident);
    let slope_call = match count {
        1 => quote!([#slope(#values[0], #value)]),
        _ => quote!(#slope(#(#values[#indices],)* #value)),
    };
    let slots = 0..names.len();
    let adds = names.iter().zip(slots.clone()).map(|(name, slot)| {
        quote! {
            // Data's spare adjoint must stay finite, as the trace ignores it.
            let mut #spare = #argument::primal(&#name).map(#private::zeros_of);
            let #adjoint: &mut f64 = match #argument::adjoints(#name) {
                ::core::option::Option::Some(#adjoint) => #adjoint,
                ::core::option::Option::None => match #spare.as_mut() {
                    ::core::option::Option::Some(#spare) => #spare,
                    ::core::option::Option::None => #give_up,
                },
            };
            *#adjoint += #upstream * #slopes[#slot];
            if #spare.is_some_and(|#spare: f64| !#spare.is_finite()) {
                #give_up
            }
        }
    });
    let reads = names.iter().zip(slots).map(|(name, slot)| {
        quote! {
            #values[#slot] = match #argument::primal(&#name) {
                ::core::option::Option::Some(#value) => *#value,
                ::core::option::Option::None => #give_up,
            };
        }
    });
    quote! {
        if let ::core::option::Option::Some(#halves) = #private::Backend::halves(#backend) {
            let mut #borrowed = match #halves.stack() {
                ::core::option::Option::Some(#borrowed) => #borrowed,
                ::core::option::Option::None => #give_up,
            };
            let #stack: &mut #private::Stack = &mut #borrowed;
            if #halves.is_reverse() {
                let mut #upstream: f64 = 0.0;
                #stack.take(&mut #upstream);
                let mut #slopes = [0.0f64; #count];
                for #value in #slopes.iter_mut().rev() {
                    *#value = #stack.pop();
                }
                #(#adds)*
                return #private::output::<#kind, f64>(#backend, 0.0);
            }
            let mut #values = [0.0f64; #count];
            #(#reads)*
            // The user's functions called directly (the slope through a constant pointer),
            // so that they inline: the same functions, and so the same bits, as the rule's.
            let #value: f64 = #ident(#(#values[#indices]),*);
            if !#value.is_finite() {
                #give_up
            }
            let #slopes: [f64; #count] = #slope_call;
            for #upstream in &#slopes {
                #stack.keep(#upstream);
            }
            return #private::output::<#kind, f64>(#backend, #value);
        }
        #dual
    }
}

/// The rule's halves on duals (`name_hvp`'s sweeps calling it): going forward the value
/// on duals, keeping the operands; going back each operand's adjoint plus the upstream
/// adjoint times its slope on duals (differentiated through the slope function). A closure
/// passed to `Backend::dual_halves`, as a body's halves on duals are (see
/// `sweep::halves`).
fn dual_halves(ident: &Ident, names: &[&Ident]) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let backend = backend();
    let kind = crate::emit::backend_type();
    let lent = crate::emit::lent_lifetime();
    let rule = rule_ident(ident);
    let halves = Ident::new("__halves", Span::mixed_site());
    let borrowed = Ident::new("__borrowed", Span::mixed_site());
    let stack = Ident::new("__stack", Span::mixed_site());
    let upstream = Ident::new("__upstream", Span::mixed_site());
    let added = Ident::new("__added", Span::mixed_site());
    let value = Ident::new("__value", Span::mixed_site());
    let spare = Ident::new("__spare", Span::mixed_site());
    let adjoint = Ident::new("__adjoint", Span::mixed_site());
    let result = Ident::new("__result", Span::mixed_site());
    let dual = quote!(#private::Dual);
    let give_up = quote!(return ::core::result::Result::Err(#private::gave_up()));
    let argument = quote!(<_ as #private::Argument<#lent, #kind, f64>>);
    let adds = names.iter().enumerate().map(|(slot, name)| {
        quote! {
            let mut #spare: ::core::option::Option<#dual> = ::core::option::Option::None;
            let #adjoint: &mut #dual = match #argument::dual_adjoints_in(&#name, &mut #spare) {
                ::core::option::Option::Some(#adjoint) => #adjoint,
                ::core::option::Option::None => #give_up,
            };
            *#adjoint += #added[#slot];
            if !#private::dual_spare_finite::<f64>(&#spare) {
                #give_up
            }
        }
    });
    let lents: Vec<Ident> = (0..names.len())
        .map(|slot| Ident::new(&format!("__operand_{slot}"), Span::mixed_site()))
        .collect();
    let reads = names.iter().zip(&lents).map(|(name, lent)| {
        quote! {
            let #lent = match #argument::dual_primal(&#name) {
                ::core::option::Option::Some(#lent) => #lent,
                ::core::option::Option::None => #give_up,
            };
        }
    });
    quote! {
        if let ::core::option::Option::Some(#result) = #private::Backend::dual_halves(
            #backend,
            |#halves: &dyn #private::Run| {
                let mut #borrowed = match #halves.stack() {
                    ::core::option::Option::Some(#borrowed) => #borrowed,
                    ::core::option::Option::None => #give_up,
                };
                let #stack: &mut #private::Stack = &mut #borrowed;
                if #halves.is_reverse() {
                    let mut #upstream: #dual = <#dual as #private::Number>::ZERO;
                    #private::Numbers::take(&mut #upstream, #stack);
                    let #added = match #private::rule_dual_reverse(&#rule, #upstream, #stack) {
                        ::core::option::Option::Some(#added) => #added,
                        ::core::option::Option::None => #give_up,
                    };
                    #(#adds)*
                    return #private::dual_output::<#kind, f64>(
                        #backend,
                        <#dual as #private::Number>::ZERO,
                    );
                }
                #(#reads)*
                match #private::rule_dual_forward(&#rule, &[#(&*#lents),*], #stack) {
                    ::core::option::Option::Some(#value) => {
                        #private::dual_output::<#kind, f64>(#backend, #value)
                    }
                    ::core::option::Option::None => #give_up,
                }
            },
        ) {
            return #result;
        }
    }
}

/// The rule's `static`, and the stand-in for a slope function that is not
/// `#[differentiable]` (see the module docs).
pub(crate) fn items(item: &ItemFn, derivative: &Path, params: &[Param]) -> TokenStream {
    let ident = &item.sig.ident;
    let rule = rule_ident(ident);
    let private = quote!(::scalar_autodiff::__private);
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let name = ident.to_string();
    let constructor = match params.len() {
        1 => quote!(unary),
        2 => quote!(binary),
        _ => quote!(ternary),
    };
    // The slope's hidden body, beside the slope function's path.
    let mut slope_body = derivative.clone();
    let plain_name = derivative.get_ident().cloned();
    if let Some(last) = slope_body.segments.last_mut() {
        last.ident = body_ident(&last.ident);
    }
    let operand = Ident::new("operand", Span::mixed_site());
    let value = Ident::new("value", Span::mixed_site());
    let lent = (0..params.len()).map(|slot| quote!(#private::Tracked(&#operand[#slot])));
    let span = derivative.span();
    let slope = slope_ident(ident);
    let slope_type = slope_type(params.len());
    let rule_static = quote_spanned! {span=>
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #slope: #slope_type = #derivative;

        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        static #rule: ::scalar_autodiff::CustomRule =
            ::scalar_autodiff::CustomRule::#constructor(#name, #ident, #slope).with_second({
                fn second(
                    #operand: [#private::Dual; 3],
                    #value: #private::Dual,
                ) -> ::core::result::Result<[#private::Dual; 3], #error> {
                    #private::dual_slopes(#name, #slope_body(
                        &#private::Forward,
                        #(#lent,)*
                        #private::Tracked(&#value)
                    ))
                }
                second
            });
    };
    // A slope function named by a path is looked up there; only a plain name can have a
    // stand-in beside it.
    let Some(slope) = plain_name else {
        return rule_static;
    };
    let stand_in = body_ident(&slope);
    let module = format_ident!("__autodiff_slope_of_{}", ident);
    let arity = match params.len() {
        1 => quote!(one),
        2 => quote!(two),
        _ => quote!(three),
    };
    quote! {
        #rule_static

        /// Stands in for the hidden body of a slope function that is not
        /// `#[differentiable]` (a real one shadows this glob-imported one).
        #[doc(hidden)]
        #[allow(non_snake_case)]
        mod #module {
            #[allow(unused_imports)]
            pub(super) use #private::stand_in::#arity as #stand_in;
        }
        #[allow(unused_imports)]
        use #module::*;
    }
}
