//! The body's rewrite into graph operations on a backend (`::scalar_autodiff::__private::Backend`).
//!
//! The generated body is generic: every operation is a call on the backend named by
//! [`backend`], `__backend.mul(&a, &b)?`, whose values are `Scalar`s for `name_graph` and
//! handle-free tape indices for `name_grad`, so both record the same nodes and edges.
//!
//! Every expression is first classified by the names it mentions (`mentions.rs`): one that
//! mentions no tracked name is plain Rust over data and is emitted as written (a `f64` result
//! becomes a constant where it meets a tracked value); one that does is rewritten into a
//! [`Value`] of the graph (`expression.rs`), where a value used many times is one node with
//! one edge per use. Statements, branches and loops keep their shape (`statement.rs`,
//! `branch.rs`, `looping.rs`); conditions are evaluated on primal values (`primal.rs`);
//! calls to other `#[differentiable]` functions record into the same graph (`compose.rs`).
//! The catch-all arms of [`Rewriter::expr`] and [`Rewriter::stmt`] are the one place
//! rejections are born (worded in `unsupported.rs`).
//!
//! A `let` local that is assigned a tracked value anywhere is tracked from its declaration:
//! [`graph_body`] rewrites the body repeatedly, promoting such locals, until nothing changes.

pub(crate) mod branch;
pub(crate) mod compose;
pub(crate) mod expression;
pub(crate) mod growable;
pub(crate) mod looping;
pub(crate) mod mentions;
pub(crate) mod primal;
pub(crate) mod statement;
pub(crate) mod unsupported;
pub(crate) mod value;

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::{BinOp, Block, Expr, ExprCall, ExprPath, Ident, Lit, UnOp};

use crate::emit::plain;
use crate::errors::Errors;
use crate::parse::signature::{Kind, Param};
use mentions::{Scan, Tracked};
use value::Value;

/// What a name in scope holds in the generated body.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Binding {
    /// A tracked value borrowed as `&V`: an `f64` parameter, or an element of a parameter
    /// array bound by a loop.
    Param,
    /// A tracked, owned `V` that assignments may rebind: a `let mut` local, a `let` declared
    /// without a value, or a `mut` parameter.
    Local,
    /// A tracked, owned `V` bound once by `let`.
    Fixed,
    /// A differentiated parameter array, slice or struct, borrowed (`&[V; K]`, `&Vec<V>`,
    /// `&Tracked<V>`): read by element or field, iterated, or passed whole to another
    /// differentiable function, but not a scalar operand.
    Array,
    /// Ordinary Rust (data, or a local computed from data), as written; holds the
    /// declaration's key if it is a `let` local that could still be promoted to tracked.
    Plain(Option<usize>),
    /// A binding that was rejected (and reported): its uses are not reported again.
    Rejected,
}

impl Binding {
    fn tracked(self) -> Option<Tracked> {
        match self {
            Binding::Plain(_) => None,
            Binding::Rejected => Some(Tracked::Rejected),
            _ => Some(Tracked::Value),
        }
    }
}

/// Rewrites a function body into the body of the generated generic function, recording
/// every unsupported construct in `errors`.
///
/// `returns_value` is false when the signature has no return type: that is reported once
/// by the signature check, so a body without a result is not reported again.
pub(crate) fn graph_body(
    block: &Block,
    params: &[Param],
    returns_value: bool,
    errors: &mut Errors,
) -> TokenStream {
    let mut promoted = HashSet::new();
    let mut flatten = false;
    loop {
        let mut pass_errors = Errors::default();
        let mut rewriter = Rewriter {
            errors: &mut pass_errors,
            scopes: vec![Vec::new()],
            returns_value,
            rejected: false,
            promoted: &promoted,
            promotions: HashSet::new(),
            flatten,
            scans: Default::default(),
            parts: Default::default(),
            shapeless: Vec::new(),
        };
        let body = rewriter.function(block, params);
        let promotions = std::mem::take(&mut rewriter.promotions);
        let rejected = rewriter.rejected;
        if promotions.is_subset(&promoted) {
            if rejected && pass_errors.is_empty() {
                // Unreachable by construction (every rejection is reported); never emit
                // broken code.
                pass_errors.push(syn::Error::new(
                    block.brace_token.span.open(),
                    "internal error in #[differentiable]: a part of this body was rejected \
                     without a message; please report this function",
                ));
            }
            if !flatten && pass_errors.is_empty() && operations(&body) > FLAT_ABOVE {
                // Long: once more, flat.
                flatten = true;
                continue;
            }
            errors.append(pass_errors);
            return body;
        }
        promoted.extend(promotions);
    }
}

/// The state of one pass over a body.
pub(crate) struct Rewriter<'a> {
    pub(crate) errors: &'a mut Errors,
    /// Names in scope, innermost block last, latest binding last.
    scopes: Vec<Vec<(Ident, Binding)>>,
    /// Whether the signature declares a result (see [`graph_body`]).
    pub(crate) returns_value: bool,
    /// Whether any part of the body was rejected (and so produced `Value::Invalid`).
    pub(crate) rejected: bool,
    /// Locals known to be assigned a tracked value, by declaration key.
    promoted: &'a HashSet<usize>,
    /// Locals found in this pass to be assigned a tracked value.
    promotions: HashSet<usize>,
    /// Whether an operation on other operations' results binds its operands to locals
    /// first ([`Value::Steps`]): for long bodies (see `FLAT_ABOVE`).
    flatten: bool,
    /// Scans of expressions under the current scopes, by address (see [`Rewriter::scan`]);
    /// emptied whenever a name is declared or a scope opens or closes.
    scans: std::cell::RefCell<std::collections::HashMap<*const Expr, Scan>>,
    /// How many locals [`Rewriter::node`] has bound in this pass.
    parts: std::cell::Cell<usize>,
    /// Parameters whose shapes the macro cannot see (a `#[param]` struct, a slice of
    /// structs): a copy of their element stays another name of it (see
    /// [`Rewriter::copy_of`]).
    shapeless: Vec<Ident>,
}

impl Rewriter<'_> {
    /// The parameters' bindings, then the body.
    fn function(&mut self, block: &Block, params: &[Param]) -> TokenStream {
        let backend = backend();
        let private = quote!(::scalar_autodiff::__private);
        let mut prologue = TokenStream::new();
        for (index, param) in params.iter().enumerate() {
            let Some(ident) = &param.ident else { continue };
            // The argument lent by the caller (or constants made from its data), kept alive
            // under a name of the macro's; the body reads it by reference.
            let lent = Ident::new(&format!("lent_{index}"), Span::mixed_site());
            // The shape is named: the inline copies of `_graph` and `_grad` have no signature
            // to infer it from.
            let shape = param.shape();
            let lend = quote! {
                let #lent = <_ as #private::Argument<'_, _, #shape>>::lend(#ident, #backend)?;
            };
            match (&param.kind, param.mutability) {
                (Kind::Data, _) => self.declare(ident, Binding::Plain(None)),
                (Kind::Scalar, None) => {
                    prologue.extend(quote!(#lend let #ident = &*#lent;));
                    self.declare(ident, Binding::Param);
                }
                (Kind::Scalar, Some(_)) => {
                    prologue.extend(quote! {
                        #lend
                        let mut #ident = ::core::clone::Clone::clone(&*#lent);
                    });
                    self.declare(ident, Binding::Local);
                }
                (Kind::Array | Kind::Declared { .. }, _) => {
                    if let (Kind::Declared { .. }, None) = (&param.kind, param.slice_depth()) {
                        self.shapeless.push(ident.clone());
                    }
                    prologue.extend(quote!(#lend let #ident = &*#lent;));
                    self.declare(ident, Binding::Array);
                }
            }
        }
        let body = self.function_body(block);
        if operations_on(&backend, body.clone()) > OUTLINED_ABOVE {
            // See `Outlined`: keeps a long body's compile time linear and short.
            prologue.extend(quote! {
                use #private::Backend as _;
                let #backend = &#private::Outlined(#backend);
            });
        }
        let label = body_label();
        quote!({ #prologue #label: { #body } })
    }

    /// The value of a rejected expression.
    pub(crate) fn invalid(&mut self) -> Value {
        self.rejected = true;
        Value::Invalid
    }

    pub(crate) fn declare(&mut self, ident: &Ident, binding: Binding) {
        self.scans.get_mut().clear();
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((ident.clone(), binding));
        }
    }

    /// Declares every name `pat` binds as plain data.
    pub(crate) fn declare_plain(&mut self, pat: &syn::Pat) {
        for ident in mentions::pattern_names(pat) {
            self.declare(&ident, Binding::Plain(None));
        }
    }

    /// Declares every name `pat` binds as rejected.
    pub(crate) fn declare_rejected(&mut self, pat: &syn::Pat) {
        for ident in mentions::pattern_names(pat) {
            self.declare(&ident, Binding::Rejected);
        }
    }

    pub(crate) fn push_scope(&mut self) {
        self.scans.get_mut().clear();
        self.scopes.push(Vec::new());
    }

    pub(crate) fn pop_scope(&mut self) {
        self.scans.get_mut().clear();
        self.scopes.pop();
    }

    fn lookup(&self, name: &str) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(ident, _)| ident == name)
            .map(|(_, binding)| *binding)
    }

    /// Whether `name` is tracked here, and how.
    pub(crate) fn tracked_name(&self, name: &str) -> Option<Tracked> {
        self.lookup(name).and_then(Binding::tracked)
    }

    /// The binding a path names, if it is a single name in scope.
    pub(crate) fn local_name(&self, path: &ExprPath) -> Option<(Ident, Binding)> {
        if path.qself.is_some() {
            return None;
        }
        let ident = path.path.get_ident()?;
        self.lookup(&ident.to_string())
            .map(|binding| (ident.clone(), binding))
    }

    /// The binding at the root of a place `name`, `name[i]`, `name.field`, `name[i].f[j]`.
    pub(crate) fn place_root(&self, expr: &Expr) -> Option<(Ident, Binding)> {
        match unparenthesized(expr) {
            Expr::Path(path) => self.local_name(path),
            Expr::Index(index) => self.place_root(&index.expr),
            Expr::Field(field) => self.place_root(&field.base),
            _ => None,
        }
    }

    /// Whether `expr` is a place rooted at a tracked binding: a tracked name, or an element
    /// or field of one (`h`, `w[i]`, `p.w1[i]`).
    pub(crate) fn is_tracked_place(&self, expr: &Expr) -> bool {
        matches!(
            self.place_root(expr),
            Some((_, binding)) if !matches!(binding, Binding::Plain(_) | Binding::Rejected)
        )
    }

    /// The tokens of a tracked place, its indices data (as written, or on primal values if
    /// detached); `None` if an index was rejected (and reported).
    pub(crate) fn place(&mut self, expr: &Expr) -> Option<TokenStream> {
        match unparenthesized(expr) {
            Expr::Path(path) => Some(path.to_token_stream()),
            Expr::Index(index) => {
                let base = self.place(&index.expr)?;
                if let Expr::Range(_) = unparenthesized(&index.index) {
                    self.errors.push(unsupported::tracked_sub_slice(index));
                    self.rejected = true;
                    return None;
                }
                let position = self.untracked(&index.index, unsupported::tracked_index)?;
                let span = index.bracket_token.span.join();
                Some(quote_spanned!(span=> #base[#position]))
            }
            Expr::Field(field) => {
                let base = self.place(&field.base)?;
                let (dot, member) = (&field.dot_token, &field.member);
                Some(quote!(#base #dot #member))
            }
            _ => None,
        }
    }

    /// Which tracked names `expr` mentions.
    pub(crate) fn scan(&self, expr: &Expr) -> Scan {
        let key = |expr: &Expr| expr as *const Expr;
        if let Some(scan) = self.scans.borrow().get(&key(expr)) {
            return *scan;
        }
        // A long sum as written is a left-deep chain of `+`, and rewriting it scans every
        // link: walk the chain down once, then scan it bottom-up, keeping each link's scan,
        // rather than rescanning all the links below each one (quadratic in its length).
        let mut links = Vec::new();
        let mut bottom = expr;
        while let Expr::Binary(binary) = bottom {
            if arithmetic(&binary.op).is_none() || self.scans.borrow().contains_key(&key(bottom)) {
                break;
            }
            links.push((bottom, binary));
            bottom = &binary.left;
        }
        let lookup = |name: &str| self.tracked_name(name);
        let cached = self.scans.borrow().get(&key(bottom)).copied();
        let mut scan = cached.unwrap_or_else(|| mentions::scan_expr(bottom, &lookup));
        for (link, binary) in links.into_iter().rev() {
            scan = scan.or(mentions::scan_expr(&binary.right, &lookup));
            self.scans.borrow_mut().insert(key(link), scan);
        }
        // The unit tests' random bodies check every scan against the whole scan.
        #[cfg(test)]
        assert_eq!(
            scan,
            mentions::scan_expr(expr, &lookup),
            "scan of {}",
            quote!(#expr)
        );
        scan
    }

    /// Empties the cache of scans, before an expression scanned from a temporary tree is
    /// dropped (its address may be reused).
    pub(crate) fn forget_scans(&self) {
        self.scans.borrow_mut().clear();
    }

    /// Records that the local declared at `key` is assigned a tracked value.
    pub(crate) fn promote(&mut self, key: usize) {
        self.promotions.insert(key);
    }

    /// Whether the local declared at `key` is tracked from its declaration.
    pub(crate) fn is_promoted(&self, key: usize) -> bool {
        self.promoted.contains(&key)
    }

    /// A plain expression, as written (without `.detach()`, and without outer parentheses,
    /// which are redundant wherever a plain value is placed and would trip `unused_parens`).
    pub(crate) fn plain(&self, expr: &Expr) -> Value {
        Value::Plain(
            plain::strip_detach_expr(without_parens(expr)).into_token_stream(),
            literal_error(expr).map(Box::new),
        )
    }

    /// `value` where a tracked value is needed: plain values become constants (or are
    /// reported, such as an integer literal).
    pub(crate) fn track(&mut self, value: Value) -> Value {
        match value {
            Value::Plain(_, Some(error)) => {
                self.errors.push(*error);
                self.invalid()
            }
            Value::Plain(plain, None) => Value::Node(Value::Plain(plain, None).owned()),
            value => value,
        }
    }
}

/// The error to report if the plain expression `expr` meets a tracked value: an integer or
/// non-`f64` float literal, which Rust would not mix with `f64` either.
fn literal_error(expr: &Expr) -> Option<syn::Error> {
    match unparenthesized(expr) {
        Expr::Lit(lit)
            if !is_f64_literal(&lit.lit) && matches!(lit.lit, Lit::Int(_) | Lit::Float(_)) =>
        {
            Some(unsupported::expr(unparenthesized(expr)))
        }
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => literal_error(&unary.expr),
        _ => None,
    }
}

/// Bodies with more operations than this are rewritten flat (see [`Rewriter::node`]):
/// one expression of thousands of operations nested as written took rustc 45 s.
const FLAT_ABOVE: usize = 128;

/// The generated body's backend parameter, invisible to the user's names.
/// Bodies with more operations than this record through `Outlined`: inlining every
/// operation made a 1,000-operation body take 19 s to compile instead of 4 s.
const OUTLINED_ABOVE: usize = 256;

/// Whether a rewritten body is long enough to record out of line (see `OUTLINED_ABOVE`).
pub(crate) fn is_long(body: &TokenStream) -> bool {
    operations_on(&backend(), body.clone()) > OUTLINED_ABOVE
}

/// How many operations a rewritten body records, as written (a loop's body once).
pub(crate) fn operations(body: &TokenStream) -> usize {
    operations_on(&backend(), body.clone())
}

/// How many operations `tokens` call on the backend `ident` (`ident.op(..)`), at any depth.
fn operations_on(ident: &Ident, tokens: TokenStream) -> usize {
    let mut stack = vec![tokens];
    let mut count = 0;
    while let Some(tokens) = stack.pop() {
        let mut tokens = tokens.into_iter().peekable();
        while let Some(token) = tokens.next() {
            match token {
                TokenTree::Ident(found) if found == *ident => {
                    if matches!(tokens.peek(), Some(TokenTree::Punct(dot)) if dot.as_char() == '.')
                    {
                        count += 1;
                    }
                }
                TokenTree::Group(group) => stack.push(group.stream()),
                _ => {}
            }
        }
    }
    count
}

/// The label of the block that holds a body's statements: `return value` leaves it with
/// `break 'body value`, the same in the hidden function and inline in `_graph` and `_grad`.
pub(crate) fn body_label() -> syn::Lifetime {
    syn::Lifetime::new("'body", Span::mixed_site())
}

pub(crate) fn backend() -> Ident {
    Ident::new("__backend", Span::mixed_site())
}

impl Rewriter<'_> {
    /// A new node from valid parts, or `Invalid` if any part was rejected: `build` gets the
    /// parts as operands (expressions of type `&V`) and returns the call, ending in `?`.
    ///
    /// Nested as written (`__backend.add(&__backend.mul(x, y)?, z)?`), unless the body is
    /// flattened: then the result is [`Value::Steps`], nested as written up to
    /// [`NESTED_UP_TO`] operations, beyond which every part is bound to a local first, in
    /// order, so that a long expression becomes a run of `let`s, each a short nested call,
    /// rather than one call nested a thousand deep (see [`Value::Steps`] why).
    pub(crate) fn node(
        &self,
        parts: Vec<Value>,
        build: impl FnOnce(&[TokenStream]) -> TokenStream,
    ) -> Value {
        if !parts.iter().all(Value::is_valid) {
            return Value::Invalid;
        }
        if !self.flatten {
            let operands: Vec<TokenStream> = parts.iter().map(Value::operand).collect();
            return Value::Node(build(&operands));
        }
        let nested = 1 + parts.iter().map(Value::nested).sum::<usize>();
        let later_lets = parts
            .iter()
            .skip(1)
            .any(|part| matches!(part, Value::Steps { lets, .. } if !lets.is_empty()));
        let mut lets = TokenStream::new();
        let mut operands = Vec::with_capacity(parts.len());
        if nested <= NESTED_UP_TO && !later_lets {
            // Inline, as written; only the first part can bring `let`s, which run first.
            for part in parts {
                match part {
                    Value::Steps {
                        lets: before, last, ..
                    } => {
                        append(&mut lets, before);
                        operands.push(quote!(&#last));
                    }
                    part => operands.push(part.operand()),
                }
            }
            let last = build(&operands);
            return Value::Steps { lets, last, nested };
        }
        // Every part bound to a local, in order.
        for part in parts {
            let local = self.part_local();
            match part {
                Value::Steps {
                    lets: before, last, ..
                } => {
                    append(&mut lets, before);
                    lets.extend(quote!(let #local = &#last;));
                }
                part => {
                    let operand = part.operand();
                    lets.extend(quote!(let #local = #operand;));
                }
            }
            operands.push(local.into_token_stream());
        }
        let last = build(&operands);
        Value::Steps {
            lets,
            last,
            nested: 1,
        }
    }

    /// A new local for a part bound by [`Rewriter::node`], invisible to the user's names:
    /// numbered within this function's pass, so no two collide and a function's expansion
    /// does not depend on the functions expanded before it.
    fn part_local(&self) -> Ident {
        let n = self.parts.get();
        self.parts.set(n + 1);
        Ident::new(&format!("__part_{n}"), Span::mixed_site())
    }
}

/// `more` after `lets`, moved rather than copied where `lets` is still empty: a left-deep
/// sum of a thousand terms appends to one run of `let`s instead of copying it at every `+`.
fn append(lets: &mut TokenStream, more: TokenStream) {
    if lets.is_empty() {
        *lets = more;
    } else {
        lets.extend(more);
    }
}

/// How many operations a flattened body nests in one expression before
/// [`Rewriter::node`] binds the parts to locals: few enough to keep rustc's borrow checker
/// linear (the temporaries of one statement are few), and enough that the `let`s stay few:
/// each opens a scope, and a `let` for every operation (8,000 nested scopes) overflowed
/// the stack of LLVM's debug-information writer in a debug build.
const NESTED_UP_TO: usize = 64;

pub(crate) fn is_f64_literal(lit: &Lit) -> bool {
    matches!(lit, Lit::Float(float) if matches!(float.suffix(), "" | "f64"))
}

pub(crate) fn arithmetic(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::Add(_) => Some("add"),
        BinOp::Sub(_) => Some("sub"),
        BinOp::Mul(_) => Some("mul"),
        BinOp::Div(_) => Some("div"),
        _ => None,
    }
}

pub(crate) fn compound(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::AddAssign(_) => Some("add"),
        BinOp::SubAssign(_) => Some("sub"),
        BinOp::MulAssign(_) => Some("mul"),
        BinOp::DivAssign(_) => Some("div"),
        _ => None,
    }
}

/// Comparisons and boolean connectives: their result is a `bool`, computed on primal
/// values.
pub(crate) fn is_logic(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Eq(_)
            | BinOp::Ne(_)
            | BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::And(_)
            | BinOp::Or(_)
    )
}

pub(crate) fn is_assign_op(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// `expr` without round parentheses around it (invisible groups are kept).
pub(crate) fn without_parens(mut expr: &Expr) -> &Expr {
    while let Expr::Paren(paren) = expr {
        expr = &paren.expr;
    }
    expr
}

pub(crate) fn unparenthesized(mut expr: &Expr) -> &Expr {
    loop {
        match expr {
            Expr::Paren(paren) => expr = &paren.expr,
            Expr::Group(group) => expr = &group.expr,
            _ => return expr,
        }
    }
}

/// The method name of a call written `f64::name(..)`.
pub(crate) fn f64_function(call: &ExprCall) -> Option<&Ident> {
    let Expr::Path(path) = unparenthesized(&call.func) else {
        return None;
    };
    let segments = &path.path.segments;
    if path.qself.is_some() || path.path.leading_colon.is_some() || segments.len() != 2 {
        return None;
    }
    let (ty, name) = (&segments[0], &segments[1]);
    (ty.ident == "f64" && ty.arguments.is_none() && name.arguments.is_none()).then_some(&name.ident)
}
