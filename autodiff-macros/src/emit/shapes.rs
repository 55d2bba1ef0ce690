//! Shapes the generated signatures spell out: the gradient `name_grad` returns (flat, in
//! the parameter's own shape, or a tuple), the output with its `f64` written as another
//! scalar, and array lengths.

use proc_macro2::{Literal, Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, ExprLit, Ident, Lit, Type};

use crate::parse::signature::{self, Kind, Output, Param};

/// A differentiated parameter's value by reference: `&x` for one taken by value, `p` for
/// one taken by reference.
pub(crate) fn by_reference(param: &Param) -> TokenStream {
    let name = &param.ident;
    // (Ungrouped: a type a `macro_rules!` macro passes on as `$ty:ty` comes grouped.)
    match (&param.kind, crate::parse::signature::ungrouped(&param.ty)) {
        (Kind::Declared { .. }, Type::Reference(_)) => quote!(#name),
        _ => quote!(&#name),
    }
}

/// What `name_grad` returns as its gradient, for its rustdoc.
pub(crate) fn gradient_description(tracked: &[&Param]) -> &'static str {
    match gradient_form(tracked) {
        Form::Flat => "the partial derivatives flattened in parameter order (the elements of an array in order, row-major)",
        Form::Single => "the gradient in the parameter's own shape",
        Form::Tuple => "one gradient per differentiated parameter, each in its own shape, in parameter order",
    }
}

/// Whether `name_grad`'s gradient is one flat `[f64; N]`.
pub(crate) fn is_flat(tracked: &[&Param]) -> bool {
    matches!(gradient_form(tracked), Form::Flat)
}

/// How `name_grad` returns its gradient.
pub(crate) enum Form {
    /// Only `f64` and arrays: one flat `[f64; N]` in parameter order.
    Flat,
    /// One `#[param]` parameter (a struct or slice): the gradient in its shape.
    Single,
    /// Several parameters, one of them declared: a tuple of each one's gradient.
    Tuple,
}

pub(crate) fn gradient_form(tracked: &[&Param]) -> Form {
    // A length of a const generic (`[f64; N]`) cannot be added up in a type on stable Rust:
    // the gradient then comes in each parameter's shape.
    let declared = tracked
        .iter()
        .any(|param| matches!(param.kind, Kind::Declared { .. }) || param.generic);
    match (declared, tracked.len()) {
        (false, _) => Form::Flat,
        (true, 1) => Form::Single,
        (true, _) => Form::Tuple,
    }
}

/// The gradient's type in `name_grad`'s result.
pub(crate) fn gradient_type(tracked: &[&Param]) -> TokenStream {
    let float = quote!(::core::primitive::f64);
    let gradient = |param: &Param| {
        let shape = param.shape();
        quote!(<#shape as ::scalar_autodiff::Parameters>::Gradient)
    };
    match gradient_form(tracked) {
        Form::Flat => {
            let count = gradient_len(tracked);
            quote!([#float; #count])
        }
        Form::Single => tracked.iter().map(|param| gradient(param)).collect(),
        Form::Tuple => {
            let each = tracked.iter().map(|param| gradient(param));
            quote!((#(#each,)*))
        }
    }
}

/// The gradient built from `next`, which yields the variables' gradients in order.
pub(crate) fn gradient_value(tracked: &[&Param], next: &Ident) -> TokenStream {
    let float = quote!(::core::primitive::f64);
    let flat = Ident::new("gradient", Span::mixed_site());
    let slot = Ident::new("slot", Span::mixed_site());
    let gradient = |param: &Param| {
        let value = by_reference(param);
        quote!(::scalar_autodiff::Parameters::gradient_from(#value, &mut #next))
    };
    match gradient_form(tracked) {
        Form::Flat => {
            let count = gradient_len(tracked);
            quote! {{
                let mut #flat: [#float; #count] = [0.0; #count];
                for #slot in #flat.iter_mut() {
                    *#slot = #next();
                }
                #flat
            }}
        }
        Form::Single => tracked.iter().map(|param| gradient(param)).collect(),
        Form::Tuple => {
            let each = tracked.iter().map(|param| gradient(param));
            quote!((#(#each,)*))
        }
    }
}

/// The type the function returns, with every `f64` written as `scalar`.
pub(crate) fn output_type(output: &Output, scalar: &TokenStream) -> TokenStream {
    match output {
        Output::Array(ty) => with_scalar(ty, scalar),
        _ => scalar.clone(),
    }
}

/// `ty` (`f64` or an array of it, nested) with `f64` written as `scalar`.
pub(crate) fn with_scalar(ty: &Type, scalar: &TokenStream) -> TokenStream {
    match ty {
        Type::Array(array) => {
            let elem = with_scalar(&array.elem, scalar);
            let len = &array.len;
            quote!([#elem; #len])
        }
        Type::Group(group) => with_scalar(&group.elem, scalar),
        Type::Paren(paren) => with_scalar(&paren.elem, scalar),
        _ => scalar.clone(),
    }
}

/// The number of `f64`s in an array type, as a constant expression.
pub(crate) fn array_len(ty: &Type) -> TokenStream {
    let lengths = signature::array_lengths(ty);
    let known: Option<usize> = lengths.iter().try_fold(1usize, |product, len| {
        product.checked_mul(literal_len(len)?)
    });
    match known {
        Some(count) => Literal::usize_unsuffixed(count).into_token_stream(),
        None => {
            let factors = lengths.iter().map(|len| quote!((#len)));
            quote!(1 #(* #factors)*)
        }
    }
}

/// An array type of `f64` as written with `f64` (a type alias for `f64` becomes `f64`).
pub(crate) fn f64_shape(ty: &Type) -> TokenStream {
    with_scalar(ty, &quote!(::core::primitive::f64))
}

/// The literal value of a length, if it is an integer literal.
fn literal_len(len: &Expr) -> Option<usize> {
    match len {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => int.base10_parse().ok(),
        Expr::Group(group) => literal_len(&group.expr),
        Expr::Paren(paren) => literal_len(&paren.expr),
        _ => None,
    }
}

/// The number of entries of a flat gradient: a literal where every length is one, else a
/// constant expression such as `2 + (K) * (3)`.
pub(crate) fn gradient_len(tracked: &[&Param]) -> TokenStream {
    let mut literal = 0usize;
    let mut symbolic = Vec::new();
    for param in tracked {
        let lengths = signature::array_lengths(&param.ty);
        let known: Option<usize> = lengths.iter().try_fold(1usize, |product, len| {
            product.checked_mul(literal_len(len)?)
        });
        match known {
            Some(count) => literal = literal.saturating_add(count),
            None => {
                let mut factors = lengths.iter().map(|len| quote!((#len)));
                let first = factors.next().unwrap_or_else(|| quote!(1));
                symbolic.push(quote!(#first #(* #factors)*));
            }
        }
    }
    let literal = Literal::usize_unsuffixed(literal);
    if symbolic.is_empty() {
        quote!(#literal)
    } else {
        quote!(#literal #(+ #symbolic)*)
    }
}
