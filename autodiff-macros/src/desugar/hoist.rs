//! Folds as loops, part of `desugar`: `src.fold(init, |acc, item| body)` where a statement
//! surely evaluates it (not under a closure, a branch, a loop or the right of `&&`) becomes
//!
//! ```text
//! let mut __autodiff_fold_0 = init;
//! for item in src {
//!     __autodiff_fold_0 = body; // with `acc` read as `__autodiff_fold_0`
//! }
//! ```
//!
//! before the statement, which reads `__autodiff_fold_0` in its place: a loop with a running
//! value, which the sweeps compile, where a fold's closure is a form of its own. A fold over
//! a computed array (`g(x).iter().fold(..)`, named by `desugar` as `{ let __autodiff_items =
//! g(x); .. }`) has its array's `let` moved out too, and so has `.sum()` or `.product()`
//! over one. The statement's other operands are evaluated after the fold instead of before:
//! the same values, since evaluating a tracked operand changes nothing but the graph.

use proc_macro2::Span;
use syn::visit::Visit;
use syn::{parse_quote, Block, Expr, ExprClosure, ExprMethodCall, Ident, Pat, Stmt};

use crate::rewrite::mentions::Tracked;

/// The name `desugar` gives a computed array a fold walks.
pub(crate) const ITEMS: &str = "__autodiff_items";

/// Moves the folds of `block`'s statements out into loops before them (the block's nested
/// blocks are done already: `desugar` works bottom-up). `count` numbers the new names, one
/// count for the whole body, so that no name shadows another.
pub(crate) fn folds(block: &mut Block, count: &mut usize) {
    let stmts = std::mem::take(&mut block.stmts);
    for mut stmt in stmts {
        let mut before = Vec::new();
        match &mut stmt {
            Stmt::Local(local) => {
                if let Some(init) = &mut local.init {
                    if init.diverge.is_none() {
                        hoist(&mut init.expr, &mut before, count);
                    }
                }
            }
            Stmt::Expr(expr, _) => hoist(expr, &mut before, count),
            Stmt::Item(_) | Stmt::Macro(_) => {}
        }
        block.stmts.extend(before);
        block.stmts.push(stmt);
    }
}

/// Hoists the folds `expr` surely evaluates into `out`, in evaluation order.
fn hoist(expr: &mut Expr, out: &mut Vec<Stmt>, count: &mut usize) {
    match expr {
        Expr::Binary(binary) => {
            hoist(&mut binary.left, out, count);
            // The right of `&&` and `||` may not run.
            if !matches!(binary.op, syn::BinOp::And(_) | syn::BinOp::Or(_)) {
                hoist(&mut binary.right, out, count);
            }
        }
        Expr::Unary(unary) => hoist(&mut unary.expr, out, count),
        Expr::Paren(paren) => hoist(&mut paren.expr, out, count),
        Expr::Group(group) => hoist(&mut group.expr, out, count),
        Expr::Cast(cast) => hoist(&mut cast.expr, out, count),
        Expr::Reference(reference) => hoist(&mut reference.expr, out, count),
        Expr::Field(field) => hoist(&mut field.base, out, count),
        Expr::Index(index) => {
            hoist(&mut index.expr, out, count);
            hoist(&mut index.index, out, count);
        }
        Expr::Array(array) => array
            .elems
            .iter_mut()
            .for_each(|elem| hoist(elem, out, count)),
        Expr::Tuple(tuple) => tuple
            .elems
            .iter_mut()
            .for_each(|elem| hoist(elem, out, count)),
        Expr::Call(call) => call.args.iter_mut().for_each(|arg| hoist(arg, out, count)),
        Expr::Assign(assign) => hoist(&mut assign.right, out, count),
        Expr::Return(ret) => {
            if let Some(value) = &mut ret.expr {
                hoist(value, out, count);
            }
        }
        // Evaluated once, before the branch or loop.
        Expr::If(branch) => hoist(&mut branch.cond, out, count),
        Expr::ForLoop(lp) => hoist(&mut lp.expr, out, count),
        Expr::Block(block) => {
            if let Some(tail) = named_items(block, out, count) {
                *expr = tail;
                hoist(expr, out, count);
            }
        }
        Expr::MethodCall(call) => {
            hoist(&mut call.receiver, out, count);
            match fold_loop(call, count) {
                Some((stmts, name)) => {
                    out.extend(stmts);
                    *expr = parse_quote!(#name);
                }
                None => call.args.iter_mut().for_each(|arg| hoist(arg, out, count)),
            }
        }
        _ => {}
    }
}

/// `{ let __autodiff_items = src; tail }`: its `let` moved into `out` under a name of its
/// own, and the tail reading that name (a chain from its `.iter()`, or an index).
fn named_items(block: &syn::ExprBlock, out: &mut Vec<Stmt>, count: &mut usize) -> Option<Expr> {
    if block.label.is_some() || !block.attrs.is_empty() {
        return None;
    }
    let [Stmt::Local(local), Stmt::Expr(tail, None)] = block.block.stmts.as_slice() else {
        return None;
    };
    let Pat::Ident(name) = &local.pat else {
        return None;
    };
    let init = local.init.as_ref()?;
    if name.ident != ITEMS || init.diverge.is_some() {
        return None;
    }
    let renamed = Ident::new(&format!("{ITEMS}_{count}"), Span::call_site());
    *count += 1;
    let mut src = (*init.expr).clone();
    hoist(&mut src, out, count);
    out.push(parse_quote!(let #renamed = #src;));
    let mut tail = tail.clone();
    match &mut tail {
        // `items[i]` (see `desugar::indexed_call`).
        Expr::Index(index) => *index.expr = parse_quote!(#renamed),
        _ => crate::desugar::replace_head(&mut tail, &renamed),
    }
    Some(tail)
}

/// `src.fold(init, |acc, item| body)` (its receiver hoisted already) as the statements
/// above, and the name that holds its value.
fn fold_loop(call: &mut ExprMethodCall, count: &mut usize) -> Option<(Vec<Stmt>, Ident)> {
    if call.method != "fold" || call.args.len() != 2 || call.turbofish.is_some() {
        return None;
    }
    let Some(Expr::Closure(step)) = call.args.last() else {
        return None;
    };
    if !crate::desugar::plain_closure(step)
        || !step.attrs.is_empty()
        || step.inputs.len() != 2
        || jumps(&step.body)
        || !loopable(&call.receiver)
    {
        return None;
    }
    let acc = untyped(&step.inputs[0]);
    let mut item = untyped(&step.inputs[1]).clone();
    let mut step_body = (*step.body).clone();
    // `|m, v| m.max(*v)` over `.iter()`: a loop binds the number, `&v`.
    if derefs(&step_body, &item) {
        item = by_value(&call.receiver, &item, &mut step_body)?;
    }
    if !matches!(acc, Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none()) {
        return None;
    }
    let (body, tail) = match &step_body {
        Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
            let mut body = block.block.stmts.clone();
            match body.pop() {
                Some(Stmt::Expr(tail, None)) => (body, tail),
                _ => return None,
            }
        }
        body => (Vec::new(), body.clone()),
    };
    let Pat::Ident(acc) = acc else {
        return None;
    };
    let acc = acc.ident.clone();
    let name = Ident::new(&format!("__autodiff_fold_{count}"), Span::call_site());
    // The running value is the accumulator itself (a copy of it per step would be a
    // copy of a changing local): `acc` renamed, where nothing binds it again.
    if rebinds(&step_body, &acc) {
        return None;
    }
    *count += 1;
    let rename =
        |expr: &mut Expr| syn::visit_mut::VisitMut::visit_expr_mut(&mut Rename(&acc, &name), expr);
    let mut body: Vec<Stmt> = body;
    for stmt in &mut body {
        syn::visit_mut::VisitMut::visit_stmt_mut(&mut Rename(&acc, &name), stmt);
    }
    let mut tail = tail;
    rename(&mut tail);
    let mut stmts = Vec::new();
    let mut init = call.args[0].clone();
    hoist(&mut init, &mut stmts, count);
    let src = &call.receiver;
    let update: Option<Stmt> = (!matches!(&tail, Expr::Path(path) if path.path.is_ident(&name)))
        .then(|| parse_quote!(#name = #tail;));
    let mut looped: Block = parse_quote!({
        #(#body)*
        #update
    });
    folds(&mut looped, count);
    stmts.push(parse_quote!(let mut #name = #init;));
    stmts.push(parse_quote!(for #item in #src #looped));
    Some((stmts, name))
}

/// A closure's parameter without its type.
fn untyped(pat: &Pat) -> &Pat {
    match pat {
        Pat::Type(typed) => &typed.pat,
        pat => pat,
    }
}

/// Whether a closure body leaves the closure early (`return`, `?`), which as a loop body it
/// would not mean.
fn jumps(body: &Expr) -> bool {
    struct Jumps(bool);
    impl<'ast> Visit<'ast> for Jumps {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
            self.0 = true;
        }
        // A nested closure's `return` is its own.
        fn visit_expr_closure(&mut self, _: &'ast ExprClosure) {}
    }
    let mut jumps = Jumps(false);
    jumps.visit_expr(body);
    jumps.0
}

/// Whether a loop can walk `src` as the fold does: a range, a name, a field or an index,
/// or `.iter()` and the adapters the rewrite's loops know, on one of those.
fn loopable(src: &Expr) -> bool {
    match src {
        Expr::Range(_) | Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => true,
        Expr::Paren(paren) => loopable(&paren.expr),
        Expr::Reference(reference) => loopable(&reference.expr),
        Expr::MethodCall(call) => {
            matches!(
                call.method.to_string().as_str(),
                "iter"
                    | "zip"
                    | "enumerate"
                    | "rev"
                    | "skip"
                    | "take"
                    | "step_by"
                    | "copied"
                    | "cloned"
                    | "chunks"
                    | "chunks_exact"
                    | "windows"
            ) && loopable(&call.receiver)
        }
        _ => false,
    }
}

/// `src.map(|v| .. *v ..)` over references is `src.map(|&v| .. v ..)` (and pairs of
/// them, see [`by_value`]): the rewrite binds the number, as a fold's step does (see
/// [`fold_loop`]).
pub(crate) fn map_by_value(call: &mut ExprMethodCall) {
    if call.method != "map" || call.args.len() != 1 {
        return;
    }
    let Some(Expr::Closure(mapper)) = call.args.first_mut() else {
        return;
    };
    if mapper.inputs.len() != 1 || !derefs(&mapper.body, &mapper.inputs[0]) {
        return;
    }
    let item = untyped(&mapper.inputs[0]).clone();
    let mut body = (*mapper.body).clone();
    if let Some(pattern) = by_value(&call.receiver, &item, &mut body) {
        mapper.inputs[0] = pattern;
        *mapper.body = body;
    }
}

/// The pattern `item` of a step over `src` binding numbers where `body` dereferences
/// them, and `body` with those `*name` read as `name`: `v` over `.iter()` (or `&a`) is
/// `&v`, and in a pair over `.zip(..)` or `.enumerate()` each part is read so by its own
/// source, at any depth (`(i, (p, q))` over `a.iter().zip(b.iter()).enumerate()`). `None`
/// where a dereferenced name is bound otherwise.
pub(crate) fn by_value(src: &Expr, item: &Pat, body: &mut Expr) -> Option<Pat> {
    let item = untyped(item);
    if !derefs(body, item) {
        return Some(item.clone());
    }
    let pair = |pat: &Pat| match pat {
        Pat::Tuple(tuple) if tuple.elems.len() == 2 => {
            Some([tuple.elems[0].clone(), tuple.elems[1].clone()])
        }
        _ => None,
    };
    if over_references(src)
        || matches!(src, Expr::Reference(reference) if reference.mutability.is_none())
    {
        let Pat::Ident(name) = item else {
            return None;
        };
        if name.by_ref.is_some() || name.subpat.is_some() || rebinds(body, &name.ident) {
            return None;
        }
        let name = name.ident.clone();
        Derefs::strip(body, &name);
        return Some(parse_quote!(&#name));
    }
    let Expr::MethodCall(call) = src else {
        return match src {
            Expr::Paren(paren) => by_value(&paren.expr, item, body),
            _ => None,
        };
    };
    match call.method.to_string().as_str() {
        "zip" if call.args.len() == 1 => {
            let [first, second] = pair(item)?;
            let first = by_value(&call.receiver, &first, body)?;
            let second = by_value(&call.args[0], &second, body)?;
            Some(parse_quote!((#first, #second)))
        }
        "enumerate" if call.args.is_empty() => {
            let [count, second] = pair(item)?;
            if derefs(body, &count) {
                return None;
            }
            let second = by_value(&call.receiver, &second, body)?;
            Some(parse_quote!((#count, #second)))
        }
        "rev" | "skip" | "take" | "step_by" => by_value(&call.receiver, item, body),
        _ => None,
    }
}

/// Whether `src` yields references: `.iter()`, through `rev`, `skip`, `take`, `step_by`.
fn over_references(src: &Expr) -> bool {
    match src {
        Expr::Paren(paren) => over_references(&paren.expr),
        Expr::MethodCall(call) => match call.method.to_string().as_str() {
            "iter" => call.args.is_empty(),
            "rev" | "skip" | "take" | "step_by" => over_references(&call.receiver),
            _ => false,
        },
        _ => false,
    }
}

/// Whether `body` dereferences a name `item` binds.
fn derefs(body: &Expr, item: &Pat) -> bool {
    let names = crate::rewrite::mentions::pattern_names(item);
    let mut found = Derefs {
        names: names.iter().map(Ident::to_string).collect(),
        found: false,
    };
    found.visit_expr(body);
    found.found
}

/// The dereferences `*name` of some names.
struct Derefs {
    names: Vec<String>,
    found: bool,
}

impl<'ast> Visit<'ast> for Derefs {
    fn visit_expr_unary(&mut self, unary: &'ast syn::ExprUnary) {
        if let (syn::UnOp::Deref(_), Expr::Path(path)) = (&unary.op, &*unary.expr) {
            if path
                .path
                .get_ident()
                .is_some_and(|name| self.names.contains(&name.to_string()))
            {
                self.found = true;
            }
        }
        syn::visit::visit_expr_unary(self, unary);
    }
}

impl Derefs {
    /// Rewrites each `*name` in `body` as `name`.
    fn strip(body: &mut Expr, name: &Ident) {
        struct Strip<'a>(&'a Ident);
        impl syn::visit_mut::VisitMut for Strip<'_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                syn::visit_mut::visit_expr_mut(self, expr);
                if let Expr::Unary(unary) = expr {
                    if let (syn::UnOp::Deref(_), Expr::Path(path)) = (&unary.op, &*unary.expr) {
                        if path.path.is_ident(self.0) {
                            *expr = (*unary.expr).clone();
                        }
                    }
                }
            }
        }
        syn::visit_mut::VisitMut::visit_expr_mut(&mut Strip(name), body);
    }
}

/// Reads of `from` in `expr` as reads of `to` (where nothing in `expr` binds `from` again:
/// see [`rebinds`]).
pub(crate) fn rename(expr: &mut Expr, from: &Ident, to: &Ident) {
    syn::visit_mut::VisitMut::visit_expr_mut(&mut Rename(from, to), expr);
}

/// Reads of one name as another.
struct Rename<'a>(&'a Ident, &'a Ident);

impl syn::visit_mut::VisitMut for Rename<'_> {
    fn visit_expr_path_mut(&mut self, path: &mut syn::ExprPath) {
        if path.qself.is_none() && path.path.is_ident(self.0) {
            path.path = self.1.clone().into();
        }
    }
}

/// Whether `body` binds `name` again (a `let`, a closure's or a loop's pattern) or names
/// it inside a macro, where a renaming would not reach.
pub(crate) fn rebinds(body: &Expr, name: &Ident) -> bool {
    struct Binds<'a>(&'a Ident, bool);
    impl<'ast> Visit<'ast> for Binds<'_> {
        fn visit_pat_ident(&mut self, pat: &'ast syn::PatIdent) {
            self.1 |= pat.ident == *self.0;
            syn::visit::visit_pat_ident(self, pat);
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let lookup = |seen: &str| (*self.0 == seen).then_some(Tracked::Value);
            self.1 |= crate::rewrite::mentions::macro_mentions(&mac.tokens, &lookup);
        }
    }
    let mut binds = Binds(name, false);
    binds.visit_expr(body);
    binds.1
}
