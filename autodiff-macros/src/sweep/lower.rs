//! From the rewritten body (the generic body `_graph` and the trace run) to the analysed
//! [`Program`]: reading the body the trace runs, rather than the user's, is what makes the
//! sweeps record the same operations in the same order. Anything outside the forms below
//! gives `None`, and `name_grad` keeps the trace.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Pat, Stmt as SynStmt};

use super::ir::{Data, Op, Operand, Place, Program, Stmt, Value, Var, VarId};
use super::names::Names;
use crate::ops::{self, Shape};
use crate::signature::{self, Kind, Param};

/// Lowers `graph_body` (the rewrite's output) with the signature's `params`.
pub(crate) fn lower(graph_body: &TokenStream, params: &[Param]) -> Option<Program> {
    let block: Block = syn::parse2(graph_body.clone()).ok()?;
    let names = Names::of(&block, params);
    let mut lower = Lower {
        vars: Vec::new(),
        scopes: vec![Vec::new()],
        ops: 0,
        flags: 0,
        loops: 0,
        depth: 0,
        names,
        pending: Vec::new(),
    };
    for param in params {
        let name = param.ident.clone()?;
        match param.kind {
            Kind::Data => lower.bind(&name, None),
            Kind::Scalar | Kind::Array if param.mutability.is_none() => {
                let depth = signature::array_lengths(&param.ty).len();
                let var = lower.declare(&name, true, depth, quote!());
                lower.bind(
                    &name,
                    Some(Place {
                        var,
                        indices: Vec::new(),
                    }),
                );
            }
            _ => return None,
        }
    }
    // The prologue lends each parameter; the body proper is the block labelled 'body.
    let mut body = None;
    for stmt in &block.stmts {
        match stmt {
            SynStmt::Local(_) if is_prologue(stmt) => {}
            SynStmt::Expr(Expr::Block(labelled), None) if labelled.label.is_some() => {
                body = Some(&labelled.block);
            }
            _ => return None,
        }
    }
    let body = body?;
    let (last, rest) = body.stmts.split_last()?;
    let SynStmt::Expr(tail, None) = last else {
        return None;
    };
    let mut stmts = lower.stmts(rest)?;
    // `Ok(if c { a } else { b })`: the branches assign a result local, the output.
    let output = match tail {
        Expr::Call(call) if path_ends(&call.func, "Ok") && call.args.len() == 1 => {
            match &call.args[0] {
                Expr::If(branch) => {
                    let name = Ident::new("__output", Span::mixed_site());
                    let branch = lower.if_local(&name, branch)?;
                    let Some(Stmt::Let { var, .. }) = branch.first() else {
                        return None;
                    };
                    let var = *var;
                    stmts.extend(branch);
                    Value::new(
                        Vec::new(),
                        Operand::Place(Place {
                            var,
                            indices: Vec::new(),
                        }),
                    )
                }
                _ => lower.result(tail)?,
            }
        }
        _ => lower.result(tail)?,
    };
    stmts.append(&mut lower.pending);
    Some(Program {
        vars: lower.vars,
        body: stmts,
        output,
    })
}

/// `let lent_0 = <..>::lend(x, __backend)?;` or `let x = &*lent_0;`.
fn is_prologue(stmt: &SynStmt) -> bool {
    let SynStmt::Local(local) = stmt else {
        return false;
    };
    let Some(init) = &local.init else {
        return false;
    };
    match &*init.expr {
        Expr::Try(attempt) => {
            matches!(&*attempt.expr, Expr::Call(call) if path_ends(&call.func, "lend"))
        }
        Expr::Reference(reference) => match &*reference.expr {
            Expr::Unary(unary) => matches!(&*unary.expr, Expr::Path(path)
                if path.path.get_ident().is_some_and(|name| name.to_string().starts_with("lent_"))),
            _ => false,
        },
        _ => false,
    }
}

struct Lower {
    vars: Vec<Var>,
    /// Names in scope, innermost last: a tracked place, or `None` for data.
    scopes: Vec<Vec<(String, Option<Place>)>>,
    ops: usize,
    flags: usize,
    /// Loops around the statement being lowered.
    loops: usize,
    /// Blocks around it (0: the body's top level).
    depth: usize,
    names: Names,
    /// Statements the statement being lowered needs first (an `if` value it reads).
    pending: Vec<Stmt>,
}

impl Lower {
    fn declare(&mut self, name: &Ident, param: bool, depth: usize, zero: TokenStream) -> VarId {
        let id = self.vars.len();
        self.vars.push(Var {
            name: name.clone(),
            adjoint: Ident::new(&format!("__adjoint_{id}"), Span::mixed_site()),
            primal: Ident::new(&format!("__primal_{id}"), Span::mixed_site()),
            zero,
            param,
            depth,
            top_level: self.depth == 0,
            mutable: false,
        });
        id
    }

    fn bind(&mut self, name: &Ident, place: Option<Place>) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), place));
        }
    }

    fn lookup(&self, name: &Ident) -> Option<&Option<Place>> {
        let name = name.to_string();
        self.scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
            .find(|(bound, _)| *bound == name)
            .map(|(_, place)| place)
    }

    fn block(&mut self, block: &Block) -> Option<Vec<Stmt>> {
        self.scopes.push(Vec::new());
        self.depth += 1;
        let stmts = self.stmts(&block.stmts);
        self.depth -= 1;
        self.scopes.pop();
        stmts
    }

    fn stmts(&mut self, stmts: &[SynStmt]) -> Option<Vec<Stmt>> {
        let mut out = Vec::new();
        for stmt in stmts {
            let lowered = match stmt {
                SynStmt::Local(local) => self.local(local)?,
                SynStmt::Expr(expr, semi) => vec![self.expr_stmt(expr, semi.is_some())?],
                SynStmt::Item(_) | SynStmt::Macro(_) => return None,
            };
            // An `if` value inside the statement's first operand runs before it.
            out.append(&mut self.pending);
            out.extend(lowered);
        }
        Some(out)
    }

    /// A new tracked scalar that an `if` value assigns in each branch: its `let` (a
    /// constant start, never read) and the branch.
    fn if_local(&mut self, name: &Ident, branch: &syn::ExprIf) -> Option<Vec<Stmt>> {
        let var = self.declare(name, false, 0, quote!(0.0f64));
        self.vars[var].mutable = true;
        let place = Place {
            var,
            indices: Vec::new(),
        };
        let zero = quote!(0.0f64);
        let start = Stmt::Let {
            var,
            value: Value::new(
                Vec::new(),
                Operand::Data(Data {
                    raw: zero,
                    convert: None,
                }),
            ),
        };
        let branch = self.if_value(branch, &place)?;
        Some(vec![start, branch])
    }

    /// `if c { ..; a } else { ..; b }` as a value: each branch assigns its value to `place`.
    fn if_value(&mut self, branch: &syn::ExprIf, place: &Place) -> Option<Stmt> {
        if matches!(&*branch.cond, Expr::Let(_)) {
            return None;
        }
        let cond = self.plain(&branch.cond.to_token_stream())?;
        let then = self.value_block(&branch.then_branch, place)?;
        let otherwise = match &branch.else_branch {
            Some((_, otherwise)) => match &**otherwise {
                Expr::Block(block) if block.label.is_none() => {
                    self.value_block(&block.block, place)?
                }
                Expr::If(nested) => {
                    self.scopes.push(Vec::new());
                    self.depth += 1;
                    let nested = self.if_value(nested, place);
                    self.depth -= 1;
                    self.scopes.pop();
                    vec![nested?]
                }
                _ => return None,
            },
            None => return None,
        };
        let flag = self.flags;
        self.flags += 1;
        Some(Stmt::If {
            cond,
            then,
            otherwise,
            flag,
        })
    }

    /// A branch of an `if` value: its statements, then its value assigned to `place`.
    fn value_block(&mut self, block: &Block, place: &Place) -> Option<Vec<Stmt>> {
        let (last, rest) = block.stmts.split_last()?;
        let SynStmt::Expr(tail, None) = last else {
            return None;
        };
        self.scopes.push(Vec::new());
        self.depth += 1;
        let stmts = self.stmts(rest).and_then(|mut stmts| {
            let value = self.value(tail)?;
            stmts.append(&mut self.pending);
            stmts.push(self.assign(place.clone(), value)?);
            Some(stmts)
        });
        self.depth -= 1;
        self.scopes.pop();
        stmts
    }

    fn local(&mut self, local: &syn::Local) -> Option<Vec<Stmt>> {
        let init = local.init.as_ref();
        if init.is_some_and(|init| init.diverge.is_some()) {
            return None;
        }
        let tracked = init.is_some_and(|init| is_tracked_form(&init.expr));
        if !tracked {
            // Data: every name it binds is data from here on.
            let tokens = self.plain(&local.to_token_stream())?;
            let mut bound = Vec::new();
            pattern_names(&local.pat, &mut bound);
            let replay = self.depth > 0
                && matches!(&local.pat, Pat::Ident(ident) if ident.mutability.is_none()
                    && ident.subpat.is_none())
                && bound.iter().all(|name| self.names.replayable(name));
            for name in &bound {
                self.bind(name, None);
            }
            return Some(vec![Stmt::Data { tokens, replay }]);
        }
        let (name, mutable) = simple_pattern(&local.pat)?;
        let expr = &init?.expr;
        if let Expr::If(branch) = &**expr {
            let stmts = self.if_local(&name, branch)?;
            if let Some(Stmt::Let { var, .. }) = stmts.first() {
                let place = Place {
                    var: *var,
                    indices: Vec::new(),
                };
                self.bind(&name, Some(place));
            }
            return Some(stmts);
        }
        // `constants(__backend, [0.0; N])?`: a tracked array of constants.
        if let Some(array) = constants_call(expr) {
            let zero = zeros(&array)?;
            let depth = array_depth(&array);
            let init = self.plain(&array.to_token_stream())?;
            let var = self.declare(&name, false, depth, zero);
            self.vars[var].mutable = mutable;
            let place = Place {
                var,
                indices: Vec::new(),
            };
            self.bind(&name, Some(place));
            return Some(vec![Stmt::LetArray { var, init }]);
        }
        let value = self.value(expr)?;
        // `let y = x;` of an unchanging scalar: `y` is another name of `x`'s node.
        if let (false, Operand::Place(place), true) = (mutable, &value.result, value.ops.is_empty())
        {
            let source = &self.vars[place.var];
            let unchanging = source.param || !source.mutable;
            let steady = place.indices.iter().all(|index| self.names.steady(index));
            if unchanging && steady {
                let place = place.clone();
                self.bind(&name, Some(place));
                return Some(Vec::new());
            }
        }
        if self.place_depth(&value.result) != Some(0) {
            return None;
        }
        let var = self.declare(&name, false, 0, quote!(0.0f64));
        self.vars[var].mutable = mutable;
        self.bind(
            &name,
            Some(Place {
                var,
                indices: Vec::new(),
            }),
        );
        Some(vec![Stmt::Let { var, value }])
    }

    /// How many indices a place operand still lacks to be a scalar (0 for other operands).
    fn place_depth(&self, operand: &Operand) -> Option<usize> {
        match operand {
            Operand::Place(place) => self.vars[place.var].depth.checked_sub(place.indices.len()),
            _ => Some(0),
        }
    }

    fn expr_stmt(&mut self, expr: &Expr, semi: bool) -> Option<Stmt> {
        match expr {
            Expr::Assign(assign) if matches!(&*assign.right, Expr::If(_)) => {
                let place = self.place(&assign.left)?;
                let Expr::If(branch) = &*assign.right else {
                    return None;
                };
                let var = &self.vars[place.var];
                if var.param || var.depth != place.indices.len() {
                    return None;
                }
                self.vars[place.var].mutable = true;
                self.if_value(branch, &place)
            }
            Expr::Assign(assign) if is_tracked_form(&assign.right) => {
                let place = self.place(&assign.left)?;
                let value = self.value(&assign.right)?;
                self.assign(place, value)
            }
            Expr::Block(block) if block.label.is_none() => self.compound(&block.block),
            Expr::If(branch) => self.branch(branch),
            Expr::ForLoop(lp) if lp.label.is_none() => {
                let iter = lp.expr.to_token_stream();
                if !self.names.steady(&iter)
                    || !reversible(&lp.expr)
                    || self.mentions_tracked(&iter)
                {
                    return None;
                }
                let pat = lp.pat.to_token_stream();
                let mut bound = Vec::new();
                pattern_names(&lp.pat, &mut bound);
                self.scopes
                    .push(bound.iter().map(|name| (name.to_string(), None)).collect());
                self.loops += 1;
                let body = self.block(&lp.body);
                self.loops -= 1;
                self.scopes.pop();
                Some(Stmt::For {
                    pat,
                    iter,
                    body: body?,
                    after: Vec::new(),
                })
            }
            Expr::While(_) | Expr::Loop(_) | Expr::Match(_) | Expr::Break(_) => None,
            Expr::Continue(_) | Expr::Return(_) | Expr::ForLoop(_) | Expr::Block(_) => None,
            _ => {
                let semi = semi.then(|| quote!(;));
                let tokens = self.plain(&quote!(#expr #semi))?;
                Some(Stmt::Data {
                    tokens,
                    replay: false,
                })
            }
        }
    }

    fn assign(&mut self, place: Place, value: Value) -> Option<Stmt> {
        let var = &mut self.vars[place.var];
        if var.param || var.depth != place.indices.len() {
            return None;
        }
        var.mutable = true;
        Some(Stmt::Assign { place, value })
    }

    /// `{ let operand = V; let slot = &mut P; *slot = __backend.op(slot, &operand)?; };`,
    /// the rewrite of `P op= V` on an element.
    fn compound(&mut self, block: &Block) -> Option<Stmt> {
        let [SynStmt::Local(operand), SynStmt::Local(slot), SynStmt::Expr(Expr::Assign(store), _)] =
            &block.stmts[..]
        else {
            return None;
        };
        let value = self.value(&operand.init.as_ref()?.expr)?;
        let Expr::Reference(target) = &*slot.init.as_ref()?.expr else {
            return None;
        };
        let place = self.place(&target.expr)?;
        let Expr::Try(call) = &*store.right else {
            return None;
        };
        let Expr::MethodCall(call) = &*call.expr else {
            return None;
        };
        if !is_backend(&call.receiver) || call.args.len() != 2 {
            return None;
        }
        let method = call.method.clone();
        if !matches!(method.to_string().as_str(), "add" | "sub" | "mul" | "div") {
            return None;
        }
        let mut value = value;
        let id = self.next_op();
        value.ops.push(Op {
            id,
            method,
            operands: vec![Operand::Place(place.clone()), value.result.clone()],
            exponent: None,
            live: true,
        });
        value.result = Operand::Temp(id);
        self.assign(place, value)
    }

    fn branch(&mut self, branch: &syn::ExprIf) -> Option<Stmt> {
        if matches!(&*branch.cond, Expr::Let(_)) {
            return None;
        }
        let cond = self.plain(&branch.cond.to_token_stream())?;
        let then = self.block(&branch.then_branch)?;
        let otherwise = match &branch.else_branch {
            None => Vec::new(),
            Some((_, otherwise)) => match &**otherwise {
                Expr::Block(block) if block.label.is_none() => self.block(&block.block)?,
                Expr::If(nested) => {
                    self.scopes.push(Vec::new());
                    self.depth += 1;
                    let nested = self.branch(nested);
                    self.depth -= 1;
                    self.scopes.pop();
                    vec![nested?]
                }
                _ => return None,
            },
        };
        let flag = self.flags;
        self.flags += 1;
        Some(Stmt::If {
            cond,
            then,
            otherwise,
            flag,
        })
    }

    /// The function's result: `Ok(copy)`, an operation's call without its `?`, or a
    /// constant.
    fn result(&mut self, tail: &Expr) -> Option<Value> {
        match tail {
            Expr::Call(call) if path_ends(&call.func, "Ok") && call.args.len() == 1 => {
                let value = self.value(&call.args[0])?;
                (self.place_depth(&value.result) == Some(0)).then_some(value)
            }
            Expr::MethodCall(call) if is_backend(&call.receiver) => {
                let mut ops = Vec::new();
                let result = self.backend_op(call, &mut ops)?;
                Some(Value::new(ops, result))
            }
            Expr::Call(call) if path_ends(&call.func, "constant") => {
                let data = self.constant(call)?;
                Some(Value::new(Vec::new(), data))
            }
            _ => None,
        }
    }

    fn value(&mut self, expr: &Expr) -> Option<Value> {
        let mut ops = Vec::new();
        let result = self.operand(expr, &mut ops)?;
        Some(Value::new(ops, result))
    }

    fn next_op(&mut self) -> usize {
        self.ops += 1;
        self.ops - 1
    }

    fn operand(&mut self, expr: &Expr, ops: &mut Vec<Op>) -> Option<Operand> {
        match expr {
            Expr::Reference(reference) if reference.mutability.is_none() => {
                self.operand(&reference.expr, ops)
            }
            Expr::Paren(paren) => self.operand(&paren.expr, ops),
            Expr::Group(group) => self.operand(&group.expr, ops),
            Expr::Try(attempt) => match &*attempt.expr {
                Expr::MethodCall(call) if is_backend(&call.receiver) => self.backend_op(call, ops),
                Expr::Call(call) if path_ends(&call.func, "constant") => self.constant(call),
                _ => None,
            },
            Expr::Call(call) if path_ends(&call.func, "clone") && call.args.len() == 1 => {
                match self.operand(&call.args[0], ops)? {
                    Operand::Place(place) => Some(Operand::Place(place)),
                    _ => None,
                }
            }
            Expr::Path(_) | Expr::Index(_) => self.place(expr).map(Operand::Place),
            // An `if` value read before any operation of the expression: it can run first,
            // into a local of its own, without reordering what the trace records.
            Expr::If(branch) if ops.is_empty() => {
                let name = Ident::new("__branch", Span::mixed_site());
                let stmts = self.if_local(&name, branch)?;
                let Some(Stmt::Let { var, .. }) = stmts.first() else {
                    return None;
                };
                let var = *var;
                self.pending.extend(stmts);
                Some(Operand::Place(Place {
                    var,
                    indices: Vec::new(),
                }))
            }
            _ => None,
        }
    }

    /// `constant(__backend, data)`: the data, with its primal reads made plain, converted
    /// by the same call on plain values.
    fn constant(&mut self, call: &syn::ExprCall) -> Option<Operand> {
        if call.args.len() != 2 || !is_backend(&call.args[0]) {
            return None;
        }
        let raw = self.plain(&call.args[1].to_token_stream())?;
        let convert = Some(call.func.to_token_stream());
        Some(Operand::Data(Data { raw, convert }))
    }

    /// A tracked place: a tracked name, indexed by data as far as it goes.
    fn place(&mut self, expr: &Expr) -> Option<Place> {
        match expr {
            Expr::Path(path) => {
                let name = path.path.get_ident()?;
                self.lookup(name)?.clone()
            }
            Expr::Index(index) => {
                let mut place = self.place(&index.expr)?;
                let at = self.plain(&index.index.to_token_stream())?;
                place.indices.push(at);
                (place.indices.len() <= self.vars[place.var].depth).then_some(place)
            }
            Expr::Paren(paren) => self.place(&paren.expr),
            Expr::Group(group) => self.place(&group.expr),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                self.place(&unary.expr)
            }
            _ => None,
        }
    }

    /// A backend call: one recorded operation (or a detached value).
    fn backend_op(&mut self, call: &syn::ExprMethodCall, ops: &mut Vec<Op>) -> Option<Operand> {
        let method = call.method.clone();
        let name = method.to_string();
        let args: Vec<&Expr> = call.args.iter().collect();
        if name == "detach" && args.len() == 1 {
            let first = ops.len();
            let operand = self.operand(args[0], ops)?;
            for op in &mut ops[first..] {
                op.live = false;
            }
            let primal = self.primal(&operand);
            return Some(Operand::Data(Data {
                raw: primal,
                convert: None,
            }));
        }
        let arity = match name.as_str() {
            "add" | "sub" | "mul" | "div" => 2,
            "neg" => 1,
            _ => match ops::shape(&name)? {
                Shape::Unary => 1,
                Shape::Binary | Shape::Powi => 2,
                Shape::MulAdd => 3,
                Shape::Detach | Shape::Stepwise => return None,
            },
        };
        if args.len() != arity {
            return None;
        }
        let (args, exponent) = match name.as_str() {
            "powi" => (&args[..1], Some(self.plain(&args[1].to_token_stream())?)),
            _ => (&args[..], None),
        };
        let mut operands = Vec::new();
        for arg in args {
            let operand = self.operand(arg, ops)?;
            if self.place_depth(&operand) != Some(0) {
                return None;
            }
            operands.push(operand);
        }
        let id = self.next_op();
        ops.push(Op {
            id,
            method,
            operands,
            exponent,
            live: true,
        });
        Some(Operand::Temp(id))
    }

    /// The forward half's `f64` for an operand.
    fn primal(&self, operand: &Operand) -> TokenStream {
        match operand {
            Operand::Temp(id) => {
                let temp = temp(*id);
                quote!(#temp)
            }
            Operand::Place(place) => self.primal_place(place),
            Operand::Data(data) => data.raw.clone(),
        }
    }

    fn primal_place(&self, place: &Place) -> TokenStream {
        let primal = &self.vars[place.var].primal;
        let indices = &place.indices;
        quote!(#primal #([#indices])*)
    }

    /// Plain tokens: every `__backend.value(place)` read as the place's primal. `None` if
    /// anything else of the graph remains.
    fn plain(&mut self, tokens: &TokenStream) -> Option<TokenStream> {
        if !mentions(tokens, "__backend") {
            return (!mentions(tokens, "__private")).then(|| tokens.clone());
        }
        let mut expr: Expr = match syn::parse2(tokens.clone()) {
            Ok(expr) => expr,
            Err(_) => {
                // A statement: parse it inside a block and give its tokens back.
                let mut block: Block = syn::parse2(quote!({ #tokens })).ok()?;
                let mut reads = PrimalReads {
                    lower: self,
                    failed: false,
                };
                reads.visit_block_mut(&mut block);
                if reads.failed {
                    return None;
                }
                let stmts = &block.stmts;
                let out = quote!(#(#stmts)*);
                return (!mentions(&out, "__backend") && !mentions(&out, "__private"))
                    .then_some(out);
            }
        };
        let mut reads = PrimalReads {
            lower: self,
            failed: false,
        };
        reads.visit_expr_mut(&mut expr);
        if reads.failed {
            return None;
        }
        let out = expr.to_token_stream();
        (!mentions(&out, "__backend") && !mentions(&out, "__private")).then_some(out)
    }

    fn mentions_tracked(&self, tokens: &TokenStream) -> bool {
        let mut stack = vec![tokens.clone()];
        while let Some(tokens) = stack.pop() {
            for token in tokens {
                match token {
                    TokenTree::Ident(ident) => {
                        if matches!(self.lookup(&ident), Some(Some(_))) {
                            return true;
                        }
                    }
                    TokenTree::Group(group) => stack.push(group.stream()),
                    _ => {}
                }
            }
        }
        false
    }
}

/// Replaces `__backend.value(place)` by the place's primal.
struct PrimalReads<'a> {
    lower: &'a mut Lower,
    failed: bool,
}

impl VisitMut for PrimalReads<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::MethodCall(call) = expr {
            if is_backend(&call.receiver) && call.method == "value" && call.args.len() == 1 {
                let place = self.lower.place(strip_reference(&call.args[0]));
                match place {
                    Some(place) if self.lower.vars[place.var].depth == place.indices.len() => {
                        let primal = self.lower.primal_place(&place);
                        *expr = Expr::Verbatim(quote!((#primal)));
                    }
                    _ => self.failed = true,
                }
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

fn strip_reference(expr: &Expr) -> &Expr {
    match expr {
        Expr::Reference(reference) => strip_reference(&reference.expr),
        Expr::Paren(paren) => strip_reference(&paren.expr),
        _ => expr,
    }
}

/// The forward half's name for the result of operation `id`.
pub(crate) fn temp(id: usize) -> Ident {
    Ident::new(&format!("__value_{id}"), Span::mixed_site())
}

fn is_backend(expr: &Expr) -> bool {
    matches!(expr, Expr::Path(path) if path.path.is_ident("__backend"))
}

fn path_ends(expr: &Expr, last: &str) -> bool {
    matches!(expr, Expr::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == last))
}

/// Whether a `let` or assignment's right side is a graph value in the rewrite's forms: it
/// uses the backend other than to read a primal value (`__backend.value(..)` is data).
fn is_tracked_form(expr: &Expr) -> bool {
    struct Uses(bool);
    impl<'ast> syn::visit::Visit<'ast> for Uses {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            if is_backend(&call.receiver) && call.method == "value" {
                return;
            }
            syn::visit::visit_expr_method_call(self, call);
        }
        fn visit_ident(&mut self, ident: &'ast Ident) {
            self.0 |= ident == "__backend" || ident == "__private";
        }
    }
    if matches!(expr, Expr::Call(call) if path_ends(&call.func, "clone")) {
        return true;
    }
    let mut uses = Uses(false);
    syn::visit::Visit::visit_expr(&mut uses, expr);
    uses.0
}

/// The data array of `constants(__backend, array)?`.
fn constants_call(expr: &Expr) -> Option<Expr> {
    let Expr::Try(attempt) = expr else {
        return None;
    };
    let Expr::Call(call) = &*attempt.expr else {
        return None;
    };
    (path_ends(&call.func, "constants") && call.args.len() == 2).then(|| call.args[1].clone())
}

/// Zeros of a data array's shape, from its syntax: `[e; N]` or `[a, b, ..]`.
fn zeros(array: &Expr) -> Option<TokenStream> {
    match array {
        Expr::Repeat(repeat) => {
            let inner = zeros(&repeat.expr).unwrap_or_else(|| quote!(0.0f64));
            let len = &repeat.len;
            Some(quote!([#inner; #len]))
        }
        Expr::Array(array) => {
            let first = array.elems.first()?;
            let inner = zeros(first).unwrap_or_else(|| quote!(0.0f64));
            let shapes: Vec<String> = array
                .elems
                .iter()
                .map(|elem| zeros(elem).map(|z| z.to_string()).unwrap_or_default())
                .collect();
            if shapes.windows(2).any(|pair| pair[0] != pair[1]) {
                return None;
            }
            let len = array.elems.len();
            Some(quote!([#inner; #len]))
        }
        Expr::Paren(paren) => zeros(&paren.expr),
        _ => None,
    }
    .filter(|_| array_depth(array) > 0)
}

fn array_depth(array: &Expr) -> usize {
    match array {
        Expr::Repeat(repeat) => 1 + array_depth(&repeat.expr),
        Expr::Array(array) => 1 + array.elems.first().map_or(0, array_depth),
        Expr::Paren(paren) => array_depth(&paren.expr),
        _ => 0,
    }
}

/// `name` or `mut name`.
fn simple_pattern(pat: &Pat) -> Option<(Ident, bool)> {
    match pat {
        Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
            Some((ident.ident.clone(), ident.mutability.is_some()))
        }
        Pat::Type(typed) => simple_pattern(&typed.pat),
        _ => None,
    }
}

/// Every name a pattern binds.
pub(crate) fn pattern_names(pat: &Pat, out: &mut Vec<Ident>) {
    struct Collect<'a>(&'a mut Vec<Ident>);
    impl<'ast> syn::visit::Visit<'ast> for Collect<'_> {
        fn visit_pat_ident(&mut self, ident: &'ast syn::PatIdent) {
            self.0.push(ident.ident.clone());
            syn::visit::visit_pat_ident(self, ident);
        }
    }
    syn::visit::Visit::visit_pat(&mut Collect(out), pat);
}

/// Whether `iter` is an iterator the reverse half can walk backwards (`.rev()`), as
/// written: a range, a data slice or array, or these adapters of one.
fn reversible(iter: &Expr) -> bool {
    match iter {
        Expr::Range(range) => range.start.is_some() && range.end.is_some(),
        Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => true,
        Expr::Reference(reference) => reversible(&reference.expr),
        Expr::Paren(paren) => reversible(&paren.expr),
        Expr::Group(group) => reversible(&group.expr),
        Expr::MethodCall(call) => {
            let method = call.method.to_string();
            match method.as_str() {
                "iter" | "chunks" | "chunks_exact" | "windows" => {
                    call.turbofish.is_none() && !matches!(&*call.receiver, Expr::Range(_))
                }
                "enumerate" | "rev" | "copied" | "cloned" | "skip" | "take" => {
                    slice_like(&call.receiver)
                }
                "zip" => {
                    slice_like(&call.receiver)
                        && call
                            .args
                            .first()
                            .is_some_and(|arg| slice_like(arg) || is_plain_path(arg))
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// A reversible, exact-size iterator over a slice (not a range, whose integer type may
/// not be exact-size).
fn slice_like(iter: &Expr) -> bool {
    match iter {
        Expr::Range(_) => false,
        Expr::Paren(paren) => slice_like(&paren.expr),
        _ => reversible(iter),
    }
}

fn is_plain_path(expr: &Expr) -> bool {
    match expr {
        Expr::Path(_) | Expr::Field(_) => true,
        Expr::Reference(reference) => is_plain_path(&reference.expr),
        _ => false,
    }
}

/// Whether `tokens` contain the identifier `name`.
pub(crate) fn mentions(tokens: &TokenStream, name: &str) -> bool {
    let mut stack = vec![tokens.clone()];
    while let Some(tokens) = stack.pop() {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) if ident == name => return true,
                TokenTree::Group(group) => stack.push(group.stream()),
                _ => {}
            }
        }
    }
    false
}
