//! Statements: `let`, assignments, `return`, blocks and expression statements, and the
//! function's body with its result.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Block, Expr, ExprAssign, ExprBinary, ExprReturn, Item, Local, Pat, Stmt, Token};

use crate::emit::plain::strip_detach_expr;
use crate::parse::signature::{is_f64, is_f64_array};
use crate::rewrite::growable;
use crate::rewrite::mentions::{macro_mentions, Tracked};
use crate::rewrite::unsupported;
use crate::rewrite::value::Value;
use crate::rewrite::{backend, compound, is_assign_op, unparenthesized, Binding, Rewriter};

/// What the left side of an assignment names.
enum Target {
    /// A tracked local that may be rebound, or an element or field of one (`h[i]`); the
    /// place's tokens.
    Tracked(TokenStream),
    /// Plain data: a local (with its declaration's key, if it could be promoted), or a
    /// place such as `buf[i]`.
    Plain(Option<usize>),
    /// Not assignable here; the error to report, if not reported already.
    Rejected(Option<syn::Error>),
}

impl Rewriter<'_> {
    /// The function's body: its statements, then its result.
    pub(crate) fn function_body(&mut self, block: &Block) -> TokenStream {
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
            // A final `loop` that leaves only by `return`.
            Stmt::Expr(Expr::Loop(_), None) => out.extend(self.stmt(last)),
            Stmt::Expr(expr, None) => {
                let value = self.expr(expr);
                let value = self.track(value);
                if value.is_valid() {
                    out.extend(value.result());
                }
            }
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

    /// A block in statement position, in its own scope: `{ stmts }`.
    pub(crate) fn block_stmts(&mut self, block: &Block) -> TokenStream {
        self.push_scope();
        let stmts: TokenStream = block.stmts.iter().map(|stmt| self.stmt(stmt)).collect();
        self.pop_scope();
        quote_spanned!(block.brace_token.span.join()=> { #stmts })
    }

    /// A block in value position, in its own scope: its statements and its final value
    /// (`Diverge` if it ends by leaving, such as `return x;`).
    pub(crate) fn value_block(&mut self, block: &Block) -> (TokenStream, Value) {
        self.push_scope();
        let outcome = match block.stmts.split_last() {
            Some((Stmt::Expr(tail, None), init)) => {
                let stmts: TokenStream = init.iter().map(|stmt| self.stmt(stmt)).collect();
                (stmts, self.expr(tail))
            }
            Some((
                Stmt::Expr(Expr::Return(_) | Expr::Break(_) | Expr::Continue(_), Some(_)),
                _,
            )) => {
                let stmts: TokenStream = block.stmts.iter().map(|stmt| self.stmt(stmt)).collect();
                (stmts, Value::Diverge(TokenStream::new()))
            }
            _ => {
                let stmts: TokenStream = block.stmts.iter().map(|stmt| self.stmt(stmt)).collect();
                self.errors.push(unsupported::missing_value(block));
                (stmts, self.invalid())
            }
        };
        self.pop_scope();
        outcome
    }

    pub(crate) fn stmt(&mut self, stmt: &Stmt) -> TokenStream {
        match stmt {
            Stmt::Local(local) => self.local(local),
            Stmt::Expr(expr, semi) => self.stmt_expr(expr, semi.as_ref()),
            Stmt::Item(Item::Const(_) | Item::Use(_)) => stmt.to_token_stream(),
            Stmt::Macro(mac) => {
                let live = |name: &str| {
                    self.tracked_name(name)
                        .filter(|kind| *kind != Tracked::Rejected)
                };
                if macro_mentions(&mac.mac.tokens, &live) {
                    self.errors.push(unsupported::macro_call(&mac.mac));
                    self.rejected = true;
                    TokenStream::new()
                } else {
                    stmt.to_token_stream()
                }
            }
            Stmt::Item(_) => {
                self.errors.push(unsupported::stmt(stmt));
                TokenStream::new()
            }
        }
    }

    /// An expression statement (`semi` is `None` for the last one of a block in statement
    /// position): control flow keeps its shape, plain code stays as written, and a tracked
    /// value must be bound, assigned or returned.
    fn stmt_expr(&mut self, expr: &Expr, semi: Option<&Token![;]>) -> TokenStream {
        let scan = self.scan(expr);
        if scan.is_plain() {
            let expr = strip_detach_expr(expr);
            return quote!(#expr #semi);
        }
        match expr {
            Expr::Assign(assign) => self.assign(assign, semi),
            Expr::Binary(binary) if is_assign_op(&binary.op) => self.compound(binary, semi),
            Expr::Return(ret) => self.return_stmt(ret),
            Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                let block = self.block_stmts(&block.block);
                quote!(#block #semi)
            }
            Expr::If(branch) => {
                let branch = self.if_stmt(branch);
                quote!(#branch #semi)
            }
            Expr::Match(branch) => {
                let branch = self.match_stmt(branch);
                quote!(#branch #semi)
            }
            Expr::ForLoop(lp) => {
                let lp = self.for_loop(lp);
                quote!(#lp #semi)
            }
            Expr::While(lp) => {
                let lp = self.while_loop(lp);
                quote!(#lp #semi)
            }
            Expr::Loop(lp) => {
                let lp = self.loop_stmt(lp);
                quote!(#lp #semi)
            }
            Expr::Macro(mac) => {
                if scan.live {
                    self.errors.push(unsupported::macro_call(&mac.mac));
                }
                self.rejected = true;
                TokenStream::new()
            }
            _ if scan.is_primal() => match self.primal(expr, &scan) {
                Some(tokens) => quote!(#tokens #semi),
                None => TokenStream::new(),
            },
            _ => {
                let value = self.expr(expr);
                if value.is_tracked() {
                    self.errors.push(unsupported::discarded(expr));
                    self.rejected = true;
                    TokenStream::new()
                } else if value.is_valid() {
                    let tokens = value.plain();
                    quote!(#tokens #semi)
                } else {
                    TokenStream::new()
                }
            }
        }
    }

    fn local(&mut self, local: &Local) -> TokenStream {
        // The declaration's identity across passes: the address of its syntax node.
        let key = local as *const Local as usize;
        let attrs = &local.attrs;
        let (pat, ty) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        let single = match pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => Some(pat),
            _ => None,
        };
        let Some(init) = &local.init else {
            // `let name;`: declared now, assigned later.
            match single {
                Some(single) if self.is_promoted(key) => {
                    if ty.is_some_and(|ty| !is_f64(ty) && !is_f64_array(ty)) {
                        self.errors.push(unsupported::binding(local));
                        self.declare(&single.ident, Binding::Rejected);
                        return TokenStream::new();
                    }
                    let (mutability, ident) = (&single.mutability, &single.ident);
                    self.declare(ident, Binding::Local);
                    return quote_spanned!(local.let_token.span=> #(#attrs)* let #mutability #ident;);
                }
                Some(single) => self.declare(&single.ident, Binding::Plain(Some(key))),
                None => self.declare_plain(pat),
            }
            return local.to_token_stream();
        };
        if let Some((else_token, diverge)) = &init.diverge {
            // `let pattern = data else { .. };`
            let value = self.untracked(&init.expr, |expr| {
                unsupported::tracked_scrutinee(expr, "let ... else")
            });
            let diverge = match &**diverge {
                Expr::Block(block) => self.block_stmts(&block.block),
                expr => self.stmt_expr(expr, None),
            };
            let Some(value) = value else {
                self.declare_rejected(pat);
                return TokenStream::new();
            };
            self.declare_plain(pat);
            let (let_token, full_pat, eq) = (&local.let_token, &local.pat, &init.eq_token);
            return quote!(#(#attrs)* #let_token #full_pat #eq #value #else_token #diverge;);
        }
        if let Some(single) = single {
            // `let mut keys = Vec::new();` that a tracked value is pushed into (see
            // `growable`).
            if let (Some(start), true) = (growable::new_vec(&init.expr), self.is_promoted(key)) {
                let ident = &single.ident;
                let shape = ty.and_then(growable::element_shape);
                if ty.is_some() && shape.is_none() {
                    self.errors.push(unsupported::binding(local));
                    self.declare(ident, Binding::Rejected);
                    return TokenStream::new();
                }
                self.declare(ident, Binding::Local);
                let (mutability, start) =
                    (&single.mutability, growable::declaration(&start, shape));
                return quote_spanned!(local.let_token.span=>
                    #(#attrs)* let #mutability #ident = #start;
                );
            }
            let value = self.expr(&init.expr);
            let (mutability, ident) = (&single.mutability, &single.ident);
            let tracked = value.is_tracked() || (self.is_promoted(key) && value.is_valid());
            if tracked {
                if ty.is_some_and(|ty| !is_f64(ty) && !is_f64_array(ty)) {
                    self.errors.push(unsupported::binding(local));
                    self.declare(ident, Binding::Rejected);
                    return TokenStream::new();
                }
                let value = match value {
                    // Data a tracked local starts from: constants of its shape (`[0.0; N]`
                    // is `N` constants). A bare number stays a scalar constant, so that a
                    // float literal needs no type.
                    Value::Plain(plain, None)
                        if ty.is_some_and(is_f64_array)
                            || matches!(
                                unparenthesized(&init.expr),
                                Expr::Array(_) | Expr::Repeat(_) | Expr::Path(_)
                            )
                            || matches!(unparenthesized(&init.expr),
                                Expr::Macro(mac) if mac.mac.path.is_ident("vec")) =>
                    {
                        let backend = backend();
                        Value::Node(
                            quote!(::scalar_autodiff::__private::constants(#backend, #plain)?),
                        )
                    }
                    value => self.track(value),
                };
                if !value.is_valid() {
                    self.declare(ident, Binding::Rejected);
                    return TokenStream::new();
                }
                let binding = if mutability.is_some() {
                    Binding::Local
                } else {
                    Binding::Fixed
                };
                self.declare(ident, binding);
                let owned = self.copy_of(&value);
                return quote_spanned!(local.let_token.span=>
                    #(#attrs)* let #mutability #ident = #owned;
                );
            }
            if !value.is_valid() {
                self.declare(ident, Binding::Rejected);
                return TokenStream::new();
            }
            self.declare(ident, Binding::Plain(Some(key)));
            let (full_pat, plain) = (&local.pat, value.plain());
            return quote_spanned!(local.let_token.span=> #(#attrs)* let #full_pat = #plain;);
        }
        if let Pat::Wild(_) = pat {
            // `let _ = value;`
            let value = self.expr(&init.expr);
            if !value.is_valid() {
                return TokenStream::new();
            }
            let value = if value.is_tracked() {
                value.owned()
            } else {
                value.plain()
            };
            let full_pat = &local.pat;
            return quote_spanned!(local.let_token.span=> #(#attrs)* let #full_pat = #value;);
        }
        // A pattern: it destructures data only.
        let scan = self.scan(&init.expr);
        if scan.tracked {
            if scan.live {
                self.errors.push(unsupported::binding(local));
            }
            self.rejected = true;
            self.declare_rejected(pat);
            return TokenStream::new();
        }
        let value = self.expr(&init.expr);
        if !value.is_valid() {
            self.declare_rejected(pat);
            return TokenStream::new();
        }
        self.declare_plain(pat);
        let (full_pat, plain) = (&local.pat, value.plain());
        quote_spanned!(local.let_token.span=> #(#attrs)* let #full_pat = #plain;)
    }

    /// `return value;`
    pub(crate) fn return_stmt(&mut self, ret: &ExprReturn) -> TokenStream {
        let tokens = self.return_expr(ret);
        if tokens.is_empty() {
            tokens
        } else {
            quote!(#tokens;)
        }
    }

    /// `return value`, returning the function's `Result`.
    pub(crate) fn return_expr(&mut self, ret: &ExprReturn) -> TokenStream {
        let Some(expr) = &ret.expr else {
            self.errors
                .push(unsupported::expr(&Expr::Return(ret.clone())));
            self.rejected = true;
            return TokenStream::new();
        };
        let value = self.expr(expr);
        let value = self.track(value);
        if !value.is_valid() {
            return TokenStream::new();
        }
        // A `break` out of the body's labeled block rather than a `return`, so that the body
        // also runs inline in `_graph` and `_grad` (see `rewrite::body_label`).
        let (label, result) = (crate::rewrite::body_label(), value.result());
        quote_spanned!(ret.return_token.span=> break #label #result)
    }

    fn target(&mut self, target: &Expr) -> Target {
        let place = matches!(unparenthesized(target), Expr::Index(_) | Expr::Field(_));
        match unparenthesized(target) {
            Expr::Path(_) | Expr::Index(_) | Expr::Field(_) => match self.place_root(target) {
                Some((_, Binding::Local)) => match self.place(target) {
                    Some(tokens) => Target::Tracked(tokens),
                    None => Target::Rejected(None),
                },
                // `let h = [..]` without `mut`: the plain function says so.
                Some((_, Binding::Fixed)) if place => match self.place(target) {
                    Some(tokens) => Target::Tracked(tokens),
                    None => Target::Rejected(None),
                },
                Some((_, Binding::Plain(key))) => Target::Plain(key),
                Some((_, Binding::Rejected)) => Target::Rejected(None),
                Some((_, Binding::Array)) => {
                    Target::Rejected(Some(unsupported::array_assignment(target)))
                }
                Some((_, Binding::Param)) if place => {
                    Target::Rejected(Some(unsupported::array_assignment(target)))
                }
                Some((_, Binding::Param | Binding::Fixed)) => {
                    Target::Rejected(Some(unsupported::assignment_target(target)))
                }
                None if self.scan(target).is_plain() => Target::Plain(None),
                None => Target::Rejected(Some(unsupported::assignment_target(target))),
            },
            place if self.scan(place).is_plain() => Target::Plain(None),
            _ => Target::Rejected(Some(unsupported::assignment_target(target))),
        }
    }

    /// A plain target assigned a tracked value: promote the local, or report the target.
    fn holds_tracked(&mut self, key: Option<usize>, target: &Expr) {
        match key {
            Some(key) => self.promote(key),
            None => {
                self.errors.push(unsupported::plain_holds_tracked(target));
                self.rejected = true;
            }
        }
    }

    /// `value` as a statement or a branch's arm copies it into a tracked variable: a node
    /// of its own where it is a scalar ([`Value::copied`]). An element of a parameter
    /// whose shape the macro cannot see stays another name of it, as the compiled sweeps
    /// can follow only that there.
    pub(crate) fn copy_of(&self, value: &Value) -> TokenStream {
        let root = match value {
            Value::Element(place) => place.clone().into_iter().find_map(|token| match token {
                proc_macro2::TokenTree::Ident(ident) => Some(ident),
                _ => None,
            }),
            _ => None,
        };
        let shapeless = root.is_some_and(|root| {
            self.shapeless.contains(&root)
                && matches!(
                    self.lookup(&root.to_string()),
                    Some(crate::rewrite::Binding::Array)
                )
        });
        match shapeless {
            true => value.owned(),
            false => value.copied(),
        }
    }

    /// Whether `expr`, an element in an array literal, is copied there: an element of a
    /// parameter array whose shape the macro sees (`v[2]`, `m[i]`), whose scalars the
    /// compiled sweeps copy as the trace does.
    pub(crate) fn copies_element(&self, expr: &Expr) -> bool {
        matches!(self.place_root(expr), Some((root, crate::rewrite::Binding::Array))
            if !self.shapeless.contains(&root))
    }

    fn assign(&mut self, assign: &ExprAssign, semi: Option<&Token![;]>) -> TokenStream {
        let target = &assign.left;
        match self.target(target) {
            Target::Tracked(place) => {
                let value = self.expr(&assign.right);
                let value = self.track(value);
                if !value.is_valid() {
                    return TokenStream::new();
                }
                // (Into a whole variable, an element of a `#[param]` struct is copied too:
                // the variable's other values show its shape, see `sweep::lower`.)
                let owned = match unparenthesized(target) {
                    Expr::Path(path) if path.path.get_ident().is_some() => value.copied(),
                    _ => self.copy_of(&value),
                };
                quote_spanned!(assign.eq_token.span=> #place = #owned #semi)
            }
            Target::Plain(key) => {
                let value = self.expr(&assign.right);
                if value.is_tracked() {
                    self.holds_tracked(key, target);
                    return TokenStream::new();
                }
                if !value.is_valid() {
                    return TokenStream::new();
                }
                let (target, plain) = (strip_detach_expr(target), value.plain());
                quote_spanned!(assign.eq_token.span=> #target = #plain #semi)
            }
            Target::Rejected(error) => {
                if let Some(error) = error {
                    self.errors.push(error);
                }
                self.expr(&assign.right);
                self.rejected = true;
                TokenStream::new()
            }
        }
    }

    fn compound(&mut self, binary: &ExprBinary, semi: Option<&Token![;]>) -> TokenStream {
        let target = &binary.left;
        let op = &binary.op;
        match self.target(target) {
            Target::Tracked(place) => {
                let Some(method) = compound(op) else {
                    self.errors
                        .push(unsupported::expr(&Expr::Binary(binary.clone())));
                    self.expr(&binary.right);
                    self.rejected = true;
                    return TokenStream::new();
                };
                let method = syn::Ident::new(method, op.span());
                let value = self.expr(&binary.right);
                let value = self.scalar_operand(value, &binary.right);
                if !value.is_valid() {
                    return TokenStream::new();
                }
                let backend = backend();
                if let Expr::Path(_) = unparenthesized(target) {
                    let operand = value.operand();
                    return quote_spanned!(op.span()=>
                        #target = #backend.#method(&#target, #operand)? #semi
                    );
                }
                // The value first, then the place once, as Rust evaluates `h[i] += value`.
                let (operand, slot) = (
                    Ident::new("operand", Span::mixed_site()),
                    Ident::new("slot", Span::mixed_site()),
                );
                let owned = value.owned();
                quote_spanned!(op.span()=> {
                    let #operand = #owned;
                    let #slot = &mut #place;
                    *#slot = #backend.#method(#slot, &#operand)?;
                } #semi)
            }
            Target::Plain(key) => {
                let value = self.expr(&binary.right);
                if value.is_tracked() {
                    self.holds_tracked(key, target);
                    return TokenStream::new();
                }
                if !value.is_valid() {
                    return TokenStream::new();
                }
                let (target, plain) = (strip_detach_expr(target), value.plain());
                quote!(#target #op #plain #semi)
            }
            Target::Rejected(error) => {
                if let Some(error) = error {
                    self.errors.push(error);
                }
                self.expr(&binary.right);
                self.rejected = true;
                TokenStream::new()
            }
        }
    }
}

/// Whether a final statement `expr;` would have been the result without its `;`.
fn is_value_statement(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_)
        | Expr::Return(_)
        | Expr::Block(_)
        | Expr::Macro(_)
        | Expr::If(_)
        | Expr::Match(_)
        | Expr::ForLoop(_)
        | Expr::While(_)
        | Expr::Loop(_) => false,
        Expr::Binary(binary) => !is_assign_op(&binary.op),
        _ => true,
    }
}
