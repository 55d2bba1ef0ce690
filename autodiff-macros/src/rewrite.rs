//! The body's rewrite into graph operations on a backend (`::autodiff::__private::Backend`).
//!
//! The generated body is generic: every operation is a call on the backend named by
//! [`backend`], `__backend.mul(&a, &b)?`, whose values are `Scalar`s for `name_graph` and
//! handle-free tape indices for `name_grad`, so both record the same nodes and edges.
//!
//! Every `f64` expression becomes a [`Value`]: a new node (an expression of the backend's
//! value type), or the name of a parameter (`&V`) or local (`V`) that is referenced, never
//! copied, so that a value used many times is one node with one edge per use. Each
//! supported construct has its own arm in [`Rewriter::expr`] or [`Rewriter::stmt`]; the
//! catch-all arm of each is the one place rejections are born (worded in `unsupported.rs`).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{
    BinOp, Block, Expr, ExprBlock, ExprCall, ExprMethodCall, ExprPath, ExprReturn, ExprUnary,
    Ident, Item, Lit, Local, Pat, Stmt, Token, UnOp,
};

use crate::errors::Errors;
use crate::ops::{self, Shape};
use crate::signature::{is_f64, Param};
use crate::unsupported;

/// What a name in scope holds in the generated graph function.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Binding {
    /// A parameter of the graph function: a `&V` borrowed from the caller.
    Param,
    /// A `let mut` binding (or a `mut` parameter rebound on entry): an owned value
    /// (another handle to the same node) that assignments may rebind.
    Local,
    /// A `let` binding without `mut`: an owned value.
    Fixed,
    /// A `let` binding that was rejected (and reported): its uses are not reported again.
    Rejected,
}

/// The rewrite of one `f64` expression.
enum Value {
    /// An expression of the backend's value type: a new node, postfix-safe (a call chain ending in `?`
    /// or a block).
    Node(TokenStream),
    /// A name in scope, referenced where it is used.
    Name(Ident, Binding),
    /// The expression was rejected; the error is recorded and these tokens are never emitted.
    Invalid,
}

impl Value {
    /// The value as an operand: an expression of type `&V`.
    fn operand(&self) -> TokenStream {
        match self {
            Value::Node(node) => quote!(&#node),
            Value::Name(name, Binding::Param) => quote!(#name),
            Value::Name(name, _) => quote!(&#name),
            Value::Invalid => TokenStream::new(),
        }
    }

    /// The value as an owned `V`: a node, or another handle to a named node.
    fn owned(&self) -> TokenStream {
        match self {
            Value::Node(node) => node.clone(),
            Value::Name(name, Binding::Param) => quote!(::core::clone::Clone::clone(#name)),
            Value::Name(name, _) => quote!(::core::clone::Clone::clone(&#name)),
            Value::Invalid => TokenStream::new(),
        }
    }

    /// The value as the function's `Result`: a node's last call returns one already (its
    /// final `?` is dropped, rather than writing `Ok(call?)`); a name is wrapped in `Ok`.
    fn result(&self) -> TokenStream {
        if let Value::Node(node) = self {
            let mut tokens: Vec<TokenTree> = node.clone().into_iter().collect();
            if matches!(tokens.last(), Some(TokenTree::Punct(punct)) if punct.as_char() == '?') {
                tokens.pop();
                return tokens.into_iter().collect();
            }
        }
        let owned = self.owned();
        quote!(::core::result::Result::Ok(#owned))
    }

    fn is_valid(&self) -> bool {
        !matches!(self, Value::Invalid)
    }
}

/// Rewrites a function body into the body of the generated `_graph` function, recording
/// every unsupported construct in `errors`.
///
/// `returns_value` is false when the signature has no return type: that is reported once
/// by the signature check, so a body without a result is not reported again.
pub(crate) fn graph_body(
    block: &Block,
    params: &[Option<Param>],
    returns_value: bool,
    errors: &mut Errors,
) -> TokenStream {
    let mut rewriter = Rewriter {
        errors,
        scopes: vec![Vec::new()],
        returns_value,
        rejected: false,
    };
    let mut prologue = TokenStream::new();
    for param in params.iter().flatten() {
        let ident = &param.ident;
        if param.mutability.is_some() {
            // A reassigned parameter needs an owned handle: another handle to the same node.
            prologue.extend(quote!(let mut #ident = ::core::clone::Clone::clone(#ident);));
            rewriter.declare(ident, Binding::Local);
        } else {
            rewriter.declare(ident, Binding::Param);
        }
    }
    let body = rewriter.function_body(block);
    if rewriter.rejected && rewriter.errors.is_empty() {
        // Unreachable by construction (every rejection is reported); never emit broken code.
        rewriter.errors.push(syn::Error::new(
            block.brace_token.span.open(),
            "internal error in #[differentiable]: a part of this body was rejected without a \
             message; please report this function",
        ));
    }
    quote!({ #prologue #body })
}

struct Rewriter<'a> {
    errors: &'a mut Errors,
    /// Names in scope, innermost block last, latest binding last.
    scopes: Vec<Vec<(Ident, Binding)>>,
    /// Whether the signature declares a result (see [`graph_body`]).
    returns_value: bool,
    /// Whether any part of the body was rejected (and so produced `Value::Invalid`).
    rejected: bool,
}

impl Rewriter<'_> {
    /// The value of a rejected expression.
    fn invalid(&mut self) -> Value {
        self.rejected = true;
        Value::Invalid
    }

    fn declare(&mut self, ident: &Ident, binding: Binding) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((ident.clone(), binding));
        }
    }

    fn lookup(&self, ident: &Ident) -> Option<Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(name, _)| name == ident)
            .map(|(_, binding)| *binding)
    }

    /// The binding a path names, if it is a single name in scope.
    fn local_name(&self, path: &ExprPath) -> Option<(Ident, Binding)> {
        if path.qself.is_some() {
            return None;
        }
        let ident = path.path.get_ident()?;
        self.lookup(ident).map(|binding| (ident.clone(), binding))
    }

    /// The function's body: its statements, then its result.
    fn function_body(&mut self, block: &Block) -> TokenStream {
        let mut out = TokenStream::new();
        let Some((last, init)) = block.stmts.split_last() else {
            self.missing_result(block);
            return out;
        };
        for stmt in init {
            out.extend(self.stmt(stmt));
        }
        match last {
            Stmt::Expr(Expr::Return(ret), _) if ret.expr.is_some() => {
                out.extend(self.return_stmt(ret));
            }
            Stmt::Expr(expr, None) => out.extend(self.expr(expr).result()),
            Stmt::Expr(expr, Some(_)) if is_value_statement(expr) => {
                self.expr(expr);
                self.missing_result(block);
            }
            stmt => {
                out.extend(self.stmt(stmt));
                self.missing_result(block);
            }
        }
        out
    }

    fn missing_result(&mut self, block: &Block) {
        if self.returns_value {
            self.errors.push(unsupported::missing_result(block));
        }
    }

    fn stmt(&mut self, stmt: &Stmt) -> TokenStream {
        match stmt {
            Stmt::Local(local) if simple_local(local).is_some() => self.local(local),
            Stmt::Expr(Expr::Assign(assign), Some(semi)) if self.assignable(&assign.left) => {
                let target = &assign.left;
                let owned = self.expr(&assign.right).owned();
                quote_spanned!(assign.eq_token.span=> #target = #owned #semi)
            }
            Stmt::Expr(Expr::Binary(binary), Some(semi))
                if compound(&binary.op).is_some() && self.assignable(&binary.left) =>
            {
                let target = &binary.left;
                let method = Ident::new(compound(&binary.op).unwrap_or("add"), binary.op.span());
                let operand = self.expr(&binary.right).operand();
                let backend = backend();
                quote_spanned!(binary.op.span()=> #target = #backend.#method(&#target, #operand)? #semi)
            }
            Stmt::Expr(Expr::Return(ret), _) if ret.expr.is_some() => self.return_stmt(ret),
            Stmt::Expr(Expr::Block(block), _)
                if block.label.is_none() && block.attrs.is_empty() =>
            {
                self.scopes.push(Vec::new());
                let stmts: TokenStream = block.block.stmts.iter().map(|s| self.stmt(s)).collect();
                self.scopes.pop();
                quote!({ #stmts })
            }
            Stmt::Item(Item::Const(_) | Item::Use(_)) => stmt.to_token_stream(),
            _ => {
                self.unsupported_stmt(stmt);
                TokenStream::new()
            }
        }
    }

    /// The catch-all of [`Rewriter::stmt`]: reports the statement, then looks inside it for
    /// further offending spots.
    fn unsupported_stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => {
                self.errors.push(unsupported::stmt(stmt));
                if let Some(init) = &local.init {
                    self.expr(&init.expr);
                }
                let pat = match &local.pat {
                    Pat::Type(typed) => &*typed.pat,
                    pat => pat,
                };
                if let Pat::Ident(pat) = pat {
                    self.declare(&pat.ident, Binding::Rejected);
                }
            }
            Stmt::Expr(Expr::Assign(assign), Some(_)) => {
                self.errors
                    .push(unsupported::assignment_target(&assign.left));
                self.expr(&assign.right);
            }
            Stmt::Expr(Expr::Binary(binary), Some(_)) if compound(&binary.op).is_some() => {
                self.errors
                    .push(unsupported::assignment_target(&binary.left));
                self.expr(&binary.right);
            }
            Stmt::Expr(expr @ Expr::Binary(binary), Some(_)) if is_assign_op(&binary.op) => {
                self.errors.push(unsupported::expr(expr));
                self.expr(&binary.right);
            }
            Stmt::Expr(expr, _) => {
                if self.expr(expr).is_valid() {
                    self.errors.push(unsupported::discarded(expr));
                }
            }
            _ => self.errors.push(unsupported::stmt(stmt)),
        }
    }

    fn local(&mut self, local: &Local) -> TokenStream {
        let Some((ident, mutability, init)) = simple_local(local) else {
            return TokenStream::new();
        };
        let value = self.expr(init);
        let owned = value.owned();
        let attrs = &local.attrs;
        let Some(ident) = ident else {
            return quote_spanned!(local.let_token.span=> #(#attrs)* let _ = #owned;);
        };
        let binding = match (value.is_valid(), mutability) {
            (false, _) => Binding::Rejected,
            (true, Some(_)) => Binding::Local,
            (true, None) => Binding::Fixed,
        };
        self.declare(ident, binding);
        quote_spanned!(local.let_token.span=> #(#attrs)* let #mutability #ident = #owned;)
    }

    fn return_stmt(&mut self, ret: &ExprReturn) -> TokenStream {
        let result = match &ret.expr {
            Some(expr) => self.expr(expr).result(),
            None => TokenStream::new(),
        };
        let return_token = &ret.return_token;
        quote!(#return_token #result;)
    }

    /// Whether `target` names a local that the graph function may rebind.
    fn assignable(&self, target: &Expr) -> bool {
        match target {
            Expr::Path(path) => matches!(
                self.local_name(path),
                Some((_, Binding::Local | Binding::Rejected))
            ),
            _ => false,
        }
    }

    fn expr(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Lit(lit) if is_f64_literal(&lit.lit) => constant(&lit.lit, lit.lit.span()),
            Expr::Path(path) if self.local_name(path).is_some() => match self.local_name(path) {
                // A rejected binding was reported where it was declared.
                Some((_, Binding::Rejected)) | None => self.invalid(),
                Some((ident, binding)) => Value::Name(ident, binding),
            },
            Expr::Path(path) if is_constant_path(path) => constant(path, path.span()),
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => self.negate(unary),
            Expr::Binary(binary) if arithmetic(&binary.op).is_some() => {
                let left = self.expr(&binary.left);
                let right = self.expr(&binary.right);
                let span = binary.op.span();
                let method = Ident::new(arithmetic(&binary.op).unwrap_or("add"), span);
                node(&[&left, &right], |[left, right]| {
                    let (left, right) = (left.operand(), right.operand());
                    let backend = backend();
                    quote_spanned!(span=> #backend.#method(#left, #right)?)
                })
            }
            Expr::MethodCall(call) if self.method_shape(call).is_some() => {
                let shape = self.method_shape(call).unwrap_or(Shape::Unary);
                let args: Vec<&Expr> = call.args.iter().collect();
                self.operation(&call.method, shape, &call.receiver, &args)
            }
            Expr::Call(call) if self.function_shape(call).is_some() => {
                let shape = self.function_shape(call).unwrap_or(Shape::Unary);
                let args: Vec<&Expr> = call.args.iter().collect();
                match (f64_function(call), args.split_first()) {
                    (Some(name), Some((receiver, rest))) => {
                        self.operation(name, shape, receiver, rest)
                    }
                    _ => self.invalid(),
                }
            }
            Expr::Block(block) if is_value_block(block) => self.value_block(block),
            _ => self.unsupported(expr),
        }
    }

    /// The catch-all of [`Rewriter::expr`]: reports the expression, then looks inside it
    /// for further offending spots where its parts are `f64` expressions too.
    fn unsupported(&mut self, expr: &Expr) -> Value {
        if let Expr::Call(call) = expr {
            if let Expr::Path(callee) = &*call.func {
                if matches!(self.local_name(callee), Some((_, Binding::Rejected))) {
                    // Calling a rejected binding (such as a closure): reported already.
                    return self.invalid();
                }
            }
        }
        self.errors.push(unsupported::expr(expr));
        match expr {
            Expr::MethodCall(call) => {
                self.expr(&call.receiver);
            }
            Expr::Binary(binary) if !matches!(binary.op, BinOp::And(_) | BinOp::Or(_)) => {
                self.expr(&binary.left);
                self.expr(&binary.right);
            }
            Expr::Cast(cast) => {
                self.expr(&cast.expr);
            }
            Expr::Reference(reference) => {
                self.expr(&reference.expr);
            }
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => {
                self.expr(&unary.expr);
            }
            _ => {}
        }
        self.invalid()
    }

    fn negate(&mut self, unary: &ExprUnary) -> Value {
        let op = &unary.op;
        if let Expr::Lit(lit) = &*unary.expr {
            if is_f64_literal(&lit.lit) {
                // `-2.0` is the literal -2.0 in Rust too: one constant, not a negation node.
                let lit = &lit.lit;
                return constant(quote!(#op #lit), op.span());
            }
        }
        let inner = self.expr(&unary.expr);
        let span = op.span();
        node(&[&inner], |[inner]| {
            let (inner, backend) = (inner.operand(), backend());
            quote_spanned!(span=> #backend.neg(#inner)?)
        })
    }

    /// The shape of a supported method call, or `None` to send it to the catch-all.
    fn method_shape(&self, call: &ExprMethodCall) -> Option<Shape> {
        if call.turbofish.is_some() {
            return None;
        }
        let shape = ops::shape(&call.method.to_string())?;
        let args: Vec<&Expr> = call.args.iter().collect();
        self.accepts(shape, &call.receiver, &args, true)
            .then_some(shape)
    }

    /// The shape of a supported `f64::name(x, ..)` call, or `None`.
    fn function_shape(&self, call: &ExprCall) -> Option<Shape> {
        let shape = ops::shape(&f64_function(call)?.to_string())?;
        let args: Vec<&Expr> = call.args.iter().collect();
        let (receiver, rest) = args.split_first()?;
        self.accepts(shape, receiver, rest, false).then_some(shape)
    }

    fn accepts(&self, shape: Shape, receiver: &Expr, args: &[&Expr], method_form: bool) -> bool {
        if args.len() + 1 != shape.operands() {
            return false;
        }
        match shape {
            Shape::Detach => method_form,
            Shape::Stepwise => is_detach_call(receiver),
            Shape::Powi => args
                .first()
                .is_some_and(|exponent| self.constant_integer(exponent)),
            Shape::Unary | Shape::Binary | Shape::MulAdd => true,
        }
    }

    /// Records the operation `name` of the given shape on `receiver` and `args`.
    fn operation(&mut self, name: &Ident, shape: Shape, receiver: &Expr, args: &[&Expr]) -> Value {
        let span = name.span();
        match shape {
            Shape::Stepwise => {
                // `inner.detach().floor()`: a constant computed from inner's value; the
                // detach node itself is not needed.
                let inner = self.expr(detach_receiver(receiver));
                node(&[&inner], |[inner]| {
                    let (inner, backend) = (inner.operand(), backend());
                    quote_spanned!(span=>
                        #backend.constant(::core::primitive::f64::#name(#backend.value(#inner)))?
                    )
                })
            }
            Shape::Powi => {
                let base = self.expr(receiver);
                let exponent = args.first();
                node(&[&base], |[base]| {
                    let (base, backend) = (base.operand(), backend());
                    quote_spanned!(span=> #backend.#name(#base, #exponent)?)
                })
            }
            Shape::Unary | Shape::Binary | Shape::MulAdd | Shape::Detach => {
                let base = self.expr(receiver);
                let operands: Vec<Value> = args.iter().map(|arg| self.expr(arg)).collect();
                if !base.is_valid() || !operands.iter().all(Value::is_valid) {
                    return self.invalid();
                }
                let (base, backend) = (base.operand(), backend());
                let operands = operands.iter().map(Value::operand);
                Value::Node(quote_spanned!(span=> #backend.#name(#base #(, #operands)*)?))
            }
        }
    }

    /// A nested block used as a value: its statements in a new scope, then its value.
    fn value_block(&mut self, block: &ExprBlock) -> Value {
        let Some((Stmt::Expr(tail, None), init)) = block.block.stmts.split_last() else {
            return self.invalid();
        };
        self.scopes.push(Vec::new());
        let stmts: TokenStream = init.iter().map(|stmt| self.stmt(stmt)).collect();
        let tail = self.expr(tail);
        self.scopes.pop();
        node(&[&tail], |[tail]| {
            let mut owned = tail.owned();
            if starts_with_brace(&owned) {
                // A tail such as `{ .. }.exp()?` would parse as a block statement.
                owned = quote!((#owned));
            }
            quote!({ #stmts #owned })
        })
    }

    /// Whether `expr` is an integer known without the tracked values (for `powi`).
    fn constant_integer(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(lit) => {
                matches!(&lit.lit, Lit::Int(int) if matches!(int.suffix(), "" | "i32"))
            }
            Expr::Unary(unary) => {
                matches!(unary.op, UnOp::Neg(_)) && self.constant_integer(&unary.expr)
            }
            Expr::Paren(paren) => self.constant_integer(&paren.expr),
            Expr::Group(group) => self.constant_integer(&group.expr),
            Expr::Path(path) => is_constant_path(path) && self.local_name(path).is_none(),
            Expr::Binary(binary) => {
                matches!(
                    binary.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
                ) && self.constant_integer(&binary.left)
                    && self.constant_integer(&binary.right)
            }
            _ => false,
        }
    }
}

/// The generated body's backend parameter, invisible to the user's names.
pub(crate) fn backend() -> Ident {
    Ident::new("__backend", proc_macro2::Span::mixed_site())
}

/// A new node from valid parts, or `Invalid` if any part was rejected.
fn node<const N: usize>(
    parts: &[&Value; N],
    build: impl FnOnce([&Value; N]) -> TokenStream,
) -> Value {
    if parts.iter().all(|part| part.is_valid()) {
        Value::Node(build(*parts))
    } else {
        Value::Invalid
    }
}

/// A constant leaf holding the `f64` that `tokens` evaluate to.
fn constant(tokens: impl ToTokens, span: proc_macro2::Span) -> Value {
    let backend = backend();
    Value::Node(quote_spanned!(span=> #backend.constant(#tokens)?))
}

fn is_f64_literal(lit: &Lit) -> bool {
    matches!(lit, Lit::Float(float) if matches!(float.suffix(), "" | "f64"))
}

/// A path that names a constant (`PI`, `std::f64::consts::E`, `f64::EPSILON`).
fn is_constant_path(path: &ExprPath) -> bool {
    path.qself.is_none()
        && path
            .path
            .segments
            .iter()
            .all(|segment| segment.arguments.is_none())
}

/// `let name = value;`, `let mut name = value;`, `let name: f64 = value;` or
/// `let _ = value;` (no name).
fn simple_local(local: &Local) -> Option<(Option<&Ident>, Option<Token![mut]>, &Expr)> {
    let init = local.init.as_ref()?;
    if init.diverge.is_some() {
        return None;
    }
    let pat = match &local.pat {
        Pat::Type(typed) if is_f64(&typed.ty) => &*typed.pat,
        Pat::Type(_) => return None,
        pat => pat,
    };
    match pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
            Some((Some(&pat.ident), pat.mutability, &init.expr))
        }
        Pat::Wild(_) => Some((None, None, &init.expr)),
        _ => None,
    }
}

fn is_value_block(block: &ExprBlock) -> bool {
    block.label.is_none()
        && block.attrs.is_empty()
        && matches!(
            block.block.stmts.last(),
            Some(Stmt::Expr(tail, None)) if !matches!(tail, Expr::Return(_))
        )
}

/// Whether a final statement `expr;` would have been the result without its `;`.
fn is_value_statement(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_) | Expr::Return(_) | Expr::Block(_) | Expr::Macro(_) => false,
        Expr::Binary(binary) => !is_assign_op(&binary.op),
        _ => true,
    }
}

fn arithmetic(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::Add(_) => Some("add"),
        BinOp::Sub(_) => Some("sub"),
        BinOp::Mul(_) => Some("mul"),
        BinOp::Div(_) => Some("div"),
        _ => None,
    }
}

fn compound(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::AddAssign(_) => Some("add"),
        BinOp::SubAssign(_) => Some("sub"),
        BinOp::MulAssign(_) => Some("mul"),
        BinOp::DivAssign(_) => Some("div"),
        _ => None,
    }
}

fn is_assign_op(op: &BinOp) -> bool {
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

fn unparenthesized(mut expr: &Expr) -> &Expr {
    loop {
        match expr {
            Expr::Paren(paren) => expr = &paren.expr,
            Expr::Group(group) => expr = &group.expr,
            _ => return expr,
        }
    }
}

/// Whether `expr` is `value.detach()` (possibly in parentheses).
pub(crate) fn is_detach_call(expr: &Expr) -> bool {
    matches!(
        unparenthesized(expr),
        Expr::MethodCall(call)
            if call.method == "detach" && call.args.is_empty() && call.turbofish.is_none()
    )
}

/// The `value` of `value.detach()`.
fn detach_receiver(expr: &Expr) -> &Expr {
    match unparenthesized(expr) {
        Expr::MethodCall(call) => &call.receiver,
        expr => expr,
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

fn starts_with_brace(tokens: &TokenStream) -> bool {
    matches!(
        tokens.clone().into_iter().next(),
        Some(TokenTree::Group(group)) if group.delimiter() == Delimiter::Brace
    )
}
