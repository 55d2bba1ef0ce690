//! Checks the signature and classifies its parameters: `f64` and `[f64; K]` parameters are
//! differentiated, every other parameter (and any marked `#[constant]`) is data.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::{
    Attribute, Expr, FnArg, GenericParam, Ident, ItemFn, Meta, Pat, ReturnType, Safety, Signature,
    Token, Type,
};

use crate::errors::Errors;
use crate::lesson::lesson;

/// What a parameter is to the gradient.
pub(crate) enum Kind {
    /// `x: f64`: one graph variable and one entry of the gradient.
    Scalar,
    /// `w: [f64; K]`, nested to any depth (`[[f64; N]; M]`): one graph variable and one
    /// gradient entry per element, row-major.
    Array,
    /// `#[param] p: &T` or `#[param] p: T`: any `scalar_autodiff::Parameters` shape `T` (a
    /// derived struct, a slice `[f64]`, a `Vec<f64>`), differentiated through the trait.
    Declared {
        /// `T`, the type behind the reference if there is one.
        shape: Box<Type>,
    },
    /// Data: passed through untouched, no entry of the gradient.
    Data,
}

/// One parameter, in declaration order.
pub(crate) struct Param {
    /// The user's name, with the user's span; `None` for a pattern (reported).
    pub(crate) ident: Option<Ident>,
    /// `mut` if the body reassigns the parameter.
    pub(crate) mutability: Option<Token![mut]>,
    /// The type as written.
    pub(crate) ty: Type,
    /// How the parameter takes part in the gradient.
    pub(crate) kind: Kind,
    /// Whether its type names one of the function's const generic parameters (`[f64; N]`):
    /// then no flat gradient can count its entries on stable Rust.
    pub(crate) generic: bool,
}

impl Param {
    /// Whether the parameter is differentiated.
    pub(crate) fn is_tracked(&self) -> bool {
        !matches!(self.kind, Kind::Data)
    }

    /// The `Parameters` shape of a differentiated parameter: `f64`, the array type, or the
    /// declared type behind its reference.
    pub(crate) fn shape(&self) -> &Type {
        match &self.kind {
            Kind::Declared { shape } => shape,
            _ => &self.ty,
        }
    }

    /// For a `#[param]` slice of `f64`s or of arrays of them (`&[f64]`, `&[[f64; 2]]`),
    /// how many indices reach a scalar: its type shows its shape, as a struct's does not.
    pub(crate) fn slice_depth(&self) -> Option<usize> {
        fn numbers(ty: &Type) -> Option<usize> {
            match ungrouped(ty) {
                Type::Path(path) if path.path.is_ident("f64") => Some(0),
                Type::Array(array) => numbers(&array.elem).map(|depth| depth + 1),
                _ => None,
            }
        }
        match (&self.kind, self.shape()) {
            (Kind::Declared { .. }, Type::Slice(slice)) => numbers(&slice.elem).map(|d| d + 1),
            _ => None,
        }
    }
}

/// What the function returns.
pub(crate) enum Output {
    /// `-> f64`: `name_grad` differentiates it.
    Scalar,
    /// `-> [f64; M]` (nested to any depth): an array-valued helper, with a `name_graph`
    /// returning `Scalar`s but no `name_grad`.
    Array(Box<Type>),
    /// Missing or of another type (reported).
    Invalid,
}

/// Checks every part of the signature, reporting each problem on its own tokens.
///
/// Returns one entry per non-`self` parameter (a receiver is data, see [`receiver`]), so
/// that callers can still rewrite the body and shape the stand-in functions when something
/// was reported.
pub(crate) fn check(item: &ItemFn, errors: &mut Errors) -> (Vec<Param>, Output) {
    // A receiver (`&self`, `self`) is data: it stays in the signature of every generated
    // method, and the body reads it as written.
    let sig = &item.sig;
    if let Err(error) = item.modifiers.require_empty() {
        errors.push(error);
    }
    for attr in item.attrs.iter().filter(|attr| is_constant(attr)) {
        errors.push(stray_constant(attr));
    }
    qualifiers(sig, errors);
    for param in &sig.generics.params {
        match param {
            // `const N: usize`: one function per size, as plain Rust has.
            GenericParam::Const(constant) if constant.default.is_none() => {}
            GenericParam::Const(constant) => errors.push(lesson(
                constant,
                "a const parameter of a #[differentiable] function cannot have a default",
                "the sizes come from the arguments, or from a turbofish such as \
                 `linear_graph::<16, 64>(..)`",
                "remove the default",
            )),
            _ => errors.push(lesson(
                param,
                "only const generic parameters, such as `const N: usize`, can appear on a \
                 #[differentiable] function",
                "the gradient is computed on `f64` values; array sizes may be generic \
                 (`fn dense<const I: usize, const O: usize>(w: [[f64; I]; O], x: [f64; I]) \
                 -> [f64; O]`), but a type (`T: Float`, `f32`) or a lifetime may not",
                "write `f64` and concrete reference types; keep `const N: usize` parameters \
                 for sizes",
            )),
        }
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(lesson(
            where_clause,
            "a `where` clause cannot appear on a #[differentiable] function",
            "its parameters and result have concrete types, so there is nothing to constrain",
            "remove the `where` clause",
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(lesson(
            variadic,
            "variadic parameters cannot be #[differentiable]",
            "the gradient has one entry per named `f64` parameter",
            "list every input as `name: f64`",
        ));
    }
    let params = parameters(sig, errors);
    let output = output(sig, errors);
    StrayConstant { errors }.visit_block(&item.block);
    (params, output)
}

/// The signature with every `#[constant]` and `#[param]` removed from the parameters: the
/// attributes are this macro's, so rustc must not see them.
pub(crate) fn without_constant(sig: &Signature) -> Signature {
    let mut sig = sig.clone();
    for input in &mut sig.inputs {
        if let FnArg::Typed(typed) = input {
            typed
                .attrs
                .retain(|attr| !is_constant(attr) && !is_param(attr));
        }
    }
    sig
}

fn qualifiers(sig: &Signature, errors: &mut Errors) {
    if let Some(constness) = &sig.constness {
        errors.push(lesson(
            constness,
            "a `const fn` cannot be #[differentiable]",
            "the generated `_graph` and `_grad` functions record graph nodes at run time, \
             which a constant evaluation cannot do",
            "remove `const`; the plain function stays an ordinary `fn`",
        ));
    }
    if let Some(asyncness) = &sig.asyncness {
        errors.push(lesson(
            asyncness,
            "an `async fn` cannot be #[differentiable]",
            "the gradient of an `f64` computation is computed synchronously, and graph nodes \
             belong to one thread",
            "remove `async`; call the function from async code if you need to",
        ));
    }
    match &sig.safety {
        Safety::Unsafe(unsafe_token) => errors.push(lesson(
            unsafe_token,
            "an `unsafe fn` cannot be #[differentiable]",
            "the rewrite accepts only safe `f64` arithmetic, which never needs `unsafe`",
            "remove `unsafe`",
        )),
        Safety::Safe(safe_token) => errors.push(lesson(
            safe_token,
            "a `safe fn` cannot be #[differentiable]",
            "`safe` belongs to items of `extern` blocks, which have no body to rewrite",
            "remove `safe`",
        )),
        _ => {}
    }
    if let Some(abi) = &sig.abi {
        errors.push(lesson(
            abi,
            "an `extern` function cannot be #[differentiable]",
            "the generated `_graph` and `_grad` functions return Rust `Result`s, which have \
             no foreign calling convention",
            "remove the `extern` ABI; wrap the plain function in an `extern` function if \
             foreign code must call it",
        ));
    }
}

fn parameters(sig: &Signature, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    // Whether a parameter's role was reported: then "nothing to differentiate" is not news.
    let mut unclear = false;
    let consts: Vec<&Ident> = sig
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Const(constant) => Some(&constant.ident),
            _ => None,
        })
        .collect();
    for input in &sig.inputs {
        let typed = match input {
            FnArg::Receiver(receiver) => {
                if !matches!(
                    receiver.kind,
                    syn::ReceiverKind::Value | syn::ReceiverKind::Reference(..)
                ) {
                    errors.push(lesson(
                        receiver,
                        "a typed receiver such as `self: Box<Self>` cannot be #[differentiable]",
                        "the receiver is data passed on to the generated methods, which take it \
                         as `self`, `&self` or `&mut self`",
                        "write `&self` (or `self`), or make it an associated function with the \
                         value as a parameter",
                    ));
                }
                continue;
            }
            FnArg::Typed(typed) => typed,
        };
        let role = role(&typed.attrs, errors);
        let (ident, mutability) = match &*typed.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                (Some(pat.ident.clone()), pat.mutability)
            }
            pat => {
                errors.push(lesson(
                    pat,
                    "parameter patterns are not supported by #[differentiable]",
                    "each parameter needs a plain name: the generated `_graph` and `_grad` \
                     functions pass it on by that name",
                    "write `name: f64` (or `mut name: f64`), and destructure in the body",
                ));
                (None, None)
            }
        };
        let ty = (*typed.ty).clone();
        let kind = match role {
            Role::Constant => Kind::Data,
            Role::Param(attr) => {
                let kind = declared(&ty, attr, errors);
                unclear |= matches!(kind, Kind::Data);
                kind
            }
            Role::Implied if is_f64(&ty) => Kind::Scalar,
            Role::Implied if is_f64_array(&ty) => Kind::Array,
            Role::Implied if is_data(&ty) => Kind::Data,
            Role::Implied => {
                // A pattern is reported already; its type is not the lesson.
                if let Some(ident) = &ident {
                    errors.push(ambiguous(typed, ident));
                }
                unclear = true;
                Kind::Data
            }
        };
        if let (Some(mutability), Kind::Array | Kind::Declared { .. }) = (mutability, &kind) {
            errors.push(lesson(
                mutability,
                "a differentiated array or struct parameter of a #[differentiable] function \
                 cannot be `mut`",
                "its elements are graph variables, read in the body as `w[i]` or `p.field`; \
                 assigning to one would replace a variable the gradient is taken for",
                "remove `mut`, and copy an element into a `let mut` local to change it",
            ));
        }
        params.push(Param {
            ident,
            mutability,
            ty,
            kind,
            generic: names_any(&typed.ty, &consts),
        });
    }
    if sig.inputs.is_empty() {
        errors.push(lesson(
            quote!(#sig),
            "a #[differentiable] function needs at least one `f64` parameter",
            "the gradient is taken with respect to the parameters, so without one there is \
             nothing to differentiate",
            "add the inputs the result depends on, e.g. `fn f(x: f64) -> f64`",
        ));
    } else if !params.is_empty()
        && !unclear
        && !params.iter().any(Param::is_tracked)
        && params.iter().all(|param| param.ident.is_some())
    {
        let inputs = &sig.inputs;
        errors.push(lesson(
            inputs,
            "a #[differentiable] function needs at least one parameter to differentiate",
            "every parameter here is data (a slice, an integer, or marked `#[constant]`), so \
             the gradient would have no entries",
            "add the inputs the result is differentiated by, as `name: f64`, `name: [f64; K]` \
             or `#[param] name: &Model`",
        ));
    }
    params
}

/// What a parameter's attributes declare.
enum Role<'a> {
    /// Nothing: the type decides.
    Implied,
    /// `#[constant]`: data, whatever the type.
    Constant,
    /// `#[param]`: differentiated through `scalar_autodiff::Parameters`.
    Param(&'a Attribute),
}

/// The role a parameter's attributes declare, reporting every attribute that is not ours
/// (or is ours, misspelled with arguments, or contradicts the other).
fn role<'a>(attrs: &'a [Attribute], errors: &mut Errors) -> Role<'a> {
    let mut role = Role::Implied;
    for attr in attrs {
        let ours = is_constant(attr) || is_param(attr);
        if !ours {
            errors.push(lesson(
                attr,
                "attributes on parameters are not supported by #[differentiable], except \
                 `#[constant]` and `#[param]`",
                "every differentiated parameter is an entry of the gradient, which an \
                 attribute such as `#[cfg]` could silently remove",
                "remove the attribute; write `#[constant]` to keep a parameter out of the \
                 gradient, or `#[param]` to differentiate a parameter struct or slice",
            ));
            continue;
        }
        let name = if is_constant(attr) {
            "constant"
        } else {
            "param"
        };
        if !matches!(attr.meta, Meta::Path(_)) {
            errors.push(lesson(
                attr,
                &format!("`#[{name}]` takes no arguments"),
                "it only says whether the parameter is differentiated",
                &format!("write `#[{name}] name: Type`"),
            ));
            continue;
        }
        role = match (role, is_constant(attr)) {
            (Role::Implied | Role::Constant, true) => Role::Constant,
            (Role::Implied | Role::Param(_), false) => Role::Param(attr),
            (_, _) => {
                errors.push(lesson(
                    attr,
                    "a parameter cannot be both `#[constant]` and `#[param]`",
                    "`#[constant]` keeps it out of the gradient and `#[param]` differentiates \
                     it",
                    "keep the one you mean",
                ));
                Role::Constant
            }
        };
    }
    role
}

/// The kind of a `#[param]` parameter: `f64` and arrays as without the attribute, any other
/// type by value or shared reference through `scalar_autodiff::Parameters`.
fn declared(ty: &Type, attr: &Attribute, errors: &mut Errors) -> Kind {
    match ungrouped(ty) {
        ty if is_f64(ty) => Kind::Scalar,
        ty if is_f64_array(ty) => Kind::Array,
        Type::Reference(reference) if reference.mutability.is_none() => Kind::Declared {
            shape: reference.elem.clone(),
        },
        Type::Reference(reference) => {
            errors.push(lesson(
                reference,
                "a `#[param]` parameter cannot be a mutable reference",
                "the gradient is returned by `name_grad`; the body only reads the parameters",
                "take it by shared reference, `#[param] p: &Model`, and update it after the \
                 call",
            ));
            Kind::Data
        }
        Type::Path(_) | Type::Array(_) | Type::Slice(_) => Kind::Declared {
            shape: Box::new(ty.clone()),
        },
        _ => {
            errors.push(lesson(
                quote!(#attr #ty),
                "`#[param]` differentiates an `scalar_autodiff::Parameters` type, by value or by \
                 reference",
                "its scalars are walked in one fixed order to make graph variables and the \
                 gradient; tuples, pointers and trait objects have no such order",
                "declare a struct with `#[derive(scalar_autodiff::Parameters)]` and take `#[param] p: \
                 &Model`, or a slice, `#[param] w: &[f64]`",
            ));
            Kind::Data
        }
    }
}

/// The error on a parameter whose type says neither differentiated nor data.
fn ambiguous(typed: &syn::PatType, name: &Ident) -> syn::Error {
    let ty = &typed.ty;
    let spelled = crate::lesson::spelled(ty);
    lesson(
        typed,
        &format!(
            "#[differentiable] cannot tell whether `{name}: {spelled}` is differentiated or \
             data"
        ),
        "`f64` and arrays of `f64` are differentiated; references to slices and arrays, \
         integers, `bool`, `char` and `&str` are data; for any other type a guess could \
         silently leave parameters out of the gradient",
        &format!(
            "write `#[param] {name}: {spelled}` to differentiate it (the type must implement \
             `scalar_autodiff::Parameters`, e.g. a struct with `#[derive(scalar_autodiff::Parameters)]`), or \
             `#[constant] {name}: {spelled}` to pass it as data"
        ),
    )
}

fn output(sig: &Signature, errors: &mut Errors) -> Output {
    match &sig.output {
        ReturnType::Type(_, ty) if is_f64(ty) => Output::Scalar,
        ReturnType::Type(_, ty) if is_f64_array(ty) => Output::Array(ty.clone()),
        ReturnType::Type(arrow, ty) => {
            let error = match &**ty {
                Type::Tuple(tuple) if !tuple.elems.is_empty() => lesson(
                    quote!(#arrow #ty),
                    "a #[differentiable] function cannot return a tuple",
                    "several results are an array: a function returning `[f64; M]` gets \
                     `name_jacobian` (the gradient of every output) and is callable from other \
                     differentiable functions",
                    &format!(
                        "return `[f64; {}]` (and read its elements by index), or the one `f64` \
                         to differentiate with `name_grad`",
                        tuple.elems.len()
                    ),
                ),
                _ => lesson(
                    quote!(#arrow #ty),
                    "the return type of a #[differentiable] function must be `f64`, an array \
                     of `f64` or `Vec<f64>`",
                    "reverse mode differentiates one `f64` result with respect to the \
                     parameters; several results are an array `[f64; M]`, which gets \
                     `name_jacobian` and is callable from other differentiable functions, or a \
                     `Vec<f64>` of run-time length, which gets `name_vjp`",
                    "return the single `f64` to differentiate: `-> f64` (or several as `-> [f64; \
                     M]` or `-> Vec<f64>`, converting from other types afterwards)",
                ),
            };
            errors.push(error);
            Output::Invalid
        }
        ReturnType::Default => {
            let ident = &sig.ident;
            let inputs = &sig.inputs;
            let mut tokens = quote!(#ident);
            sig.paren_token
                .surround(&mut tokens, |tokens: &mut TokenStream| {
                    tokens.extend(quote!(#inputs))
                });
            errors.push(lesson(
                tokens,
                "a #[differentiable] function must return `f64`, but this one has no return type",
                "reverse mode differentiates one `f64` result with respect to the parameters",
                "add `-> f64` after the parameters",
            ));
            Output::Invalid
        }
    }
}

/// `ty` without invisible or round parentheses around it.
pub(crate) fn ungrouped(mut ty: &Type) -> &Type {
    loop {
        match ty {
            Type::Group(group) => ty = &group.elem,
            Type::Paren(paren) => ty = &paren.elem,
            _ => return ty,
        }
    }
}

/// Whether `ty` is spelled `[f64; K]`, nested to any depth.
pub(crate) fn is_f64_array(ty: &Type) -> bool {
    match ungrouped(ty) {
        Type::Array(array) => is_f64(&array.elem) || is_f64_array(&array.elem),
        _ => false,
    }
}

/// The lengths of a (nested) array type, outermost first.
pub(crate) fn array_lengths(ty: &Type) -> Vec<&Expr> {
    let mut lengths = Vec::new();
    let mut ty = ungrouped(ty);
    while let Type::Array(array) = ty {
        lengths.push(&array.len);
        ty = ungrouped(&array.elem);
    }
    lengths
}

/// Whether a parameter of type `ty` is data by its type alone: a shared reference to a
/// slice, an array or `str`, an integer, `bool` or `char`.
fn is_data(ty: &Type) -> bool {
    match ungrouped(ty) {
        Type::Reference(reference) => match ungrouped(&reference.elem) {
            Type::Slice(_) | Type::Array(_) => true,
            Type::Path(path) => path.qself.is_none() && path.path.is_ident("str"),
            _ => false,
        },
        Type::Path(path) => {
            const PLAIN: &[&str] = &[
                "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
                "usize", "bool", "char",
            ];
            path.qself.is_none() && PLAIN.iter().any(|name| path.path.is_ident(name))
        }
        _ => false,
    }
}

/// Whether `ty` is spelled `f64` (possibly inside invisible or round parentheses).
pub(crate) fn is_f64(ty: &Type) -> bool {
    match ty {
        Type::Path(path) => path.qself.is_none() && path.path.is_ident("f64"),
        Type::Group(group) => is_f64(&group.elem),
        Type::Paren(paren) => is_f64(&paren.elem),
        _ => false,
    }
}

fn is_constant(attr: &Attribute) -> bool {
    attr.path().is_ident("constant")
}

fn is_param(attr: &Attribute) -> bool {
    attr.path().is_ident("param")
}

fn stray_constant(attr: &Attribute) -> syn::Error {
    lesson(
        attr,
        "`#[constant]` marks a parameter of a #[differentiable] function, and cannot appear here",
        "it keeps an `f64` parameter out of the gradient (a hyperparameter such as a learning \
         rate); inside the body, values are constants or not by what they are computed from",
        "put it on an `f64` parameter, `#[constant] rate: f64`; for a value without gradient \
         inside the body write `value.detach()`",
    )
}

/// Reports every `#[constant]` inside the body.
struct StrayConstant<'a> {
    errors: &'a mut Errors,
}

impl<'ast> Visit<'ast> for StrayConstant<'_> {
    fn visit_attribute(&mut self, attr: &'ast Attribute) {
        if is_constant(attr) {
            self.errors.push(stray_constant(attr));
        }
    }
}

/// The receiver of a method, if it has one: data, passed on as written.
pub(crate) fn receiver(sig: &Signature) -> Option<&syn::Receiver> {
    match sig.inputs.first() {
        Some(FnArg::Receiver(receiver)) => Some(receiver),
        _ => None,
    }
}

/// Whether `ty` names any of `consts` (as an array length, say).
fn names_any(ty: &Type, consts: &[&Ident]) -> bool {
    fn walk(tokens: proc_macro2::TokenStream, consts: &[&Ident]) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => consts.iter().any(|name| **name == ident),
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), consts),
            _ => false,
        })
    }
    !consts.is_empty() && walk(ty.to_token_stream(), consts)
}
