//! Expressions in value position: names, parameter-array elements, arithmetic, the
//! runtime's methods, blocks and branches.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{BinOp, Expr, ExprBinary, ExprCall, ExprMethodCall, ExprUnary, Ident, UnOp};

use crate::ops::{self, Shape};
use crate::rewrite::mentions::Scan;
use crate::rewrite::unsupported;
use crate::rewrite::value::Value;
use crate::rewrite::{
    arithmetic, backend, f64_function, is_logic, without_parens, Binding, Rewriter,
};

impl Rewriter<'_> {
    /// Rewrites an expression in value position.
    pub(crate) fn expr(&mut self, expr: &Expr) -> Value {
        let scan = self.scan(expr);
        if scan.is_plain() {
            return self.plain(expr);
        }
        if !scan.tracked && !scan.detached {
            return self.returning(expr);
        }
        if scan.is_primal() {
            // Computed from data, constants and detached values only: data itself, plain
            // Rust on primal values (so `m = m.max(z.detach())` keeps `m` data).
            return self.primal_value(expr, &scan);
        }
        match expr {
            Expr::Path(path) if self.local_name(path).is_some() => match self.local_name(path) {
                // A rejected binding was reported where it was declared.
                Some((_, Binding::Rejected)) | None => self.invalid(),
                Some((_, Binding::Plain(_))) => self.plain(expr),
                Some((ident, binding)) => Value::Name(ident, binding),
            },
            Expr::Index(_) | Expr::Field(_) if self.is_tracked_place(expr) => {
                match self.place(expr) {
                    Some(place) => Value::Element(place),
                    None => self.invalid(),
                }
            }
            Expr::Array(array) => self.array_literal(array),
            Expr::Repeat(repeat) => self.repeat(repeat),
            Expr::MethodCall(call) if self.fold_kind(call).is_some() => self.fold(call),
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => self.negate(unary),
            Expr::Unary(unary) if matches!(unary.op, UnOp::Not(_)) => {
                self.primal_value(expr, &scan)
            }
            Expr::Binary(binary) if is_logic(&binary.op) => self.primal_value(expr, &scan),
            Expr::Binary(binary) if arithmetic(&binary.op).is_some() => self.arithmetic(binary),
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
            Expr::Call(call) if scan.tracked && self.composable(call) => self.compose(call),
            Expr::MethodCall(call) if self.pushes(call) => self.push(call),
            Expr::MethodCall(call) if self.composable_method(call) => self.compose_method(call),
            Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                self.block_value(&block.block)
            }
            Expr::If(branch) if branch.else_branch.is_some() => self.if_value(branch),
            Expr::Match(branch) => self.match_value(branch),
            Expr::Return(ret) if ret.expr.is_some() => Value::Diverge(self.return_expr(ret)),
            _ => self.unsupported(expr, &scan),
        }
    }

    /// An expression that mentions nothing tracked but returns from the function inside:
    /// only branches and blocks can hold such a `return`.
    fn returning(&mut self, expr: &Expr) -> Value {
        match expr {
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                self.block_value(&block.block)
            }
            Expr::If(branch) if branch.else_branch.is_some() => self.if_value(branch),
            Expr::Match(branch) => self.match_value(branch),
            Expr::Return(ret) if ret.expr.is_some() => Value::Diverge(self.return_expr(ret)),
            _ => {
                self.errors.push(unsupported::nested_return(expr));
                self.invalid()
            }
        }
    }

    /// A `bool` (or other plain value) computed on primal values, such as `x > 0.0`.
    pub(crate) fn primal_value(&mut self, expr: &Expr, scan: &Scan) -> Value {
        match self.primal(expr, scan) {
            Some(tokens) => Value::Plain(tokens, None),
            None => self.invalid(),
        }
    }

    /// The catch-all of [`Rewriter::expr`]: evaluates an expression whose tracked names are
    /// all detached on primal values; otherwise reports it, then looks inside it for further
    /// offending spots where its parts are `f64` expressions too.
    fn unsupported(&mut self, expr: &Expr, scan: &Scan) -> Value {
        if scan.is_primal() {
            return self.primal_value(expr, scan);
        }
        if !scan.live {
            // It uses only bindings that were rejected (and reported) already.
            return self.invalid();
        }
        if let Expr::Call(call) = expr {
            if let Expr::Path(callee) = &*call.func {
                match self.local_name(callee) {
                    // Calling a rejected binding: reported already.
                    Some((_, Binding::Rejected)) => return self.invalid(),
                    Some(_) => {
                        self.errors.push(unsupported::local_call(call));
                        return self.invalid();
                    }
                    None => {}
                }
            }
        }
        if let Expr::Index(index) = expr {
            if self.scan(&index.index).tracked {
                self.errors.push(unsupported::tracked_index(&index.index));
                return self.invalid();
            }
        }
        if let Some(error) = self.inner_culprit(expr) {
            // A closure or macro over tracked values inside, such as
            // `xs.iter().map(|v| v * x).sum()`: that is the lesson, not the method.
            self.errors.push(error);
            return self.invalid();
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
            // A cast's operand is not searched further: `(x as i32) as f64` is one lesson.
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

    /// The first closure or macro call strictly inside `expr` that uses tracked values.
    fn inner_culprit(&self, expr: &Expr) -> Option<syn::Error> {
        struct Find<'r, 'a> {
            rewriter: &'r Rewriter<'a>,
            found: Option<syn::Error>,
        }
        impl<'ast> Visit<'ast> for Find<'_, '_> {
            fn visit_expr(&mut self, expr: &'ast Expr) {
                if self.found.is_some() {
                    return;
                }
                match expr {
                    Expr::Closure(_) | Expr::Macro(_) if self.rewriter.scan(expr).tracked => {
                        self.found = Some(unsupported::expr(expr));
                    }
                    _ => visit::visit_expr(self, expr),
                }
            }
            fn visit_item(&mut self, _item: &'ast syn::Item) {}
        }
        if matches!(expr, Expr::Closure(_) | Expr::Macro(_)) {
            return None;
        }
        let mut find = Find {
            rewriter: self,
            found: None,
        };
        visit::visit_expr(&mut find, expr);
        find.found
    }

    /// `[a, b, c]` with tracked elements: an array of nodes (data elements become
    /// constants).
    fn array_literal(&mut self, array: &syn::ExprArray) -> Value {
        let elements: Vec<Value> = array
            .elems
            .iter()
            .map(|element| match without_parens(element) {
                // A row of data beside tracked rows (`[[x, 1.0], [2.0, 0.5]]`): its
                // elements become constants one by one, as the tracked rows' are.
                Expr::Array(row) => self.array_literal(row),
                Expr::Repeat(row) => self.repeat(row),
                // Data named or computed (`c`, or a row `r` in `[r, m[k]]`): constants of its
                // shape, which only rustc knows. (A float literal stays one constant, whose
                // type needs no inference.)
                element => match self.expr(element) {
                    Value::Plain(plain, None) if !literal_only(element) => {
                        let backend = backend();
                        Value::Node(quote!(
                            ::scalar_autodiff::__private::constant_element(#backend, #plain)?
                        ))
                    }
                    // An element of a parameter array (`[v[2], v[0] * y]`): a copy of its
                    // own, as a statement's (see `Rewriter::copy_of`).
                    value @ Value::Element(_) if self.copies_element(element) => {
                        Value::Node(value.copied())
                    }
                    // A tracked name (`[x, 1.0]`): a copy of its own too, as `let v = x;`
                    // makes one.
                    value @ Value::Name(_, Binding::Param | Binding::Local | Binding::Fixed) => {
                        Value::Node(value.copied())
                    }
                    value => self.track(value),
                },
            })
            .collect();
        if !elements.iter().all(Value::is_valid) {
            return self.invalid();
        }
        let owned = elements.iter().map(Value::owned);
        Value::Node(quote_spanned!(array.bracket_token.span.join()=> [#(#owned),*]))
    }

    /// `[value; N]` with a tracked value: `N` copies of it (of data: `N` uses of one
    /// constant).
    fn repeat(&mut self, repeat: &syn::ExprRepeat) -> Value {
        let value = self.expr(&repeat.expr);
        let constant = matches!(value, Value::Plain(..));
        let value = self.track(value);
        let len = self.untracked(&repeat.len, unsupported::tracked_index);
        let (Some(len), true) = (len, value.is_valid()) else {
            return self.invalid();
        };
        let owned = value.owned();
        // A const argument in braces of the macro's own (a literal's braces spanned at the
        // user's code would draw rustc's `unused_braces` there).
        let mut len = proc_macro2::Group::new(proc_macro2::Delimiter::Brace, len);
        len.set_span(proc_macro2::Span::mixed_site());
        if !constant {
            let (backend, operand) = (backend(), value.operand());
            return Value::Node(quote_spanned!(repeat.bracket_token.span.join()=>
                ::scalar_autodiff::__private::repeated::<_, _, #len>(#backend, #operand)?
            ));
        }
        Value::Node(quote_spanned!(repeat.bracket_token.span.join()=>
            ::scalar_autodiff::__private::repeat::<_, #len>(#owned)
        ))
    }

    /// `value` where an operation needs one tracked scalar: an array, slice or struct
    /// parameter named whole is reported.
    pub(crate) fn scalar_operand(&mut self, value: Value, expr: &Expr) -> Value {
        if let Value::Name(_, Binding::Array) = value {
            self.errors.push(unsupported::whole_array(expr));
            return self.invalid();
        }
        self.track(value)
    }

    fn negate(&mut self, unary: &ExprUnary) -> Value {
        let op = &unary.op;
        let inner = self.expr(&unary.expr);
        let inner = self.scalar_operand(inner, &unary.expr);
        let span = op.span();
        self.node(vec![inner], |operands| {
            let backend = backend();
            quote_spanned!(span=> #backend.neg(#(#operands),*)?)
        })
    }

    fn arithmetic(&mut self, binary: &ExprBinary) -> Value {
        let left = self.expr(&binary.left);
        let right = self.expr(&binary.right);
        let left = self.scalar_operand(left, &binary.left);
        let right = self.scalar_operand(right, &binary.right);
        let span = binary.op.span();
        let method = Ident::new(arithmetic(&binary.op).unwrap_or("add"), span);
        self.node(vec![left, right], |operands| {
            let backend = backend();
            quote_spanned!(span=> #backend.#method(#(#operands),*)?)
        })
    }

    /// The shape of a supported method call, or `None` to send it to the catch-all.
    fn method_shape(&self, call: &ExprMethodCall) -> Option<Shape> {
        if call.turbofish.is_some() {
            return None;
        }
        let shape = ops::shape(&call.method.to_string())?;
        let args: Vec<&Expr> = call.args.iter().collect();
        self.accepts(shape, &args).then_some(shape)
    }

    /// The shape of a supported `f64::name(x, ..)` call, or `None`.
    fn function_shape(&self, call: &ExprCall) -> Option<Shape> {
        let shape = ops::shape(&f64_function(call)?.to_string())?;
        let args: Vec<&Expr> = call.args.iter().collect();
        let (_receiver, rest) = args.split_first()?;
        self.accepts(shape, rest).then_some(shape)
    }

    fn accepts(&self, shape: Shape, args: &[&Expr]) -> bool {
        if args.len() + 1 != shape.operands() {
            return false;
        }
        match shape {
            // `x.detach()` and a stepwise method on a detached value are data, evaluated
            // before this (see `expr`); `f64::detach(x)` and `x.floor()` on a tracked value
            // are rejected.
            Shape::Detach | Shape::Stepwise => false,
            Shape::Powi => args.first().is_some_and(|exponent| {
                let scan = self.scan(exponent);
                !scan.tracked && !scan.returns
            }),
            Shape::Unary | Shape::Binary | Shape::MulAdd => true,
        }
    }

    /// Records the operation `name` of the given shape on `receiver` and `args`.
    fn operation(&mut self, name: &Ident, shape: Shape, receiver: &Expr, args: &[&Expr]) -> Value {
        let span = name.span();
        match shape {
            Shape::Powi => {
                let base = self.expr(receiver);
                let base = self.scalar_operand(base, receiver);
                let exponent = match args.first() {
                    Some(exponent) => self.untracked(exponent, unsupported::expr),
                    None => None,
                };
                let Some(exponent) = exponent else {
                    return self.invalid();
                };
                self.node(vec![base], |operands| {
                    let backend = backend();
                    quote_spanned!(span=> #backend.#name(#(#operands),*, #exponent)?)
                })
            }
            Shape::Unary | Shape::Binary | Shape::MulAdd | Shape::Detach | Shape::Stepwise => {
                let base = self.expr(receiver);
                let base = self.scalar_operand(base, receiver);
                let operands: Vec<Value> = args
                    .iter()
                    .map(|arg| {
                        let value = self.expr(arg);
                        self.scalar_operand(value, arg)
                    })
                    .collect();
                let parts: Vec<Value> = std::iter::once(base).chain(operands).collect();
                self.node(parts, |operands| {
                    let backend = backend();
                    quote_spanned!(span=> #backend.#name(#(#operands),*)?)
                })
            }
        }
    }

    /// A nested block used as a value: its statements in a new scope, then its value.
    pub(crate) fn block_value(&mut self, block: &syn::Block) -> Value {
        let (stmts, tail) = self.value_block(block);
        match tail {
            Value::Invalid => Value::Invalid,
            Value::Plain(tail, _) => Value::Plain(quote!({ #stmts #tail }), None),
            Value::Diverge(tail) => Value::Diverge(quote!({ #stmts #tail })),
            tail => {
                let mut owned = tail.owned();
                if starts_with_brace(&owned) {
                    // A tail such as `{ .. }.exp()?` would parse as a block statement.
                    owned = quote!((#owned));
                }
                Value::Node(quote!({ #stmts #owned }))
            }
        }
    }

    /// The tokens of an expression that must not be tracked (an index, a bound, an
    /// exponent): as written if it is plain, on primal values if its tracked names are all
    /// detached. Reports `tracked(expr)` if it is tracked.
    pub(crate) fn untracked(
        &mut self,
        expr: &Expr,
        tracked: impl FnOnce(&Expr) -> syn::Error,
    ) -> Option<TokenStream> {
        let scan = self.scan(expr);
        if scan.is_plain() {
            Some(crate::emit::plain::strip_detach_expr(without_parens(expr)).into_token_stream())
        } else if scan.tracked {
            if scan.live {
                self.errors.push(tracked(expr));
            }
            self.rejected = true;
            None
        } else {
            self.primal(expr, &scan)
        }
    }
}

fn starts_with_brace(tokens: &TokenStream) -> bool {
    matches!(
        tokens.clone().into_iter().next(),
        Some(proc_macro2::TokenTree::Group(group))
            if group.delimiter() == proc_macro2::Delimiter::Brace
    )
}

/// Whether `expr` is made of literals alone (`2.0`, `-1.5 * 3.0`): a float of a type
/// rustc infers.
fn literal_only(expr: &Expr) -> bool {
    match without_parens(expr) {
        Expr::Lit(_) => true,
        Expr::Unary(unary) => literal_only(&unary.expr),
        Expr::Binary(binary) => literal_only(&binary.left) && literal_only(&binary.right),
        _ => false,
    }
}
