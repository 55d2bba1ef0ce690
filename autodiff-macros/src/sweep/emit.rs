//! The two sweeps, written from a [`Program`].
//!
//! The forward sweep runs the body on `f64`s: each operation through
//! `__private::value`, checked finite (else the sweep gives up), and, inside a loop,
//! followed by `Stack::save` of what its slopes read; outside loops those values wait in
//! locals instead. The reverse sweep walks the statements backwards, loops reversed and
//! branches replayed from their flags, and adds each operand's contribution
//! `upstream * slope` (slopes from `__private::slopes`) into its adjoint, slot by slot:
//! the contributions of the trace's pass, in its order.
//!
//! `name_hvp`'s sweeps are the same code on `__private::Dual`s ([`Number::Dual`]): data
//! enters as constants, the direction seeds the parameters' tangents, and every
//! operation's value and slopes come from the same table, so the values are
//! `name_grad`'s bits and each adjoint's tangent is its derivative along the direction.

use std::collections::HashSet;

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};

use super::analyse::Analysed;
use super::checks::reader;
use super::ir::{Arg, Data, Op, Operand, Place, Program, Stmt, Value, Var, VarId};
use super::lower::{self, temp};
use super::names::Names;
use crate::emit::by_reference;
use crate::parse::signature::{Kind, Param};

mod halves;

pub(crate) use halves::halves;

/// Bodies with more operations than this (as written: a loop's body counts once) are a
/// compile error unless written `tape`. The sweeps of a straight-line body are as long as
/// it, and rustc's time on them grows faster than their length: 100 steps of
/// `h = (w[i] * h + x[j]).tanh()` written out (300 operations) build in 3.3 s, 200 steps in
/// 7.8 s and 400 in 19 s (debug, one function alone in a crate; 0.4 s to 1.4 s on the
/// tape), where LLVM's passes over one function that long dominate. Loops are compact, so
/// every model in the benches is far below this.
pub(crate) const COMPILED_UP_TO: usize = 512;

/// The statements `name_grad` runs first, which return `Ok((value, gradient))` from it if
/// the sweeps finish, and whether they are straight-line code (no loops: small enough to
/// inline into callers), or `None` if they give up (see `lower::why`). The gradient is
/// `[f64; len]` for `flat: Some(len)`, else each parameter's in its own shape (a tuple of
/// them for several).
pub(crate) fn sweeps(
    analysed: &Analysed,
    params: &[Param],
    flat: Option<&TokenStream>,
) -> Option<(TokenStream, bool)> {
    compiled(analysed, params, Sweeps::Gradient(flat))
}

/// `name_hvp`'s compiled sweeps: `name_grad`'s on duals (forward over reverse), an
/// expression of type `Option<(f64, Vec<f64>, Vec<f64>)>` (the value, the gradient and
/// `H v`, flat), reading the direction from the flat slice `tangents` and the number of
/// differentiated scalars from `count`; `None` where `name_grad`'s would be, or the body
/// calls another function (whose halves run on `f64`s only).
pub(crate) fn dual_sweeps(
    analysed: &Analysed,
    params: &[Param],
    (tangents, count): (&Ident, &Ident),
) -> Option<TokenStream> {
    compiled(analysed, params, Sweeps::Product(tangents, count)).map(|(sweeps, _)| sweeps)
}

/// Which sweeps [`compiled`] writes.
#[derive(Clone, Copy)]
enum Sweeps<'a> {
    /// `name_grad`'s, on `f64`s, with the flat gradient's length if it is flat.
    Gradient(Option<&'a TokenStream>),
    /// `name_hvp`'s, on duals, with the direction's and the count's names.
    Product(&'a Ident, &'a Ident),
}

fn compiled(
    analysed: &Analysed,
    params: &[Param],
    sweeps: Sweeps<'_>,
) -> Option<(TokenStream, bool)> {
    let number = match sweeps {
        Sweeps::Gradient(_) => Number::F64,
        Sweeps::Product(..) => Number::Dual,
    };
    let Analysed {
        program,
        names,
        versioning,
        shared,
        body,
    } = analysed;
    let mut emit = Emit::new(program, names, false, *versioning);
    emit.versioned.retain(|var, _| !shared.contains(var));
    emit.shared = shared.clone();
    emit.number = number;
    let seed = Ident::new("__seed", Span::mixed_site());
    let emitted = (|| {
        Some((
            emit.forward_stmts(&program.body, false)?,
            emit.forward_output(program, false)?,
            emit.primal(&program.output.result, false)?,
            emit.reverse_output(program, &seed, false)?,
            emit.reverse_stmts(&program.body, false)?,
        ))
    })();
    let Some((forward, output, output_primal, output_reverse, reverse)) = emitted else {
        super::lower::why("body's sweeps", body);
        return None;
    };

    let private = quote!(::scalar_autodiff::__private);
    let none = quote!(::core::option::Option::None);
    let stack = stack();
    let tracked = tracked(program, params);
    // A scalar by value, an array or a parameter struct by reference; adjoints in the
    // gradient's shape.
    let next = Ident::new("__next", Span::mixed_site());
    let shaped = matches!(sweeps, Sweeps::Gradient(None));
    let params_prologue = tracked.iter().map(|(var, param)| {
        let (name, primal, adjoint) = (&var.name, &var.primal, &var.adjoint);
        if let Sweeps::Product(..) = sweeps {
            let zero = number.zero();
            // Duals seeded from the direction (checked finite there); adjoints of the
            // same shape.
            let value = by_reference(param);
            let duals = quote! {
                match #private::duals(#value, &mut #next) {
                    ::core::result::Result::Ok(duals) => duals,
                    ::core::result::Result::Err(_) => return #none,
                }
            };
            return match param.kind {
                Kind::Scalar => quote! {
                    let #primal: #private::Dual = #duals;
                    let mut #adjoint: #private::Dual = #zero;
                },
                _ => quote! {
                    let #primal = &#duals;
                    let ::core::option::Option::Some(mut #adjoint) =
                        #private::dual_zeros(#value) else { return #none; };
                },
            };
        }
        let (bind, like) = match param.kind {
            Kind::Scalar => (quote!(#name), quote!(&#primal)),
            Kind::Array => (quote!(&#name), quote!(#primal)),
            _ => (by_reference(param), quote!(#primal)),
        };
        // (A gradient in its own shape starts outside, see `outside`.)
        let adjoint = (!shaped).then(|| {
            let zero = zero_adjoints(param, primal);
            quote!(let mut #adjoint = #zero;)
        });
        quote! {
            let #primal = #bind;
            if !#private::finite(#like) {
                return #none;
            }
            #adjoint
        }
    });
    // A gradient in each parameter's own shape (a parameter struct's can be thousands of
    // numbers) is made before the sweeps and returned from where it is, not carried out
    // of them in an `Option`: each move of it is a copy.
    let outside: Vec<TokenStream> = match shaped {
        true => tracked
            .iter()
            .map(|(var, param)| {
                let (adjoint, value) = (&var.adjoint, by_reference(param));
                let zero = zero_adjoints(param, &value);
                quote!(let mut #adjoint = #zero;)
            })
            .collect(),
        false => Vec::new(),
    };
    // (A call's array result gets its adjoints where the forward sweep has its value.)
    let top_adjoints = program
        .vars
        .iter()
        .filter(|var| !var.param && var.top_level && !(var.call && var.depth != 0))
        .filter(|var| !sized_in_body(var))
        .map(|var| emit.adjoint_declaration(var))
        .collect::<Vec<_>>();
    let hoisted = &emit.hoisted;
    let output_value = Ident::new("__output", Span::mixed_site());
    let gradient = Ident::new("__gradient", Span::mixed_site());
    let product = Ident::new("__product", Span::mixed_site());
    let (number_type, one) = (number.ty(), number.lift(quote!(1.0)));
    // What the sweeps return, if they finish (the value and gradient, unless `outside`).
    let mut returned = quote!(#output_value);
    // Their closure's result type, written: inferred from the first of a thousand early
    // `return`s, it cost rustc's type check time growing with their square.
    let result_type = match sweeps {
        Sweeps::Product(..) => quote!((f64, ::std::vec::Vec<f64>, ::std::vec::Vec<f64>)),
        Sweeps::Gradient(Some(len)) => quote!((#number_type, [f64; #len])),
        Sweeps::Gradient(None) => quote!(#number_type),
    };
    let (start, gathered) = match sweeps {
        Sweeps::Product(tangents, count) => {
            let gather = tracked.iter().map(|(var, param)| {
                let (adjoint, value) = (&var.adjoint, by_reference(param));
                quote! {
                    if !#private::pairs_into(
                        #value,
                        &#adjoint,
                        (&mut #gradient, &mut #product),
                        &mut #next,
                    ) {
                        return #none;
                    }
                }
            });
            let start = quote!(let mut #next = #tangents.iter(););
            let gathered = quote! {
                let mut #gradient = ::std::vec![0.0f64; #count];
                let mut #product = ::std::vec![0.0f64; #count];
                let mut #next = 0usize;
                #(#gather)*
                ::core::option::Option::Some((#output_value.value, #gradient, #product))
            };
            (start, gathered)
        }
        Sweeps::Gradient(Some(len)) => {
            let gather = tracked.iter().map(|(var, _)| {
                let adjoint = &var.adjoint;
                quote! {
                    if !#private::gradient_into(&#adjoint, &mut #gradient, &mut #next) {
                        return #none;
                    }
                }
            });
            let gathered = quote! {
                let mut #gradient = [0.0f64; #len];
                let mut #next = 0usize;
                #(#gather)*
                ::core::option::Option::Some((#output_value, #gradient))
            };
            (TokenStream::new(), gathered)
        }
        Sweeps::Gradient(None) => {
            let adjoints: Vec<&Ident> = tracked.iter().map(|(var, _)| &var.adjoint).collect();
            let shaped = match &adjoints[..] {
                [one] => quote!(#one),
                all => quote!((#(#all,)*)),
            };
            let gathered = quote! {
                #(
                    if !#private::settle(&mut #adjoints) {
                        return #none;
                    }
                )*
                ::core::option::Option::Some(#output_value)
            };
            returned = quote!((#output_value, #shaped));
            (TokenStream::new(), gathered)
        }
    };
    // Shared nodes: a number for each shared scalar (the parameters' first), and a cell
    // for each node once the forward sweep has made them all.
    let (mut nodes_start, mut cells_start, mut cells_end) =
        (TokenStream::new(), TokenStream::new(), TokenStream::new());
    if !emit.shared.is_empty() {
        let (count, cells) = (nodes_ident(), cells_ident());
        nodes_start.extend(quote!(let mut #count: usize = 0;));
        let mut shared: Vec<VarId> = emit.shared.iter().copied().collect();
        shared.sort_unstable();
        let k = Ident::new("__element", Span::mixed_site());
        for var in shared {
            let (node, param) = (node_ident(var), &program.vars[var]);
            let adjoint = &param.adjoint;
            match (param.depth, param.param) {
                (0, true) => {
                    nodes_start.extend(quote! {
                        let mut #node: usize = #count;
                        #count += 1;
                    });
                    cells_end.extend(quote!(#adjoint = #cells[#node];));
                }
                (0, false) => nodes_start.extend(quote!(let mut #node: usize = 0;)),
                (_, param) => {
                    let len = &program.vars[var].lengths[0];
                    nodes_start.extend(quote!(let mut #node: [usize; #len] = [0usize; #len];));
                    if param {
                        nodes_start.extend(quote! {
                            for #k in 0..(#len) {
                                #node[#k] = #count;
                                #count += 1;
                            }
                        });
                        cells_end.extend(quote! {
                            for #k in 0..(#len) {
                                #adjoint[#k] = #cells[#node[#k]];
                            }
                        });
                    }
                }
            }
        }
        // (From the thread's stack, whose capacity stays: a warm call allocates nothing.)
        cells_start.extend(match number {
            Number::F64 => quote!(let mut #cells: ::std::vec::Vec<f64> = #stack.cells(#count);),
            Number::Dual => quote! {
                let mut #cells: ::std::vec::Vec<#private::Dual> = #stack.dual_cells(#count);
            },
        });
        cells_end.extend(match number {
            Number::F64 => quote!(#stack.return_cells(#cells);),
            Number::Dual => quote!(#stack.return_dual_cells(#cells);),
        });
    }
    let kept = &emit.kept;
    let body = quote! {
        #start
        #(#params_prologue)*
        #(#top_adjoints)*
        #(#hoisted)*
        #nodes_start
        #(let mut #kept = ::core::option::Option::None;)*
        #forward
        #output
        let #output_value: #number_type = #output_primal;
        let #seed: #number_type = #one;
        #cells_start
        #output_reverse
        #reverse
        #cells_end
        #gathered
    };
    let result_type = quote!(::core::option::Option<#result_type>);
    let (run, straight) = match emit.loops {
        true => (
            quote!(#private::sweep(|#stack: &mut #private::Stack| -> #result_type { #body })),
            false,
        ),
        false => (quote!((|| -> #result_type { #body })()), true),
    };
    if let Sweeps::Product(..) = sweeps {
        return Some((run, straight));
    }
    let ok = quote!(::core::result::Result::Ok);
    Some((
        quote! {
            #(#outside)*
            if let ::core::option::Option::Some(#output_value) = #run {
                return #ok(#returned);
            }
        },
        straight,
    ))
}

/// A top-level local vector whose length is computed at run time (`vec![0.0; n]`, `n`
/// perhaps a local bound in the body): its adjoints are declared where it is, since
/// before the forward sweep, where the other top-level adjoints start, `n` is not yet in
/// scope.
fn sized_in_body(var: &Var) -> bool {
    fn mentions_vec(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "vec",
            proc_macro2::TokenTree::Group(group) => mentions_vec(group.stream()),
            _ => false,
        })
    }
    !var.param && !var.call && !var.growable && var.depth != 0 && mentions_vec(var.zero.clone())
}

/// A parameter's adjoints at zero, in its shape (`value` its value, by reference).
fn zero_adjoints(param: &Param, value: &dyn ToTokens) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    match param.kind {
        Kind::Scalar => quote!(0.0f64),
        Kind::Array => quote!(#private::zeros_like(#value)),
        _ => quote!(::scalar_autodiff::Parameters::gradient_from(#value, &mut || 0.0)),
    }
}

/// The differentiated parameters' variables, with their parameters, in order.
fn tracked<'a>(program: &'a Program, params: &'a [Param]) -> Vec<(&'a Var, &'a Param)> {
    program
        .vars
        .iter()
        .filter(|var| var.param)
        .zip(params.iter().filter(|param| param.is_tracked()))
        .collect()
}

/// `path(&Halves::which(stack), args)`, the callee's hidden body on the `Halves`
/// backend (`DualHalves` on duals), with the stack lent to it for the call.
fn call_halves(
    path: &TokenStream,
    args: &[TokenStream],
    which: TokenStream,
    number: Number,
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let backend = match number {
        Number::F64 => quote!(Halves),
        Number::Dual => quote!(DualHalves),
    };
    let stack = stack();
    call_on(
        path,
        args,
        quote!(#private::#backend::#which(&mut *#stack)),
        number,
    )
}

/// [`call_halves`]' reverse call over shared adjoints, `buffer` lent with the stack.
fn call_shared(
    path: &TokenStream,
    args: &[TokenStream],
    buffer: &Ident,
    number: Number,
) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    let stack = stack();
    let backend = quote!(#private::SharedHalves::reverse(&mut *#stack, &mut #buffer));
    call_on(path, args, backend, number)
}

/// `path(&backend, args)`, after the callee's check on `f64`s (checked once, by the same
/// call in the sweeps on `f64`s), spanned at the call, where rustc's error for a callee
/// without the halves wanted points.
fn call_on(
    path: &TokenStream,
    args: &[TokenStream],
    backend: TokenStream,
    number: Number,
) -> TokenStream {
    let halves = Ident::new("__halves", Span::mixed_site());
    let result = Ident::new("__result", Span::mixed_site());
    let span = path
        .clone()
        .into_iter()
        .last()
        .map_or_else(Span::call_site, |token| token.span());
    let check = (number == Number::F64)
        .then(|| callable_path(path))
        .flatten()
        .map(|check| {
            let located = Ident::new("__halves", span.resolved_at(Span::mixed_site()));
            let argument = quote_spanned!(span=> &#located);
            quote!(#check(#argument);)
        });
    quote! {{
        let #halves = #backend;
        #check
        let #result = #path(&#halves, #(#args),*);
        #result
    }}
}

/// The callee's check (`crate::emit::callable_fn`) beside its hidden body `path`
/// (`differentiable_g`, `m::differentiable_g::<3>`, `self.differentiable_g::<_, 3>`): the same
/// path to `__autodiff_callable_g`, without the sizes.
fn callable_path(path: &TokenStream) -> Option<TokenStream> {
    let callable = |ident: &Ident| {
        let name = ident.to_string();
        let name = name.strip_prefix("differentiable_")?;
        Some(crate::emit::callable_ident(&Ident::new(name, ident.span())))
    };
    let direct = match syn::parse2::<syn::Expr>(path.clone()).ok() {
        Some(syn::Expr::Path(mut path)) => {
            let last = path.path.segments.last_mut()?;
            last.ident = callable(&last.ident)?;
            last.arguments = syn::PathArguments::None;
            Some(path.to_token_stream())
        }
        Some(syn::Expr::Field(mut field)) => {
            let syn::Member::Named(method) = &field.member else {
                return None;
            };
            field.member = syn::Member::Named(callable(method)?);
            Some(field.to_token_stream())
        }
        _ => None,
    };
    direct.or_else(|| {
        // `self.differentiable_g::<_, 3>`: read as the method call it begins.
        let call = syn::parse2::<syn::ExprMethodCall>(quote!(#path())).ok()?;
        let (receiver, method) = (&call.receiver, callable(&call.method)?);
        Some(quote!(#receiver.#method))
    })
}

/// Whether `param` is a `#[param]` slice (`&[f64]`, `&[Layer]`).
fn is_slice(param: &Param) -> bool {
    matches!(param.kind, Kind::Declared { .. }) && matches!(param.shape(), syn::Type::Slice(_))
}

/// The element type of a `#[param]` slice of `f64`s or of arrays of them (`&[f64]`,
/// `&[[f64; 16]]`).
fn numbers_slice(param: &Param) -> Option<&syn::Type> {
    fn numbers(ty: &syn::Type) -> bool {
        match crate::parse::signature::ungrouped(ty) {
            syn::Type::Path(path) => path.path.is_ident("f64"),
            syn::Type::Array(array) => numbers(&array.elem),
            _ => false,
        }
    }
    match (&param.kind, param.shape()) {
        (Kind::Declared { .. }, syn::Type::Slice(slice)) if numbers(&slice.elem) => {
            Some(&slice.elem)
        }
        _ => None,
    }
}

/// `__{name}_0` .. `__{name}_{count - 1}`: the per-parameter names that the hidden body's
/// dispatch and the halves share.
fn numbered(name: &str, count: usize) -> Vec<Ident> {
    (0..count)
        .map(|index| Ident::new(&format!("__{name}_{index}"), Span::mixed_site()))
        .collect()
}

fn stack() -> Ident {
    Ident::new("__stack", Span::mixed_site())
}

/// What the sweeps compute on: `f64`s (`name_grad`, the halves) or duals (`name_hvp`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Number {
    F64,
    Dual,
}

impl Number {
    /// The number type.
    fn ty(self) -> TokenStream {
        match self {
            Number::F64 => quote!(f64),
            Number::Dual => quote!(::scalar_autodiff::__private::Dual),
        }
    }

    /// The type of a parameter or output of `f64` shape `shape` on this number.
    fn shape(self, shape: &TokenStream) -> TokenStream {
        match self {
            Number::F64 => shape.clone(),
            Number::Dual => quote! {
                <#shape as ::scalar_autodiff::Parameters>::Tracked<::scalar_autodiff::__private::Dual>
            },
        }
    }

    /// Zero.
    fn zero(self) -> TokenStream {
        match self {
            Number::F64 => quote!(0.0),
            Number::Dual => quote! {
                <::scalar_autodiff::__private::Dual as ::scalar_autodiff::__private::Number>::ZERO
            },
        }
    }

    /// `value`, an `f64` expression, as a constant number.
    fn lift(self, value: TokenStream) -> TokenStream {
        match self {
            Number::F64 => value,
            Number::Dual => quote!(::scalar_autodiff::__private::Dual::constant(#value)),
        }
    }

    /// The contribution `upstream * slope` of an edge. On duals, plain (value, tangent)
    /// arithmetic: the table's product would check, at run time, which factor is tracked,
    /// and an untracked factor's tangent is 0 anyway.
    fn product(self, upstream: &Ident, slope: &Ident) -> TokenStream {
        match self {
            Number::F64 => quote!(#upstream * #slope),
            Number::Dual => quote!(::scalar_autodiff::__private::Dual::times(#upstream, #slope)),
        }
    }

    /// A zeros expression (`0.0f64`, `[[0.0f64; A]; B]`, ...) of this number.
    fn zeros(self, zeros: &TokenStream) -> TokenStream {
        use proc_macro2::TokenTree;
        if self == Number::F64 {
            return zeros.clone();
        }
        zeros
            .clone()
            .into_iter()
            .map(|tree| match tree {
                TokenTree::Literal(literal) if literal.to_string() == "0.0f64" => {
                    self.zero().into_iter().collect::<TokenStream>()
                }
                TokenTree::Group(group) => {
                    let mut inner =
                        proc_macro2::Group::new(group.delimiter(), self.zeros(&group.stream()));
                    inner.set_span(group.span());
                    TokenTree::Group(inner).into()
                }
                tree => tree.into(),
            })
            .collect()
    }
}

struct Emit<'a> {
    program: &'a Program,
    /// Reads the reverse sweep makes from the local itself, and the locals their blocks
    /// keep for that: see [`frozen_reads`].
    frozen: (HashSet<(usize, usize)>, HashSet<usize>),
    /// The adjoint an assignment's reverse has just zeroed, until a contribution reaches
    /// it, and the value's last operation (see `reverse_op`).
    fresh: Option<(String, usize)>,
    names: &'a Names,
    /// Locals declared before the forward sweep: what operations outside loops keep.
    hoisted: Vec<TokenStream>,
    /// Whether anything uses the stack.
    loops: bool,
    /// How many branch arms are around the statement being written: outside loops and
    /// branches, an operation's operand and result locals stay in scope for the reverse
    /// sweep, which reads them where they are.
    arms: usize,
    /// Operations whose locals the reverse sweep reads where they are.
    direct: std::collections::HashSet<usize>,
    /// Writing the halves other sweeps call: the reverse half is a function of its own,
    /// so only parameters stay in scope (restored from the stack), and a parameter's
    /// adjoints are the caller's, behind a `&mut`.
    half: bool,
    /// The locals that start as a copy of a parameter's element (`let mut s = b[j];`),
    /// with that element, where copies are versioned: see [`versioned`].
    versioned: std::collections::HashMap<usize, Place>,
    /// What the sweeps compute on.
    number: Number,
    /// Scalars that share nodes through copies (see [`shared_nodes`]).
    shared: HashSet<VarId>,
    /// How many of the body's loops are around the statement being written (see
    /// [`Emit::constant`]).
    looping: usize,
    /// Writing a half's reverse over shared adjoints (see `__private::SharedHalves`):
    /// each parameter's positions in the buffer, and its lengths, outermost first.
    mapped: std::collections::HashMap<VarId, (Ident, Vec<TokenStream>)>,
    /// The types of the data arguments kept so far (see [`kept_type`]).
    kept: Vec<Ident>,
}

/// A copy of a parameter's element, `let mut s = b[j];` (or of a local scalar no
/// longer assigned), is that element's node until
/// `s` is first assigned: the trace adds what reads it receive straight into the
/// parameter's adjoints, which in a half are the caller's and hold other sums already
/// (and in `name_grad` may, where `b` is read again), so a copy cannot collect them
/// first. The sweeps count the assignments of `s` (its version):
/// going back, a read of version 0 adds into the element's adjoints, a later one into
/// `s`'s, and the copy itself hands nothing on. Each block keeps its copies' counts for
/// its reverse (pushed at its end, popped where its reverse starts).
pub(super) fn versioned(
    program: &Program,
    enabled: bool,
) -> std::collections::HashMap<usize, Place> {
    /// Whether `rest` (the copy's scope after it) assigns `source` only once the copy
    /// has surely been assigned (at this block's level), so that no read of version 0
    /// comes after a new node of the source.
    fn steady_while_read(rest: &[Stmt], copy: usize, source: usize) -> bool {
        for stmt in rest {
            if assigns(std::slice::from_ref(stmt), source) {
                return false;
            }
            if matches!(stmt, Stmt::Assign { place, .. } if place.var == copy && place.is_whole()) {
                return true;
            }
        }
        true
    }
    fn walk(program: &Program, stmts: &[Stmt], out: &mut std::collections::HashMap<usize, Place>) {
        for (at, stmt) in stmts.iter().enumerate() {
            match stmt {
                Stmt::Let { var, value } => {
                    if let (true, Operand::Place(place)) = (value.ops.is_empty(), &value.result) {
                        // A local scalar is the same node while it is not assigned again:
                        // not in the copy's scope while the copy may still be version 0
                        // (a loop's next iteration starts a new copy). (Reads of version 0 add into the source's adjoints where
                        // they are, which then hold that node's; a source that is itself a
                        // versioned copy has the same version there as at the copy.)
                        let source = &program.vars[place.var];
                        let local = !source.param
                            && source.depth == 0
                            && place.is_whole()
                            && steady_while_read(&stmts[at + 1..], *var, place.var);
                        if source.param || local {
                            out.insert(*var, place.clone());
                        }
                    }
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    walk(program, then, out);
                    walk(program, otherwise, out);
                }
                Stmt::For { body, .. } => walk(program, body, out),
                _ => {}
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    if enabled {
        walk(program, &program.body, &mut out);
    }
    out
}

/// Whether `stmts` assign `var` (any of its elements).
fn assigns(stmts: &[Stmt], var: usize) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Assign { place, .. }
        | Stmt::Call {
            store: Some(place), ..
        } => place.var == var,
        Stmt::If {
            then, otherwise, ..
        } => assigns(then, var) || assigns(otherwise, var),
        Stmt::For { body, .. } => assigns(body, var),
        Stmt::Data { .. }
        | Stmt::Keep { .. }
        | Stmt::Let { .. }
        | Stmt::LetArray { .. }
        | Stmt::Call { .. } => false,
    })
}

/// Reads of a local that the reverse sweep can make from the local itself instead of
/// popping a copy per read: reads after the local's last assignment in its block. At
/// `name_grad`'s top level its value stays in scope for the reverse sweep; in a block
/// inside a loop, the block keeps the local once at its end and its reverse takes it
/// back first, where the reads outnumber the values kept (a layer's output read by every
/// unit of the next: more loops around the read than the local has indices). Returns the reads, as (operation, local), and the locals
/// kept so.
fn frozen_reads(program: &Program, half: bool) -> (HashSet<(usize, usize)>, HashSet<usize>) {
    /// The live operations reading `var` in `stmts`, and the most loops around one of
    /// them there (`looped` around `stmts` already).
    fn reads(stmts: &[Stmt], var: usize, looped: usize, out: &mut Vec<usize>) -> usize {
        let mut most = 0;
        for stmt in stmts {
            match stmt {
                Stmt::Let { value, .. } | Stmt::Assign { value, .. } => {
                    for op in value.ops.iter().filter(|op| op.live) {
                        let reads = op.operands.iter().any(
                            |operand| matches!(operand, Operand::Place(place) if place.var == var),
                        );
                        if reads {
                            out.push(op.id);
                            most = most.max(looped);
                        }
                    }
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    most = most.max(reads(then, var, looped, out));
                    most = most.max(reads(otherwise, var, looped, out));
                }
                Stmt::For { body, .. } => most = most.max(reads(body, var, looped + 1, out)),
                Stmt::Data { .. }
                | Stmt::Keep { .. }
                | Stmt::LetArray { .. }
                | Stmt::Call { .. } => {}
            }
        }
        most
    }
    fn walk(
        program: &Program,
        stmts: &[Stmt],
        (top, in_loop): (bool, bool),
        out: &mut (HashSet<(usize, usize)>, HashSet<usize>),
    ) {
        for (at, stmt) in stmts.iter().enumerate() {
            match stmt {
                Stmt::Let { var, .. } | Stmt::LetArray { var, .. } if top || in_loop => {
                    let last = (at..stmts.len())
                        .rev()
                        .find(|&index| assigns(&stmts[index..=index], *var))
                        .unwrap_or(at);
                    let mut ops = Vec::new();
                    let looped = reads(&stmts[last + 1..], *var, 0, &mut ops);
                    // More loops around a read than the local has indices: each element
                    // is read again and again.
                    let depth = program.vars[*var].depth;
                    let worth = top || looped > depth || (depth == 0 && ops.len() > 1);
                    if worth && !ops.is_empty() {
                        out.0.extend(ops.into_iter().map(|op| (op, *var)));
                        if !top {
                            out.1.insert(*var);
                        }
                    }
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    walk(program, then, (false, in_loop), out);
                    walk(program, otherwise, (false, in_loop), out);
                }
                Stmt::For { body, .. } => walk(program, body, (false, true), out),
                _ => {}
            }
        }
    }
    let mut out = (HashSet::new(), HashSet::new());
    walk(program, &program.body, (!half, false), &mut out);
    out
}

/// The places one call lends from one array: each one's argument and constant index.
type Lent = Vec<(usize, usize)>;

/// Whether the table's slopes of `op` read neither its operands nor its value (see
/// `ScalarOperation::reads` in the runtime).
fn constant_slopes(op: &Op) -> bool {
    matches!(
        op.method.to_string().as_str(),
        "add" | "sub" | "neg" | "copy"
    )
}

/// Whether the table's slope of `op` for operand `slot` is 1 whatever the operands.
fn unit_slope(op: &Op, slot: usize) -> bool {
    match op.method.to_string().as_str() {
        "add" | "copy" => true,
        "sub" => slot == 0,
        _ => false,
    }
}

/// A branch's statements, inside the `if let` that binds its names (see [`Stmt::If`]).
fn bound(bind: &Option<TokenStream>, stmts: TokenStream) -> TokenStream {
    match bind {
        Some(bind) => quote!(if let #bind { #stmts }),
        None => stmts,
    }
}

/// The type of a kept data argument (see [`Stmt::Keep`]): an `Option` declared before
/// the forward sweep, typed by the forward sweep's value and read by the reverse's, which
/// are in scopes of their own.
pub(crate) fn kept_type(name: &Ident) -> Ident {
    Ident::new(&format!("{name}_type"), Span::mixed_site())
}

fn version_ident(var: usize) -> Ident {
    Ident::new(&format!("__version_{var}"), Span::mixed_site())
}

impl<'a> Emit<'a> {
    /// An expression over the operation table: evaluated by the compiler inside the body's
    /// loops, where a debug build would evaluate it on every iteration; a plain expression
    /// elsewhere (optimized builds fold it), where it runs once per call and a constant
    /// block per operation costs compile time: each is evaluated on its own, about 2.6 ms
    /// each, which made a 1,000-operation body's halves take 9.7 s to type-check (0.3 s
    /// without).
    fn constant(&self, expression: TokenStream) -> TokenStream {
        match self.looping {
            0 => quote!((#expression)),
            _ => quote!(const { #expression }),
        }
    }

    fn new(program: &'a Program, names: &'a Names, half: bool, versioning: bool) -> Self {
        Emit {
            program,
            names,
            hoisted: Vec::new(),
            loops: false,
            arms: 0,
            direct: std::collections::HashSet::new(),
            half,
            versioned: versioned(program, versioning),
            frozen: frozen_reads(program, half),
            fresh: None,
            number: Number::F64,
            shared: HashSet::new(),
            looping: 0,
            mapped: std::collections::HashMap::new(),
            kept: Vec::new(),
        }
    }

    /// Whether `value` is a copy of a shared scalar (its node is the source's).
    fn copies_node(&self, value: &Value) -> bool {
        matches!(&value.result, Operand::Place(source)
            if value.ops.is_empty() && self.shared.contains(&source.var))
    }

    /// Going forward, the node a shared scalar `var` holds after a value is assigned to
    /// it: the number it held kept for the reverse sweep, then its copy's source's or a
    /// new one (see [`shared_nodes`]).
    fn node_forward(&mut self, target: &Place, value: &Value) -> TokenStream {
        if !self.shared.contains(&target.var) {
            return TokenStream::new();
        }
        self.loops = true;
        let (stack, node, count) = (stack(), self.node_place(target), nodes_ident());
        let new = match &value.result {
            Operand::Place(source) if self.copies_node(value) => self.node_place(source),
            _ => quote!({
                #count += 1;
                #count - 1
            }),
        };
        quote! {
            #stack.push(#node as f64);
            #node = #new;
        }
    }

    /// The number of the node a shared place holds: `__node_v`, or `__node_a[i]`.
    fn node_place(&self, place: &Place) -> TokenStream {
        let node = node_ident(place.var);
        let indices = &place.indices;
        quote!(#node #([(#indices)])*)
    }

    /// A shared array's elements, each given a new node (a `let` of the array), their
    /// numbers kept going forward; and, going back (`forward` false), given back.
    fn array_nodes(&mut self, var: VarId, forward: bool) -> TokenStream {
        if !self.shared.contains(&var) {
            return TokenStream::new();
        }
        self.loops = true;
        let (stack, node, count) = (stack(), node_ident(var), nodes_ident());
        let len = &self.program.vars[var].lengths[0];
        let k = Ident::new("__element", Span::mixed_site());
        match forward {
            true => quote! {
                for #k in 0..(#len) {
                    #stack.push(#node[#k] as f64);
                    #node[#k] = #count;
                    #count += 1;
                }
            },
            false => quote! {
                for #k in (0..(#len)).rev() {
                    #node[#k] = #stack.pop() as usize;
                }
            },
        }
    }

    /// `var`'s zeros on this number. A call's result's are `zero_of` the call on `f64`s,
    /// lifted to duals.
    fn var_zeros(&self, var: &Var) -> TokenStream {
        let zeros = &var.zero;
        match self.number == Number::Dual && var.call {
            true => quote!(::scalar_autodiff::__private::Lift::lift(#zeros)),
            false => self.number.zeros(zeros),
        }
    }

    /// The adjoints of a top-level vector sized in the body, declared after it in the
    /// sweeps (see [`sized_in_body`]); nothing for any other local, or in a half.
    fn declared_here(&self, var: VarId) -> Option<TokenStream> {
        let var = &self.program.vars[var];
        (!self.half && var.top_level && sized_in_body(var)).then(|| self.adjoint_declaration(var))
    }

    fn adjoint_declaration(&self, var: &Var) -> TokenStream {
        let adjoint = &var.adjoint;
        let (number, zero) = (self.number.ty(), self.number.zero());
        let zeros = self.var_zeros(var);
        match var.depth {
            0 => quote!(let mut #adjoint: #number = #zero;),
            // (A call's result: `zero_of` of a call that diverges.)
            _ => quote! {
                #[allow(unreachable_code)]
                let mut #adjoint = #zeros;
            },
        }
    }

    /// A data operand's value as a number: a constant (a detached value keeps only its
    /// value). `value` is its `f64` expression, from [`data_value`].
    fn data(&self, data: &Data, value: TokenStream) -> TokenStream {
        match (self.number, &data.convert) {
            (Number::F64, _) => value,
            (Number::Dual, None) => quote!(::scalar_autodiff::__private::detached(#value)),
            (Number::Dual, Some(_)) => self.number.lift(value),
        }
    }

    /// The locals this block keeps at its end for its reverse (see [`frozen_reads`]).
    fn restored(&self, stmts: &[Stmt]) -> Vec<usize> {
        stmts
            .iter()
            .filter_map(|stmt| match stmt {
                Stmt::Let { var, .. } | Stmt::LetArray { var, .. } => Some(*var),
                _ => None,
            })
            .filter(|var| self.frozen.1.contains(var))
            .collect()
    }

    /// The counts of this block's versioned copies, kept for its reverse.
    fn keep_versions(&mut self, stmts: &[Stmt]) -> TokenStream {
        let stack = stack();
        let mut out = TokenStream::new();
        for stmt in stmts {
            if let Stmt::Let { var, .. } = stmt {
                if self.versioned.contains_key(var) {
                    self.loops = true;
                    let version = version_ident(*var);
                    out.extend(quote!(#stack.push(#version as f64);));
                }
            }
        }
        out
    }

    fn var(&self, place: &Place) -> &Var {
        &self.program.vars[place.var]
    }

    // ------------------------------------------------------------------ forward

    /// A nested block: its statements, then its copies' counts kept (see [`versioned`]).
    fn forward_block(&mut self, stmts: &[Stmt], in_loop: bool) -> Option<TokenStream> {
        self.forward_body(stmts, in_loop, false)
    }

    /// [`forward_block`](Self::forward_block) of a loop's body, whose last statement may
    /// `break` if `counted` (see [`Stmt::For::counted`]): what the block keeps for its
    /// reverse is kept before that statement, so that the iteration that breaks keeps it
    /// too, as the reverse sweep takes it back for every iteration that ran.
    fn forward_body(
        &mut self,
        stmts: &[Stmt],
        in_loop: bool,
        counted: bool,
    ) -> Option<TokenStream> {
        let (body, last) = match (counted, stmts.split_last()) {
            (true, Some((last, body))) => (body, Some(last)),
            _ => (stmts, None),
        };
        let mut out = self.forward_stmts(body, in_loop)?;
        out.extend(self.keep_versions(stmts));
        let stack = stack();
        for var in self.restored(stmts) {
            self.loops = true;
            let primal = &self.program.vars[var].primal;
            out.extend(match self.number {
                Number::F64 => quote!(#stack.keep(&#primal);),
                Number::Dual => {
                    quote!(::scalar_autodiff::__private::Numbers::keep(&#primal, #stack);)
                }
            });
        }
        if let Some(last) = last {
            out.extend(self.forward_stmt(last, in_loop)?);
        }
        Some(out)
    }

    /// The output's value, then what its reverse keeps (see [`Program::epilogue`]).
    fn forward_output(&mut self, program: &Program, half: bool) -> Option<TokenStream> {
        let mut out = self.forward_value(&program.output, half)?;
        out.extend(self.forward_stmts(&program.epilogue, half)?);
        Some(out)
    }

    /// The output's reverse, after what it keeps is taken back.
    fn reverse_output(
        &mut self,
        program: &Program,
        upstream: &Ident,
        half: bool,
    ) -> Option<TokenStream> {
        let mut out = self.reverse_stmts(&program.epilogue, half)?;
        out.extend(self.reverse_value(&program.output, upstream, half)?);
        Some(out)
    }

    fn forward_stmts(&mut self, stmts: &[Stmt], in_loop: bool) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        for stmt in stmts {
            out.extend(self.forward_stmt(stmt, in_loop)?);
        }
        Some(out)
    }

    fn forward_stmt(&mut self, stmt: &Stmt, in_loop: bool) -> Option<TokenStream> {
        let private = quote!(::scalar_autodiff::__private);
        let none = quote!(::core::option::Option::None);
        Some(match stmt {
            Stmt::Data { tokens, .. } => tokens.clone(),
            Stmt::Keep {
                name,
                typed: Some(_),
            } => {
                let stack = stack();
                quote!(#stack.push(#private::Kept::keep(#name));)
            }
            Stmt::Keep { name, typed: None } => {
                let (stack, witness) = (stack(), kept_type(name));
                self.kept.push(witness.clone());
                quote! {
                    #private::same_type(&mut #witness, &#name);
                    #stack.push(#private::Kept::keep(#name));
                }
            }
            Stmt::Let { var, value } => {
                let ops = self.forward_value(value, in_loop)?;
                let result = self.primal(&value.result, in_loop)?;
                let version = self.versioned.contains_key(var).then(|| {
                    let version = version_ident(*var);
                    quote!(let mut #version: u32 = 0;)
                });
                let node = self.node_forward(&Place::whole(*var), value);
                let var = &self.program.vars[*var];
                let primal = &var.primal;
                let mutability = var.mutable.then(|| quote!(mut));
                let number = self.number.ty();
                quote! {
                    #ops
                    let #mutability #primal: #number = #result;
                    #version
                    #node
                }
            }
            // A growable vector starts empty: its rows are the duals pushed.
            Stmt::LetArray { var, init }
                if self.number == Number::Dual && self.program.vars[*var].growable =>
            {
                let primal = &self.program.vars[*var].primal;
                quote!(let mut #primal = #init;)
            }
            Stmt::LetArray { var, init } if self.number == Number::Dual => {
                let nodes = self.array_nodes(*var, true);
                let primal = &self.program.vars[*var].primal;
                let adjoint = self.declared_here(*var);
                quote! {
                    let mut #primal = #private::Lift::lift(#init);
                    if !#private::Numbers::all_finite(&#primal) {
                        return #none;
                    }
                    #nodes
                    #adjoint
                }
            }
            // (Even `[0.0; N]`: LLVM folds the check, and without it inlined the GPT's
            // halves differently, 7% more instructions in `gpt_shaped`.)
            Stmt::LetArray { var, init } => {
                let nodes = self.array_nodes(*var, true);
                let primal = &self.program.vars[*var].primal;
                let adjoint = self.declared_here(*var);
                quote! {
                    let mut #primal = #init;
                    if !#private::finite(&#primal) {
                        return #none;
                    }
                    #nodes
                    #adjoint
                }
            }
            Stmt::Assign { place, value } => {
                let ops = self.forward_value(value, in_loop)?;
                let result = self.primal(&value.result, in_loop)?;
                let target = self.place_primal(place, in_loop)?;
                let version = self.versioned.contains_key(&place.var).then(|| {
                    let version = version_ident(place.var);
                    quote!(#version += 1;)
                });
                let node = self.node_forward(place, value);
                quote! {
                    #ops
                    #target = #result;
                    #version
                    #node
                }
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                flag,
                bind,
            } => {
                self.arms += 1;
                let then_block = self.forward_block(then, in_loop);
                let otherwise_block = self.forward_block(otherwise, in_loop);
                self.arms -= 1;
                let (then_block, otherwise_block) = (then_block?, otherwise_block?);
                // (Data alone: nothing to take back, so nothing to keep.)
                if bind.is_none() && self.reverse_free(then) && self.reverse_free(otherwise) {
                    return Some(quote!(if #cond { #then_block } else { #otherwise_block }));
                }
                let (then, otherwise) = (then_block, otherwise_block);
                let then = bound(bind, then);
                let taken = flag_ident(*flag);
                if in_loop {
                    self.loops = true;
                    let stack = stack();
                    quote! {
                        let #taken: bool = #cond;
                        if #taken { #then } else { #otherwise }
                        #stack.push_flag(#taken);
                    }
                } else {
                    self.hoisted.push(quote!(let mut #taken = false;));
                    quote! {
                        #taken = #cond;
                        if #taken { #then } else { #otherwise }
                    }
                }
            }
            Stmt::Call {
                var,
                path,
                args,
                store,
                push,
                seeds,
            } => {
                self.loops = true;
                let mut copied = TokenStream::new();
                for (target, source) in seeds {
                    let target = self.place_primal(target, in_loop)?;
                    let source = self.place_primal(source, in_loop)?;
                    copied.extend(quote!(#target = #source;));
                }
                let primal = &self.program.vars[*var].primal;
                let mut values = Vec::new();
                for arg in args {
                    values.push(match arg {
                        Arg::Tracked(place) => {
                            // A value the reverse sweep can read again is not kept.
                            let which = match (self.place_kept(place), self.number) {
                                (true, Number::F64) => quote!(Steady),
                                (false, Number::F64) => quote!(Whole),
                                (true, Number::Dual) => quote!(DualSteady),
                                (false, Number::Dual) => quote!(DualWhole),
                            };
                            let value = self.argument_value(place, in_loop)?;
                            quote!(#private::#which(#value))
                        }
                        Arg::Data(tokens) => tokens.clone(),
                    });
                }
                let call = call_halves(path, &values, quote!(forward), self.number);
                let value = Ident::new("__value", Span::mixed_site());
                let var = &self.program.vars[*var];
                // In `name_grad`'s sweeps, the top level's adjoints are declared before
                // the forward sweep, all but a call's array result's: here, shaped like
                // its value.
                let adjoint = (!self.half && var.top_level && var.depth != 0).then(|| {
                    let adjoint = &var.adjoint;
                    quote!(let mut #adjoint = #private::zeros_like(&#primal);)
                });
                let mutability = var.mutable.then(|| quote!(mut));
                let store = match store {
                    // The vector's adjoints grow with it, a row of zeros for each row.
                    Some(place) if *push => {
                        let target = self.place_primal(place, in_loop)?;
                        let rows = self.place_adjoint(place, in_loop)?;
                        quote! {
                            #rows.push(#private::zeros_like(&#primal));
                            #target.push(#primal);
                        }
                    }
                    Some(place) => {
                        let target = self.place_primal(place, in_loop)?;
                        let whole = place.is_whole() && self.program.vars[place.var].depth == 1;
                        let nodes = match whole {
                            true => self.array_nodes(place.var, true),
                            false => TokenStream::new(),
                        };
                        quote!(#target = #primal; #nodes)
                    }
                    None => TokenStream::new(),
                };
                quote! {
                    #copied
                    let #mutability #primal = match #call {
                        ::core::result::Result::Ok(#value) => #value,
                        ::core::result::Result::Err(_) => return #none,
                    };
                    #adjoint
                    #store
                }
            }
            Stmt::For {
                pat,
                iter,
                length,
                body,
                after,
                condition,
                counted,
            } => {
                let mut lengths = TokenStream::new();
                for (name, place) in length {
                    let place = self.place_primal(place, in_loop)?;
                    lengths.extend(quote!(let #name: usize = (#place).len();));
                }
                self.looping += 1;
                let body = self.forward_body(body, true, *counted);
                self.looping -= 1;
                let body = body?;
                // The running sums the loop left unchecked.
                let sums = after.iter().map(|&var| &self.program.vars[var].primal);
                // A `while` loop keeps a `false`, then a `true` after each iteration: its
                // reverse runs while it pops a `true`.
                let looped = if *condition {
                    self.loops = true;
                    let stack = stack();
                    quote! {
                        #stack.push_flag(false);
                        while #iter {
                            #body
                            #stack.push_flag(true);
                        }
                    }
                } else if *counted {
                    self.loops = true;
                    let stack = stack();
                    let trips = Ident::new("__trips", Span::mixed_site());
                    quote! {
                        let mut #trips: usize = 0;
                        for #pat in #iter {
                            #trips += 1;
                            #body
                        }
                        #stack.push(#trips as f64);
                    }
                } else {
                    quote!(for #pat in #iter { #body })
                };
                quote! {
                    #lengths
                    #looped
                    #(
                        if !#sums.is_finite() {
                            return #none;
                        }
                    )*
                }
            }
        })
    }

    fn forward_value(&mut self, value: &Value, in_loop: bool) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        for op in &value.ops {
            // If the one operation reading this result carries a non-finite value from
            // its slot into a result checked later, this one needs no check of its own.
            let carried = match reader(value, op.id) {
                _ if matches!(value.result, Operand::Temp(root) if root == op.id) => {
                    value.unchecked.clone()
                }
                Some((reader, slot)) => {
                    let reader = op_path(reader);
                    quote!(::scalar_autodiff::__private::propagates(#reader, #slot))
                }
                None => quote!(false),
            };
            out.extend(self.forward_op(op, &carried, in_loop)?);
        }
        Some(out)
    }

    /// One operation: its operands, its value, checked finite unless `carried` (a
    /// constant: a later check sees it); then what the reverse sweep needs of it.
    fn forward_op(&mut self, op: &Op, carried: &TokenStream, in_loop: bool) -> Option<TokenStream> {
        let private = quote!(::scalar_autodiff::__private);
        let none = quote!(::core::option::Option::None);
        let code = op_path(op);
        let result = temp(op.id);
        let mut out = TokenStream::new();
        let mut operands = Vec::new();
        for (slot, operand) in op.operands.iter().enumerate() {
            let primal = match operand {
                // Data the operation carries into its result is checked there.
                // (Unchecked conversion, then the table's check: no constant expression
                // for rustc to evaluate per operand.)
                // In a loop, the check is the conversion's own, decided by the compiler.
                Operand::Data(Data {
                    raw,
                    convert: Some(convert),
                }) if in_loop && !is_float_literal(raw) => {
                    let value = Ident::new("__value", Span::mixed_site());
                    self.number.lift(quote! {
                        match #convert(
                            &#private::Primal::<{ !#private::propagates(#code, #slot) }>,
                            #raw,
                        ) {
                            ::core::result::Result::Ok(#value) => #value,
                            ::core::result::Result::Err(_) => return #none,
                        }
                    })
                }
                Operand::Data(data) if data.convert.is_some() && !is_float_literal(&data.raw) => {
                    let value = data_value(data, false, &quote!(return #none));
                    let constant = Ident::new("__constant", Span::mixed_site());
                    self.number.lift(quote! {{
                        let #constant: f64 = #value;
                        if !#private::propagates(#code, #slot) && !#constant.is_finite() {
                            return #none;
                        }
                        #constant
                    }})
                }
                Operand::Data(data) => {
                    self.data(data, data_value(data, false, &quote!(return #none)))
                }
                _ => self.primal(operand, in_loop)?,
            };
            let local = operand_ident(op.id, slot);
            let number = self.number.ty();
            out.extend(quote!(let #local: #number = #primal;));
            operands.push(quote!(#local));
        }
        while operands.len() < 3 {
            operands.push(self.number.zero());
        }
        let exponent = op.exponent.clone().unwrap_or_else(|| quote!(0));
        let carried_here = self.constant(carried.clone());
        let number = self.number.ty();
        out.extend(quote! {
            let #result: #number = #private::value(#code, [#(#operands),*], #exponent);
            if !#carried_here && !#result.is_finite() {
                return #none;
            }
        });
        // One `let` outside per operation, its operands' inside a block: every `let` opens
        // a scope that rustc's debug info nests in the last, and LLVM walks them
        // recursively (a function of some 4,000 `let`s overflows its stack).
        let scoped = |out: TokenStream, names: Vec<Ident>| {
            let types = names.iter().map(|_| number.clone());
            quote!(let (#(#names,)*): (#(#types,)*) = { #out (#(#names,)*) };)
        };
        if !op.live {
            return Some(scoped(out, vec![result]));
        }
        let tracked = self.tracked(op);
        if in_loop {
            self.loops = true;
            let kept = self.kept(op);
            let same = same_operands(op);
            let stack = stack();
            let kept_reads = self.constant(
                quote!(#private::kept_reads(#code, [#(#tracked),*], [#(#kept),*], #same)),
            );
            out.extend(quote! {
                #stack.save(
                    #kept_reads,
                    [#(#operands),*],
                    #result,
                );
            });
            if op.exponent.as_ref().is_some_and(|e| !self.names.steady(e)) {
                return None;
            }
        } else if self.arms > 0 {
            let keep = keep_ident(op.id);
            let (number, zero) = (self.number.ty(), self.number.zero());
            self.hoisted.push(quote! {
                let mut #keep: ([#number; 3], #number, i32) = ([#zero; 3], #zero, 0);
            });
            out.extend(quote!(#keep = ([#(#operands),*], #result, #exponent);));
        } else {
            // The reverse sweep reads the operands where they were kept.
            self.direct.insert(op.id);
            let mut names: Vec<Ident> = (0..op.operands.len())
                .map(|slot| operand_ident(op.id, slot))
                .collect();
            names.push(result);
            return Some(scoped(out, names));
        }
        Some(scoped(out, vec![result]))
    }

    fn tracked(&self, op: &Op) -> Vec<bool> {
        (0..3)
            .map(|slot| {
                op.operands
                    .get(slot)
                    .is_some_and(|operand| !matches!(operand, Operand::Data(_)))
            })
            .collect()
    }

    /// Which operands the reverse sweep recomputes rather than pops (inside loops).
    fn kept(&self, op: &Op) -> Vec<bool> {
        // (Slopes that read no value: nothing to recompute, and no read of a primal that
        // a half would then have to keep for its reverse.)
        if constant_slopes(op) {
            return vec![false; 3];
        }
        (0..3)
            .map(|slot| match op.operands.get(slot) {
                None | Some(Operand::Temp(_)) => false,
                Some(Operand::Place(place)) => {
                    self.place_kept(place)
                        || (self.frozen.0.contains(&(op.id, place.var))
                            && place.indices.iter().all(|index| self.names.steady(index)))
                }
                Some(Operand::Data(data)) => self.names.steady(&data.raw),
            })
            .collect()
    }

    /// A place whose value never changes and whose indices are steady.
    fn place_kept(&self, place: &Place) -> bool {
        let var = self.var(place);
        (var.param || (!self.half && var.top_level && !var.mutable))
            && place.indices.iter().all(|index| self.names.steady(index))
    }

    /// The forward sweep's `f64` for an operand; a data operand is checked finite, as
    /// the trace checks its constants.
    fn primal(&mut self, operand: &Operand, in_loop: bool) -> Option<TokenStream> {
        Some(match operand {
            Operand::Temp(id) => {
                let temp = temp(*id);
                quote!(#temp)
            }
            Operand::Place(place) => self.place_primal(place, in_loop)?,
            // A constant is checked by the trace's own conversion; a detached value is a
            // checked result already.
            Operand::Data(data) => self.data(
                data,
                data_value(data, true, &quote!(return ::core::option::Option::None)),
            ),
        })
    }

    /// A reference to a place's value, for a call.
    fn argument_value(&mut self, place: &Place, in_loop: bool) -> Option<TokenStream> {
        let var = self.var(place);
        // An array's or a struct's primal is a reference already.
        let by_reference = var.param && var.depth > 0 && place.is_whole();
        let value = self.place_primal(place, in_loop)?;
        Some(match by_reference {
            true => value,
            false => quote!(&#value),
        })
    }

    fn place_primal(&mut self, place: &Place, in_loop: bool) -> Option<TokenStream> {
        let primal = self.var(place).primal.clone();
        let indices = self.indices(place, in_loop)?;
        let fields = &place.fields;
        Some(quote!(#primal #fields #([#indices])*))
    }

    /// A place's indices, recomputed in both sweeps: they must be steady.
    fn indices(&mut self, place: &Place, _in_loop: bool) -> Option<Vec<TokenStream>> {
        place
            .indices
            .iter()
            .map(|index| self.names.steady(index).then(|| quote!((#index))))
            .collect()
    }

    // ------------------------------------------------------------------ reverse

    /// A block's reverse: its variables' adjoints, its replayed data, then its statements
    /// backwards.
    /// Whether `stmts` are data alone, whose reverse is empty: an `if` of such keeps no
    /// flag going forward and has no reverse.
    fn reverse_free(&self, stmts: &[Stmt]) -> bool {
        self.restored(stmts).is_empty()
            && stmts.iter().all(|stmt| match stmt {
                Stmt::Data { replay, .. } => !replay,
                Stmt::If {
                    then,
                    otherwise,
                    bind: None,
                    ..
                } => self.reverse_free(then) && self.reverse_free(otherwise),
                _ => false,
            })
    }

    fn reverse_block(&mut self, stmts: &[Stmt], in_loop: bool) -> Option<TokenStream> {
        let mut out = self.prelude(stmts);
        out.extend(self.reverse_stmts(stmts, in_loop)?);
        Some(out)
    }

    /// A block's variables' adjoints and its replayed data, for its reverse.
    fn prelude(&self, stmts: &[Stmt]) -> TokenStream {
        let mut out = TokenStream::new();
        let stack = stack();
        // The locals kept at the block's end (see `frozen_reads`), then the copies'
        // counts (see `versioned`).
        for var in self.restored(stmts).into_iter().rev() {
            let var = &self.program.vars[var];
            let (primal, zero) = (&var.primal, self.var_zeros(var));
            out.extend(match self.number {
                Number::F64 => quote! {
                    let mut #primal = #zero;
                    #stack.take(&mut #primal);
                },
                Number::Dual => quote! {
                    let mut #primal = #zero;
                    ::scalar_autodiff::__private::Numbers::take(&mut #primal, #stack);
                },
            });
        }
        for stmt in stmts.iter().rev() {
            if let Stmt::Let { var, .. } = stmt {
                if self.versioned.contains_key(var) {
                    let version = version_ident(*var);
                    out.extend(quote!(let mut #version: u32 = #stack.pop() as u32;));
                }
            }
        }
        for stmt in stmts {
            match stmt {
                Stmt::Let { var, .. } | Stmt::LetArray { var, .. } | Stmt::Call { var, .. } => {
                    out.extend(self.adjoint_declaration(&self.program.vars[*var]));
                }
                Stmt::Data {
                    tokens,
                    replay: true,
                } => out.extend(tokens.clone()),
                _ => {}
            }
        }
        out
    }

    fn reverse_stmts(&mut self, stmts: &[Stmt], in_loop: bool) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        for stmt in stmts.iter().rev() {
            out.extend(self.reverse_stmt(stmt, in_loop)?);
        }
        Some(out)
    }

    fn reverse_stmt(&mut self, stmt: &Stmt, in_loop: bool) -> Option<TokenStream> {
        let upstream = Ident::new("__upstream", Span::mixed_site());
        Some(match stmt {
            Stmt::Data { .. } => TokenStream::new(),
            Stmt::Keep {
                name,
                typed: Some(ty),
            } => {
                let stack = stack();
                quote!(let #name: #ty = ::scalar_autodiff::__private::Kept::take(#stack.pop());)
            }
            Stmt::Keep { name, typed: None } => {
                let (stack, witness) = (stack(), kept_type(name));
                quote! {
                    let #name = ::scalar_autodiff::__private::take_like(#stack.pop(), &#witness);
                }
            }
            // (A shared array's elements get their numbers back.)
            Stmt::LetArray { var, .. } => self.array_nodes(*var, false),
            // A versioned copy's reads of version 0 went to its source already.
            Stmt::Let { var, .. } if self.versioned.contains_key(var) => TokenStream::new(),
            // A shared scalar's node: its cell is the value's upstream, and the number
            // before it comes back (a copy's node is its source's: nothing to hand on).
            Stmt::Let { var, value }
            | Stmt::Assign {
                place: Place { var, .. },
                value,
            } if self.shared.contains(var) => {
                let target = match stmt {
                    Stmt::Assign { place, .. } => place.clone(),
                    _ => Place::whole(*var),
                };
                let (cells, node, stack) = (cells_ident(), self.node_place(&target), stack());
                if self.copies_node(value) {
                    quote!(#node = #stack.pop() as usize;)
                } else {
                    let value = self.reverse_value(value, &upstream, in_loop)?;
                    let number = self.number.ty();
                    quote!({
                        let #upstream: #number = #cells[#node];
                        #node = #stack.pop() as usize;
                        #value
                    })
                }
            }
            Stmt::Let { var, value } => {
                let adjoint = &self.program.vars[*var].adjoint;
                let value = self.reverse_value(value, &upstream, in_loop)?;
                let number = self.number.ty();
                quote!({
                    let #upstream: #number = #adjoint;
                    #value
                })
            }
            // Version 1 or later is the local's own; the value reads the one before.
            Stmt::Assign { place, value } if self.versioned.contains_key(&place.var) => {
                let target = self.program.vars[place.var].adjoint.to_token_stream();
                let version = version_ident(place.var);
                self.reverse_assign(&target, quote!(#version -= 1;), value, in_loop)?
            }
            Stmt::Assign { place, value } => {
                let target = self.place_adjoint(place, in_loop)?;
                self.reverse_assign(&target, TokenStream::new(), value, in_loop)?
            }
            Stmt::If {
                then,
                otherwise,
                flag,
                bind,
                ..
            } => {
                if bind.is_none() && self.reverse_free(then) && self.reverse_free(otherwise) {
                    return Some(TokenStream::new());
                }
                let then = bound(bind, self.reverse_block(then, in_loop)?);
                let otherwise = self.reverse_block(otherwise, in_loop)?;
                let taken = if in_loop {
                    let stack = stack();
                    quote!(#stack.pop_flag())
                } else {
                    let taken = flag_ident(*flag);
                    quote!(#taken)
                };
                quote!(if #taken { #then } else { #otherwise })
            }
            Stmt::Call {
                var,
                path,
                args,
                store,
                push,
                seeds,
            } => {
                // A versioned copy seeded beside its source (`[[s, 1.0], [x, 0.5]]` after
                // `let mut s = x;`) would start two elements at one node's sum and store
                // both back, the second over the first. Not compiled yet. (Alone, it
                // starts at the sum its version reads, see `place_adjoint`.)
                let root = |mut var: VarId| {
                    while let Some(source) = self.versioned.get(&var) {
                        var = source.var;
                    }
                    var
                };
                let lent: Vec<VarId> = seeds
                    .iter()
                    .map(|(_, source)| source.var)
                    .chain(args.iter().filter_map(|arg| match arg {
                        Arg::Tracked(place) => Some(place.var),
                        Arg::Data(_) => None,
                    }))
                    .map(root)
                    .collect();
                let beside = |source: &Place| {
                    self.versioned.contains_key(&source.var)
                        && lent.iter().filter(|&&var| var == root(source.var)).count() > 1
                };
                // (Nor a versioned copy lent beside its source, `g(e, w[k])` after `let e =
                // w[j];`: two borrows of one array's adjoints.)
                if args
                    .iter()
                    .any(|arg| matches!(arg, Arg::Tracked(place) if beside(place)))
                {
                    super::lower::why(
                        "call: a copy (`let e = w[j];` in a loop, or `let mut s = x;` assigned \
                         later) lent beside its source, whose adjoints are one sum (lend a new \
                         value instead, `e * 1.0`)",
                        path,
                    );
                    return None;
                }
                if seeds.iter().any(|(_, source)| beside(source)) {
                    super::lower::why(
                        "call's array literal: a copy (`let mut s = x;`, assigned later) lent \
                         in it beside its source, whose two elements would start at one node's \
                         sum (lend a new value instead, `let s = x * 1.0;`)",
                        path,
                    );
                    return None;
                }
                let private = quote!(::scalar_autodiff::__private);
                let adjoint = &self.program.vars[*var].adjoint;
                // Each seeded element's adjoint starts at its source's sum and is stored
                // back after the callee has added to it.
                let (mut seed, mut store_back) = (TokenStream::new(), TokenStream::new());
                for (target, source) in seeds {
                    let target = self.place_adjoint(target, in_loop)?;
                    let source = self.place_adjoint(source, in_loop)?;
                    seed.extend(quote!(#target = #source;));
                    store_back.extend(quote!(#source = #target;));
                }
                // The row's adjoints are the result's; the row before the store
                // receives nothing from after it.
                let handed = match store {
                    // A pushed row's adjoints leave the vector's with it.
                    Some(place) if *push => {
                        let rows = self.place_adjoint(place, in_loop)?;
                        quote! {
                            #adjoint = match #rows.pop() {
                                ::core::option::Option::Some(__row) => __row,
                                ::core::option::Option::None => {
                                    return ::core::option::Option::None;
                                }
                            };
                        }
                    }
                    // A shared array's elements: their new nodes' cells, then the nodes
                    // they held before.
                    Some(place)
                        if self.shared.contains(&place.var)
                            && place.is_whole()
                            && self.program.vars[place.var].depth == 1 =>
                    {
                        let (cells, node) = (cells_ident(), node_ident(place.var));
                        let len = self.program.vars[place.var].lengths.first()?.clone();
                        let k = Ident::new("__element", Span::mixed_site());
                        let nodes = self.array_nodes(place.var, false);
                        quote! {
                            for #k in 0..(#len) {
                                #adjoint[#k] = #cells[#node[#k]];
                            }
                            #nodes
                        }
                    }
                    Some(place) => {
                        let row = self.place_adjoint(place, in_loop)?;
                        quote! {
                            #adjoint = #row;
                            #row = #private::zeros_like(&#row);
                        }
                    }
                    None => TokenStream::new(),
                };
                let dual = self.number == Number::Dual;
                let stack = stack();
                let keep = match dual {
                    true => quote!(#private::Numbers::keep(&#adjoint, #stack);),
                    false => quote!(#stack.keep(&#adjoint);),
                };
                let disjoint = self.disjoint_elements(args, seeds);
                if (lower::lends_twice(args, seeds) && disjoint.is_none())
                    || self.lends_two_nodes(args, seeds)
                    || self.lends_shared_array(args)
                {
                    let call = self.shared_call(path, args, seeds, in_loop)?;
                    return Some(quote! {
                        #handed
                        #keep
                        #call
                    });
                }
                // Elements of one array at distinct constant indices: disjoint borrows of
                // its adjoints, taken before the call.
                let (mut borrows, mut lent) = (TokenStream::new(), Vec::new());
                for (at, (root, group)) in disjoint.unwrap_or_default().into_iter().enumerate() {
                    let adjoint = self.place_adjoint(&root, in_loop)?;
                    let names: Vec<Ident> = (0..group.len())
                        .map(|k| Ident::new(&format!("__lent_{at}_{k}"), Span::mixed_site()))
                        .collect();
                    let indices = group.iter().map(|(_, index)| index);
                    borrows.extend(quote! {
                        let [#(#names),*] = match <[_]>::get_disjoint_mut(
                            &mut #adjoint[..],
                            [#(#indices),*],
                        ) {
                            ::core::result::Result::Ok(__lent) => __lent,
                            ::core::result::Result::Err(_) => return ::core::option::Option::None,
                        };
                    });
                    lent.extend(group.iter().map(|(arg, _)| *arg).zip(names));
                }
                let mut slots = Vec::new();
                for (at, arg) in args.iter().enumerate() {
                    let adjoint = |emit: &mut Self, place: &Place| -> Option<TokenStream> {
                        match lent.iter().find(|(arg, _)| *arg == at) {
                            Some((_, name)) => Some(quote!(#name)),
                            None => {
                                let place = emit.place_adjoint(place, in_loop)?;
                                Some(quote!(&mut #place))
                            }
                        }
                    };
                    slots.push(match arg {
                        Arg::Tracked(place) if dual && self.place_kept(place) => {
                            let value = self.argument_value(place, in_loop)?;
                            let place = adjoint(self, place)?;
                            quote!(#private::DualAdjointsOf::of(#place, #value))
                        }
                        Arg::Tracked(place) if dual => {
                            let place = adjoint(self, place)?;
                            quote!(#private::DualAdjoints::of(#place))
                        }
                        Arg::Tracked(place) if self.place_kept(place) => {
                            let value = self.argument_value(place, in_loop)?;
                            let place = adjoint(self, place)?;
                            quote!(#private::AdjointsOf(#place, #value))
                        }
                        Arg::Tracked(place) => {
                            let place = adjoint(self, place)?;
                            quote!(#private::Adjoints(#place))
                        }
                        Arg::Data(tokens) => tokens.clone(),
                    });
                }
                let call = call_halves(path, &slots, quote!(reverse), self.number);
                quote! {
                    #handed
                    #keep
                    #seed
                    {
                        #borrows
                        if #call.is_err() {
                            return ::core::option::Option::None;
                        }
                    }
                    #store_back
                }
            }
            Stmt::For {
                body,
                condition: true,
                ..
            } => {
                self.looping += 1;
                let body = self.reverse_block(body, true);
                self.looping -= 1;
                let body = body?;
                let stack = stack();
                quote! {
                    while #stack.pop_flag() { #body }
                }
            }
            Stmt::For {
                pat,
                iter,
                length,
                body,
                counted,
                ..
            } => {
                let mut lengths = TokenStream::new();
                for (name, place) in length {
                    let place = self.place_adjoint(place, in_loop)?;
                    lengths.extend(quote!(let #name: usize = (#place).len();));
                }
                self.looping += 1;
                let body = self.reverse_block(body, true);
                self.looping -= 1;
                let body = body?;
                let into = quote!(::core::iter::IntoIterator::into_iter);
                if *counted {
                    // Back from the last iteration that ran: the ones after it never did.
                    let stack = stack();
                    let trips = Ident::new("__trips", Span::mixed_site());
                    let total = Ident::new("__total", Span::mixed_site());
                    quote! {
                        #lengths
                        let #trips = #stack.pop() as usize;
                        let #total = ::core::iter::Iterator::count(#into(#iter));
                        for #pat in #into(#iter).rev().skip(#total.saturating_sub(#trips)) { #body }
                    }
                } else {
                    quote! {
                        #lengths
                        for #pat in #into(#iter).rev() { #body }
                    }
                }
            }
        })
    }

    /// The reverse call of a callee lent one value twice, or parts of one array (see
    /// `__private::SharedHalves`): the adjoints of each array (or scalar) lent from,
    /// once, copied into the stack's buffer; each argument given its scalars' positions
    /// there (a seeded element its source's); the callee's reverse half over them; and
    /// the sums copied back.
    fn shared_call(
        &mut self,
        path: &TokenStream,
        args: &[Arg],
        seeds: &[(Place, Place)],
        in_loop: bool,
    ) -> Option<TokenStream> {
        let private = quote!(::scalar_autodiff::__private);
        let (stack, dual) = (stack(), self.number == Number::Dual);
        let buffer = Ident::new("__buffer", Span::mixed_site());
        let maps = Ident::new("__maps", Span::mixed_site());
        // Each array (or scalar) lent from, whole, once; scalars that share nodes (see
        // `shared_nodes`) through their cells, all of them, at their nodes' numbers.
        let mut roots: Vec<Place> = Vec::new();
        let lent = args.iter().filter_map(|arg| match arg {
            Arg::Tracked(place) => Some(place),
            Arg::Data(_) => None,
        });
        let mut cells = false;
        for place in lent.chain(seeds.iter().map(|(_, source)| source)) {
            if self.shared.contains(&place.var) {
                cells = true;
            } else if !roots.iter().any(|root| lower::same_root(root, place)) {
                roots.push(Place {
                    var: place.var,
                    fields: place.fields.clone(),
                    indices: Vec::new(),
                });
            }
        }
        // A versioned copy's adjoints are its source's while it is version 0 (see
        // `versioned`): gathered beside that source, the one would overwrite the other's
        // sums when scattered back. Not compiled yet.
        if roots
            .iter()
            .any(|root| self.versioned.contains_key(&root.var))
        {
            return None;
        }
        let starts = numbered("start", roots.len());
        let mut gather = TokenStream::new();
        let mut scatter = TokenStream::new();
        let mut root_adjoints = Vec::new();
        for (root, start) in roots.iter().zip(&starts) {
            let adjoint = self.place_adjoint(root, in_loop)?;
            gather.extend(quote!(let #start = #private::gather(&#adjoint, &mut #buffer);));
            scatter.extend(quote!(#private::Flat::scatter(&mut #adjoint, &#buffer[#start..]);));
            root_adjoints.push(adjoint);
        }
        let cells_start = Ident::new("__cells_start", Span::mixed_site());
        if cells {
            let cells = cells_ident();
            gather.extend(quote!(let #cells_start = #private::gather(&#cells, &mut #buffer);));
            scatter.extend(quote!(#private::Flat::scatter(&mut #cells, &#buffer[#cells_start..]);));
        }
        // Where a place's scalars start in the buffer: its root's start, and its indices'
        // strides (how many scalars an element of each level holds); a shared scalar's,
        // its node's cell.
        let names = self.names;
        let shared = self.shared.clone();
        let at = |place: &Place| -> Option<TokenStream> {
            if shared.contains(&place.var) {
                let node = node_ident(place.var);
                let indices = &place.indices;
                return Some(quote!(#cells_start + #node #([(#indices)])*));
            }
            let root = roots
                .iter()
                .position(|root| lower::same_root(root, place))?;
            let (start, adjoint) = (&starts[root], &root_adjoints[root]);
            let indices = place
                .indices
                .iter()
                .map(|index| names.steady(index).then(|| quote!((#index))));
            let indices: Vec<TokenStream> = indices.collect::<Option<_>>()?;
            let mut offset = quote!(#start);
            let mut element = adjoint.clone();
            for index in indices {
                element = quote!(#element[0]);
                offset = quote!(#offset + #index * #private::Flat::flat_len(&#element));
            }
            Some(offset)
        };
        let (mut positions, mut slots) = (TokenStream::new(), Vec::new());
        let ranges = numbered("range", args.len());
        for (arg, range) in args.iter().zip(&ranges) {
            let Arg::Tracked(place) = arg else {
                if let Arg::Data(tokens) = arg {
                    slots.push(tokens.clone());
                }
                continue;
            };
            // A shared array lent whole: each element's node's cell.
            if self.lends_shared_array(std::slice::from_ref(arg)) {
                let node = node_ident(place.var);
                let len = self.program.vars[place.var].lengths.first()?.clone();
                let k = Ident::new("__element", Span::mixed_site());
                let end = Ident::new(&format!("{range}_end"), Span::mixed_site());
                positions.extend(quote! {
                    let #range = #maps.len();
                    for #k in 0..(#len) {
                        #maps.push(#cells_start + #node[#k]);
                    }
                    let #end = #maps.len();
                });
                let value = match self.place_kept(place) {
                    true => {
                        let value = self.argument_value(place, in_loop)?;
                        quote!(::core::option::Option::Some(#value))
                    }
                    false => quote!(::core::option::Option::None),
                };
                let wrapper = match dual {
                    true => quote!(DualMapped),
                    false => quote!(Mapped),
                };
                slots.push(quote!(#private::#wrapper(&#maps[#range..#end], #value)));
                continue;
            }
            let start = at(place)?;
            let seeded: Vec<&(Place, Place)> = seeds
                .iter()
                .filter(|(target, _)| target.var == place.var && place.is_whole())
                .collect();
            let push = match seeded.is_empty() {
                true => {
                    let adjoint = self.place_adjoint(place, in_loop)?;
                    quote! {
                        #private::map_range(
                            &mut #maps,
                            #start,
                            #private::Flat::flat_len(&#adjoint),
                        );
                    }
                }
                // A lent array literal (of rows too): its elements' own positions, row by
                // row, a seeded one its source's.
                false => {
                    let lengths = self.program.vars[place.var]
                        .lengths
                        .iter()
                        .map(|length| {
                            syn::parse2::<syn::LitInt>(length.clone())
                                .ok()?
                                .base10_parse::<usize>()
                                .ok()
                        })
                        .collect::<Option<Vec<usize>>>()?;
                    let count: usize = lengths.iter().product();
                    let mut pushes = TokenStream::new();
                    for element in 0..count {
                        // The element's indices, row-major.
                        let mut rest = element;
                        let mut indices = vec![0; lengths.len()];
                        for (index, length) in indices.iter_mut().zip(&lengths).rev() {
                            *index = rest % length;
                            rest /= length;
                        }
                        let source =
                            seeded.iter().find(|(target, _)| {
                                target.indices.len() == indices.len()
                                    && target.indices.iter().zip(&indices).all(|(at, index)| {
                                        at.to_string() == quote!(#index).to_string()
                                    })
                            });
                        pushes.extend(match source {
                            Some((_, source)) => {
                                let from = at(source)?;
                                quote!(#maps.push(#from);)
                            }
                            None => quote!(#maps.push(#start + #element);),
                        });
                    }
                    pushes
                }
            };
            let end = Ident::new(&format!("{range}_end"), Span::mixed_site());
            positions.extend(quote! {
                let #range = #maps.len();
                #push
                let #end = #maps.len();
            });
            let value = match self.place_kept(place) {
                true => {
                    let value = self.argument_value(place, in_loop)?;
                    quote!(::core::option::Option::Some(#value))
                }
                // (Typed by a local's adjoints, for a const-generic callee's sizes.)
                false if place.is_whole() && !self.program.vars[place.var].param => {
                    let adjoint = self.place_adjoint(place, in_loop)?;
                    quote!(#private::unsteady(&#adjoint))
                }
                false => quote!(::core::option::Option::None),
            };
            let wrapper = match dual {
                true => quote!(DualMapped),
                false => quote!(Mapped),
            };
            slots.push(quote!(#private::#wrapper(&#maps[#range..#end], #value)));
        }
        let (take, give) = match dual {
            true => (quote!(dual_shared), quote!(return_dual_shared)),
            false => (quote!(shared), quote!(return_shared)),
        };
        let call = call_shared(path, &slots, &buffer, self.number);
        Some(quote! {{
            let (mut #buffer, mut #maps) = #stack.#take();
            #gather
            #positions
            if #call.is_err() {
                return ::core::option::Option::None;
            }
            #scatter
            #stack.#give((#buffer, #maps));
        }})
    }

    /// Whether a call lends a shared array whole: its elements' adjoints are cells, which
    /// the call maps one by one.
    fn lends_shared_array(&self, args: &[Arg]) -> bool {
        args.iter().any(|arg| {
            matches!(arg, Arg::Tracked(place)
                if self.shared.contains(&place.var) && place.is_whole()
                    && self.program.vars[place.var].depth == 1
                    && self.program.vars[place.var].lengths.len() == 1)
        })
    }

    /// The places a call lends from one array at distinct constant indices (`g(s[0],
    /// s[2])`), by array: each place's argument and index. Their adjoints are disjoint
    /// borrows of the array's, so the call needs no shared adjoints. `None` unless every
    /// array lent from more than once is lent so (and nothing is seeded, shares nodes or
    /// is versioned).
    fn disjoint_elements(
        &self,
        args: &[Arg],
        seeds: &[(Place, Place)],
    ) -> Option<Vec<(Place, Lent)>> {
        if !seeds.is_empty() {
            return None;
        }
        let mut groups: Vec<(Place, Lent)> = Vec::new();
        for (at, arg) in args.iter().enumerate() {
            let Arg::Tracked(place) = arg else {
                continue;
            };
            let index = match &place.indices[..] {
                [index] => syn::parse2::<syn::LitInt>(index.clone())
                    .ok()
                    .and_then(|index| index.base10_parse::<usize>().ok()),
                _ => None,
            };
            let root = Place {
                var: place.var,
                fields: place.fields.clone(),
                indices: Vec::new(),
            };
            match groups
                .iter_mut()
                .find(|(other, _)| lower::same_root(other, place))
            {
                Some((_, group)) => group.push((at, index?)),
                None => groups.push((root, vec![(at, index.unwrap_or(usize::MAX))])),
            }
        }
        let groups: Vec<(Place, Vec<(usize, usize)>)> = groups
            .into_iter()
            .filter(|(_, group)| group.len() > 1)
            .collect();
        let plain = groups.iter().all(|(root, group)| {
            let var = root.var;
            let mut indices: Vec<usize> = group.iter().map(|(_, index)| *index).collect();
            indices.sort_unstable();
            indices.dedup();
            indices.len() == group.len()
                && indices.last() != Some(&usize::MAX)
                && !self.shared.contains(&var)
                && !self.versioned.contains_key(&var)
                && !self.mapped.contains_key(&var)
        });
        (!groups.is_empty() && plain).then_some(groups)
    }

    /// Whether a call lends two scalars that share nodes (see [`shared_nodes`]): they may
    /// be one node, whose cell the call must then share.
    fn lends_two_nodes(&self, args: &[Arg], seeds: &[(Place, Place)]) -> bool {
        let lent = args
            .iter()
            .filter(|arg| matches!(arg, Arg::Tracked(place) if self.shared.contains(&place.var)))
            .count();
        let seeded = seeds
            .iter()
            .filter(|(_, source)| self.shared.contains(&source.var))
            .count();
        lent + seeded > 1
    }

    /// The reverse of an assignment to the place whose adjoint is `target`: its adjoint
    /// handed to the value (`then` runs after it is zeroed).
    fn reverse_assign(
        &mut self,
        target: &TokenStream,
        then: TokenStream,
        value: &Value,
        in_loop: bool,
    ) -> Option<TokenStream> {
        let upstream = Ident::new("__upstream", Span::mixed_site());
        // (Only the root operation's upstream is the target's adjoint itself.)
        self.fresh = match value.result {
            Operand::Temp(root) => Some((target.to_string(), root)),
            _ => None,
        };
        let value = self.reverse_value(value, &upstream, in_loop);
        self.fresh = None;
        let value = value?;
        let (number, zero) = (self.number.ty(), self.number.zero());
        Some(quote!({
            let #upstream: #number = #target;
            #target = #zero;
            #then
            #value
        }))
    }

    /// The reverse of a value whose adjoint is `upstream`.
    fn reverse_value(
        &mut self,
        value: &Value,
        upstream: &Ident,
        in_loop: bool,
    ) -> Option<TokenStream> {
        let mut out = match &value.result {
            Operand::Temp(id) => {
                let name = upstream_ident(*id);
                let number = self.number.ty();
                quote!(let #name: #number = #upstream;)
            }
            // A copy: the source's node receives what the copy received.
            Operand::Place(place) => {
                let source = self.place_adjoint(place, in_loop)?;
                quote!(#source += #upstream;)
            }
            Operand::Data(_) => TokenStream::new(),
        };
        if matches!(value.result, Operand::Temp(_)) {
            for op in value.ops.iter().rev().filter(|op| op.live) {
                out.extend(self.reverse_op(op, in_loop)?);
            }
        }
        Some(out)
    }

    fn reverse_op(&mut self, op: &Op, in_loop: bool) -> Option<TokenStream> {
        let private = quote!(::scalar_autodiff::__private);
        let code = op_path(op);
        let tracked = self.tracked(op);
        let operands = Ident::new("__operands", Span::mixed_site());
        let result = Ident::new("__result", Span::mixed_site());
        let slopes = Ident::new("__slopes", Span::mixed_site());
        let upstream = upstream_ident(op.id);
        let slopes_of = if in_loop {
            let kept = self.kept(op);
            // What the reverse sweep recomputes, where the slopes read it (a constant).
            let mut known = Vec::new();
            let zero = self.number.zero();
            for (slot, &kept) in kept.iter().enumerate() {
                let value = match (kept, op.operands.get(slot)) {
                    (true, Some(Operand::Place(place))) => self.place_primal(place, true)?,
                    // Checked by the forward sweep already.
                    (true, Some(Operand::Data(data))) => {
                        self.data(data, data_value(data, false, &quote!(0.0)))
                    }
                    _ => {
                        known.push(zero.clone());
                        continue;
                    }
                };
                let reads = self.constant(quote!(#private::reads(#code, [#(#tracked),*])));
                known.push(quote! {
                    if #reads.operands[#slot] {
                        #value
                    } else {
                        #zero
                    }
                });
            }
            let same = same_operands(op);
            let stack = stack();
            let exponent = op.exponent.clone().unwrap_or_else(|| quote!(0));
            let kept_reads = self.constant(
                quote!(#private::kept_reads(#code, [#(#tracked),*], [#(#kept),*], #same)),
            );
            quote! {
                let (#operands, #result) = #stack.restore(
                    #kept_reads,
                    #same,
                    [#(#known),*],
                );
                let #slopes = #private::slopes(#code, [#(#tracked),*], #operands, #result, #exponent);
            }
        } else {
            let exponent = Ident::new("__exponent", Span::mixed_site());
            let kept = match self.direct.contains(&op.id) {
                true => {
                    let mut locals: Vec<TokenStream> = (0..op.operands.len())
                        .map(|slot| {
                            let local = operand_ident(op.id, slot);
                            quote!(#local)
                        })
                        .collect();
                    while locals.len() < 3 {
                        locals.push(self.number.zero());
                    }
                    let (value, power) = (
                        temp(op.id),
                        op.exponent.clone().unwrap_or_else(|| quote!(0)),
                    );
                    quote!(([#(#locals),*], #value, #power))
                }
                false => {
                    let keep = keep_ident(op.id);
                    quote!(#keep)
                }
            };
            quote! {
                let (#operands, #result, #exponent) = #kept;
                let #slopes = #private::slopes(#code, [#(#tracked),*], #operands, #result, #exponent);
            }
        };
        // Destructured, not indexed: no bounds check per slope in a debug build. (One `let`
        // outside: see `forward_op`.)
        let named: Vec<Ident> = (0..3)
            .map(|slot| Ident::new(&format!("__slope_{slot}"), Span::mixed_site()))
            .collect();
        let mut out = quote!(let [#(#named),*] = { #slopes_of #slopes };);
        for (slot, operand) in op.operands.iter().enumerate() {
            let contribution = self.number.product(&upstream, &named[slot]);
            match operand {
                Operand::Data(_) => {}
                Operand::Temp(id) => {
                    let (name, number) = (upstream_ident(*id), self.number.ty());
                    out.extend(quote!(let #name: #number = #contribution;));
                }
                Operand::Place(place) => {
                    let adjoint = self.place_adjoint(place, in_loop)?;
                    // (The same for a versioned copy's own adjoint, when version 0 is not
                    // read: see `versioned`.)
                    if let Some(source) = self.versioned.get(&place.var).cloned() {
                        let own = self.var(place).adjoint.clone();
                        let first = self
                            .fresh
                            .take_if(|(fresh, _)| own == fresh)
                            .filter(|&(_, root)| root == op.id);
                        if first.is_some() && unit_slope(op, slot) {
                            let source = self.place_adjoint(&source, in_loop)?;
                            let version = version_ident(place.var);
                            out.extend(quote! {
                                if #version == 0 {
                                    #source += #contribution;
                                } else {
                                    #own = #contribution;
                                }
                            });
                            continue;
                        }
                    }
                    // The first contribution to an assignment's target, just zeroed, from
                    // the value's last operation by a slope of 1 (the table's for `add`
                    // and `sub`'s first operand): the trace's `0 + c` is `c` itself, since
                    // `c` is the target's adjoint as it was, a sum started at `+0`, which
                    // is never `-0`. Written as a store, it breaks the chain of additions
                    // through a running sum's reverse loop.
                    let first = self
                        .fresh
                        .take_if(|(fresh, _)| *fresh == adjoint.to_string())
                        .filter(|&(_, root)| root == op.id);
                    if first.is_some() && unit_slope(op, slot) {
                        out.extend(quote!(#adjoint = #contribution;));
                        continue;
                    }
                    out.extend(quote!(#adjoint += #contribution;));
                }
            }
        }
        Some(out)
    }

    fn place_adjoint(&mut self, place: &Place, in_loop: bool) -> Option<TokenStream> {
        let shared_buffer = shared_ident();
        if self.shared.contains(&place.var) {
            let (cells, node) = (cells_ident(), self.node_place(place));
            return Some(quote!(#cells[#node]));
        }
        if let Some(source) = self.versioned.get(&place.var).cloned() {
            let source = self.place_adjoint(&source, in_loop)?;
            let (adjoint, version) = (&self.var(place).adjoint, version_ident(place.var));
            return Some(quote! {
                (*if #version == 0 { &mut #source } else { &mut #adjoint })
            });
        }
        if let Some((map, lengths)) = self.mapped.get(&place.var).cloned() {
            // A scalar of the buffer: only whole scalars are read and added to.
            if !place.fields.is_empty() || place.indices.len() != lengths.len() {
                return None;
            }
            let indices = self.indices(place, in_loop)?;
            let mut flat = quote!(0usize);
            for (index, length) in indices.iter().zip(&lengths) {
                flat = quote!((#flat) * (#length) + (#index));
            }
            return Some(quote!(#shared_buffer[#map[#flat]]));
        }
        let var = self.var(place);
        let adjoint = var.adjoint.clone();
        let behind_reference = self.half && var.param;
        let indices = self.indices(place, in_loop)?;
        let fields = &place.fields;
        Some(match behind_reference {
            true => quote!((*#adjoint) #fields #([#indices])*),
            false => quote!(#adjoint #fields #([#indices])*),
        })
    }
}

/// A data operand's `f64`: through the trace's conversion on plain values, checking
/// finiteness if `checked` (a constant expression), `fail` if that fails.
fn data_value(data: &Data, checked: bool, fail: &TokenStream) -> TokenStream {
    let raw = &data.raw;
    let Some(convert) = &data.convert else {
        return raw.clone();
    };
    // A float literal is a finite `f64` (rustc refuses one that overflows).
    if is_float_literal(raw) {
        return raw.clone();
    }
    let value = Ident::new("__value", Span::mixed_site());
    // Through `Result::ok`: one shared copy of the error's drop, not one per constant.
    quote! {
        match ::core::result::Result::ok(
            #convert(&::scalar_autodiff::__private::Primal::<#checked>, #raw),
        ) {
            ::core::option::Option::Some(#value) => #value,
            ::core::option::Option::None => #fail,
        }
    }
}

/// An `f64` float literal (`1.5`, `2e-3`, `0.5f64`).
fn is_float_literal(raw: &TokenStream) -> bool {
    matches!(
        syn::parse2::<syn::Expr>(raw.clone()),
        Ok(syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Float(float), .. }))
            if matches!(float.suffix(), "" | "f64")
    )
}

fn op_path(op: &Op) -> TokenStream {
    let method = &op.method;
    quote!(::scalar_autodiff::__private::op::#method)
}

/// Operand 1 is operand 0, read from the same place (`e * e`).
fn same_operands(op: &Op) -> bool {
    match (op.operands.first(), op.operands.get(1)) {
        (Some(Operand::Place(a)), Some(Operand::Place(b))) => {
            a.var == b.var
                && a.fields.to_string() == b.fields.to_string()
                && a.indices.len() == b.indices.len()
                && a.indices
                    .iter()
                    .zip(&b.indices)
                    .all(|(x, y)| x.to_string() == y.to_string())
        }
        _ => false,
    }
}

fn operand_ident(id: usize, slot: usize) -> Ident {
    Ident::new(&format!("__operand_{id}_{slot}"), Span::mixed_site())
}

fn keep_ident(id: usize) -> Ident {
    Ident::new(&format!("__keep_{id}"), Span::mixed_site())
}

fn upstream_ident(id: usize) -> Ident {
    Ident::new(&format!("__upstream_{id}"), Span::mixed_site())
}

/// The number of the node shared scalar `var` holds (see [`shared_nodes`]).
fn node_ident(var: VarId) -> Ident {
    Ident::new(&format!("__node_{var}"), Span::mixed_site())
}

/// How many shared nodes there are so far.
fn nodes_ident() -> Ident {
    Ident::new("__nodes", Span::mixed_site())
}

/// The shared nodes' adjoints, one cell each.
/// The buffer of a reverse half over shared adjoints.
fn shared_ident() -> Ident {
    Ident::new("__shared", Span::mixed_site())
}

fn cells_ident() -> Ident {
    Ident::new("__cells", Span::mixed_site())
}

fn flag_ident(flag: usize) -> Ident {
    Ident::new(&format!("__taken_{flag}"), Span::mixed_site())
}
