//! A function returning `Vec<f64>`, a vector of run-time length (an ODE's solution, a
//! residual per data point): the plain function as written, and
//! `name_vjp(args.., cotangent)`, the vector and the gradient of `cotangent · f(args)`
//! (a vector-Jacobian product: with `cotangent` the `k`-th unit vector, the gradient of
//! the `k`-th element).
//!
//! The gradient is `name_grad`'s of a hidden scalar function: the same body, its returned
//! vector dotted with the cotangent, expanded like any other function (`expand`), so a
//! vector body compiles wherever a scalar one does and its errors point at the same
//! lines. Seeding only the returned vector's adjoints with the cotangent is what the
//! reverse sweep of the dot product does, so each element's gradient is the bits a
//! scalar function returning that element would get.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit::Visit;
use syn::{Expr, FnArg, ItemFn, Pat, ReturnType, Stmt, Type};

use crate::emit::gradient_type;
use crate::errors::Errors;
use crate::lesson::lesson;
use crate::parse::signature;

/// Whether `ty` is `Vec<f64>`.
pub(crate) fn is_vec_f64(ty: &Type) -> bool {
    let Type::Path(path) = signature::ungrouped(ty) else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    last.ident == "Vec"
        && matches!(args.args.iter().collect::<Vec<_>>()[..],
            [syn::GenericArgument::Type(Type::Path(elem))] if elem.path.is_ident("f64"))
}

/// Whether the item returns `Vec<f64>`.
pub(crate) fn returns_vec(item: &ItemFn) -> bool {
    matches!(&item.sig.output, ReturnType::Type(_, ty) if is_vec_f64(ty))
}

/// The plain function, the hidden dot product's expansion and `name_vjp`; or, with
/// `errors` (the attribute's, and the body's forms checked here), the errors with the
/// plain function and a stand-in `name_vjp`, so that the user's calls still resolve.
pub(crate) fn expand(args: TokenStream, item: ItemFn, mut errors: Errors) -> TokenStream {
    let tail = returned_name(&item, &mut errors);
    let plain =
        crate::emit::plain::function(&item.attrs, &item.vis, &item.sig, (*item.block).clone());
    let dot = dot_item(&item, tail.as_ref());
    let mut scratch = Errors::default();
    let (params, _) = signature::check(&dot, &mut scratch);
    let tracked: Vec<&signature::Param> = params.iter().filter(|p| p.is_tracked()).collect();
    if !errors.is_empty() {
        let errors = errors.into_compile_errors();
        let rejected = "#[differentiable] rejected this function at compile time";
        let panic = quote!(::core::panic!(#rejected););
        let stand_in = vjp(&item, &dot, &tracked, Some(panic.clone()));
        let jvps_stand_in = jvps(&item, &tracked, &[], Err(panic.clone()));
        let jvp_stand_in = jvp(&item, &tracked, Err(panic));
        return quote!(#errors #plain #stand_in #jvp_stand_in #jvps_stand_in);
    }
    let vjp = vjp(&item, &dot, &tracked, None);
    // The body as written (ending with its vector) rewritten over a backend, for
    // `name_jvp` and `name_jvps`. Its errors are the dot product's, which that expansion
    // reports: where there are any, the two are stand-ins, so that rustc adds nothing.
    let own = &params[..params.len().saturating_sub(1)];
    let block = crate::desugar::desugar(&item.block, false);
    let graph_body = crate::rewrite::graph_body(&block, own, true, &mut scratch);
    let graph_body = match scratch.is_empty() {
        true => Ok(graph_body),
        false => {
            let rejected = "#[differentiable] rejected this function at compile time";
            Err(quote!(::core::panic!(#rejected);))
        }
    };
    let data: Vec<&syn::Ident> = own
        .iter()
        .filter(|param| !param.is_tracked())
        .filter_map(|param| param.ident.as_ref())
        .collect();
    let jvps = jvps(&item, &tracked, &data, graph_body.clone());
    let jvp = jvp(&item, &tracked, graph_body);
    let dot = renamed(crate::expand::expand(args, quote!(#dot)), &item);
    let uncallable = uncallable(&item);
    quote! {
        #plain
        #dot
        #vjp
        #jvp
        #jvps
        #uncallable
    }
}

/// The dot product's expansion with its messages speaking of the user's function: its
/// errors (a body the sweeps do not follow) name `name` and `name_vjp`, never the hidden
/// `__autodiff_dot_name`.
fn renamed(tokens: TokenStream, item: &ItemFn) -> TokenStream {
    let ident = &item.sig.ident;
    let hidden = dot_ident(item).to_string();
    // (Only the names those errors use: the hidden function's own, and its `_grad`.)
    let renames = [
        (format!("`{hidden}_grad`"), format!("`{ident}_vjp`")),
        (format!("`{hidden}`"), format!("`{ident}`")),
    ];
    tokens
        .into_iter()
        .map(|token| match token {
            proc_macro2::TokenTree::Group(group) => {
                let mut renamed_group =
                    proc_macro2::Group::new(group.delimiter(), renamed(group.stream(), item));
                renamed_group.set_span(group.span());
                proc_macro2::TokenTree::Group(renamed_group)
            }
            proc_macro2::TokenTree::Literal(literal) => {
                let text = literal.to_string();
                if !text.contains(&hidden) {
                    return proc_macro2::TokenTree::Literal(literal);
                }
                let Ok(string) = syn::parse_str::<syn::LitStr>(&text) else {
                    return proc_macro2::TokenTree::Literal(literal);
                };
                let value = renames
                    .iter()
                    .fold(string.value(), |value, (from, to)| value.replace(from, to));
                let mut renamed_literal = proc_macro2::Literal::string(&value);
                renamed_literal.set_span(literal.span());
                proc_macro2::TokenTree::Literal(renamed_literal)
            }
            other => other,
        })
        .collect()
}

/// Stand-ins for the hidden body and its check, which another `#[differentiable]` body
/// calls for `name(..)`: bounded by a trait no backend has, whose message says why.
fn uncallable(item: &ItemFn) -> TokenStream {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    let body = crate::emit::body_ident(ident);
    let callable = crate::emit::callable_ident(ident);
    let backend = syn::Ident::new("Backend", Span::mixed_site());
    let args = (0..item.sig.inputs.len())
        .map(|index| syn::Ident::new(&format!("arg_{index}"), Span::mixed_site()))
        .map(|arg| quote!(#arg: impl ::core::marker::Sized));
    let private = quote!(::scalar_autodiff::__private);
    quote! {
        #[doc(hidden)]
        #[allow(dead_code, non_snake_case, unused_variables, clippy::all)]
        #vis fn #body<#backend: #private::Backend + #private::CallableVector>(
            backend: &#backend,
            #(#args),*
        ) -> ::core::result::Result<::std::vec::Vec<#backend::Value>, ::scalar_autodiff::ScalarAutodiffError> {
            ::core::result::Result::Err(#private::gave_up())
        }
        #[doc(hidden)]
        #[allow(dead_code, non_snake_case, clippy::all)]
        #vis fn #callable<#backend: #private::CallableVector>(_: &#backend) {}
    }
}

/// The name the body ends with (`y` of `... y }`), after checking the forms the dot
/// product needs: a body ending with a local's name, no `return`, not a method.
fn returned_name(item: &ItemFn, errors: &mut Errors) -> Option<syn::Ident> {
    if let Some(receiver) = item.sig.receiver() {
        errors.push(lesson(
            receiver,
            "a #[differentiable] method cannot return `Vec<f64>` yet",
            "`name_vjp` is generated for free functions returning `Vec<f64>`",
            "make it a function taking the value as a parameter (`fn name(model: &Model, ..)`)",
        ));
        return None;
    }
    let mut returns = Returns(None);
    returns.visit_block(&item.block);
    if let Some(expr) = returns.0 {
        errors.push(lesson(
            expr,
            "a #[differentiable] function returning `Vec<f64>` cannot `return` early",
            "`name_vjp` differentiates the vector the body ends with",
            "compute the vector in a local and end the body with its name",
        ));
        return None;
    }
    let tail = match item.block.stmts.last() {
        Some(Stmt::Expr(expr, None)) => Some(expr),
        _ => None,
    };
    let name = tail.and_then(|expr| match crate::rewrite::unparenthesized(expr) {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().cloned(),
        _ => None,
    });
    if name.is_none() {
        let blame = match tail {
            Some(expr) => quote!(#expr),
            None => {
                let output = &item.sig.output;
                quote!(#output)
            }
        };
        errors.push(lesson(
            blame,
            "a #[differentiable] function returning `Vec<f64>` ends with the vector's name",
            "`name_vjp` differentiates the elements of that local vector",
            "build the result in a local (`let mut y = vec![0.0; n];`) and end the body with \
             `y`",
        ));
    }
    name
}

struct Returns(Option<syn::ExprReturn>);

impl<'ast> Visit<'ast> for Returns {
    fn visit_expr_return(&mut self, expr: &'ast syn::ExprReturn) {
        self.0.get_or_insert_with(|| expr.clone());
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn cotangent() -> syn::Ident {
    syn::Ident::new("__autodiff_cotangent", Span::call_site())
}

fn dot_ident(item: &ItemFn) -> syn::Ident {
    let ident = &item.sig.ident;
    format_ident!("__autodiff_dot_{}", ident, span = ident.span())
}

/// `fn __autodiff_dot_name(args.., __autodiff_cotangent: &[f64]) -> f64`: the body, its
/// vector `tail` dotted with the cotangent in element order.
fn dot_item(item: &ItemFn, tail: Option<&syn::Ident>) -> ItemFn {
    let mut dot = item.clone();
    dot.attrs.clear();
    dot.vis = syn::Visibility::Inherited;
    dot.sig.ident = dot_ident(item);
    let cotangent = cotangent();
    dot.sig.inputs.push(syn::parse_quote!(#cotangent: &[f64]));
    dot.sig.output = syn::parse_quote!(-> f64);
    dot.block.stmts.pop();
    let Some(tail) = tail else {
        return dot;
    };
    let (sum, k) = (
        syn::Ident::new("__autodiff_dot", Span::call_site()),
        syn::Ident::new("__autodiff_k", Span::call_site()),
    );
    // (Over the cotangent's length, which `name_vjp` checked is the vector's: data that
    // never changes, where the vector's own `len()` is of a local that does.)
    let stmts: Vec<Stmt> = syn::parse_quote! {
        let mut #sum = 0.0;
        for #k in 0..#cotangent.len() {
            #sum += #cotangent[#k] * #tail[#k];
        }
        #sum
    };
    dot.block.stmts.extend(stmts);
    dot
}

/// `name_vjp`: the plain function's vector, its length checked against the cotangent's,
/// and the hidden dot product's gradient; or the stand-in `body`.
fn vjp(
    item: &ItemFn,
    dot: &ItemFn,
    tracked: &[&signature::Param],
    body: Option<TokenStream>,
) -> TokenStream {
    let ident = &item.sig.ident;
    let dot_grad = format_ident!("{}_grad", dot.sig.ident);
    let args: Vec<TokenStream> = item
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => match &*typed.pat {
                Pat::Ident(pat) => {
                    let name = &pat.ident;
                    Some(quote!(#name))
                }
                _ => None,
            },
            FnArg::Receiver(_) => None,
        })
        .collect();
    let (cotangent, value, gradient) = (
        syn::Ident::new("cotangent", Span::mixed_site()),
        syn::Ident::new("value", Span::mixed_site()),
        syn::Ident::new("gradient", Span::mixed_site()),
    );
    let gradient_type = gradient_type(tracked);
    let shape = match tracked.len() {
        1 => "the differentiated parameter's shape",
        _ => "`name_grad`'s shape for these parameters",
    };
    let doc = [
        format!(
            " The vector `{ident}` returns and the gradient of `cotangent · {ident}(..)`, \
             generated by `#[differentiable]`."
        ),
        String::new(),
        format!(
            " A vector-Jacobian product in one compiled reverse sweep: with `cotangent` the \
             `k`-th unit vector, the gradient of element `k`. The gradient has {shape}."
        ),
        String::new(),
        " # Errors".to_owned(),
        String::new(),
        " A `ScalarAutodiffError` if `cotangent` is not as long as the vector \
         (`length-mismatch`), or if an argument or an operation's result is not finite, as \
         in `name_grad`."
            .to_owned(),
    ];
    let output = &item.sig.output;
    let ReturnType::Type(_, vector) = output else {
        return TokenStream::new();
    };
    let body = quote! {
        #body
        let #value = #ident(#(::core::clone::Clone::clone(&#args)),*);
        if #cotangent.len() != #value.len() {
            return ::core::result::Result::Err(
                ::scalar_autodiff::ScalarAutodiffError::LengthMismatch {
                    expected: #value.len(),
                    found: #cotangent.len(),
                },
            );
        }
        let (_, #gradient) = #dot_grad(#(#args,)* #cotangent)?;
        ::core::result::Result::Ok((#value, #gradient))
    };
    generated(
        item,
        ("vjp", quote!(#cotangent: &[f64])),
        quote!((#vector, #gradient_type)),
        &doc,
        quote!(#[allow(dead_code, unused_mut, unreachable_code, unused_variables)]),
        body,
    )
}

/// `name_suffix(args.., extra) -> Result<output, ScalarAutodiffError>`, documented by
/// `doc`, with `attrs` and `body`: the signature `name_vjp`, `name_jvp` and `name_jvps`
/// share with the user's function.
fn generated(
    item: &ItemFn,
    (suffix, extra): (&str, TokenStream),
    output: TokenStream,
    doc: &[String],
    attrs: TokenStream,
    body: TokenStream,
) -> TokenStream {
    let ident = &item.sig.ident;
    let vis = &item.vis;
    let name = format_ident!("{}_{}", ident, suffix, span = ident.span());
    let sig = signature::without_constant(&item.sig);
    let generics = &sig.generics;
    let where_clause = &generics.where_clause;
    let inputs = sig.inputs.iter();
    quote! {
        #(#[doc = #doc])*
        #attrs
        #vis fn #name #generics (#(#inputs,)* #extra)
            -> ::core::result::Result<#output, ::scalar_autodiff::ScalarAutodiffError>
            #where_clause
        {
            #body
        }
    }
}

/// `name_jvp`: the vector and its directional derivative along `tangent` in one forward
/// sweep over the body on (value, tangent) pairs; or the stand-in `Err(body)`.
fn jvp(
    item: &ItemFn,
    tracked: &[&signature::Param],
    graph_body: Result<TokenStream, TokenStream>,
) -> TokenStream {
    let ident = &item.sig.ident;
    let private = quote!(::scalar_autodiff::__private);
    let [tangent, flat, count, next, output] = ["tangent", "flat", "count", "next", "output"]
        .map(|name| syn::Ident::new(name, Span::mixed_site()));
    let gradient_type = gradient_type(tracked);
    let run = match graph_body {
        Err(stand_in) => stand_in,
        Ok(graph_body) => {
            let count_line = crate::emit::higher::count_line(tracked, &count);
            let flatten = crate::emit::higher::flatten(tracked, &tangent, &flat, &count);
            let make = |value: TokenStream| quote!(#private::duals(#value, &mut #next));
            let run = forward_run(ident, tracked, &graph_body, make, quote!(#private::Forward));
            quote! {
                #count_line
                #flatten
                let mut #next = #flat.iter();
                let #output: ::std::vec::Vec<#private::Dual> = #run;
                ::core::result::Result::Ok(#private::values_and_tangents(&#output))
            }
        }
    };
    let shape = match tracked.len() {
        1 => "the differentiated parameter's shape",
        _ => "`name_vjp`'s gradient for these parameters",
    };
    let doc = [
        format!(
            " The vector `{ident}` returns and its directional derivative along `tangent`, \
             generated by `#[differentiable]`."
        ),
        String::new(),
        format!(
            " A Jacobian-vector product in one forward sweep over the body on (value, \
             tangent) pairs, no tape: element `k` of the second vector is the gradient of \
             element `k` dotted with `tangent`, which has {shape}. With `tangent` the `j`-th \
             unit vector it is column `j` of the Jacobian; a tangent that is 1 on several \
             inputs no element depends on together gives their columns in one sweep."
        ),
        String::new(),
        " # Errors".to_owned(),
        String::new(),
        " A `ScalarAutodiffError` if `tangent` has the wrong number of scalars \
         (`length-mismatch`), or if an argument, a tangent or an operation's result is not \
         finite, as in `name_vjp`."
            .to_owned(),
    ];
    let lints = crate::emit::generated_lints();
    generated(
        item,
        ("jvp", quote!(#tangent: #gradient_type)),
        quote!((::std::vec::Vec<f64>, ::std::vec::Vec<f64>)),
        &doc,
        quote!(#[inline] #lints),
        run,
    )
}

/// The body run on `backend` (`Forward` or `ForwardLanes`), each differentiated parameter
/// made by `make` (given its value by reference): a block whose value is the vector, or
/// which returns the error named after the function.
fn forward_run(
    ident: &syn::Ident,
    tracked: &[&signature::Param],
    graph_body: &TokenStream,
    make: impl Fn(TokenStream) -> TokenStream,
    backend_value: TokenStream,
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let error = quote!(::scalar_autodiff::ScalarAutodiffError);
    let [value, failure] = ["value", "error"].map(|name| syn::Ident::new(name, Span::mixed_site()));
    let copies: Vec<syn::Ident> = (0..tracked.len())
        .map(|index| syn::Ident::new(&format!("tracked_{index}"), Span::mixed_site()))
        .collect();
    let made = tracked
        .iter()
        .map(|param| make(crate::emit::by_reference(param)));
    let names = tracked.iter().map(|param| &param.ident);
    let backend = crate::rewrite::backend();
    let name = ident.to_string();
    quote! {{
        #(let #copies = #made?;)*
        use #private::Backend as _;
        let #backend = &#backend_value;
        #(let #names = #private::Tracked(&#copies);)*
        match (|| -> ::core::result::Result<_, #error> { #graph_body })() {
            ::core::result::Result::Ok(#value) => #value,
            ::core::result::Result::Err(#failure) => {
                return ::core::result::Result::Err(#private::in_function(#failure, #name));
            }
        }
    }}
}

/// `name_jvps`: the vector and its directional derivatives along each of `tangents`,
/// `LANES` of them a forward sweep on [`Lanes`]; or the stand-in `Err(body)`.
fn jvps(
    item: &ItemFn,
    tracked: &[&signature::Param],
    data: &[&syn::Ident],
    graph_body: Result<TokenStream, TokenStream>,
) -> TokenStream {
    let ident = &item.sig.ident;
    let private = quote!(::scalar_autodiff::__private);
    let [tangents, tangent, flat, flats, count, next, output, columns, value, start, chunk] = [
        "tangents", "tangent", "flat", "flats", "count", "next", "output", "columns", "value",
        "start", "chunk",
    ]
    .map(|name| syn::Ident::new(name, Span::mixed_site()));
    let gradient_type = gradient_type(tracked);
    let run = match graph_body {
        Err(stand_in) => stand_in,
        Ok(graph_body) => {
            let count_line = crate::emit::higher::count_line(tracked, &count);
            // (`tangent` is a reference: its place is `*tangent`.)
            let place = quote!((*#tangent));
            let flatten = crate::emit::higher::flatten(tracked, &place, &flat, &count);
            let lanes = quote!(#private::LANES);
            let documented = LANES;
            let make = |value: TokenStream| quote!(#private::lanes::<_, { #lanes }>(#value, #chunk, &mut #next));
            let run = forward_run(
                ident,
                tracked,
                &graph_body,
                make,
                quote!(#private::ForwardLanes::<{ #lanes }>),
            );
            quote! {
                #count_line
                let mut #flats: ::std::vec::Vec<::std::vec::Vec<f64>> =
                    ::std::vec::Vec::with_capacity(#tangents.len());
                for #tangent in #tangents {
                    #flatten
                    #flats.push(#flat);
                }
                // The rustdoc's count of tangents a sweep is the runtime's.
                const _: () = ::core::assert!(#private::LANES == #documented);
                let mut #columns: ::std::vec::Vec<::std::vec::Vec<f64>> =
                    ::std::vec::Vec::with_capacity(#tangents.len());
                let mut #value: ::std::vec::Vec<f64> = ::std::vec::Vec::new();
                // One sweep a `LANES` tangents, and one for the vector alone when none
                // is given.
                let mut #start = 0usize;
                loop {
                    // Each sweep runs the body on its own copy of the data, which the body
                    // may change or move (as `name_vjp` copies it for each of its runs).
                    #(let mut #data = ::core::clone::Clone::clone(&#data);)*
                    let #chunk = &#flats[#start..(#start + #lanes).min(#flats.len())];
                    let mut #next = 0usize;
                    let #output: ::std::vec::Vec<#private::Lanes<{ #lanes }>> = #run;
                    #value = #private::lane_columns(&#output, #chunk.len(), &mut #columns);
                    #start += #lanes;
                    if #start >= #flats.len() {
                        break;
                    }
                }
                ::core::result::Result::Ok((#value, #columns))
            }
        }
    };
    let doc = [
        format!(
            " The vector `{ident}` returns and its directional derivatives along each of \
             `tangents`, generated by `#[differentiable]`."
        ),
        String::new(),
        format!(
            " Forward mode on several tangents at once: each sweep over the body computes \
             every operation's value, local derivatives and checks once (a custom rule's \
             once a tangent) and carries {lanes} tangents, so `k` tangents take `k / {lanes}` sweeps (rounded up) where \
             `{ident}_jvp` takes `k`. The second result has one vector a tangent, in order: \
             with the unit tangents of the inputs, the Jacobian's columns. Each tangent is \
             shaped as `{ident}_jvp`'s; with none, one sweep gives the vector alone.",
            lanes = LANES
        ),
        String::new(),
        " # Errors".to_owned(),
        String::new(),
        " As `name_jvp`: a tangent with the wrong number of scalars (`length-mismatch`), or \
         a non-finite argument, tangent or result."
            .to_owned(),
    ];
    let lints = crate::emit::generated_lints();
    generated(
        item,
        ("jvps", quote!(#tangents: &[#gradient_type])),
        quote!((::std::vec::Vec<f64>, ::std::vec::Vec<::std::vec::Vec<f64>>)),
        &doc,
        quote!(#[inline] #lints),
        run,
    )
}

/// The tangents a sweep of `name_jvps` carries: the runtime's `__private::LANES`, for the
/// rustdoc (each `name_jvps` asserts at compile time that they agree).
pub(crate) const LANES: usize = 8;
