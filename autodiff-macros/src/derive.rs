//! `#[derive(Parameters)]`: a struct of parameter shapes as one parameter shape.
//!
//! For `struct Mlp<const H: usize> { w: [[f64; 2]; H], b: Vec<f64> }` it emits, beside the
//! struct:
//!
//! - the tracked mirror `__AutodiffTrackedMlp<V, const H: usize>`, with the struct's
//!   visibility and every field's name and visibility, each field of type
//!   `<FieldType as ::scalar_autodiff::Parameters>::Tracked<V>` (so `t.w[i][j]` reads a tracked
//!   copy), with `Clone`, `Copy` and `Debug` impls bounded on those field types;
//! - `impl ::scalar_autodiff::Parameters for Mlp<H>` with `type Tracked<V>` the mirror and
//!   `type Gradient = Self`, every method walking the fields in declaration order.
//!
//! Const generic parameters are copied onto the mirror and the impls; type parameters,
//! lifetimes, enums, unions, structs without fields and slice fields are rejected with a
//! lesson. Every impl is bounded on its fields' types being parameter shapes, so that a
//! field which is not (`steps: usize`) is reported once, on its type.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Fields, GenericParam, Generics, Ident, Index, Member, Type, TypeParam,
    Visibility,
};

use crate::errors::Errors;
use crate::lesson::lesson;
use crate::parse::nesting;

/// What a parameter struct may hold, for the `help:` lines.
const WHAT_FIELDS_HOLD: &str = "fields of type `f64`, `[f64; K]` (nested to any depth), \
     `Vec<f64>` or another `#[derive(Parameters)]` struct";

/// Expands `#[derive(Parameters)] item`.
///
/// Never panics: every problem becomes a `compile_error!` spanned on the user's tokens, all
/// of them in one compile.
pub(crate) fn derive(item: TokenStream) -> TokenStream {
    // syn's parser would overflow the compiler's stack on tokens nested too deep.
    if let Some(error) = nesting::too_deep(
        &item,
        "the struct",
        "name the inner array types with `type` aliases, such as `type Row = [f64; 3];`",
    ) {
        return error.into_compile_error();
    }
    let input: DeriveInput = match syn::parse2(item.clone()) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let mut errors = Errors::default();
    check_generics(&input.generics, &mut errors);
    let fields = fields(&input, &mut errors);
    match fields {
        Some(fields) if errors.is_empty() => emit(&input, &fields, fresh_ident(&item)),
        _ => errors.into_compile_errors(),
    }
}

/// One field of the struct: how it is named (`w` or `0`), its visibility and its type.
struct Field<'a> {
    member: Member,
    vis: &'a Visibility,
    ty: &'a Type,
}

/// Rejects type parameters and lifetimes; const generic parameters are fine.
fn check_generics(generics: &Generics, errors: &mut Errors) {
    for param in &generics.params {
        match param {
            GenericParam::Type(param) => errors.push(lesson(
                param,
                "#[derive(Parameters)] does not support type parameters",
                "every field must have a concrete parameter shape, so that the struct's \
                 gradient is a value of the struct itself and its tracked copy has fields \
                 that generated code can index",
                "write the concrete field types, or use a const generic for a size, as in \
                 `struct Layer<const N: usize> { w: [f64; N] }`",
            )),
            GenericParam::Lifetime(param) => errors.push(lesson(
                param,
                "#[derive(Parameters)] does not support lifetime parameters",
                "parameters own their scalars: a borrowed field, such as `&[f64]`, cannot be \
                 updated by an optimizer step or hold the struct's gradient",
                "own the values (`Vec<f64>` instead of `&[f64]`) and pass borrowed data to \
                 the function as a separate argument",
            )),
            GenericParam::Const(_) => {}
        }
    }
}

/// The struct's fields in declaration order, or `None` (with an error) for an enum, a
/// union, a struct without fields, or a slice field.
fn fields<'a>(input: &'a DeriveInput, errors: &mut Errors) -> Option<Vec<Field<'a>>> {
    let ident = &input.ident;
    let data = match &input.data {
        Data::Struct(data) => data,
        Data::Enum(data) => {
            let enum_token = data.enum_token;
            errors.push(lesson(
                quote!(#enum_token #ident),
                "#[derive(Parameters)] cannot be used on an enum",
                "a parameter shape has one fixed list of scalars, the same for every value, \
                 but each variant of an enum holds different ones",
                &format!(
                    "use a struct with {WHAT_FIELDS_HOLD}; keep a choice between variants as \
                     data outside the parameters"
                ),
            ));
            return None;
        }
        Data::Union(data) => {
            let union_token = data.union_token;
            errors.push(lesson(
                quote!(#union_token #ident),
                "#[derive(Parameters)] cannot be used on a union",
                "a union holds one of its fields at a time and does not know which, so there \
                 is no fixed list of scalars to walk",
                &format!("use a struct with {WHAT_FIELDS_HOLD}"),
            ));
            return None;
        }
    };
    let fields: Vec<Field<'a>> = match &data.fields {
        Fields::Named(named) => named
            .named
            .iter()
            .filter_map(|field| {
                Some(Field {
                    member: Member::Named(field.ident.clone()?),
                    vis: &field.vis,
                    ty: &field.ty,
                })
            })
            .collect(),
        Fields::Unnamed(unnamed) => unnamed
            .unnamed
            .iter()
            .zip(0u32..)
            .map(|(field, index)| Field {
                member: Member::Unnamed(Index {
                    index,
                    span: field.ty.span(),
                }),
                vis: &field.vis,
                ty: &field.ty,
            })
            .collect(),
        Fields::Unit => Vec::new(),
    };
    if fields.is_empty() {
        let (struct_token, body) = (data.struct_token, &data.fields);
        let semi = data.semi_token;
        errors.push(lesson(
            quote!(#struct_token #ident #body #semi),
            "#[derive(Parameters)] needs a struct with at least one field",
            "the parameters of a struct are the scalars of its fields; without a field there \
             is nothing to differentiate, and the gradient would always be empty",
            &format!("give the struct {WHAT_FIELDS_HOLD}, or remove the derive"),
        ));
        return None;
    }
    let mut unsized_field = false;
    for field in &fields {
        if let Type::Slice(slice) = field.ty {
            unsized_field = true;
            errors.push(lesson(
                slice,
                "a slice field cannot be part of #[derive(Parameters)]",
                "a slice has no size known at compile time, and the struct's gradient is a \
                 value of the struct itself, which must have one",
                "own the scalars in a `Vec<f64>`, or give the length in the type: `[f64; K]`",
            ));
        }
    }
    (!unsized_field).then_some(fields)
}

/// A name for the mirror's value type parameter (`V` unless the struct's tokens already use
/// it, say as a constant in an array length), which then cannot capture anything the user
/// wrote.
fn fresh_ident(item: &TokenStream) -> Ident {
    fn collect(tokens: TokenStream, names: &mut HashSet<String>) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => {
                    names.insert(ident.to_string());
                }
                TokenTree::Group(group) => collect(group.stream(), names),
                TokenTree::Punct(_) | TokenTree::Literal(_) => {}
            }
        }
    }
    let mut names = HashSet::new();
    collect(item.clone(), &mut names);
    let mut name = String::from("V");
    let mut suffix = 0usize;
    while names.contains(&name) {
        name = format!("V{suffix}");
        suffix += 1;
    }
    Ident::new(&name, Span::mixed_site())
}

/// The mirror struct, its `Clone`, `Copy` and `Debug` impls, and the `Parameters` impl.
fn emit(input: &DeriveInput, fields: &[Field<'_>], v: Ident) -> TokenStream {
    let name = &input.ident;
    let vis = &input.vis;
    let tuple = matches!(
        &input.data,
        Data::Struct(data) if matches!(data.fields, Fields::Unnamed(_))
    );
    let mirror = format_ident!("__AutodiffTracked{}", name, span = name.span());

    // The struct's own generics (const parameters only) for the `Parameters` impl, and the
    // mirror's: the same with `V` in front.
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut mirror_generics = input.generics.clone();
    mirror_generics
        .params
        .insert(0, GenericParam::Type(TypeParam::from(v.clone())));
    let (mirror_impl_generics, mirror_ty_generics, _) = mirror_generics.split_for_impl();
    let mirror_params = &mirror_generics.params;
    let user_predicates: Vec<_> = where_clause
        .map(|clause| clause.predicates.iter().collect())
        .unwrap_or_default();

    // `<FieldType as ::scalar_autodiff::Parameters>::Tracked<V>`, spanned on the field's type so
    // that a field which is not a parameter shape is blamed there.
    let tracked: Vec<TokenStream> = fields
        .iter()
        .map(|field| {
            let ty = field.ty;
            quote_spanned!(ty.span()=> <#ty as ::scalar_autodiff::Parameters>::Tracked<#v>)
        })
        .collect();

    // `FieldType: Parameters` for the mirror's impls and
    // `FieldType: Parameters<Gradient = FieldType>` for the `Parameters` impl, spanned on the
    // field's type. For a field that is not a parameter shape, rustc reports the unmet bound
    // there once (the same error on the same span is shown once), and checks the impls'
    // bodies under the bound instead of failing again on every use of the field.
    let shape_bounds: Vec<TokenStream> = fields
        .iter()
        .map(|field| {
            let ty = field.ty;
            quote_spanned!(ty.span()=> #ty: ::scalar_autodiff::Parameters)
        })
        .collect();
    let gradient_bounds: Vec<TokenStream> = fields
        .iter()
        .map(|field| {
            let ty = field.ty;
            quote_spanned!(ty.span()=> #ty: ::scalar_autodiff::Parameters<Gradient = #ty>)
        })
        .collect();

    let declaration = {
        let decls = fields.iter().zip(&tracked).map(|(field, tracked)| {
            let vis = field.vis;
            match &field.member {
                Member::Named(ident) => quote!(#vis #ident: #tracked),
                Member::Unnamed(_) => quote!(#vis #tracked),
            }
        });
        let doc = format!(
            " The tracked copy of [`{name}`]: the same fields, each with every `f64` \
             replaced by `V`. Generated by `#[derive(Parameters)]`."
        );
        let head = quote! {
            #[doc = #doc]
            #[doc(hidden)]
            #vis struct #mirror <#mirror_params>
        };
        if tuple {
            quote!(#head ( #(#decls),* ) where #(#user_predicates,)* #(#shape_bounds,)*;)
        } else {
            quote!(#head where #(#user_predicates,)* #(#shape_bounds,)* { #(#decls),* })
        }
    };

    let members: Vec<&Member> = fields.iter().map(|field| &field.member).collect();
    let each = |make: &dyn Fn(&Field<'_>) -> TokenStream| -> Vec<(Member, TokenStream)> {
        fields
            .iter()
            .map(|field| (field.member.clone(), make(field)))
            .collect()
    };

    let clone_impl = {
        let clone = construct(
            quote!(#mirror),
            tuple,
            &each(&|field| {
                let member = &field.member;
                quote!(::core::clone::Clone::clone(&self.#member))
            }),
        );
        quote! {
            #[automatically_derived]
            impl #mirror_impl_generics ::core::clone::Clone for #mirror #mirror_ty_generics
            where
                #(#user_predicates,)*
                #(#shape_bounds,)*
                #(#tracked: ::core::clone::Clone,)*
            {
                #[inline]
                fn clone(&self) -> Self {
                    #clone
                }
            }

            #[automatically_derived]
            impl #mirror_impl_generics ::core::marker::Copy for #mirror #mirror_ty_generics
            where
                #(#user_predicates,)*
                #(#shape_bounds,)*
                #(#tracked: ::core::marker::Copy,)*
            {
            }
        }
    };

    let debug_impl = {
        let formatter = Ident::new("formatter", Span::mixed_site());
        let mirror_name = mirror.to_string();
        let body = if tuple {
            quote! {
                ::core::fmt::Formatter::debug_tuple(#formatter, #mirror_name)
                    #(.field(&self.#members))*
                    .finish()
            }
        } else {
            let names = members.iter().map(|member| match member {
                Member::Named(ident) => ident.unraw().to_string(),
                Member::Unnamed(index) => index.index.to_string(),
            });
            quote! {
                ::core::fmt::Formatter::debug_struct(#formatter, #mirror_name)
                    #(.field(#names, &self.#members))*
                    .finish()
            }
        };
        quote! {
            #[automatically_derived]
            impl #mirror_impl_generics ::core::fmt::Debug for #mirror #mirror_ty_generics
            where
                #(#user_predicates,)*
                #(#shape_bounds,)*
                #(#tracked: ::core::fmt::Debug,)*
            {
                fn fmt(&self, #formatter: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    #body
                }
            }
        }
    };

    let parameters_impl = {
        let f = Ident::new("f", Span::mixed_site());
        let make = Ident::new("make", Span::mixed_site());
        let next = Ident::new("next", Span::mixed_site());
        let tracked_copy = Ident::new("tracked", Span::mixed_site());
        let gradient = Ident::new("gradient", Span::mixed_site());
        let error = quote!(::scalar_autodiff::ScalarAutodiffError);
        let trait_path = quote!(::scalar_autodiff::Parameters);

        // Each field's part of a method, in declaration order.
        let per_field = |make_part: &dyn Fn(&Member) -> TokenStream| -> Vec<TokenStream> {
            members.iter().map(|member| make_part(member)).collect()
        };
        let counts = per_field(&|member| quote!(#trait_path::parameter_count(&self.#member)));
        let visits = per_field(&|member| quote!(#trait_path::visit(&self.#member, #f);));
        let visits_mut =
            per_field(&|member| quote!(#trait_path::visit_mut(&mut self.#member, #f);));
        let visits_runs = per_field(&|member| quote!(#trait_path::visit_runs(&self.#member, #f);));
        let visits_runs_mut =
            per_field(&|member| quote!(#trait_path::visit_runs_mut(&mut self.#member, #f);));
        let fits = per_field(
            &|member| quote!(#trait_path::can_zip_in_place(&self.#member, &#gradient.#member)),
        );
        let zips = per_field(
            &|member| quote!(#trait_path::zip_in_place(&mut self.#member, &#gradient.#member, #f);),
        );
        let visits_tracked = fields.iter().map(|field| {
            let (ty, member) = (field.ty, &field.member);
            quote!(<#ty as #trait_path>::visit_tracked(&#tracked_copy.#member, #f);)
        });
        let track = construct(
            quote!(#mirror),
            tuple,
            &each(&|field| {
                let member = &field.member;
                quote!(#trait_path::try_track(&self.#member, #make)?)
            }),
        );
        let gradient_from = construct(
            quote!(Self),
            tuple,
            &each(&|field| {
                let member = &field.member;
                quote!(#trait_path::gradient_from(&self.#member, #next))
            }),
        );

        quote! {
            // Its shape, and its mirror's, so that a const generic function infers its
            // sizes from either (see `__private::Untracked`).
            #[automatically_derived]
            impl #impl_generics ::scalar_autodiff::__private::Untracked for #name #ty_generics
            #where_clause
            {
                type Shape = Self;
            }

            #[automatically_derived]
            impl #mirror_impl_generics ::scalar_autodiff::__private::Untracked
                for #mirror #mirror_ty_generics
            where
                #(#user_predicates,)*
                #(#shape_bounds,)*
            {
                type Shape = #name #ty_generics;
            }

            #[automatically_derived]
            impl #impl_generics #trait_path for #name #ty_generics
            where
                #(#user_predicates,)*
                #(#gradient_bounds,)*
            {
                type Tracked<#v> = #mirror #mirror_ty_generics;
                type Gradient = Self;

                #[inline]
                fn parameter_count(&self) -> usize {
                    #(#counts)+*
                }

                #[inline]
                fn visit(&self, #f: &mut impl ::core::ops::FnMut(f64)) {
                    #(#visits)*
                }

                #[inline]
                fn visit_mut(&mut self, #f: &mut impl ::core::ops::FnMut(&mut f64)) {
                    #(#visits_mut)*
                }

                #[inline]
                fn visit_runs(&self, #f: &mut impl ::core::ops::FnMut(&[f64])) {
                    #(#visits_runs)*
                }

                #[inline]
                fn visit_runs_mut(&mut self, #f: &mut impl ::core::ops::FnMut(&mut [f64])) {
                    #(#visits_runs_mut)*
                }

                #[inline]
                fn try_track<#v>(
                    &self,
                    #make: &mut impl ::core::ops::FnMut(f64) -> ::core::result::Result<#v, #error>,
                ) -> ::core::result::Result<Self::Tracked<#v>, #error> {
                    ::core::result::Result::Ok(#track)
                }

                #[inline]
                fn gradient_from(&self, #next: &mut impl ::core::ops::FnMut() -> f64) -> Self {
                    #gradient_from
                }

                #[inline]
                fn visit_tracked<#v>(
                    #tracked_copy: &Self::Tracked<#v>,
                    #f: &mut impl ::core::ops::FnMut(&#v),
                ) {
                    #(#visits_tracked)*
                }

                #[inline]
                fn can_zip_in_place(&self, #gradient: &Self) -> bool {
                    #(#fits)&&*
                }

                #[inline]
                fn zip_in_place(
                    &mut self,
                    #gradient: &Self,
                    #f: &mut impl ::core::ops::FnMut(&mut f64, f64),
                ) {
                    #(#zips)*
                }
            }
        }
    };

    // Data of the struct passed for a differentiated parameter of a composed function (its
    // scalars become constants), by value and by reference.
    let data_impls = {
        let lent = syn::Lifetime::new("'lent", Span::mixed_site());
        let backend = Ident::new("AutodiffBackend", Span::mixed_site());
        let mut generics = input.generics.clone();
        generics.params.insert(
            0,
            GenericParam::Type(syn::parse_quote!(#backend: ::scalar_autodiff::__private::Backend)),
        );
        generics.params.insert(
            0,
            GenericParam::Lifetime(syn::LifetimeParam::new(lent.clone())),
        );
        let (data_generics, _, _) = generics.split_for_impl();
        let lend = |data: TokenStream, view: TokenStream| {
            quote! {
                #[automatically_derived]
                impl #data_generics ::scalar_autodiff::__private::Argument<#lent, #backend, #name #ty_generics>
                    for #data
                where
                    #(#user_predicates,)*
                    #(#gradient_bounds,)*
                {
                    #[inline]
                    fn lend(
                        self,
                        backend: &#backend,
                    ) -> ::core::result::Result<
                        ::scalar_autodiff::__private::Lent<
                            #lent,
                            <#name #ty_generics as ::scalar_autodiff::Parameters>::Tracked<#backend::Value>,
                        >,
                        ::scalar_autodiff::ScalarAutodiffError,
                    > {
                        ::scalar_autodiff::__private::lend_data(#view, backend)
                    }
                }
            }
        };
        let by_value = lend(quote!(#name #ty_generics), quote!(&self));
        let by_reference = lend(quote!(&#name #ty_generics), quote!(self));
        quote!(#by_value #by_reference)
    };

    quote! {
        #declaration
        #clone_impl
        #debug_impl
        #parameters_impl
        #data_impls
    }
}

/// A value of the struct (or tuple struct) `path`, its fields given in declaration order:
/// `path { w: value, .. }` or `path(value, ..)`.
fn construct(path: TokenStream, tuple: bool, fields: &[(Member, TokenStream)]) -> TokenStream {
    if tuple {
        let values = fields.iter().map(|(_, value)| value);
        quote!(#path( #(#values),* ))
    } else {
        let fields = fields.iter().map(|(member, value)| quote!(#member: #value));
        quote!(#path { #(#fields),* })
    }
}
