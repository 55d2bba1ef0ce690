//! Forms the rewrite reads as another form it already knows, rewritten in the syntax tree
//! before the rewrite runs (the user's tokens are kept, so errors still point at what the
//! user wrote; the plain function is emitted from the body as written):
//!
//! - `src.map(|p| e).fold(init, |acc, q| body)` is `src.fold(init, |acc, p| { let q = e;
//!   body })`: a closure binds its argument as `let` does, and the map's value is the
//!   fold's item. Left as written if the move would change what a name means (`e`
//!   mentioning a name `acc` binds, `body` one that `p` binds).
//! - `g(..).iter()` (or a method call's or an array literal's `.iter()`) at the head of a
//!   fold or loop is `{ let items = g(..); items.iter()... }`: the rewrite iterates over a
//!   named array.
//!
//! - `g(..)[i]` is `{ let items = g(..); items[i] }`, for the same reason.
//!
//! - In a loop body, `if c { s; continue; } rest` is `if c { s } else { rest }`: the rest
//!   of the iteration is what the `continue` skips. (Only at the body's own level, for a
//!   `continue` of this loop, and when `s` holds no other `break` or `continue`.)
//!
//! - `match s { p => a, q if g => b, _ => c }` on a scrutinee without side effects (names,
//!   fields, indices, literals, arithmetic) whose patterns bind nothing (literals, ranges,
//!   paths, `_`, `|`) is `if matches!(s, p) { a } else if matches!(s, q) && g { b } else {
//!   c }`, written with [`MATCHES`]; the rewrite checks that `s` is data (see
//!   `Rewriter::condition`). The last arm is the `else`: rustc checks that the `match` of
//!   the plain function is exhaustive. An arm before the last whose pattern binds names
//!   (`Some(v) => a`, without a guard) is `if let Some(v) = s { a } else ..`.
//!
//! - `let (a, mut b, _) = (x, y * 2.0, z);` is one `let` per name, `let a = x; let mut b
//!   = y * 2.0; let _ = z;`, when no element mentions a name the pattern binds; otherwise
//!   (`let (x, y) = (y, x);`) every element is first bound to a name of its own, then
//!   each pattern's name to it, so that every element is read before any name changes.
//!   A destructuring assignment, `(a, b) = (b, a);`, likewise: one assignment per place.
//!
//! Each pass rewrites the tree once, bottom-up, before the rewrite's passes, so the tree
//! the rewrite reads (and the addresses it keys its scans and promotions by) stays the
//! same from pass to pass.

pub(crate) mod hoist;

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{
    parse_quote, Block, Expr, ExprClosure, ExprIf, ExprMatch, ExprMethodCall, Ident, Label, Pat,
    Stmt,
};

use crate::rewrite::mentions::{macro_mentions, pattern_names, split_guard, Tracked};
use crate::rewrite::unparenthesized;

/// `block` with the forms above rewritten.
pub(crate) fn desugar(block: &Block, scalar_output: bool) -> Block {
    let mut block = block.clone();
    let mut desugar = Desugar {
        folds: 0,
        scalar_output,
    };
    desugar.visit_block_mut(&mut block);
    if scalar_output {
        returns_as_flags(&mut block, &mut desugar.folds);
    }
    block
}

struct Desugar {
    /// The function returns `f64`: a `return` in a loop can be held in an `f64` local.
    scalar_output: bool,
    /// How many names `hoist` has made.
    folds: usize,
}

impl VisitMut for Desugar {
    fn visit_block_mut(&mut self, block: &mut Block) {
        visit_mut::visit_block_mut(self, block);
        tuple_lets(block, &mut self.folds);
        crate::desugar::hoist::folds(block, &mut self.folds);
        breaks_as_flags(block, &mut self.folds, self.scalar_output);
    }

    fn visit_expr_for_loop_mut(&mut self, lp: &mut syn::ExprForLoop) {
        visit_mut::visit_expr_for_loop_mut(self, lp);
        by_index(lp, &mut self.folds);
        skip_by_else(&mut lp.body, lp.label.as_ref());
        continues_as_flags(&mut lp.body, lp.label.as_ref(), &mut self.folds);
        drop_unused_label(&mut lp.label, &lp.body);
    }

    fn visit_expr_while_mut(&mut self, lp: &mut syn::ExprWhile) {
        visit_mut::visit_expr_while_mut(self, lp);
        skip_by_else(&mut lp.body, lp.label.as_ref());
        continues_as_flags(&mut lp.body, lp.label.as_ref(), &mut self.folds);
        drop_unused_label(&mut lp.label, &lp.body);
    }

    fn visit_expr_loop_mut(&mut self, lp: &mut syn::ExprLoop) {
        visit_mut::visit_expr_loop_mut(self, lp);
        skip_by_else(&mut lp.body, lp.label.as_ref());
        continues_as_flags(&mut lp.body, lp.label.as_ref(), &mut self.folds);
        drop_unused_label(&mut lp.label, &lp.body);
    }

    // An assignment's target, and what `&mut` borrows, stay places: `g(..)[i] = v` is
    // not `indexed_call`'s.
    fn visit_expr_assign_mut(&mut self, assign: &mut syn::ExprAssign) {
        self.visit_place_mut(&mut assign.left);
        self.visit_expr_mut(&mut assign.right);
    }

    fn visit_expr_binary_mut(&mut self, binary: &mut syn::ExprBinary) {
        if !crate::rewrite::is_assign_op(&binary.op) {
            return visit_mut::visit_expr_binary_mut(self, binary);
        }
        self.visit_place_mut(&mut binary.left);
        self.visit_expr_mut(&mut binary.right);
    }

    fn visit_expr_reference_mut(&mut self, reference: &mut syn::ExprReference) {
        match reference.mutability {
            Some(_) => self.visit_place_mut(&mut reference.expr),
            None => visit_mut::visit_expr_reference_mut(self, reference),
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        visit_mut::visit_expr_mut(self, expr);
        if let Expr::Match(branch) = expr {
            if let Some(chain) = if_chain(branch) {
                *expr = chain;
            }
        }
        if let Expr::MethodCall(call) = expr {
            crate::desugar::hoist::map_by_value(call);
        }
        // `for p in v.iter() { .. *p .. }` is `for &p in v.iter() { .. p .. }`.
        if let Expr::ForLoop(lp) = expr {
            let mut body = Expr::Block(syn::ExprBlock {
                attrs: Vec::new(),
                label: None,
                block: lp.body.clone(),
            });
            if let Some(pat) = crate::desugar::hoist::by_value(&lp.expr, &lp.pat, &mut body) {
                if let Expr::Block(block) = body {
                    *lp.pat = pat;
                    lp.body = block.block;
                }
            }
        }
        if let Expr::MethodCall(call) = expr {
            if let Some(folded) = map_then_fold(call, &mut self.folds) {
                *expr = folded;
            }
        }
        if let Expr::MethodCall(call) = expr {
            if let Some(named) = named_items(call) {
                *expr = named;
            }
        }
        if let Expr::Index(index) = expr {
            if let Some(named) = indexed_call(index) {
                *expr = named;
            }
        }
    }
}

impl Desugar {
    /// A place's indices and its root, but not the place itself.
    fn visit_place_mut(&mut self, place: &mut Expr) {
        match place {
            Expr::Index(index) => {
                self.visit_expr_mut(&mut index.index);
                self.visit_place_mut(&mut index.expr);
            }
            Expr::Field(field) => self.visit_place_mut(&mut field.base),
            Expr::Paren(paren) => self.visit_place_mut(&mut paren.expr),
            other => self.visit_expr_mut(other),
        }
    }
}

/// `for v in a.iter_mut() { .. *v .. }` (or `for (i, v) in a.iter_mut().enumerate()`)
/// is `for i in 0..a.len() { .. a[i] .. }`: the rewrite assigns elements by index. Only
/// where the body uses `v` as `*v` alone, on an array named by a path.
fn by_index(lp: &mut syn::ExprForLoop, count: &mut usize) {
    let (call, enumerated) = match unparenthesized(&lp.expr) {
        Expr::MethodCall(outer) if outer.method == "enumerate" && outer.args.is_empty() => {
            match unparenthesized(&outer.receiver) {
                Expr::MethodCall(inner) => (inner, true),
                _ => return,
            }
        }
        Expr::MethodCall(call) => (call, false),
        _ => return,
    };
    let Expr::Path(array) = unparenthesized(&call.receiver) else {
        return;
    };
    if call.method != "iter_mut" || !call.args.is_empty() || array.path.get_ident().is_none() {
        return;
    }
    let (index, item) = match (&*lp.pat, enumerated) {
        (Pat::Ident(item), false) if item.by_ref.is_none() && item.subpat.is_none() => {
            let index = Ident::new(&format!("__autodiff_index_{count}"), Span::call_site());
            *count += 1;
            (
                Pat::Ident(syn::PatIdent {
                    ident: index.clone(),
                    ..item.clone()
                }),
                item.ident.clone(),
            )
        }
        (Pat::Tuple(pair), true) if pair.elems.len() == 2 => match (&pair.elems[0], &pair.elems[1])
        {
            (index @ Pat::Ident(_), Pat::Ident(item)) if item.subpat.is_none() => {
                (index.clone(), item.ident.clone())
            }
            _ => return,
        },
        _ => return,
    };
    let Pat::Ident(index_ident) = &index else {
        return;
    };
    let index_name = index_ident.ident.clone();
    let mut body = lp.body.clone();
    let mut rewrite = Derefs {
        item: &item,
        with: parse_quote!(#array[#index_name]),
        bare: false,
    };
    rewrite.visit_block_mut(&mut body);
    if rewrite.bare {
        return;
    }
    *lp.pat = index;
    *lp.expr = parse_quote!(0..#array.len());
    lp.body = body;
}

/// Replaces `*item` with `with`, noting any other use of `item`.
struct Derefs<'a> {
    item: &'a Ident,
    with: Expr,
    bare: bool,
}

impl VisitMut for Derefs<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Unary(unary) = expr {
            if matches!(unary.op, syn::UnOp::Deref(_))
                && matches!(unparenthesized(&unary.expr), Expr::Path(path) if path.path.is_ident(self.item))
            {
                *expr = self.with.clone();
                return;
            }
        }
        if let Expr::Path(path) = expr {
            if path.path.is_ident(self.item) {
                self.bare = true;
            }
        }
        visit_mut::visit_expr_mut(self, expr);
    }

    // A closure or macro could use the name unseen, and a new binding of it would be
    // another value: leave such a loop as it is.
    fn visit_macro_mut(&mut self, _mac: &mut syn::Macro) {
        self.bare = true;
    }

    fn visit_pat_ident_mut(&mut self, pat: &mut syn::PatIdent) {
        if pat.ident == *self.item {
            self.bare = true;
        }
        visit_mut::visit_pat_ident_mut(self, pat);
    }
}

/// `g(..)[i]` (or a method call's `[i]`) is `{ let items = g(..); items[i] }`: the rewrite
/// indexes named arrays.
fn indexed_call(index: &syn::ExprIndex) -> Option<Expr> {
    let source = unparenthesized(&index.expr);
    if !matches!(source, Expr::Call(_) | Expr::MethodCall(_)) {
        return None;
    }
    let items = Ident::new(crate::desugar::hoist::ITEMS, Span::call_site());
    let (source, at) = (source.clone(), &index.index);
    Some(parse_quote!({
        let #items = #source;
        #items[#at]
    }))
}

/// The macro a desugared `match` tests each arm's pattern with: `::core::matches!`.
pub(crate) const MATCHES: [&str; 2] = ["core", "matches"];

/// The scrutinee and pattern of a desugared arm's test, `::core::matches!(s, p)`.
pub(crate) fn arm_test(expr: &Expr) -> Option<(Expr, Pat)> {
    let Expr::Macro(mac) = expr else {
        return None;
    };
    let path = &mac.mac.path;
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if path.leading_colon.is_none() || names != MATCHES {
        return None;
    }
    mac.mac
        .parse_body_with(|input: syn::parse::ParseStream| {
            let scrutinee: Expr = input.parse()?;
            input.parse::<syn::Token![,]>()?;
            let pat = Pat::parse_multi_with_leading_vert(input)?;
            Ok((scrutinee, pat))
        })
        .ok()
}

/// A `match` as the `if` chain above, or `None` if it is not one of those.
fn if_chain(branch: &ExprMatch) -> Option<Expr> {
    let (last, before) = branch.arms.split_last()?;
    if before.is_empty()
        || split_guard(&last.pat).1.is_some()
        || !branch.attrs.is_empty()
        || !pure(&branch.expr)
        || !binds_nothing(&last.pat)
        || !branch.arms.iter().all(|arm| {
            let (pat, guard) = split_guard(&arm.pat);
            // An arm that binds names becomes `if let`, which takes no guard here; a bare
            // name (a binding or a constant) is left to the `match`.
            arm.attrs.is_empty()
                && (binds_nothing(pat) || (guard.is_none() && !matches!(pat, Pat::Ident(_))))
        })
    {
        return None;
    }
    let scrutinee = &branch.expr;
    let block = |body: &Expr| -> Block {
        match body {
            Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                block.block.clone()
            }
            body => parse_quote!({ #body }),
        }
    };
    let mut chain = Expr::Block(syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block: block(&last.body),
    });
    for arm in before.iter().rev() {
        let (pat, guard) = split_guard(&arm.pat);
        if !binds_nothing(pat) {
            chain = Expr::If(ExprIf {
                attrs: Vec::new(),
                if_token: Default::default(),
                cond: Box::new(parse_quote!(let #pat = #scrutinee)),
                then_branch: block(&arm.body),
                else_branch: Some((Default::default(), Box::new(chain))),
            });
            continue;
        }
        let test: Expr = parse_quote!(::core::matches!(#scrutinee, #pat));
        let cond: Expr = match guard {
            None => test,
            Some((_, guard)) => parse_quote!(#test && (#guard)),
        };
        chain = Expr::If(ExprIf {
            attrs: Vec::new(),
            if_token: Default::default(),
            cond: Box::new(cond),
            then_branch: block(&arm.body),
            else_branch: Some((Default::default(), Box::new(chain))),
        });
    }
    Some(chain)
}

/// Whether evaluating `expr` again changes nothing: names, fields, indices, literals,
/// arithmetic and casts of those.
fn pure(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) | Expr::Lit(_) => true,
        Expr::Field(field) => pure(&field.base),
        Expr::Index(index) => pure(&index.expr) && pure(&index.index),
        Expr::Paren(paren) => pure(&paren.expr),
        Expr::Reference(reference) => reference.mutability.is_none() && pure(&reference.expr),
        Expr::Unary(unary) => pure(&unary.expr),
        Expr::Binary(binary) => {
            !crate::rewrite::is_assign_op(&binary.op) && pure(&binary.left) && pure(&binary.right)
        }
        Expr::Cast(cast) => pure(&cast.expr),
        Expr::Tuple(tuple) => tuple.elems.iter().all(pure),
        _ => false,
    }
}

/// Whether `pat` binds no name: literals, ranges, paths, capitalised names, `_`, and `|`
/// of those. (A lowercase bare name could be a binding or a constant; it is left to the
/// `match`.)
fn binds_nothing(pat: &Pat) -> bool {
    match pat {
        Pat::Lit(_) | Pat::Range(_) | Pat::Wild(_) | Pat::Path(_) => true,
        // `None`, `ORIGIN`: a capitalised name is a unit variant or a constant (a binding
        // so named draws rustc's `non_snake_case` warning).
        Pat::Ident(name) => {
            name.by_ref.is_none()
                && name.mutability.is_none()
                && name.subpat.is_none()
                && name
                    .ident
                    .to_string()
                    .starts_with(|c: char| c.is_ascii_uppercase())
        }
        Pat::Or(or) => or.cases.iter().all(binds_nothing),
        Pat::Paren(paren) => binds_nothing(&paren.pat),
        Pat::Tuple(tuple) => tuple.elems.iter().all(binds_nothing),
        _ => false,
    }
}

/// `src.map(|p| e).fold(init, |acc, q| body)` as `src.fold(init, |acc, p| { let q = e;
/// body })`.
fn map_then_fold(fold: &ExprMethodCall, count: &mut usize) -> Option<Expr> {
    if fold.method != "fold" || fold.args.len() != 2 || fold.turbofish.is_some() {
        return None;
    }
    let Some(Expr::Closure(step)) = fold.args.last() else {
        return None;
    };
    let Expr::MethodCall(map) = unparenthesized(&fold.receiver) else {
        return None;
    };
    if map.method != "map" || map.args.len() != 1 || map.turbofish.is_some() {
        return None;
    }
    let Some(Expr::Closure(mapper)) = map.args.first() else {
        return None;
    };
    if step.inputs.len() != 2 || mapper.inputs.len() != 1 || !plain_closure(mapper) {
        return None;
    }
    let (acc, item, input) = (&step.inputs[0], &step.inputs[1], &mapper.inputs[0]);
    let (mapped, body) = (&mapper.body, &step.body);
    // The step's item, a plain name, renamed to one of its own (a loop that binds the
    // same name as another loop's local is not one the sweeps compile).
    let (mut item, mut body) = (item.clone(), (**body).clone());
    if let Pat::Ident(name) = &mut item {
        if name.subpat.is_none()
            && name.by_ref.is_none()
            && !crate::desugar::hoist::rebinds(&body, &name.ident)
        {
            let fresh = Ident::new(&format!("__autodiff_mapped_{count}"), name.ident.span());
            *count += 1;
            crate::desugar::hoist::rename(&mut body, &name.ident, &fresh);
            name.ident = fresh;
        }
    }
    if mentions_bound(mapped, acc) || mentions_bound(&body, input) {
        return None;
    }
    let input = input.clone();
    let mut merged: ExprClosure = step.clone();
    merged.inputs = [acc.clone(), input].into_iter().collect();
    merged.body = Box::new(parse_quote!({
        let #item = #mapped;
        #body
    }));
    let mut call = fold.clone();
    call.receiver = map.receiver.clone();
    if let Some(last) = call.args.last_mut() {
        *last = Expr::Closure(merged);
    }
    Some(Expr::MethodCall(call))
}

/// `g(..).iter()...` (a call's, a method call's or an array literal's items, at the head of
/// a chain of iterator methods) as `{ let items = g(..); items.iter()... }`.
fn named_items(call: &ExprMethodCall) -> Option<Expr> {
    // Only the outermost call of the chain: the one whose receiver chain reaches `.iter()`
    // on a computed array, and which is a fold (loops name their iterator themselves).
    if !matches!(call.method.to_string().as_str(), "sum" | "product" | "fold") {
        return None;
    }
    let mut head = &*call.receiver;
    loop {
        match unparenthesized(head) {
            Expr::MethodCall(inner) if inner.method == "iter" && inner.args.is_empty() => {
                let source = unparenthesized(&inner.receiver);
                if !matches!(
                    source,
                    Expr::Call(_) | Expr::MethodCall(_) | Expr::Array(_) | Expr::Repeat(_)
                ) {
                    return None;
                }
                let items = Ident::new(crate::desugar::hoist::ITEMS, Span::call_site());
                let source = source.clone();
                let mut chain = Expr::MethodCall(call.clone());
                replace_head(&mut chain, &items);
                return Some(parse_quote!({
                    let #items = #source;
                    #chain
                }));
            }
            Expr::MethodCall(inner) => head = &inner.receiver,
            _ => return None,
        }
    }
}

/// Replaces the receiver of the chain's `.iter()` with `items`.
pub(crate) fn replace_head(expr: &mut Expr, items: &Ident) {
    let mut at = expr;
    while let Expr::MethodCall(call) = at {
        if call.method == "iter" && call.args.is_empty() {
            *call.receiver = parse_quote!(#items);
            return;
        }
        at = &mut *call.receiver;
        while let Expr::Paren(paren) = at {
            at = &mut *paren.expr;
        }
    }
}

/// A closure as the rewrite reads one: no `move`, `async`, `const` or return type.
pub(crate) fn plain_closure(closure: &ExprClosure) -> bool {
    closure.capture.is_none()
        && closure.asyncness.is_none()
        && closure.constness.is_none()
        && matches!(closure.output, syn::ReturnType::Default)
}

/// Whether `tokens` name any of `names` (over-approximated: any identifier, also in a
/// macro's format string).
fn names_any(tokens: &impl ToTokens, names: &[&str]) -> bool {
    let lookup = |name: &str| names.contains(&name).then_some(Tracked::Value);
    macro_mentions(&tokens.to_token_stream(), &lookup)
}

/// Whether `expr` names a name `pat` binds.
fn mentions_bound(expr: &Expr, pat: &Pat) -> bool {
    let bound: Vec<String> = pattern_names(pat).iter().map(Ident::to_string).collect();
    let bound: Vec<&str> = bound.iter().map(String::as_str).collect();
    names_any(expr, &bound)
}

/// A loop body's `if c { s; continue; } rest` as `if c { s } else { rest }`, for every such
/// `if` at the body's own level (the first one's `rest` holds the next).
fn skip_by_else(body: &mut Block, label: Option<&Label>) {
    let Some(at) = body
        .stmts
        .iter()
        .position(|stmt| skipping(stmt, label).is_some())
    else {
        return;
    };
    // An item is visible in its whole block: moved into the `else`, it would not be.
    if body.stmts.iter().any(|stmt| matches!(stmt, Stmt::Item(_))) {
        return;
    }
    let rest: Vec<Stmt> = body.stmts.drain(at + 1..).collect();
    let Some(stmt) = body.stmts.pop() else {
        return;
    };
    let Some(mut branch) = skipping(&stmt, label).cloned() else {
        body.stmts.push(stmt);
        body.stmts.extend(rest);
        return;
    };
    branch.then_branch.stmts.pop();
    let mut otherwise = block_of(rest);
    skip_by_else(&mut otherwise, label);
    branch.else_branch = Some(else_of(otherwise));
    body.stmts.push(Stmt::Expr(Expr::If(branch), None));
}

/// A block of `stmts`.
fn block_of(stmts: Vec<Stmt>) -> Block {
    Block {
        brace_token: Default::default(),
        stmts,
    }
}

/// `else { block }`.
fn else_of(block: Block) -> (syn::token::Else, Box<Expr>) {
    let block = syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block,
    };
    (Default::default(), Box::new(Expr::Block(block)))
}

/// `stmt` if it is `if c { s; continue; }` with no `else`, its `continue` one of the loop
/// labelled `label`, and no other `break` or `continue` in `s`.
fn skipping<'s>(stmt: &'s Stmt, label: Option<&Label>) -> Option<&'s ExprIf> {
    let Stmt::Expr(Expr::If(branch), _) = stmt else {
        return None;
    };
    if branch.else_branch.is_some() || !branch.attrs.is_empty() {
        return None;
    }
    let (last, before) = branch.then_branch.stmts.split_last()?;
    let Stmt::Expr(Expr::Continue(skip), _) = last else {
        return None;
    };
    let ours = match (&skip.label, label) {
        (None, _) => true,
        (Some(target), Some(label)) => target.ident == label.name.ident,
        (Some(_), None) => false,
    };
    let jumps = before
        .iter()
        .any(|stmt| names_any(stmt, &["break", "continue"]));
    (ours && skip.attrs.is_empty() && !jumps).then_some(branch)
}

/// Each `loop`, `while` or `for` statement of `block` whose every exit (`break;`, or
/// `return v;` in a function returning `f64`) is a bare one or the last statement of an
/// `if c { s; .. }` at the body's own level, with a flag instead of the jump:
///
/// ```text
/// let mut go = true;                       let mut go = true; let mut ret = 0.0;
/// while go && cond {                       for p in it {
///     ..                                       if c { s; ret = v; go = false; }
///     if c { s; go = false; }                  else { rest }
///     else { rest }                            if !go { break; }
/// }                                        }
///                                          if !go { return ret; }
/// ```
///
/// The rest of the iteration is what the exit skips; a `while` checks its condition once
/// more (false at once), and a `for` stops with a last `break` the sweeps count; a
/// `return` is taken after the loop, where the sweeps compile it. `count` numbers the
/// names.
fn breaks_as_flags(block: &mut Block, count: &mut usize, scalar_output: bool) {
    let stmts = std::mem::take(&mut block.stmts);
    let last = stmts.len().saturating_sub(1);
    for (at, stmt) in stmts.into_iter().enumerate() {
        let (expr, semi) = match stmt {
            Stmt::Expr(expr @ (Expr::Loop(_) | Expr::While(_) | Expr::ForLoop(_)), semi) => {
                (expr, semi)
            }
            other => {
                block.stmts.push(other);
                continue;
            }
        };
        let (label, plain, body) = match &expr {
            Expr::Loop(lp) => (lp.label.clone(), lp.attrs.is_empty(), lp.body.clone()),
            Expr::While(lp) => (lp.label.clone(), lp.attrs.is_empty(), lp.body.clone()),
            Expr::ForLoop(lp) => (lp.label.clone(), lp.attrs.is_empty(), lp.body.clone()),
            _ => (None, false, block_of(Vec::new())),
        };
        let mut stop = Stop {
            label: label.as_ref(),
            flag: Ident::new(&format!("__autodiff_go_{count}"), Span::call_site()),
            result: scalar_output
                .then(|| Ident::new(&format!("__autodiff_ret_{count}"), Span::call_site())),
            returned: false,
            broke: false,
            kind: Exit::Loop,
        };
        let mut body = body;
        let cond_is_let = matches!(&expr, Expr::While(lp) if matches!(&*lp.cond, Expr::Let(_)));
        let rewritten =
            plain && !cond_is_let && stop.rewrite(&mut body) && !leaves(&body, label.as_ref());
        // A `loop` that is the block's value ends by a `break` (its value is `()`, as the
        // `while`'s) or only by a `return` (of type `!`: the value after it is the
        // returned one).
        let tail = at == last && semi.is_none() && matches!(expr, Expr::Loop(_));
        let tail = tail && !stop.broke;
        if !rewritten || (tail && !stop.returned) {
            block.stmts.push(Stmt::Expr(expr, semi));
            continue;
        }
        *count += 1;
        let flag = &stop.flag;
        block.stmts.push(parse_quote!(let mut #flag = true;));
        if let (true, Some(result)) = (stop.returned, &stop.result) {
            let left = left_flag(result);
            block.stmts.push(parse_quote!(let mut #result = 0.0;));
            block.stmts.push(parse_quote!(let mut #left = false;));
        }
        let looped: Expr = match expr {
            Expr::Loop(_) => parse_quote!(while #flag #body),
            Expr::While(lp) => {
                let cond = &lp.cond;
                parse_quote!(while #flag && (#cond) #body)
            }
            Expr::ForLoop(mut lp) => {
                // The loop stops once the flag is down: the iterations after the exit
                // never start, as before (the sweeps count the ones that ran).
                body.stmts.push(parse_quote!(if !#flag { break; }));
                lp.label = None;
                lp.body = body;
                Expr::ForLoop(lp)
            }
            other => other,
        };
        block.stmts.push(Stmt::Expr(looped, None));
        match (stop.returned, &stop.result) {
            (true, Some(result)) if tail => {
                block.stmts.push(Stmt::Expr(parse_quote!(#result), None))
            }
            (true, Some(result)) => {
                let left = left_flag(result);
                block.stmts.push(parse_quote!(if #left { return #result; }));
            }
            _ => {}
        }
    }
}

/// `let (a, b) = (x, y);` as one `let` per name (see the module's documentation).
fn tuple_lets(block: &mut Block, count: &mut usize) {
    let mut stmts = Vec::with_capacity(block.stmts.len());
    for stmt in std::mem::take(&mut block.stmts) {
        match split_tuple(&stmt, count).or_else(|| split_tuple_assign(&stmt, count)) {
            Some(lets) => stmts.extend(lets),
            None => stmts.push(stmt),
        }
    }
    block.stmts = stmts;
}

/// The `let`s of a tuple `let` of a tuple literal whose patterns are names or `_`.
fn split_tuple(stmt: &Stmt, count: &mut usize) -> Option<Vec<Stmt>> {
    let Stmt::Local(local) = stmt else {
        return None;
    };
    let (Pat::Tuple(tuple), Some(init)) = (&local.pat, &local.init) else {
        return None;
    };
    let Expr::Tuple(values) = unparenthesized(&init.expr) else {
        return None;
    };
    let simple = |pat: &Pat| match pat {
        Pat::Ident(ident) => ident.by_ref.is_none() && ident.subpat.is_none(),
        Pat::Wild(_) => true,
        _ => false,
    };
    if init.diverge.is_some()
        || !local.attrs.is_empty()
        || tuple.elems.len() != values.elems.len()
        || !tuple.elems.iter().all(simple)
    {
        return None;
    }
    let names: Vec<String> = (tuple.elems.iter())
        .flat_map(pattern_names)
        .map(|name| name.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let clash = values.elems.iter().any(|value| names_any(value, &names));
    let pairs = tuple.elems.iter().zip(&values.elems);
    if !clash {
        return Some(
            pairs
                .map(|(pat, value)| parse_quote!(let #pat = #value;))
                .collect(),
        );
    }
    let (held, mut lets) = held_values(values, count);
    lets.extend(
        tuple
            .elems
            .iter()
            .zip(&held)
            .map(|(pat, name)| -> Stmt { parse_quote!(let #pat = #name;) }),
    );
    Some(lets)
}

/// The assignments of `(a, b[i], _) = (x, y, z);` of a tuple literal to places.
fn split_tuple_assign(stmt: &Stmt, count: &mut usize) -> Option<Vec<Stmt>> {
    let Stmt::Expr(Expr::Assign(assign), Some(_)) = stmt else {
        return None;
    };
    let (Expr::Tuple(places), Expr::Tuple(values)) = (
        unparenthesized(&assign.left),
        unparenthesized(&assign.right),
    ) else {
        return None;
    };
    let place = |place: &Expr| {
        matches!(
            unparenthesized(place),
            Expr::Path(_) | Expr::Index(_) | Expr::Field(_) | Expr::Infer(_)
        )
    };
    if !assign.attrs.is_empty()
        || places.elems.len() != values.elems.len()
        || !places.elems.iter().all(place)
    {
        return None;
    }
    let assigned = |place: &Expr, value: &Expr| -> Stmt {
        match unparenthesized(place) {
            Expr::Infer(_) => parse_quote!(let _ = #value;),
            place => parse_quote!(#place = #value;),
        }
    };
    // (Every value read before any place changes, unless the places are names that no
    // value reads.)
    let names: Vec<String> = (places.elems.iter())
        .filter_map(|place| match unparenthesized(place) {
            Expr::Path(path) => path.path.get_ident().map(ToString::to_string),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let clash = (values.elems.iter()).any(|value| names_any(value, &names))
        || (places.elems.iter())
            .any(|place| !matches!(unparenthesized(place), Expr::Path(_) | Expr::Infer(_)));
    let pairs = places.elems.iter().zip(&values.elems);
    if !clash {
        return Some(pairs.map(|(place, value)| assigned(place, value)).collect());
    }
    let (held, mut stmts) = held_values(values, count);
    stmts.extend(places.elems.iter().zip(&held).map(|(place, name)| {
        let name: Expr = parse_quote!(#name);
        assigned(place, &name)
    }));
    Some(stmts)
}

/// A tuple literal's values, each bound first to a name of its own (`let __tuple3_0 =
/// y;`): the names, and the `let`s.
fn held_values(values: &syn::ExprTuple, count: &mut usize) -> (Vec<Ident>, Vec<Stmt>) {
    *count += 1;
    let held: Vec<Ident> = (0..values.elems.len())
        .map(|at| Ident::new(&format!("__tuple{count}_{at}"), Span::mixed_site()))
        .collect();
    let lets = (held.iter().zip(&values.elems))
        .map(|(name, value)| parse_quote!(let #name = #value;))
        .collect();
    (held, lets)
}

/// The flag that says a loop was left by a `return` whose value is in `result`.
fn left_flag(result: &Ident) -> Ident {
    Ident::new(&format!("{result}_left"), result.span())
}

/// Whether `body` still leaves its loop other than at its end: a `return` (outside
/// closures), an unlabelled `break` outside nested loops, or any mention of the loop's
/// label.
fn leaves(body: &Block, label: Option<&Label>) -> bool {
    jumps(body, label, Exit::Loop)
}

/// Whether `body` holds a jump of its loop (labelled `label`) of `kind`, closures aside:
/// for [`Exit::Loop`], see [`leaves`]; for [`Exit::Next`], a `continue` outside nested
/// loops, or one naming the label.
fn jumps(body: &Block, label: Option<&Label>, kind: Exit) -> bool {
    struct Jumps<'a> {
        label: Option<&'a Label>,
        kind: Exit,
        nested: usize,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for Jumps<'_> {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.found |= self.kind == Exit::Loop;
        }
        fn visit_expr_break(&mut self, exit: &'ast syn::ExprBreak) {
            self.found |= self.kind == Exit::Loop && exit.label.is_none() && self.nested == 0;
            syn::visit::visit_expr_break(self, exit);
        }
        fn visit_expr_continue(&mut self, skip: &'ast syn::ExprContinue) {
            self.found |= self.kind == Exit::Next
                && match (&skip.label, self.label) {
                    (None, _) => self.nested == 0,
                    (Some(target), Some(label)) => target.ident == label.name.ident,
                    (Some(_), None) => false,
                };
            syn::visit::visit_expr_continue(self, skip);
        }
        fn visit_lifetime(&mut self, lifetime: &'ast syn::Lifetime) {
            self.found |= self.kind == Exit::Loop
                && self
                    .label
                    .is_some_and(|label| label.name.ident == lifetime.ident);
        }
        fn visit_expr_closure(&mut self, _: &'ast ExprClosure) {}
        fn visit_expr_for_loop(&mut self, lp: &'ast syn::ExprForLoop) {
            self.visit_expr(&lp.expr);
            self.nested += 1;
            self.visit_block(&lp.body);
            self.nested -= 1;
        }
        fn visit_expr_while(&mut self, lp: &'ast syn::ExprWhile) {
            self.nested += 1;
            syn::visit::visit_expr_while(self, lp);
            self.nested -= 1;
        }
        fn visit_expr_loop(&mut self, lp: &'ast syn::ExprLoop) {
            self.nested += 1;
            syn::visit::visit_expr_loop(self, lp);
            self.nested -= 1;
        }
        fn visit_macro(&mut self, mac: &'ast syn::Macro) {
            let names: &[&str] = match self.kind {
                Exit::Next => &["continue"],
                _ => &["break", "return"],
            };
            self.found |= names_any(&mac.tokens, names);
        }
    }
    let mut visit = Jumps {
        label,
        kind,
        nested: 0,
        found: false,
    };
    syn::visit::Visit::visit_block(&mut visit, body);
    visit.found
}

/// How one loop's exits are rewritten: its label, its flag, and the local a `return`'s
/// value goes to (none where a `return` is not rewritten).
struct Stop<'a> {
    label: Option<&'a Label>,
    flag: Ident,
    result: Option<Ident>,
    /// Whether a `return` was rewritten.
    returned: bool,
    /// Whether a `break` was rewritten (then the loop's value is `()`).
    broke: bool,
    /// Which jumps are this stop's exits.
    kind: Exit,
}

/// What a [`Stop`] rewrites.
#[derive(Clone, Copy, PartialEq)]
enum Exit {
    /// A loop's `break` (and a `return` in it, where the result is held).
    Loop,
    /// A loop's `continue`: the flag is the iteration's, raised again at its start.
    Next,
    /// The function's `return`s, anywhere outside loops.
    Function,
}

impl Stop<'_> {
    /// Rewrites the exits at `body`'s own level as `flag = false` (the rest of the body
    /// under an `else`); whether it found at least one.
    fn rewrite(&mut self, body: &mut Block) -> bool {
        // An item is visible in its whole block: moved into the `else`, it would not be.
        if body.stmts.iter().any(|stmt| matches!(stmt, Stmt::Item(_))) {
            return false;
        }
        let Some(at) = body.stmts.iter().position(|stmt| self.holds(stmt)) else {
            return false;
        };
        let rest: Vec<Stmt> = body.stmts.drain(at + 1..).collect();
        let Some(stmt) = body.stmts.pop() else {
            return false;
        };
        match stmt {
            // A nested loop that leaves this one (`break 'outer`): it stops on this loop's
            // flag too, and the rest of this body runs only while the flag is up.
            Stmt::Expr(Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_), _) => {
                let Some(inner) = self.nested_exit(&stmt) else {
                    body.stmts.push(stmt);
                    body.stmts.extend(rest);
                    return false;
                };
                body.stmts.push(Stmt::Expr(inner, None));
                let mut otherwise = block_of(rest);
                self.rewrite(&mut otherwise);
                if !otherwise.stmts.is_empty() {
                    let flag = &self.flag;
                    body.stmts.push(parse_quote!(if #flag #otherwise));
                }
                true
            }
            // A bare exit: what follows never runs.
            Stmt::Expr(exit, _) if self.exits(&exit) => {
                body.stmts.extend(self.stop(exit));
                true
            }
            // `if c { s; exit }`: the rest runs in its `else`.
            Stmt::Expr(Expr::If(mut branch), _) if self.stopping(&stmt) => {
                if let Some(Stmt::Expr(exit, _)) = branch.then_branch.stmts.pop() {
                    branch.then_branch.stmts.extend(self.stop(exit));
                }
                let mut otherwise = block_of(rest);
                self.rewrite(&mut otherwise);
                branch.else_branch = Some(else_of(otherwise));
                body.stmts.push(Stmt::Expr(Expr::If(branch), None));
                true
            }
            // An exit deeper in an `if` or a block: each branch rewritten, and the rest
            // runs only while the flag is up.
            Stmt::Expr(Expr::If(mut branch), _) => {
                self.rewrite_if(&mut branch);
                body.stmts.push(Stmt::Expr(Expr::If(branch), None));
                self.guarded(body, rest);
                true
            }
            Stmt::Expr(Expr::Block(mut block), _) => {
                self.rewrite(&mut block.block);
                body.stmts.push(Stmt::Expr(Expr::Block(block), None));
                self.guarded(body, rest);
                true
            }
            other => {
                body.stmts.push(other);
                body.stmts.extend(rest);
                false
            }
        }
    }

    /// Every branch of an `if` chain rewritten.
    fn rewrite_if(&mut self, branch: &mut ExprIf) {
        self.rewrite(&mut branch.then_branch);
        if let Some((_, otherwise)) = &mut branch.else_branch {
            match &mut **otherwise {
                Expr::If(nested) => self.rewrite_if(nested),
                Expr::Block(block) => {
                    self.rewrite(&mut block.block);
                }
                _ => {}
            }
        }
    }

    /// `rest` (rewritten) after `body`'s statements, run only while the flag is up.
    fn guarded(&mut self, body: &mut Block, rest: Vec<Stmt>) {
        let mut rest = block_of(rest);
        self.rewrite(&mut rest);
        if !rest.stmts.is_empty() {
            let flag = &self.flag;
            body.stmts.push(parse_quote!(if #flag #rest));
        }
    }

    /// Whether `stmt` holds an exit of this stop where [`Stop::rewrite`] can rewrite it: as
    /// the statement itself, in the branches of an `if` or a block (at any depth), or in
    /// a nested loop that leaves this one by its label. (An exit anywhere else stays,
    /// and the caller leaves the loop as written.)
    fn holds(&self, stmt: &Stmt) -> bool {
        fn branch_holds(stop: &Stop<'_>, branch: &ExprIf) -> bool {
            branch.attrs.is_empty()
                && (branch.then_branch.stmts.iter().any(|stmt| stop.holds(stmt))
                    || match branch.else_branch.as_ref().map(|(_, e)| &**e) {
                        Some(Expr::If(nested)) => branch_holds(stop, nested),
                        Some(Expr::Block(block)) => {
                            block.attrs.is_empty()
                                && block.label.is_none()
                                && block.block.stmts.iter().any(|stmt| stop.holds(stmt))
                        }
                        _ => false,
                    })
        }
        match stmt {
            Stmt::Expr(Expr::If(branch), _) => self.stopping(stmt) || branch_holds(self, branch),
            Stmt::Expr(Expr::Block(block), _) => {
                block.attrs.is_empty()
                    && block.label.is_none()
                    && !block.block.stmts.iter().any(|s| matches!(s, Stmt::Item(_)))
                    && block.block.stmts.iter().any(|stmt| self.holds(stmt))
            }
            _ => self.stopping(stmt),
        }
    }

    /// `stmt`, a loop whose own body leaves this loop by its label, with those exits on
    /// this loop's flag, and stopping when it is down; `None` if it is not one.
    fn nested_exit(&mut self, stmt: &Stmt) -> Option<Expr> {
        self.label?;
        let Stmt::Expr(expr, _) = stmt else {
            return None;
        };
        let (attrs, label, body) = match expr {
            Expr::ForLoop(lp) => (&lp.attrs, &lp.label, &lp.body),
            Expr::While(lp) => (&lp.attrs, &lp.label, &lp.body),
            Expr::Loop(lp) => (&lp.attrs, &lp.label, &lp.body),
            _ => return None,
        };
        // The nested loop loses its own label: nothing may name it.
        let named = label
            .as_ref()
            .is_some_and(|label| names_any(body, &[label.name.ident.to_string().as_str()]));
        if !attrs.is_empty() || named {
            return None;
        }
        let mut body = body.clone();
        // Only exits of this loop: the nested loop's own were rewritten already.
        let mut inner = Stop {
            label: self.label,
            flag: self.flag.clone(),
            result: self.result.clone(),
            returned: false,
            broke: false,
            kind: self.kind,
        };
        if !inner.rewrite(&mut body) || leaves(&body, self.label) {
            return None;
        }
        self.returned |= inner.returned;
        self.broke |= inner.broke;
        let flag = &self.flag;
        Some(match expr.clone() {
            Expr::ForLoop(mut lp) => {
                body.stmts.push(parse_quote!(if !#flag { break; }));
                lp.label = None;
                lp.body = body;
                Expr::ForLoop(lp)
            }
            Expr::While(lp) => {
                let cond = &lp.cond;
                parse_quote!(while #flag && (#cond) #body)
            }
            _ => parse_quote!(while #flag #body),
        })
    }

    /// The statements an exit becomes.
    fn stop(&mut self, exit: Expr) -> Vec<Stmt> {
        let flag = &self.flag;
        let mut out = Vec::new();
        self.broke |= matches!(exit, Expr::Break(_));
        if let (Expr::Return(ret), Some(result)) = (&exit, &self.result) {
            if let Some(value) = &ret.expr {
                self.returned = true;
                out.push(parse_quote!(#result = #value;));
                // (A loop's flag also falls at a `break`: this says it was a `return`.)
                if self.kind == Exit::Loop {
                    let left = left_flag(result);
                    out.push(parse_quote!(#left = true;));
                }
            }
        }
        out.push(parse_quote!(#flag = false;));
        out
    }

    /// Whether `stmt` is an exit of this loop (a `break;` of it, or a `return v;` where
    /// returns are rewritten), or `if c { s; exit }` with no `else` and no other jump in
    /// `s`.
    fn stopping(&self, stmt: &Stmt) -> bool {
        let Stmt::Expr(expr, _) = stmt else {
            return false;
        };
        match expr {
            Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_) => {
                let mut probe = Stop {
                    label: self.label,
                    flag: self.flag.clone(),
                    result: self.result.clone(),
                    returned: false,
                    broke: false,
                    kind: self.kind,
                };
                probe.nested_exit(stmt).is_some()
            }
            Expr::If(branch) => {
                if branch.else_branch.is_some() || !branch.attrs.is_empty() {
                    return false;
                }
                let Some((Stmt::Expr(exit, _), before)) = branch.then_branch.stmts.split_last()
                else {
                    return false;
                };
                self.exits(exit)
                    && !before
                        .iter()
                        .any(|stmt| names_any(stmt, &["break", "continue", "return"]))
            }
            exit => self.exits(exit),
        }
    }

    fn exits(&self, expr: &Expr) -> bool {
        let ours = |label: &Option<syn::Lifetime>| match (label, self.label) {
            (None, _) => true,
            (Some(target), Some(label)) => target.ident == label.name.ident,
            (Some(_), None) => false,
        };
        match expr {
            Expr::Break(exit) => {
                self.kind == Exit::Loop
                    && exit.expr.is_none()
                    && exit.attrs.is_empty()
                    && ours(&exit.label)
            }
            Expr::Continue(skip) => {
                self.kind == Exit::Next && skip.attrs.is_empty() && ours(&skip.label)
            }
            Expr::Return(ret) => {
                self.kind != Exit::Next
                    && self.result.is_some()
                    && ret.attrs.is_empty()
                    && ret.expr.is_some()
            }
            _ => false,
        }
    }
}

/// A loop body's `continue`s deeper than [`skip_by_else`] reads (in nested `if`s and
/// blocks, or in a nested loop, by label), with a flag raised at the start of each
/// iteration instead of the jump, and the rest of the iteration run while it is up:
///
/// ```text
/// for p in it {                        for p in it {
///     if a {                               let mut next = true;
///         if b { continue; }               if a {
///         s                                    if b { next = false; } else { s }
///     }                                    }
///     rest                                 if next { rest }
/// }                                    }
/// ```
///
/// Left as written where a `continue` stays (one in an expression, say).
fn continues_as_flags(body: &mut Block, label: Option<&Label>, count: &mut usize) {
    if !continues(body, label) {
        return;
    }
    let mut stop = Stop {
        label,
        flag: Ident::new(&format!("__autodiff_next_{count}"), Span::call_site()),
        result: None,
        returned: false,
        broke: false,
        kind: Exit::Next,
    };
    let mut rewritten = body.clone();
    if !stop.rewrite(&mut rewritten) || continues(&rewritten, label) {
        return;
    }
    *count += 1;
    let flag = &stop.flag;
    rewritten
        .stmts
        .insert(0, parse_quote!(let mut #flag = true;));
    *body = rewritten;
}

/// Whether `body` holds a `continue` of its loop (labelled `label`) (see [`jumps`]).
fn continues(body: &Block, label: Option<&Label>) -> bool {
    jumps(body, label, Exit::Next)
}

/// A function body (returning `f64`) with a `return` deeper than the sweeps read one (in
/// nested `if`s or blocks, rather than last in an `if` at the body's own level), with a
/// flag instead of every jump: the tail is the last `return`, each sets the result and
/// lowers the flag, and what would follow one runs only while the flag is up.
///
/// ```text
/// if a {                                let mut go = true; let mut ret = 0.0;
///     if b { return v; }                if a {
///     s                                     if b { ret = v; go = false; } else { s }
/// }                                     }
/// rest; tail                            if go { rest; ret = tail; go = false; }
///                                       ret
/// ```
///
/// Left as written where a `return` stays (one in an expression, or in a loop whose
/// exits [`breaks_as_flags`] could not rewrite).
fn returns_as_flags(block: &mut Block, count: &mut usize) {
    if !deep_returns(block) {
        return;
    }
    let mut body = block.clone();
    match body.stmts.pop() {
        Some(Stmt::Expr(tail, None)) if !matches!(tail, Expr::Return(_)) => {
            body.stmts.push(parse_quote!(return #tail;));
        }
        Some(last) => body.stmts.push(last),
        None => return,
    }
    let mut stop = Stop {
        label: None,
        flag: Ident::new(&format!("__autodiff_go_{count}"), Span::call_site()),
        result: Some(Ident::new(
            &format!("__autodiff_ret_{count}"),
            Span::call_site(),
        )),
        returned: false,
        broke: false,
        kind: Exit::Function,
    };
    if !stop.rewrite(&mut body) || returns(|v| v.visit_block(&body)) {
        return;
    }
    *count += 1;
    let (flag, result) = (&stop.flag, stop.result.as_ref());
    body.stmts.insert(0, parse_quote!(let mut #flag = true;));
    body.stmts.insert(1, parse_quote!(let mut #result = 0.0;));
    body.stmts.push(Stmt::Expr(parse_quote!(#result), None));
    *block = body;
}

/// Whether a function body holds a `return` the sweeps do not read where it is (see
/// [`read_returns`]).
fn deep_returns(block: &Block) -> bool {
    returns(|v| v.visit_block(block)) && !read_returns(&block.stmts)
}

/// Whether the sweeps read every `return` of `stmts` where it is, as their lowering of a
/// function body does: a bare `return` at this level ends it, and an `if` whose first
/// branch ends in one takes its `else` (an `if`, or a block that binds no names) and the
/// statements after it as its other branch, each read the same way; no other statement
/// holds one.
fn read_returns(stmts: &[Stmt]) -> bool {
    let end = stmts
        .iter()
        .position(|stmt| matches!(stmt, Stmt::Expr(Expr::Return(_), _)))
        .map_or(stmts.len(), |at| at + 1);
    let stmts = &stmts[..end];
    let early = stmts.iter().position(|stmt| {
        matches!(stmt, Stmt::Expr(Expr::If(branch), _)
            if matches!(branch.then_branch.stmts.last(), Some(Stmt::Expr(Expr::Return(_), _))))
    });
    let plain = |stmts: &[Stmt]| {
        stmts.iter().all(|stmt| match stmt {
            Stmt::Expr(Expr::Return(ret), _) => ret
                .expr
                .as_ref()
                .is_none_or(|value| !returns(|v| v.visit_expr(value))),
            other => !returns(|v| v.visit_stmt(other)),
        })
    };
    let Some(at) = early else {
        return plain(stmts);
    };
    let Stmt::Expr(Expr::If(branch), _) = &stmts[at] else {
        return false;
    };
    let mut rest = match branch
        .else_branch
        .as_ref()
        .map(|(_, otherwise)| &**otherwise)
    {
        None => Vec::new(),
        Some(nested @ Expr::If(_)) => vec![Stmt::Expr(nested.clone(), None)],
        Some(Expr::Block(block))
            if block.label.is_none()
                && !block
                    .block
                    .stmts
                    .iter()
                    .any(|s| matches!(s, Stmt::Local(_))) =>
        {
            block.block.stmts.clone()
        }
        Some(_) => return false,
    };
    rest.extend(stmts[at + 1..].iter().cloned());
    plain(&stmts[..at])
        && !matches!(&*branch.cond, Expr::Let(_))
        && !returns(|v| v.visit_expr(&branch.cond))
        && read_returns(&branch.then_branch.stmts)
        && read_returns(&rest)
}

/// Whether what `visit` walks holds a `return` outside closures.
fn returns(visit: impl FnOnce(&mut Returns)) -> bool {
    let mut found = Returns(false);
    visit(&mut found);
    found.0
}

/// Finds a `return` outside closures (see [`returns`]).
struct Returns(bool);

impl<'ast> syn::visit::Visit<'ast> for Returns {
    fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
        self.0 = true;
    }
    fn visit_expr_closure(&mut self, _: &'ast ExprClosure) {}
    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.0 |= names_any(&mac.tokens, &["return"]);
    }
}

/// Removes a loop's label that nothing in its body names any more (a `continue 'label`
/// rewritten away): the rewrite reads the loop as an unlabelled one.
fn drop_unused_label(label: &mut Option<Label>, body: &Block) {
    if let Some(named) = label {
        if !names_any(body, &[named.name.ident.to_string().as_str()]) {
            *label = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use quote::{quote, ToTokens};
    use syn::Block;

    fn desugared(body: proc_macro2::TokenStream) -> String {
        let block: Block = syn::parse2(body).expect("a block");
        super::desugar(&block, true).into_token_stream().to_string()
    }

    fn same(a: proc_macro2::TokenStream, b: proc_macro2::TokenStream) {
        let expected: Block = syn::parse2(b).expect("a block");
        assert_eq!(desugared(a), expected.into_token_stream().to_string());
    }

    #[test]
    fn map_then_fold_moves_the_map_into_the_step() {
        same(
            quote!({ xs.iter().map(|x| x * w).fold(0.0, |acc, v| acc + v) }),
            quote!({
                let mut __autodiff_fold_1 = 0.0;
                for x in xs.iter() {
                    let __autodiff_mapped_0 = x * w;
                    __autodiff_fold_1 = __autodiff_fold_1 + __autodiff_mapped_0;
                }
                __autodiff_fold_1
            }),
        );
        // The step's item has a name of its own, also where the map binds the same one.
        same(
            quote!({ xs.iter().map(|v| v * 2.0).fold(0.0, |a, v| a + v) }),
            quote!({
                let mut __autodiff_fold_1 = 0.0;
                for v in xs.iter() {
                    let __autodiff_mapped_0 = v * 2.0;
                    __autodiff_fold_1 = __autodiff_fold_1 + __autodiff_mapped_0;
                }
                __autodiff_fold_1
            }),
        );
        // The move would change what `acc` means in the map, or `x` in the step; a map
        // over a `move` closure is not one the loop reads.
        for body in [
            quote!({ xs.iter().map(|x| x * acc).fold(0.0, |acc, v| acc + v) }),
            quote!({ xs.iter().map(|v| v * w).fold(0.0, |acc, x| acc + x * v) }),
            quote!({ xs.iter().map(move |x| x * w).fold(0.0, |acc, v| acc + v) }),
        ] {
            same(body.clone(), body);
        }
    }

    #[test]
    fn a_loop_over_references_binds_the_numbers_it_dereferences() {
        same(
            quote!({
                for (i, (p, q)) in v.iter().zip(w.iter().rev()).enumerate() {
                    s += *p * q.sin() * i as f64;
                }
                for p in &v {
                    s *= *p;
                }
                s
            }),
            quote!({
                for (i, (&p, q)) in v.iter().zip(w.iter().rev()).enumerate() {
                    s += p * q.sin() * i as f64;
                }
                for &p in &v {
                    s *= p;
                }
                s
            }),
        );
        // A name bound again inside, or a counter dereferenced, is left as written.
        for body in [
            quote!({
                for p in v.iter() {
                    let p = &w[0];
                    s += *p;
                }
                s
            }),
            quote!({
                for (i, p) in v.iter().enumerate() {
                    s += *p * *i;
                }
                s
            }),
        ] {
            same(body.clone(), body);
        }
    }

    #[test]
    fn a_fold_over_a_computed_array_names_it_first() {
        same(
            quote!({ g(w).iter().map(|h| h * h).sum::<f64>() }),
            quote!({
                let __autodiff_items_0 = g(w);
                __autodiff_items_0.iter().map(|h| h * h).sum::<f64>()
            }),
        );
        let body = quote!({ w.iter().sum::<f64>() + for_loop() });
        same(body.clone(), body);
    }

    #[test]
    fn breaks_and_returns_in_loops_become_flags() {
        same(
            quote!({
                loop {
                    y = y * x;
                    if y > 2.0 {
                        break;
                    }
                    k += 1;
                }
                y
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                while __autodiff_go_0 {
                    y = y * x;
                    if y > 2.0 {
                        __autodiff_go_0 = false;
                    } else {
                        k += 1;
                    }
                }
                y
            }),
        );
        same(
            quote!({
                while k < n {
                    if y > 2.0 {
                        break;
                    }
                    y = y * x;
                }
                y
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                while __autodiff_go_0 && (k < n) {
                    if y > 2.0 {
                        __autodiff_go_0 = false;
                    } else {
                        y = y * x;
                    }
                }
                y
            }),
        );
        same(
            quote!({
                for v in xs.iter() {
                    if t > 3.0 {
                        return t * v;
                    }
                    t += v;
                }
                t
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                let mut __autodiff_ret_0 = 0.0;
                let mut __autodiff_ret_0_left = false;
                for v in xs.iter() {
                    if t > 3.0 {
                        __autodiff_ret_0 = t * v;
                        __autodiff_ret_0_left = true;
                        __autodiff_go_0 = false;
                    } else {
                        t += v;
                    }
                    if !__autodiff_go_0 {
                        break;
                    }
                }
                if __autodiff_ret_0_left {
                    return __autodiff_ret_0;
                }
                t
            }),
        );
        // A labelled `break` out of a nested loop stops both, on the outer loop's flag.
        same(
            quote!({
                'outer: loop {
                    for i in 0..n {
                        if i > 2 {
                            break 'outer;
                        }
                    }
                }
                y
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                while __autodiff_go_0 {
                    for i in 0..n {
                        if i > 2 {
                            __autodiff_go_0 = false;
                        } else {
                        }
                        if !__autodiff_go_0 {
                            break;
                        }
                    }
                }
                y
            }),
        );
        // A `break` deeper than the body's own level: the rest of the body runs while the
        // flag is up.
        same(
            quote!({
                loop {
                    if a {
                        if b {
                            break;
                        }
                    }
                    y = y * x;
                }
                y
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                while __autodiff_go_0 {
                    if a {
                        if b {
                            __autodiff_go_0 = false;
                        } else {
                        }
                    }
                    if __autodiff_go_0 {
                        y = y * x;
                    }
                }
                y
            }),
        );
        // A `return` where the result is not an `f64` stays as written.
        let body = quote!({
            for k in 0..n {
                if xs[k] > 3.0 {
                    return out;
                }
            }
            out
        });
        let block: Block = syn::parse2(body).expect("a block");
        assert_eq!(
            super::desugar(&block, false)
                .into_token_stream()
                .to_string(),
            block.into_token_stream().to_string()
        );
    }

    #[test]
    fn returns_deeper_than_the_sweeps_read_become_a_flag() {
        same(
            quote!({
                let mut acc = x;
                if a {
                    if b {
                        return acc;
                    }
                    acc = acc * x;
                }
                {
                    let t = acc * 2.0;
                    if t > 1.0 {
                        return t;
                    }
                }
                acc + 1.0
            }),
            quote!({
                let mut __autodiff_go_0 = true;
                let mut __autodiff_ret_0 = 0.0;
                let mut acc = x;
                if a {
                    if b {
                        __autodiff_ret_0 = acc;
                        __autodiff_go_0 = false;
                    } else {
                        acc = acc * x;
                    }
                }
                if __autodiff_go_0 {
                    {
                        let t = acc * 2.0;
                        if t > 1.0 {
                            __autodiff_ret_0 = t;
                            __autodiff_go_0 = false;
                        } else {
                        }
                    }
                    if __autodiff_go_0 {
                        __autodiff_ret_0 = acc + 1.0;
                        __autodiff_go_0 = false;
                    }
                }
                __autodiff_ret_0
            }),
        );
        // Returns the sweeps read where they are stay: last in an `if`'s first branch,
        // whose `else` and the statements after are the other branch.
        let body = quote!({
            if a {
                if b {
                    return x;
                }
                return y;
            } else if c {
                return z;
            }
            w
        });
        same(body.clone(), body);
        // A `return` in an expression stays (the rewrite reads it, on the tape).
        let body = quote!({
            let t = if a {
                return x;
            } else {
                y
            };
            t
        });
        same(body.clone(), body);
    }

    #[test]
    fn continue_becomes_an_else_over_the_rest_of_the_iteration() {
        same(
            quote!({
                for i in 0..n {
                    a();
                    if c(i) {
                        b();
                        continue;
                    }
                    d();
                    if e {
                        continue;
                    }
                    f()
                }
            }),
            quote!({
                for i in 0..n {
                    a();
                    if c(i) {
                        b();
                    } else {
                        d();
                        if e {
                        } else {
                            f()
                        }
                    }
                }
            }),
        );
        // An outer loop's `continue` from a nested loop, one nested deeper, or one after
        // a `break`: a flag raised at the start of each iteration, and the rest of the
        // iteration run while it is up.
        same(
            quote!({
                'o: for i in 0..n {
                    for j in 0..m {
                        if c {
                            continue 'o;
                        }
                        d();
                    }
                }
            }),
            quote!({
                for i in 0..n {
                    let mut __autodiff_next_0 = true;
                    for j in 0..m {
                        if c {
                            __autodiff_next_0 = false;
                        } else {
                            d();
                        }
                        if !__autodiff_next_0 {
                            break;
                        }
                    }
                }
            }),
        );
        same(
            quote!({
                for i in 0..n {
                    if a {
                        if c {
                            continue;
                        }
                    }
                    d();
                }
            }),
            quote!({
                for i in 0..n {
                    let mut __autodiff_next_0 = true;
                    if a {
                        if c {
                            __autodiff_next_0 = false;
                        } else {
                        }
                    }
                    if __autodiff_next_0 {
                        d();
                    }
                }
            }),
        );
        same(
            quote!({
                for i in 0..n {
                    if c {
                        if z {
                            break;
                        }
                        continue;
                    }
                    d();
                }
            }),
            quote!({
                let mut __autodiff_go_1 = true;
                for i in 0..n {
                    let mut __autodiff_next_0 = true;
                    if c {
                        if z {
                            __autodiff_go_1 = false;
                        } else {
                            __autodiff_next_0 = false;
                        }
                    }
                    if __autodiff_go_1 {
                        if __autodiff_next_0 {
                            d();
                        }
                    }
                    if !__autodiff_go_1 {
                        break;
                    }
                }
            }),
        );
        // An item in the body (visible in all of it) keeps the body as written.
        let body = quote!({
            for i in 0..n {
                if c {
                    continue;
                }
                d();
                fn d() {}
            }
        });
        same(body.clone(), body);
        same(
            quote!({
                'o: for i in 0..n {
                    if c {
                        continue 'o;
                    }
                    d();
                }
            }),
            quote!({
                for i in 0..n {
                    if c {
                    } else {
                        d();
                    }
                }
            }),
        );
    }

    #[test]
    fn a_match_on_data_becomes_an_if_chain() {
        same(
            quote!({
                let y = match k % 3 {
                    0 => a,
                    1 | 2 if t > 0.0 => b,
                    _ => c,
                };
                y
            }),
            quote!({
                let y = if ::core::matches!(k % 3, 0) {
                    a
                } else if ::core::matches!(k % 3, 1 | 2) && (t > 0.0) {
                    b
                } else {
                    c
                };
                y
            }),
        );
        // A pattern that may bind, a guarded last arm, a scrutinee with effects: left alone.
        for body in [
            quote!({
                match k {
                    n => a,
                    _ => b,
                }
            }),
            quote!({
                match k {
                    0 => a,
                    _ if t => b,
                }
            }),
            quote!({
                match next() {
                    0 => a,
                    _ => b,
                }
            }),
        ] {
            same(body.clone(), body);
        }
    }
}
