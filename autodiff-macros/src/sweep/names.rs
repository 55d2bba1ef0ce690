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
use crate::signature::{Kind, Param};

#[derive(Default)]
struct Binding {
    count: usize,
    mutable: bool,
    /// Visible in the reverse half wherever the forward half sees it.
    visible: bool,
    /// A nested `let` the reverse half replays.
    replayed: bool,
}

/// Every name the body binds (see the module docs).
#[derive(Default)]
pub(crate) struct Names {
    bindings: HashMap<String, Binding>,
}

impl Names {
    /// The names of the rewritten body `block`, whose parameters are `params`.
    pub(crate) fn of(block: &Block, params: &[Param]) -> Self {
        let mut names = Names::default();
        for param in params {
            if let Some(ident) = &param.ident {
                let binding = names.bindings.entry(ident.to_string()).or_default();
                binding.count += 1;
                binding.mutable |= param.mutability.is_some() || !matches!(param.kind, Kind::Data);
                binding.visible = true;
            }
        }
        let mut count = Count {
            names: &mut names,
            depth: 0,
        };
        count.visit_block(block);
        // Nested lets are replayed in order, each if its right side is steady by then.
        let mut replay = Replay {
            names: &mut names,
            depth: 0,
        };
        replay.visit_block(block);
        names
    }

    /// Whether `name`'s one binding is a `let` the reverse half replays.
    pub(crate) fn replayable(&self, name: &syn::Ident) -> bool {
        self.bindings
            .get(&name.to_string())
            .is_some_and(|binding| binding.replayed)
    }

    /// Whether `tokens`, an expression, is steady (see the module docs).
    pub(crate) fn steady(&self, tokens: &TokenStream) -> bool {
        syn::parse2::<Expr>(tokens.clone()).is_ok_and(|expr| self.steady_expr(&expr))
    }

    fn steady_name(&self, name: &str) -> bool {
        match self.bindings.get(name) {
            Some(binding) => binding.count == 1 && !binding.mutable && binding.visible,
            // Not bound in the body: a constant, a static or a function's name; the
            // generated names (`__primal_3`) are not steady.
            None => !name.starts_with("__"),
        }
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
];

struct Count<'a> {
    names: &'a mut Names,
    depth: usize,
}

impl Count<'_> {
    fn bind(&mut self, pat: &Pat, visible: bool) {
        let mut bound = Vec::new();
        pattern_names(pat, &mut bound);
        let mutable = pattern_mutable(pat);
        for name in bound {
            let binding = self.names.bindings.entry(name.to_string()).or_default();
            binding.count += 1;
            binding.mutable |= mutable;
            binding.visible = visible;
        }
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
        self.depth += 1;
        syn::visit::visit_block(self, block);
        self.depth -= 1;
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        // Depth 1 is the generated prologue's block, 2 the body's top level.
        self.bind(&local.pat, self.depth <= 2);
        syn::visit::visit_local(self, local);
    }

    fn visit_expr_for_loop(&mut self, lp: &'ast syn::ExprForLoop) {
        self.bind(&lp.pat, true);
        syn::visit::visit_expr_for_loop(self, lp);
    }

    fn visit_expr_closure(&mut self, closure: &'ast syn::ExprClosure) {
        for input in &closure.inputs {
            self.bind(input, false);
        }
        syn::visit::visit_expr_closure(self, closure);
    }

    fn visit_expr_assign(&mut self, assign: &'ast syn::ExprAssign) {
        self.mutated(&assign.left);
        syn::visit::visit_expr_assign(self, assign);
    }

    fn visit_expr_binary(&mut self, binary: &'ast syn::ExprBinary) {
        if is_compound(&binary.op) {
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
                        self.names
                            .bindings
                            .entry(ident.to_string())
                            .or_default()
                            .mutable = true;
                    }
                    return;
                }
                _ => return,
            }
        }
    }
}

fn is_compound(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}

struct Replay<'a> {
    names: &'a mut Names,
    depth: usize,
}

impl<'ast> Visit<'ast> for Replay<'_> {
    fn visit_block(&mut self, block: &'ast Block) {
        self.depth += 1;
        syn::visit::visit_block(self, block);
        self.depth -= 1;
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if self.depth > 2 {
            if let (Pat::Ident(ident), Some(init)) = (&local.pat, &local.init) {
                let steady = init.diverge.is_none() && self.names.steady_expr(&init.expr);
                if let Some(binding) = self.names.bindings.get_mut(&ident.ident.to_string()) {
                    if steady && binding.count == 1 && !binding.mutable {
                        binding.visible = true;
                        binding.replayed = true;
                    }
                }
            }
        }
        syn::visit::visit_local(self, local);
    }
}
