//! The forward-mode and second-order functions: `name_jvp`, `name_hvp`, `name_hessian`.
//!
//! `name_jvp` runs the body as `name_grad`'s checked path does (inline when it is short,
//! the hidden generic body otherwise) on forward-mode duals, with no tape. `name_hvp`
//! first tries `name_grad`'s compiled sweeps on duals (forward over reverse,
//! `sweep::dual_sweeps`). `name_hessian`, and `name_hvp` where its sweeps give up, run on
//! a trace whose recording the runtime's second-order sweeps walk (`second.rs` there).
//! (A compiled Hessian, the sweeps once per column, was 3-7x faster on Rosenbrock but a
//! second copy of the sweeps in every function cost 45% more compile time in a debug
//! build of a test crate.)

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Attribute, Ident, Visibility};

use crate::emit::{by_reference, gradient_len, gradient_type, gradient_value, is_flat};
use crate::parse::signature::Param;

/// What the three functions share with `name_grad`.
pub(crate) struct Context<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) vis: &'a Visibility,
    pub(crate) forwarded: &'a [&'a Attribute],
    /// `&self,` for a method.
    pub(crate) receiver: Option<TokenStream>,
    /// `name_grad`'s parameters.
    pub(crate) grad_params: &'a [TokenStream],
    pub(crate) params: &'a [Param],
    /// One name per parameter for its tracked copy.
    pub(crate) copies: &'a [Ident],
    /// The hidden body called on the backend `Forward`, with the copies.
    pub(crate) run_forward: TokenStream,
    /// The hidden body called on the trace `tape`, with the copies.
    pub(crate) run_trace: TokenStream,
    /// `name_hvp`'s compiled sweeps (see `sweep::dual_sweeps`), if the body has them:
    /// they read the names [`hvp_names`] gives.
    pub(crate) hvp_sweeps: Option<TokenStream>,
    /// The trace's name in `run_trace`.
    pub(crate) tape: &'a Ident,
    /// The names `name_grad` lists in its rustdoc.
    pub(crate) list: &'a str,
    /// The hidden body's name, when `name_jacobian` may run its compiled halves: a free
    /// function whose data parameters can be passed twice (see [`halves_jacobian`]).
    pub(crate) halves: Option<Ident>,
}

impl Context<'_> {
    /// The differentiated parameters.
    fn tracked(&self) -> Vec<&Param> {
        self.params
            .iter()
            .filter(|param| param.is_tracked())
            .collect()
    }

    /// `let count = 0 + ...;`: the number of differentiated scalars.
    fn count_line(&self, count: &Ident) -> TokenStream {
        count_line(&self.tracked(), count)
    }

    /// `let copy = make(value)?;` for every differentiated parameter.
    fn copies_by(&self, make: impl Fn(TokenStream) -> TokenStream) -> Vec<TokenStream> {
        self.params
            .iter()
            .zip(self.copies.iter())
            .filter(|(param, _)| param.is_tracked())
            .map(|(param, copy)| {
                let made = make(by_reference(param));
                quote!(let #copy = #made?;)
            })
            .collect()
    }
}

/// The forward-mode and second-order functions of `function`: `name_jvp`, `name_hvp` and
/// `name_hessian` for a scalar output, `name_jacobian` for an array. Their flat results
/// (`[f64; N]`, `[[f64; N]; N]`) count a generic function's inputs, which stable Rust
/// cannot write in a type: a function with concrete sizes that calls this one has them.
pub(crate) fn of(function: &super::function::Function<'_>) -> Option<TokenStream> {
    use crate::parse::signature::Output;
    if !function.generics.is_empty() {
        return None;
    }
    let private = quote!(::scalar_autodiff::__private);
    let tape = Ident::new("tape", Span::mixed_site());
    let args = function.variable_args();
    // `name_hvp`'s compiled sweeps, under `name_grad`'s conditions (`tape` included: its
    // helpers may have no halves to call).
    let hvp_sweeps = function.analysis.sweeps.as_ref().ok().and_then(|analysed| {
        let (tangents, count) = hvp_names();
        crate::sweep::dual_sweeps(analysed, function.params, (&tangents, &count))
    });
    let grad_params = super::grad::grad_params(function.params);
    let copies = function.copies();
    let (list, _) = function.doc_lists();
    let context = Context {
        ident: function.ident,
        vis: function.vis,
        forwarded: &function.forwarded,
        receiver: function.receiver(),
        grad_params: &grad_params,
        params: function.params,
        copies: &copies,
        run_forward: function.run(quote!(&#private::Forward), &args),
        run_trace: function.run(quote!(#tape), &args),
        hvp_sweeps,
        tape: &tape,
        list: &list,
        halves: halves_callable(function),
    };
    match function.output {
        Output::Scalar => Some(functions(&context)),
        Output::Array(ty) => Some(jacobian(&context, ty)),
        _ => None,
    }
}

/// The names of `name_hvp`'s flat direction and of its count of differentiated scalars.
pub(crate) fn hvp_names() -> (Ident, Ident) {
    (
        Ident::new("flat", Span::mixed_site()),
        Ident::new("count", Span::mixed_site()),
    )
}

/// `let count = 0 + ...;`: the number of scalars of the differentiated parameters.
pub(crate) fn count_line(tracked: &[&Param], count: &Ident) -> TokenStream {
    let counts = tracked.iter().map(|param| {
        let value = by_reference(param);
        quote!(+ ::scalar_autodiff::Parameters::parameter_count(#value))
    });
    quote!(let #count = 0usize #(#counts)*;)
}

/// `flat`: the scalars of `tangent` (shaped like the gradient of the `tracked`
/// parameters) in gradient order, checked against their `count`.
pub(crate) fn flatten(
    tracked: &[&Param],
    tangent: &dyn quote::ToTokens,
    flat: &Ident,
    count: &Ident,
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let parts: Vec<TokenStream> = if is_flat(tracked) || tracked.len() == 1 {
        vec![quote!(&#tangent)]
    } else {
        (0..tracked.len())
            .map(|index| {
                let index = syn::Index::from(index);
                quote!(&#tangent.#index)
            })
            .collect()
    };
    quote! {
        let mut #flat: ::std::vec::Vec<::core::primitive::f64> =
            ::std::vec::Vec::with_capacity(#count);
        #(#private::flatten_into(&mut #flat, #parts);)*
        #private::check_length(#count, #flat.len())?;
    }
}

/// `name_jvp`, `name_hvp` and `name_hessian`.
pub(crate) fn functions(context: &Context<'_>) -> TokenStream {
    let Context {
        ident,
        vis,
        forwarded,
        receiver,
        grad_params,
        run_forward,
        run_trace,
        tape,
        list,
        ..
    } = context;
    let private = quote!(::scalar_autodiff::__private);
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let float = quote!(::core::primitive::f64);
    let tracked = context.tracked();
    let gradient_type = gradient_type(&tracked);
    let tangent = Ident::new("tangent", Span::mixed_site());
    let (flat, count) = hvp_names();
    let next = Ident::new("next", Span::mixed_site());
    let scalars = Ident::new("scalars", Span::mixed_site());
    let output = Ident::new("output", Span::mixed_site());
    let value = Ident::new("value", Span::mixed_site());
    let gradient = Ident::new("gradient", Span::mixed_site());
    let product = Ident::new("product", Span::mixed_site());
    let hessian = Ident::new("hessian", Span::mixed_site());
    let jvp = format_ident!("{}_jvp", ident, span = ident.span());
    let hvp = format_ident!("{}_hvp", ident, span = ident.span());
    let hessian_fn = format_ident!("{}_hessian", ident, span = ident.span());

    let count_line = context.count_line(&count);
    let flatten = flatten(&tracked, &tangent, &flat, &count);
    let duals = context.copies_by(|value| quote!(#private::duals(#value, &mut #next)));
    let variables = context.copies_by(|value| quote!(#private::variables(#tape, #value)));
    let shaped = |from: &Ident| {
        let build = gradient_value(&tracked, &next);
        quote! {{
            let mut #scalars = #from.iter().copied();
            let mut #next = || #scalars.next().unwrap_or(0.0);
            #build
        }}
    };
    let gradient_shaped = shaped(&gradient);
    let product_shaped = shaped(&product);
    // The compiled sweeps first; the trace decides every call they give up on.
    let hvp_compiled = context.hvp_sweeps.as_ref().map(|sweeps| {
        quote! {
            if let ::core::option::Option::Some((#value, #gradient, #product)) = #sweeps {
                return ::core::result::Result::Ok((#value, #gradient_shaped, #product_shaped));
            }
        }
    });

    // `#[inline]`: a library defining a `#[differentiable]` function compiles these only
    // where they are called (a crate's non-inline public functions are all compiled).
    let lints = crate::emit::generated_lints();
    let allow = quote! {
        #[inline]
        #lints
    };
    let errors_doc = " # Errors\n\n A `ScalarAutodiffError` if an argument, a tangent or an \
                      operation's result is not finite, or if an operation on a parameter's \
                      path has no finite derivative there; nothing is returned half-computed.";
    let jvp_doc = format!(
        " The value of `{ident}` and its directional derivative along `tangent`, generated by \
         `#[differentiable]`.\n\n Forward mode: one sweep over the body on (value, tangent) \
         pairs, no tape. `tangent` is shaped like `{ident}_grad`'s gradient ({list}); the \
         result's second number is that gradient dotted with `tangent`. Every operation on a \
         parameter's path is checked as `{ident}_grad` checks it, including ones the result \
         does not use.\n\n{errors_doc}"
    );
    let hvp_doc = format!(
        " The value of `{ident}`, its gradient and its Hessian times `tangent`, generated by \
         `#[differentiable]`.\n\n Forward over reverse: `{ident}_grad`'s compiled sweeps \
         run on (value, tangent) pairs, so the values are `{ident}_grad`'s, bit for bit, \
         and the tangent of every adjoint along `tangent` is the Hessian-vector product. \
         Where they give up (a non-finite number anywhere, or a body they do not compile), \
         the graph is recorded and the validated passes decide. `tangent` and both \
         results are shaped like the gradient ({list}).\n\n{errors_doc}"
    );
    let hessian_shape = if is_flat(&tracked) {
        "as `[f64; N]` and a boxed `[[f64; N]; N]` (on the heap: a thousand parameters' \
         Hessian would not fit a thread's stack)"
    } else {
        "flattened in parameter order, as a `Vec` and a `Vec` of rows"
    };
    let hessian_doc = format!(
        " The value of `{ident}`, its gradient and its Hessian, generated by \
         `#[differentiable]`.\n\n Records the graph once and runs one Hessian-vector \
         product per parameter ({list}); the gradient and the Hessian come {hessian_shape}. \
         The Hessian is exactly symmetric: `h[i][j]` and `h[j][i]` are both \
         `(H e_j)[i] / 2 + (H e_i)[j] / 2`, the same bits since addition commutes.\n\n\
         {errors_doc}"
    );

    let (hessian_type, hessian_start, hessian_body) = if is_flat(&tracked) {
        let n = gradient_len(&tracked);
        let ty = quote!((#float, [#float; #n], ::std::boxed::Box<[[#float; #n]; #n]>));
        let start = quote! {
            let mut #gradient: [#float; #n] = [0.0; #n];
            let mut #hessian = #private::square::<{ #n }>()?;
        };
        let body = quote! {
            let #value = #tape.value_gradient_hessian(
                #output,
                &mut #gradient,
                #hessian.as_flattened_mut(),
            )?;
            ::core::result::Result::Ok((#value, #gradient, #hessian))
        };
        (ty, start, body)
    } else {
        let vec = quote!(::std::vec::Vec<#float>);
        let ty = quote!((#float, #vec, ::std::vec::Vec<#vec>));
        let start = quote! {
            let mut #gradient: #vec = ::std::vec![0.0; #count];
            let mut #hessian: #vec = ::std::vec![0.0; #count * #count];
        };
        let body = quote! {
            let #value = #tape.value_gradient_hessian(#output, &mut #gradient, &mut #hessian)?;
            ::core::result::Result::Ok((#value, #gradient, #private::rows(&#hessian, #count)))
        };
        (ty, start, body)
    };

    quote! {
        #[doc = #jvp_doc]
        #allow
        #(#forwarded)*
        #vis fn #jvp(#receiver #(#grad_params,)* #tangent: #gradient_type)
            -> ::core::result::Result<(#float, #float), #error>
        {
            #count_line
            #flatten
            let mut #next = #flat.iter();
            #(#duals)*
            let #output = #run_forward?;
            ::core::result::Result::Ok(#private::value_and_tangent(&#output))
        }

        #[doc = #hvp_doc]
        #allow
        #(#forwarded)*
        #vis fn #hvp(#receiver #(#grad_params,)* #tangent: #gradient_type)
            -> ::core::result::Result<(#float, #gradient_type, #gradient_type), #error>
        {
            #count_line
            #flatten
            #hvp_compiled
            #private::trace_located(|#tape| {
                #(#variables)*
                let #output = #run_trace?;
                let mut #gradient: ::std::vec::Vec<#float> = ::std::vec![0.0; #count];
                let mut #product: ::std::vec::Vec<#float> = ::std::vec![0.0; #count];
                let #value = #tape.value_gradient_products(
                    #output,
                    &mut #gradient,
                    &#flat,
                    &mut #product,
                )?;
                ::core::result::Result::Ok((#value, #gradient_shaped, #product_shaped))
            })
        }

        #[doc = #hessian_doc]
        #allow
        #(#forwarded)*
        #vis fn #hessian_fn(#receiver #(#grad_params),*)
            -> ::core::result::Result<#hessian_type, #error>
        {
            #count_line
            #hessian_start
            #private::trace_located(|#tape| {
                #(#variables)*
                let #output = #run_trace?;
                #hessian_body
            })
        }
    }
}

/// Stand-ins for a rejected function's three functions, so that its callers get no
/// second error.
pub(crate) fn stubs(context: &StubContext<'_>) -> TokenStream {
    let StubContext {
        ident,
        vis,
        receiver,
        grad_params,
        gradient_type,
    } = context;
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let float = quote!(::core::primitive::f64);
    let rejected = "#[differentiable] rejected this function at compile time";
    let tangent = Ident::new("tangent", Span::mixed_site());
    let jvp = format_ident!("{}_jvp", ident, span = ident.span());
    let hvp = format_ident!("{}_hvp", ident, span = ident.span());
    let hessian = format_ident!("{}_hessian", ident, span = ident.span());
    quote! {
        #[allow(dead_code, unused_variables, unused_mut)]
        #vis fn #jvp(#receiver #(#grad_params,)* #tangent: #gradient_type)
            -> ::core::result::Result<(#float, #float), #error>
        {
            ::core::panic!(#rejected)
        }

        #[allow(dead_code, unused_variables, unused_mut)]
        #vis fn #hvp(#receiver #(#grad_params,)* #tangent: #gradient_type)
            -> ::core::result::Result<(#float, #gradient_type, #gradient_type), #error>
        {
            ::core::panic!(#rejected)
        }

        #[allow(dead_code, unused_variables, unused_mut)]
        #vis fn #hessian(#receiver #(#grad_params),*)
            -> ::core::result::Result<(#float, ::std::vec::Vec<#float>, ::std::vec::Vec<::std::vec::Vec<#float>>), #error>
        {
            ::core::panic!(#rejected)
        }
    }
}

/// What the stand-ins need.
pub(crate) struct StubContext<'a> {
    pub(crate) ident: &'a Ident,
    pub(crate) vis: &'a Visibility,
    pub(crate) receiver: Option<TokenStream>,
    pub(crate) grad_params: &'a [TokenStream],
    pub(crate) gradient_type: TokenStream,
}

/// `name_jacobian` of a function that returns an array: forward sweeps (one per input)
/// when there are fewer inputs than outputs, reverse passes on one recording (one per
/// output) otherwise.
pub(crate) fn jacobian(context: &Context<'_>, output_ty: &syn::Type) -> TokenStream {
    let Context {
        ident,
        vis,
        forwarded,
        receiver,
        grad_params,
        run_forward,
        run_trace,
        tape,
        list,
        ..
    } = context;
    let private = quote!(::scalar_autodiff::__private);
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let float = quote!(::core::primitive::f64);
    let tracked = context.tracked();
    let jacobian = format_ident!("{}_jacobian", ident, span = ident.span());
    let count = Ident::new("count", Span::mixed_site());
    let next = Ident::new("next", Span::mixed_site());
    let flat = Ident::new("flat", Span::mixed_site());
    let output = Ident::new("output", Span::mixed_site());
    let values = Ident::new("values", Span::mixed_site());
    let matrix = Ident::new("matrix", Span::mixed_site());
    let input = Ident::new("input", Span::mixed_site());
    let row = Ident::new("row", Span::mixed_site());
    let lints = crate::emit::generated_lints();
    let outputs = crate::emit::array_len(output_ty);
    let shape = crate::emit::f64_shape(output_ty);
    let count_line = context.count_line(&count);
    let duals = context.copies_by(|value| quote!(#private::duals(#value, &mut #next)));
    let variables = context.copies_by(|value| quote!(#private::variables(#tape, #value)));
    let (matrix_type, matrix_new, matrix_row) = if is_flat(&tracked) {
        let n = gradient_len(&tracked);
        (
            quote!(::std::boxed::Box<[[#float; #n]; #outputs]>),
            quote!(#private::rectangle::<{ #n }, { #outputs }>()?),
            quote!(#matrix[#row].as_mut_slice()),
        )
    } else {
        let vec = quote!(::std::vec::Vec<#float>);
        (
            quote!(::std::vec::Vec<#vec>),
            quote!(::std::vec![::std::vec![0.0; #count]; #outputs]),
            quote!(#matrix[#row].as_mut_slice()),
        )
    };
    // Compiled rows for a one-dimensional output and a flat gradient.
    let one_dimensional = matches!(output_ty, syn::Type::Array(array)
        if matches!(&*array.elem, syn::Type::Path(path) if path.path.is_ident("f64")));
    let compiled = match (&context.halves, is_flat(&tracked) && one_dimensional) {
        (Some(body), true) => halves_jacobian(context, body, (&values, &matrix, &outputs)),
        _ => TokenStream::new(),
    };
    let doc = format!(
        " The values of `{ident}` and its Jacobian, generated by `#[differentiable]`.\n\n \
         Row `i` of the Jacobian is the gradient of output `i` (outputs flattened in order, \
         row-major for nested arrays) with respect to the differentiated parameters ({list}), \
         flattened in parameter order. With fewer parameter scalars than outputs it runs \
         one forward sweep per parameter (no tape); otherwise one reverse pass per output, \
         from the compiled halves where the function has them (a free function with a \
         one-dimensional result and numbers or arrays as parameters), else on one \
         recording.\n\n # Errors\n\n A \
         `ScalarAutodiffError` if an argument or an operation's result is not finite, or if \
         an operation on a parameter's path has no finite derivative there."
    );
    quote! {
        #[doc = #doc]
        #[inline]
        #lints
        #(#forwarded)*
        #vis fn #jacobian(#receiver #(#grad_params),*)
            -> ::core::result::Result<([#float; #outputs], #matrix_type), #error>
        {
            #count_line
            let mut #values: [#float; #outputs] = [0.0; #outputs];
            let mut #matrix = #matrix_new;
            if #count < #outputs {
                // Forward: column `input` from the tangent e_input.
                for #input in 0..#count {
                    let mut #flat: ::std::vec::Vec<#float> = ::std::vec![0.0; #count];
                    #flat[#input] = 1.0;
                    let mut #next = #flat.iter();
                    #(#duals)*
                    let #output = #run_forward?;
                    let mut #row = 0usize;
                    <#shape as ::scalar_autodiff::Parameters>::visit_tracked(&#output, &mut |dual| {
                        let (value, tangent) = #private::value_and_tangent(dual);
                        if let ::core::option::Option::Some(slot) = #values.get_mut(#row) {
                            *slot = value;
                        }
                        if let ::core::option::Option::Some(entry) =
                            #matrix.get_mut(#row).and_then(|line| line.get_mut(#input))
                        {
                            *entry = tangent;
                        }
                        #row += 1;
                    });
                }
                if #count == 0 {
                    let #flat: [#float; 0] = [];
                    let mut #next = #flat.iter();
                    #(#duals)*
                    let #output = #run_forward?;
                    let mut #row = 0usize;
                    <#shape as ::scalar_autodiff::Parameters>::visit_tracked(&#output, &mut |dual| {
                        if let ::core::option::Option::Some(slot) = #values.get_mut(#row) {
                            *slot = dual.value;
                        }
                        #row += 1;
                    });
                }
                return ::core::result::Result::Ok((#values, #matrix));
            }
            #compiled
            // Reverse: row `row` from one pass seeded at output `row`.
            #private::trace_located(|#tape| {
                #(#variables)*
                let #output = #run_trace?;
                let mut #flat = ::std::vec::Vec::with_capacity(#outputs);
                <#shape as ::scalar_autodiff::Parameters>::visit_tracked(&#output, &mut |id| {
                    #flat.push(*id);
                });
                for (#row, id) in #flat.into_iter().enumerate() {
                    let (value, ()) = #tape.value_and_gradients(id, #count, |gradients| {
                        for entry in #matrix_row.iter_mut() {
                            *entry = gradients.next_or_zero();
                        }
                    })?;
                    #values[#row] = value;
                }
                ::core::result::Result::Ok((#values, #matrix))
            })
        }
    }
}

/// The hidden body `name_jacobian` may call on the `Halves` backend: a free function's
/// (a method's halves are closures over `self`), whose data parameters are `Copy` by
/// their spelling, so that the forward and the reverse half can each be given them.
fn halves_callable(function: &super::function::Function<'_>) -> Option<Ident> {
    use crate::parse::signature::Kind;
    let plain = function.params.iter().all(|param| match param.kind {
        Kind::Data => crate::sweep::copy_type(&param.ty) && param.mutability.is_none(),
        _ => param.mutability.is_none(),
    });
    let free = function.receiver().is_none() && !function.in_impl;
    (plain && free).then(|| super::hidden::body_ident(function.ident))
}

/// `name_jacobian`'s rows from the compiled halves, one output at a time: the forward
/// half, then the reverse half seeded with that output's unit vector, the adjoints
/// gathered into the row. `None` from the sweep (a non-finite number, or a body without
/// halves) leaves the rows to the recording after it, which says why.
fn halves_jacobian(
    context: &Context<'_>,
    body: &Ident,
    (values, matrix, outputs): (&Ident, &Ident, &TokenStream),
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let stack = Ident::new("stack", Span::mixed_site());
    let row = Ident::new("row", Span::mixed_site());
    let upstream = Ident::new("upstream", Span::mixed_site());
    let next = Ident::new("next", Span::mixed_site());
    let names: Vec<Ident> = context
        .params
        .iter()
        .enumerate()
        .map(|(index, param)| super::function::param_name(param, index))
        .collect();
    let adjoints: Vec<Ident> = (0..names.len())
        .map(|index| Ident::new(&format!("adjoint_{index}"), Span::mixed_site()))
        .collect();
    let mut forward_args = Vec::new();
    let mut reverse_args = Vec::new();
    let mut zeros = Vec::new();
    let mut gather = Vec::new();
    for ((param, name), adjoint) in context.params.iter().zip(&names).zip(&adjoints) {
        if param.is_tracked() {
            let value = by_reference(param);
            forward_args.push(quote!(#private::Steady(#value)));
            reverse_args.push(quote!(#private::AdjointsOf(&mut #adjoint, #value)));
            zeros.push(quote!(let mut #adjoint = #private::zeros_like(#value);));
            gather.push(quote! {
                if !#private::gradient_into(&#adjoint, #matrix[#row].as_mut_slice(), &mut #next) {
                    return ::core::option::Option::None;
                }
            });
        } else {
            forward_args.push(quote!(#name));
            reverse_args.push(quote!(#name));
        }
    }
    quote! {
        let done = #private::sweep(|#stack: &mut #private::Stack| -> ::core::option::Option<()> {
            for #row in 0..#outputs {
                let output = #body(&#private::Halves::forward(&mut *#stack), #(#forward_args),*).ok()?;
                #values[#row] = output[#row];
                let mut #upstream = [0.0f64; #outputs];
                #upstream[#row] = 1.0;
                #stack.keep(&#upstream);
                #(#zeros)*
                #body(&#private::Halves::reverse(&mut *#stack), #(#reverse_args),*).ok()?;
                let mut #next = 0usize;
                #(#gather)*
            }
            ::core::option::Option::Some(())
        });
        if done.is_some() {
            return ::core::result::Result::Ok((#values, #matrix));
        }
    }
}
