//! A function's halves: what its hidden body answers another function's compiled sweep
//! with (the `Halves` protocol of `__private`), on `f64`s for `name_grad` and on duals for
//! `name_hvp`. The forward half runs the forward sweep and keeps what the reverse half
//! needs; the reverse half adds into the caller's adjoints.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

use super::{is_slice, numbered, numbers_slice, stack, tracked, Emit, Number};
use crate::parse::signature::{Kind, Param};
use crate::sweep::analyse::Analysed;
use crate::sweep::ir::Operand;

/// What the hidden body does first on the `Halves` backend, from another function's
/// compiled sweep: run this function's compiled halves (see `__private::Halves` for the
/// protocol), or give up where the body is outside what they compile (then `false`). `array_output` is
/// the output's type with `f64` elements if it is an array. `backend`, `kind` and `lent`
/// are the hidden body's names for its backend, its type and its lifetime. Also whether
/// it has a reverse half over shared adjoints, for callers that lend one value twice.
pub(crate) fn halves(
    analysed: Option<&Analysed>,
    params: &[Param],
    generics: &syn::Generics,
    array_output: Option<&TokenStream>,
    method: bool,
    names: (&Ident, &Ident, &syn::Lifetime),
) -> (TokenStream, bool, bool) {
    let private = quote!(::scalar_autodiff::__private);
    let backend = names.0;
    let give_up = quote! {
        if #private::Backend::halves(#backend).is_some() {
            return ::core::result::Result::Err(#private::gave_up());
        }
    };
    let block = |number| {
        let halves = compiled_halves(analysed?, params, array_output, number)?;
        let shared = halves.shared.is_some();
        let block = halves_block(
            halves,
            params,
            generics,
            array_output,
            method,
            names,
            number,
        );
        Some((block, shared))
    };
    let Some((on_f64s, shared)) = block(Number::F64) else {
        return (give_up, false, false);
    };
    // (Without halves on duals, the body gives up at its first operation on them.)
    let on_duals = block(Number::Dual).map(|(block, _)| block);
    (quote!(#on_f64s #on_duals), true, shared)
}

/// The hidden body's answer to a compiled sweep on `number`s: its halves, and the code
/// that runs one of them on the caller's stack. Its code is compiled to machine code only
/// where another function's sweeps call this body: on `f64`s it is an `if` on
/// `Backend::HALVES`, a constant that only the `Halves` backend sets; on duals a closure
/// passed to `Backend::dual_halves`, which only the `DualHalves` backend calls.
fn halves_block(
    halves: Halves,
    params: &[Param],
    generics: &syn::Generics,
    array_output: Option<&TokenStream>,
    method: bool,
    (backend, kind, lent): (&Ident, &Ident, &syn::Lifetime),
    number: Number,
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let dual = number == Number::Dual;
    let Halves {
        forward,
        reverse,
        primals,
        shared,
    } = halves;
    let plain_output = array_output.cloned().unwrap_or_else(|| quote!(f64));
    let output = number.shape(&plain_output);
    let error = quote!(::core::result::Result::Err(#private::gave_up()));
    let stack = stack();
    let halves = Ident::new("__halves", Span::mixed_site());
    let borrowed = Ident::new("__borrowed", Span::mixed_site());
    let done = Ident::new("__done", Span::mixed_site());
    let forward_fn = Ident::new("__autodiff_forward", Span::mixed_site());
    let reverse_fn = Ident::new("__autodiff_reverse", Span::mixed_site());
    let consts: Vec<&Ident> = generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Const(constant) => Some(&constant.ident),
            _ => None,
        })
        .collect();
    let turbofish = (!consts.is_empty()).then(|| quote!(::<#(#consts),*>));
    let generic_params = &generics.params;
    let data: Vec<(&Ident, &syn::Type)> = params
        .iter()
        .filter(|param| !param.is_tracked())
        .filter_map(|param| Some((param.ident.as_ref()?, &param.ty)))
        .collect();
    let data_params = data.iter().map(|(name, ty)| quote!(#name: #ty));
    let data_params: Vec<TokenStream> = data_params.collect();
    let data_names: Vec<&Ident> = data.iter().map(|(name, _)| *name).collect();
    let tracked: Vec<(&Ident, &syn::Type)> = params
        .iter()
        .filter(|param| param.is_tracked())
        .filter_map(|param| Some((param.ident.as_ref()?, param.shape())))
        .collect();
    let adjoint_names: Vec<Ident> = numbered("adjoint", tracked.len());
    let spares: Vec<Ident> = numbered("spare", tracked.len());
    let argument = |shape: &syn::Type| quote!(<_ as #private::Argument<#lent, #kind, #shape>>);
    // The caller's adjoints; for data a spare, which must stay finite; or a copy of them
    // that goes back after the reverse half (see `__private::Spare`). On duals, the
    // caller's own or a spare.
    let slots = tracked.iter().zip(adjoint_names.iter().zip(&spares)).map(
        |((name, shape), (adjoint, spare))| {
            let argument = argument(shape);
            if dual {
                let ty = number.shape(&shape.to_token_stream());
                return quote! {
                    let mut #spare: ::core::option::Option<#ty> = ::core::option::Option::None;
                    let #adjoint: &mut #ty = match #argument::dual_adjoints_in(&#name, &mut #spare) {
                        ::core::option::Option::Some(#adjoint) => #adjoint,
                        ::core::option::Option::None => return #error,
                    };
                };
            }
            quote! {
                let mut #spare = #private::Spare::default();
                let #adjoint: &mut <#shape as ::scalar_autodiff::Parameters>::Gradient =
                    match #argument::adjoints_in(#name, &mut #spare) {
                    ::core::option::Option::Some(#adjoint) => #adjoint,
                    ::core::option::Option::None => return #error,
                };
            }
        },
    );
    // The caller's values (finite), or the data's.
    let values = tracked.iter().zip(&primals).map(|((name, shape), primal)| {
        let argument = argument(shape);
        if dual {
            let ty = number.shape(&shape.to_token_stream());
            return quote! {
                let #primal = match #argument::dual_primal(&#name) {
                    ::core::option::Option::Some(#primal) => #primal,
                    ::core::option::Option::None => return #error,
                };
                let #primal: &#ty = &#primal;
            };
        }
        quote! {
            let #primal: &#shape = match #argument::primal(&#name) {
                ::core::option::Option::Some(#primal) => #primal,
                ::core::option::Option::None => return #error,
            };
        }
    });
    // Whether the caller passes each value again going back (then it is not kept): a
    // scalar's as a copy (data passed for it too, which the caller's reverse passes again
    // as it is written), the others by reference.
    let steadies: Vec<Ident> = numbered("steady", tracked.len());
    let scalar = |shape: &syn::Type| {
        matches!(crate::parse::signature::ungrouped(shape),
            syn::Type::Path(path) if path.path.is_ident("f64"))
    };
    let steady_type = |shape: &syn::Type| {
        let ty = number.shape(&shape.to_token_stream());
        match scalar(shape) {
            true => quote!(::core::option::Option<#ty>),
            false => quote!(::core::option::Option<&#ty>),
        }
    };
    let steady_values = tracked
        .iter()
        .zip(&steadies)
        .map(|((name, shape), steady)| {
            let argument = argument(shape);
            let ty = steady_type(shape);
            let method = match (scalar(shape), dual) {
                (true, false) => quote!(steady_copy),
                (false, false) => quote!(steady),
                (true, true) => quote!(dual_steady_copy),
                (false, true) => quote!(dual_steady),
            };
            quote!(let #steady: #ty = #argument::#method(&#name);)
        });
    let steady_values: Vec<TokenStream> = steady_values.collect();
    let primal_params =
        tracked
            .iter()
            .zip(primals.iter().zip(&steadies))
            .map(|((_, shape), (primal, steady))| {
                let ty = steady_type(shape);
                let shape = number.shape(&shape.to_token_stream());
                quote!(#primal: &#shape, #steady: #ty)
            });
    let adjoint_params = tracked.iter().zip(adjoint_names.iter().zip(&steadies)).map(
        |((_, shape), (adjoint, steady))| {
            let ty = steady_type(shape);
            let adjoints = match dual {
                true => number.shape(&shape.to_token_stream()),
                false => quote!(<#shape as ::scalar_autodiff::Parameters>::Gradient),
            };
            quote! {
                #adjoint: &mut #adjoints,
                #steady: #ty
            }
        },
    );
    let allow = quote! {
        #[allow(unused_mut, unused_variables, unused_assignments, unused_parens, unused_braces,
            non_snake_case, clippy::all)]
    };
    let primal_params: Vec<TokenStream> = primal_params.collect();
    let adjoint_params: Vec<TokenStream> = adjoint_params.collect();
    // A method's halves are closures, which see `self` and `Self` as the body does; a
    // free function's are functions, which keep its const generics.
    let functions = if method {
        quote! {
            #allow
            let #forward_fn = |
                #stack: &mut #private::Stack,
                #(#primal_params,)*
                #(#data_params),*
            | -> ::core::option::Option<#output> {
                #forward
            };
            #allow
            let #reverse_fn = |
                #stack: &mut #private::Stack,
                #(#adjoint_params,)*
                #(#data_params),*
            | -> ::core::option::Option<()> {
                #reverse
            };
        }
    } else {
        quote! {
            #allow
            #[inline]
            fn #forward_fn<#generic_params>(
                #stack: &mut #private::Stack,
                #(#primal_params,)*
                #(#data_params),*
            ) -> ::core::option::Option<#output> {
                #forward
            }
            #allow
            #[inline]
            fn #reverse_fn<#generic_params>(
                #stack: &mut #private::Stack,
                #(#adjoint_params,)*
                #(#data_params),*
            ) -> ::core::option::Option<()> {
                #reverse
            }
        }
    };
    let turbofish = if method { None } else { turbofish };
    let shapes = tracked.iter().map(|(_, shape)| shape);
    // (On duals, an array's adjoints lent to a slice were copied: they go back.)
    let give_back = dual.then(|| {
        let gives = tracked.iter().zip(&spares).map(|((name, shape), spare)| {
            let argument = argument(shape);
            quote!(#argument::dual_give_back(&#name, #spare);)
        });
        quote!(#(#gives)*)
    });
    let (convert, finished) = match dual {
        true => (
            quote!(dual_output),
            quote!(#(|| !#private::dual_spare_finite::<#shapes>(&#spares))*),
        ),
        false => (quote!(output), quote!(#(|| !#spares.finish())*)),
    };
    let run = quote! {
        #functions
        let mut #borrowed = match #halves.stack() {
            ::core::option::Option::Some(#borrowed) => #borrowed,
            ::core::option::Option::None => return #error,
        };
        let #stack: &mut #private::Stack = &mut #borrowed;
        #(#steady_values)*
        if #halves.is_reverse() {
            #(#slots)*
            let #done = #reverse_fn #turbofish(
                #stack,
                #(#adjoint_names, #steadies,)*
                #(#data_names),*
            );
            if #done.is_none() #finished {
                return #error;
            }
            #give_back
            return #private::#convert::<#kind, #plain_output>(#backend, #private::Zero::zero());
        }
        #(#values)*
        return match #forward_fn #turbofish(#stack, #(#primals, #steadies,)* #(#data_names),*) {
            ::core::option::Option::Some(#done) => #private::#convert::<#kind, #plain_output>(#backend, #done),
            ::core::option::Option::None => #error,
        };
    };
    // The reverse half over shared adjoints, for a caller that lends one value twice.
    let shared = shared.map(|body| {
        let buffer = Ident::new("__shared", Span::mixed_site());
        let base = Ident::new("__base", Span::mixed_site());
        let shared_fn = Ident::new("__autodiff_reverse_shared", Span::mixed_site());
        let maps = numbered("map", tracked.len());
        let spare_maps = numbered("spare_map", tracked.len());
        let number_ty = number.ty();
        let map_params =
            maps.iter()
                .zip(tracked.iter().zip(&steadies))
                .map(|(map, ((_, shape), steady))| {
                    let ty = steady_type(shape);
                    quote!(#map: &[usize], #steady: #ty)
                });
        let map_params: Vec<TokenStream> = map_params.collect();
        let function = match method {
            true => quote! {
                #allow
                let #shared_fn = |
                    #stack: &mut #private::Stack,
                    #buffer: &mut [#number_ty],
                    #(#map_params,)*
                    #(#data_params),*
                | -> ::core::option::Option<()> {
                    #body
                };
            },
            false => quote! {
                #allow
                #[inline]
                fn #shared_fn<#generic_params>(
                    #stack: &mut #private::Stack,
                    #buffer: &mut [#number_ty],
                    #(#map_params,)*
                    #(#data_params),*
                ) -> ::core::option::Option<()> {
                    #body
                }
            },
        };
        // Data passed for a differentiated parameter adds into spares at the end of the
        // buffer, which must stay finite.
        let find_maps = tracked.iter().zip(maps.iter().zip(&spare_maps)).map(
            |((name, shape), (map, spare))| {
                let argument = argument(shape);
                quote! {
                    let #spare: ::std::vec::Vec<usize>;
                    let #map: &[usize] = match #argument::map(&#name) {
                        ::core::option::Option::Some(#map) => #map,
                        ::core::option::Option::None => match #argument::primal(&#name) {
                            ::core::option::Option::Some(#map) => {
                                #spare = #private::spare_map(
                                    #buffer,
                                    ::scalar_autodiff::Parameters::parameter_count(#map),
                                );
                                &#spare
                            }
                            ::core::option::Option::None => return #error,
                        },
                    };
                }
            },
        );
        let which = match dual {
            true => quote!(dual_shared_halves),
            false => quote!(shared_halves),
        };
        let result = Ident::new("__result", Span::mixed_site());
        quote! {
            if let ::core::option::Option::Some(#result) = #private::Backend::#which(
                #backend,
                |#stack: &mut #private::Stack, #buffer: &mut ::std::vec::Vec<#number_ty>| {
                    #function
                    #(#steady_values)*
                    let #base = #buffer.len();
                    #(#find_maps)*
                    let #done = #shared_fn #turbofish(
                        #stack,
                        &mut #buffer[..],
                        #(#maps, #steadies,)*
                        #(#data_names),*
                    );
                    if #done.is_none() || !#private::spares_finite(#buffer, #base) {
                        return #error;
                    }
                    #private::#convert::<#kind, #plain_output>(#backend, #private::Zero::zero())
                },
            ) {
                return #result;
            }
        }
    });
    let result = Ident::new("__result", Span::mixed_site());
    let run = match dual {
        // (A branch on a constant of the backend, which rustc does not compile for the
        // backends whose constant is false: the halves become machine code only where
        // another function's sweeps call them.)
        false => quote! {
            if <#kind as #private::Backend>::HALVES {
                if let ::core::option::Option::Some(#halves) = #private::Backend::halves(#backend) {
                    #run
                }
            }
        },
        true => quote! {
            if let ::core::option::Option::Some(#result) = #private::Backend::dual_halves(
                #backend,
                |#halves: &dyn #private::Run| { #run },
            ) {
                return #result;
            }
        },
    };
    quote!(#run #shared)
}

/// The two halves' bodies, and the names of the forward half's parameters holding the
/// tracked arguments' values.
struct Halves {
    forward: TokenStream,
    reverse: TokenStream,
    primals: Vec<Ident>,
    /// The reverse half over shared adjoints, where the body has one.
    shared: Option<TokenStream>,
}

/// The bodies of the two halves: the forward half runs the forward sweep on its
/// arguments' values with everything the reverse needs on the stack (as if the whole
/// body were a loop's), keeps its parameters last, and returns its value; the reverse
/// half takes the output's adjoints and the parameters back, and runs the reverse sweep
/// into the caller's adjoints (`__adjoint_k`, behind `&mut`).
fn compiled_halves(
    analysed: &Analysed,
    params: &[Param],
    array_output: Option<&TokenStream>,
    number: Number,
) -> Option<Halves> {
    // On duals, data passes to the halves by value from a closure that must leave it to
    // the rest of the body: only `Copy` data.
    let dual = number == Number::Dual;
    if dual
        && params.iter().any(|param| {
            matches!(param.kind, Kind::Data) && !crate::sweep::lower::copy_type(&param.ty)
        })
    {
        return None;
    }
    let Analysed {
        program,
        names,
        versioning,
        ..
    } = analysed;
    let versioning = *versioning;
    let mut emit = Emit::new(program, names, true, versioning);
    emit.number = number;
    let shared = shared_reverse(program, names, versioning, params, array_output, number);
    let forward = emit.forward_stmts(&program.body, true)?;
    let output = emit.forward_output(program, true)?;
    let versions = emit.keep_versions(&program.body);
    let output_primal = emit.primal(&program.output.result, true)?;
    let upstream = Ident::new("__upstream", Span::mixed_site());
    // An array output is a local's, returned as it is: its adjoints are the caller's
    // sums for it (its elements' nodes, in the trace, receive exactly those first).
    let output_reverse = match (array_output, &program.output.result) {
        // (A row copied by a changing index, `let r = rows[j]; r`, is not returned so.)
        (Some(_), Operand::Place(_)) if !program.epilogue.is_empty() => return None,
        (Some(_), Operand::Place(place)) => {
            let adjoint = &program.vars[place.var].adjoint;
            quote!(#adjoint = #upstream;)
        }
        _ => emit.reverse_output(program, &upstream, true)?,
    };
    let output_type = number.shape(&array_output.cloned().unwrap_or_else(|| quote!(f64)));
    let prelude = emit.prelude(&program.body);
    let reverse = emit.reverse_stmts(&program.body, true)?;
    if !emit.hoisted.is_empty() {
        return None;
    }
    let private = quote!(::scalar_autodiff::__private);
    let stack = stack();
    let tracked = tracked(program, params);
    let arguments: Vec<Ident> = numbered("argument", tracked.len());
    // A scalar as a value, the others by reference. (`__steady_k`: see `keep`.)
    let values = tracked
        .iter()
        .zip(&arguments)
        .map(|((var, param), argument)| {
            let primal = &var.primal;
            match param.kind {
                Kind::Scalar => {
                    let number = number.ty();
                    quote!(let #primal: #number = *#argument;)
                }
                _ => quote!(let #primal = #argument;),
            }
        });
    let steadies: Vec<Ident> = numbered("steady", tracked.len());
    // A parameter's values only where a reverse half reads them (`a + b` reads neither).
    let reversed = {
        let shared = shared
            .as_ref()
            .map(|(prelude, output, reverse)| quote!(#prelude #output #reverse));
        quote!(#prelude #output_reverse #reverse #shared)
    };
    let read: Vec<bool> = tracked
        .iter()
        .map(|(var, _)| crate::sweep::lower::mentions(&reversed, &var.primal.to_string()))
        .collect();
    // Only what the caller will not pass again.
    let keep = tracked
        .iter()
        .zip(&steadies)
        .zip(&read)
        .map(|(((var, param), steady), &read)| {
            if !read {
                return TokenStream::new();
            }
            let primal = &var.primal;
            let kept = match param.kind {
                Kind::Scalar => quote!(&#primal),
                _ => quote!(#primal),
            };
            // A slice of `f64`s or of arrays of them goes onto the stack as its numbers (the
            // reverse half knows its length from its adjoints); a slice of anything else
            // cannot be taken back into a local of its own: only the caller's own (steady)
            // one is compiled.
            // On duals, a struct's duals are not kept either (no `Numbers` for them).
            let unkept = dual && matches!(param.kind, Kind::Declared { .. }) && !is_slice(param);
            if unkept || (is_slice(param) && numbers_slice(param).is_none()) {
                return quote! {
                    if #steady.is_none() {
                        return ::core::option::Option::None;
                    }
                };
            }
            let keep = match dual {
                true => quote!(#private::Numbers::keep(#kept, #stack);),
                false => quote!(#stack.keep(#kept);),
            };
            quote! {
                if #steady.is_none() {
                    #keep
                }
            }
        });
    let adjoints: Vec<Ident> = numbered("adjoint", tracked.len());
    let owned = Ident::new("__owned", Span::mixed_site());
    let given = Ident::new("__given", Span::mixed_site());
    let take: Vec<TokenStream> = tracked
        .iter()
        .zip(adjoints.iter().zip(&steadies))
        .zip(&read)
        .rev()
        .map(|(((var, param), (adjoint, steady)), &read)| {
            if !read {
                return TokenStream::new();
            }
            let (primal, shape) = (&var.primal, param.shape());
            let number_ty = number.ty();
            match param.kind {
                Kind::Scalar => quote! {
                    let #primal: #number_ty = match #steady {
                        ::core::option::Option::Some(#given) => #given,
                        ::core::option::Option::None => {
                            <#number_ty as #private::Number>::pop(#stack)
                        }
                    };
                },
                // A struct's duals, or a slice's of anything but numbers, come only again.
                _ if dual
                    && numbers_slice(param).is_none()
                    && matches!(param.kind, Kind::Declared { .. }) =>
                {
                    let ty = number.shape(&shape.to_token_stream());
                    quote! {
                        let #primal: &#ty = match #steady {
                            ::core::option::Option::Some(#given) => #given,
                            ::core::option::Option::None => return ::core::option::Option::None,
                        };
                    }
                }
                // (A slice's copy is as long as its adjoints.)
                _ if dual => {
                    let ty = number.shape(&shape.to_token_stream());
                    let zero = match numbers_slice(param) {
                        Some(_) => quote!(::std::vec![#private::Zero::zero(); #adjoint.len()]),
                        None => quote!(#private::Zero::zero()),
                    };
                    quote! {
                        let mut #owned: #ty;
                        let #primal: &#ty = match #steady {
                            ::core::option::Option::Some(#given) => #given,
                            ::core::option::Option::None => {
                                #owned = #zero;
                                #private::Numbers::take(&mut #owned, #stack);
                                &#owned
                            }
                        };
                    }
                }
                // (A copy, made where the caller lends a value it does not pass again.)
                _ if numbers_slice(param).is_some() => {
                    let element = numbers_slice(param);
                    quote! {
                        let mut #owned: ::std::vec::Vec<#element>;
                        let #primal: &#shape = match #steady {
                            ::core::option::Option::Some(#given) => #given,
                            ::core::option::Option::None => {
                                #owned = ::std::vec![#private::Zero::zero(); #adjoint.len()];
                                #stack.take(&mut #owned[..]);
                                &#owned
                            }
                        };
                    }
                }
                _ if is_slice(param) => quote! {
                    let #primal: &#shape = match #steady {
                        ::core::option::Option::Some(#given) => #given,
                        ::core::option::Option::None => return ::core::option::Option::None,
                    };
                },
                _ => {
                    let zero = match param.kind {
                        Kind::Declared { .. } => quote!(#private::zeros_of(&*#adjoint)),
                        _ => quote!(#private::Zero::zero()),
                    };
                    quote! {
                        let mut #owned: #shape;
                        let #primal: &#shape = match #steady {
                            ::core::option::Option::Some(#given) => #given,
                            ::core::option::Option::None => {
                                #owned = #zero;
                                #stack.take(&mut #owned);
                                &#owned
                            }
                        };
                    }
                }
            }
        })
        .collect();
    // At once: an argument's name (`__adjoint_k`, the k-th parameter's) may be another
    // variable's (`__adjoint_k` of variable k, where a `mut` parameter's copy shifts
    // them).
    let renamed = {
        let vars = tracked.iter().map(|(var, _)| &var.adjoint);
        quote!(let (#(#vars,)*) = (#(#adjoints,)*);)
    };
    let result = Ident::new("__output", Span::mixed_site());
    let forward = quote! {
        #(#values)*
        #forward
        #output
        let #result: #output_type = #output_primal;
        #versions
        #(#keep)*
        ::core::option::Option::Some(#result)
    };
    let take_upstream = match dual {
        true => quote!(#private::Numbers::take(&mut #upstream, #stack);),
        false => quote!(#stack.take(&mut #upstream);),
    };
    let reverse = quote! {
        let mut #upstream: #output_type = #private::Zero::zero();
        #take_upstream
        #(#take)*
        #renamed
        #prelude
        #output_reverse
        #reverse
        ::core::option::Option::Some(())
    };
    // Over shared adjoints: the same, with each parameter's adjoints in the buffer.
    let shared = shared.map(|(prelude, output_reverse, reverse)| {
        quote! {
            let mut #upstream: #output_type = #private::Zero::zero();
            #take_upstream
            #(#take)*
            #prelude
            #output_reverse
            #reverse
            ::core::option::Option::Some(())
        }
    });
    Some(Halves {
        forward,
        reverse,
        primals: arguments,
        shared,
    })
}

/// The reverse half over shared adjoints (see `__private::SharedHalves`), as its prelude,
/// the output's reverse and the body's: for a body whose differentiated parameters are
/// scalars or arrays, each read whole scalar by scalar (`__shared[__map_k[i]]`), and
/// lent on to no helper beside another (two `&mut` of one buffer). `None` where the
/// body is outside that: then a caller that lends one value twice is a compile error.
fn shared_reverse(
    program: &crate::sweep::ir::Program,
    names: &crate::sweep::names::Names,
    versioning: bool,
    params: &[Param],
    array_output: Option<&TokenStream>,
    number: Number,
) -> Option<(TokenStream, TokenStream, TokenStream)> {
    let tracked = tracked(program, params);
    let simple = tracked
        .iter()
        .all(|(_, param)| matches!(param.kind, Kind::Scalar | Kind::Array));
    let copy_data = params.iter().all(|param| {
        !matches!(param.kind, Kind::Data) || crate::sweep::lower::copy_type(&param.ty)
    });
    if !simple || !copy_data || lends_parameters_together(program, &program.body) {
        return None;
    }
    let maps = numbered("map", tracked.len());
    let mut emit = Emit::new(program, names, true, versioning);
    emit.number = number;
    // A versioned copy lent to a call: its adjoints are a buffer cell or its own, chosen at
    // run time, beside the buffer lent for the others (two `&mut` of it). Not compiled yet.
    if lends_versioned(&program.body, &emit.versioned) {
        return None;
    }
    for ((var, _), map) in tracked.iter().zip(&maps) {
        let id = program
            .vars
            .iter()
            .position(|other| std::ptr::eq(other, *var))?;
        emit.mapped.insert(id, (map.clone(), var.lengths.clone()));
    }
    emit.forward_stmts(&program.body, true)?;
    emit.forward_output(program, true)?;
    emit.keep_versions(&program.body);
    emit.primal(&program.output.result, true)?;
    let upstream = Ident::new("__upstream", Span::mixed_site());
    let output_reverse = match (array_output, &program.output.result) {
        (Some(_), Operand::Place(_)) if !program.epilogue.is_empty() => return None,
        (Some(_), Operand::Place(place)) if !program.vars[place.var].param => {
            let adjoint = &program.vars[place.var].adjoint;
            quote!(#adjoint = #upstream;)
        }
        (Some(_), _) => return None,
        _ => emit.reverse_output(program, &upstream, true)?,
    };
    let prelude = emit.prelude(&program.body);
    let reverse = emit.reverse_stmts(&program.body, true)?;
    // (Every read of a parameter's adjoints went through the buffer.)
    let tokens = quote!(#prelude #output_reverse #reverse);
    let unread = tracked
        .iter()
        .all(|(var, _)| !crate::sweep::lower::mentions(&tokens, &var.adjoint.to_string()));
    unread.then_some((prelude, output_reverse, reverse))
}

/// Whether a call in `stmts` lends a versioned copy (see `emit::versioned`).
fn lends_versioned(
    stmts: &[crate::sweep::ir::Stmt],
    versioned: &std::collections::HashMap<usize, crate::sweep::ir::Place>,
) -> bool {
    use crate::sweep::ir::{Arg, Stmt};
    stmts.iter().any(|stmt| match stmt {
        Stmt::Call { args, seeds, .. } => {
            args.iter()
                .any(|arg| matches!(arg, Arg::Tracked(place) if versioned.contains_key(&place.var)))
                || seeds
                    .iter()
                    .any(|(_, source)| versioned.contains_key(&source.var))
        }
        Stmt::If {
            then, otherwise, ..
        } => lends_versioned(then, versioned) || lends_versioned(otherwise, versioned),
        Stmt::For { body, .. } => lends_versioned(body, versioned),
        _ => false,
    })
}

/// Whether a call in `stmts` lends two of the parameters, or one twice: their adjoints
/// would be two `&mut` of the one buffer.
fn lends_parameters_together(
    program: &crate::sweep::ir::Program,
    stmts: &[crate::sweep::ir::Stmt],
) -> bool {
    use crate::sweep::ir::{Arg, Stmt};
    stmts.iter().any(|stmt| match stmt {
        Stmt::Call { args, seeds, .. } => {
            let lent = args.iter().filter_map(|arg| match arg {
                Arg::Tracked(place) => Some(place.var),
                Arg::Data(_) => None,
            });
            let seeded = seeds.iter().map(|(_, source)| source.var);
            lent.chain(seeded)
                .filter(|var| program.vars[*var].param)
                .count()
                > 1
        }
        Stmt::If {
            then, otherwise, ..
        } => {
            lends_parameters_together(program, then)
                || lends_parameters_together(program, otherwise)
        }
        Stmt::For { body, .. } => lends_parameters_together(program, body),
        _ => false,
    })
}
