//! Which data names the reverse half may re-read: a name bound once in the whole body,
//! never mutated, and visible where the reverse half reads it (a data parameter, a `let`
//! at the body's top level, a loop's pattern, or a `let` the reverse half replays).
//! Expressions over such names and constants are "steady": recomputed in the reverse half,
//! they give what the forward half saw.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use syn::visit::Visit;
use syn::{Block, Expr, Pat};

use super::lower::pattern_names;
use crate::parse::signature::{Kind, Param};

/// Where a name is bound and how.
struct Site {
    /// The blocks it is visible in: every block whose path starts with this one.
    scope: Vec<usize>,
    mutable: bool,
    kind: SiteKind,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum SiteKind {
    /// A data parameter or a `let` at the body's top level: in scope for the whole
    /// reverse half.
    Top,
    /// A loop's pattern: the reversed loop binds it again.
    Pattern,
    /// A `let` inside a block: replayed by the reversed block if its right side is steady.
    Nested { replayed: bool },
    /// Anything else (a closure's parameter, a differentiated parameter).
    Hidden,
}

/// Every name the body binds (see the module docs).
#[derive(Default)]
pub(crate) struct Names {
    sites: HashMap<String, Vec<Site>>,
    /// The nested `let`s in order: name, site index, right side.
    nested: Vec<(String, usize, Expr)>,
}

impl Names {
    /// The names of the rewritten body `block`, whose parameters are `params`. For the
    /// halves (`half`), whose reverse half is a function of its own, the top-level `let`s
    /// are replayed like nested ones.
    pub(crate) fn of(block: &Block, params: &[Param], half: bool) -> Self {
        let mut names = Names::default();
        for param in params {
            if let Some(ident) = &param.ident {
                let kind = match param.kind {
                    Kind::Data => SiteKind::Top,
                    _ => SiteKind::Hidden,
                };
                names
                    .sites
                    .entry(ident.to_string())
                    .or_default()
                    .push(Site {
                        scope: Vec::new(),
                        mutable: param.mutability.is_some(),
                        kind,
                    });
            }
        }
        let mut count = Count {
            names: &mut names,
            path: Vec::new(),
            blocks: 0,
            half,
        };
        count.visit_block(block);
        // Replayed lets: optimistically all, then less each round until none changes.
        loop {
            let mut changed = false;
            for at in 0..names.nested.len() {
                let (name, index, init) = &names.nested[at];
                let steady = names.steady_expr(init);
                let replayed =
                    names.sites[name][*index].kind == (SiteKind::Nested { replayed: true });
                if replayed && !steady {
                    let (name, index) = (name.clone(), *index);
                    if let Some(sites) = names.sites.get_mut(&name) {
                        sites[index].kind = SiteKind::Nested { replayed: false };
                    }
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        names
    }

    /// Whether the body or the signature binds `name` (else it names a constant, a
    /// static or a unit value, which each use evaluates afresh).
    pub(crate) fn binds(&self, name: &str) -> bool {
        self.sites.contains_key(name)
    }

    /// Whether the `let` binding `name` is one the reverse half replays.
    pub(crate) fn replayable(&self, name: &syn::Ident) -> bool {
        self.steady_name(&name.to_string())
    }

    /// Whether `tokens`, an expression, is steady (see the module docs).
    pub(crate) fn steady(&self, tokens: &TokenStream) -> bool {
        syn::parse2::<Expr>(tokens.clone()).is_ok_and(|expr| self.steady_expr(&expr))
    }

    /// Every binding of `name` is immutable and visible to the reverse half, and none is
    /// in scope where another is: then wherever the forward half reads it, the reverse
    /// half's mirror of that place reads the same binding.
    fn steady_name(&self, name: &str) -> bool {
        let Some(sites) = self.sites.get(name) else {
            // Not bound in the body: a constant, a static or a function's name; the
            // generated names (`__primal_3`) are not steady, but for a kept index (bound
            // before its statement and taken back before its reverse, see
            // `Lower::keep_indices`).
            return !name.starts_with("__") || name.starts_with("__autodiff_index_");
        };
        let visible = sites.iter().all(|site| {
            !site.mutable
                && matches!(
                    site.kind,
                    SiteKind::Top | SiteKind::Pattern | SiteKind::Nested { replayed: true }
                )
        });
        let apart = sites.iter().enumerate().all(|(at, one)| {
            sites[at + 1..].iter().all(|other| {
                !one.scope.starts_with(&other.scope) && !other.scope.starts_with(&one.scope)
            })
        });
        visible && apart
    }
    fn steady_expr(&self, expr: &Expr) -> bool {
        let steady = |expr: &Expr| self.steady_expr(expr);
        match expr {
            Expr::Lit(_) => true,
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) if path.qself.is_none() => self.steady_name(&ident.to_string()),
                // `f64::EPSILON`, `core::f64::consts::PI`.
                _ => path.path.segments.len() > 1,
            },
            Expr::Binary(binary) => steady(&binary.left) && steady(&binary.right),
            Expr::Unary(unary) => steady(&unary.expr),
            Expr::Cast(cast) => steady(&cast.expr),
            Expr::Paren(paren) => steady(&paren.expr),
            Expr::Group(group) => steady(&group.expr),
            Expr::Reference(reference) => reference.mutability.is_none() && steady(&reference.expr),
            Expr::Index(index) => steady(&index.expr) && steady(&index.index),
            Expr::Field(field) => steady(&field.base),
            Expr::Range(range) => {
                range.start.as_deref().is_none_or(steady) && range.end.as_deref().is_none_or(steady)
            }
            Expr::Tuple(tuple) => tuple.elems.iter().all(steady),
            Expr::Array(array) => array.elems.iter().all(steady),
            Expr::Repeat(repeat) => steady(&repeat.expr) && steady(&repeat.len),
            // `if c { 0.75 } else { -2.0 }`: each branch a value alone.
            Expr::If(branch) => {
                let value = |block: &Block| matches!(block.stmts.as_slice(), [syn::Stmt::Expr(value, None)] if steady(value));
                steady(&branch.cond)
                    && value(&branch.then_branch)
                    && branch.else_branch.as_ref().is_some_and(
                        |(_, otherwise)| match &**otherwise {
                            Expr::Block(block) => block.label.is_none() && value(&block.block),
                            otherwise => steady(otherwise),
                        },
                    )
            }
            Expr::MethodCall(call) => {
                PURE.contains(&call.method.to_string().as_str())
                    && call.turbofish.is_none()
                    && steady(&call.receiver)
                    && call.args.iter().all(steady)
            }
            _ => false,
        }
    }
}

/// Methods on data the reverse half may call again: they read and return, nothing else.
const PURE: &[&str] = &[
    "len",
    "is_empty",
    "abs",
    "sqrt",
    "exp",
    "ln",
    "powi",
    "powf",
    "min",
    "max",
    "floor",
    "ceil",
    "round",
    "trunc",
    "signum",
    "iter",
    "chunks",
    "chunks_exact",
    "windows",
    "zip",
    "enumerate",
    "rev",
    "copied",
    "cloned",
    "skip",
    "take",
    "recip",
    "sin",
    "cos",
    "tanh",
    "tan",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "hypot",
    "cbrt",
    "exp2",
    "log",
    "log2",
    "log10",
    "mul_add",
    "clamp",
    "pow",
    "rem_euclid",
    "div_euclid",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "step_by",
];

struct Count<'a> {
    names: &'a mut Names,
    /// The blocks around the current point, by number.
    path: Vec<usize>,
    blocks: usize,
    half: bool,
}

impl Count<'_> {
    fn bind(&mut self, pat: &Pat, scope: Vec<usize>, kind: SiteKind) -> Vec<(String, usize)> {
        let mut bound = Vec::new();
        pattern_names(pat, &mut bound);
        let mutable = pattern_mutable(pat);
        let mut out = Vec::new();
        for name in bound {
            let sites = self.names.sites.entry(name.to_string()).or_default();
            sites.push(Site {
                scope: scope.clone(),
                mutable,
                kind,
            });
            out.push((name.to_string(), sites.len() - 1));
        }
        out
    }

    fn enter(&mut self) {
        self.blocks += 1;
        self.path.push(self.blocks);
    }
}

fn pattern_mutable(pat: &Pat) -> bool {
    struct Mutable(bool);
    impl<'ast> Visit<'ast> for Mutable {
        fn visit_pat_ident(&mut self, ident: &'ast syn::PatIdent) {
            self.0 |= ident.mutability.is_some() || ident.by_ref.is_some();
            syn::visit::visit_pat_ident(self, ident);
        }
    }
    let mut found = Mutable(false);
    found.visit_pat(pat);
    found.0
}

impl<'ast> Visit<'ast> for Count<'_> {
    fn visit_block(&mut self, block: &'ast Block) {
        self.enter();
        syn::visit::visit_block(self, block);
        self.path.pop();
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        // Path length 1 is the generated prologue's block, 2 the body's top level.
        let top = self.path.len() <= 2 && !self.half;
        let kind = if top {
            SiteKind::Top
        } else {
            SiteKind::Nested { replayed: true }
        };
        let scope = if top { Vec::new() } else { self.path.clone() };
        let bound = self.bind(&local.pat, scope, kind);
        match (&local.pat, &local.init) {
            (Pat::Ident(_), Some(init)) if !top && init.diverge.is_none() => {
                for (name, site) in bound {
                    self.names.nested.push((name, site, (*init.expr).clone()));
                }
            }
            _ if !top => {
                for (name, index) in bound {
                    if let Some(sites) = self.names.sites.get_mut(&name) {
                        sites[index].kind = SiteKind::Nested { replayed: false };
                    }
                }
            }
            _ => {}
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_expr_for_loop(&mut self, lp: &'ast syn::ExprForLoop) {
        self.visit_expr(&lp.expr);
        self.enter();
        let scope = self.path.clone();
        self.bind(&lp.pat, scope, SiteKind::Pattern);
        self.visit_block(&lp.body);
        self.path.pop();
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        self.enter();
        for input in &closure.inputs {
            let scope = self.path.clone();
            self.bind(input, scope, SiteKind::Hidden);
        }
        syn::visit::visit_expr(self, &closure.body);
        self.path.pop();
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        self.mutated(&assign.left);
        syn::visit::visit_expr_assign(self, assign);
    }

    fn visit_expr_binary(&mut self, binary: &'ast syn::ExprBinary) {
        if crate::rewrite::is_assign_op(&binary.op) {
            self.mutated(&binary.left);
        }
        syn::visit::visit_expr_binary(self, binary);
    }

    fn visit_expr_reference(&mut self, reference: &'ast syn::ExprReference) {
        if reference.mutability.is_some() {
            self.mutated(&reference.expr);
        }
        syn::visit::visit_expr_reference(self, reference);
    }
}

impl Count<'_> {
    /// The place's root name may change.
    fn mutated(&mut self, place: &Expr) {
        let mut place = place;
        loop {
            match place {
                Expr::Index(index) => place = &index.expr,
                Expr::Field(field) => place = &field.base,
                Expr::Paren(paren) => place = &paren.expr,
                Expr::Unary(unary) => place = &unary.expr,
                Expr::Path(path) => {
                    if let Some(ident) = path.path.get_ident() {
                        let sites = self.names.sites.entry(ident.to_string()).or_default();
                        for site in sites {
                            site.mutable = true;
                        }
                    }
                    return;
                }
                _ => return,
            }
        }
    }
}
