//! From the rewritten body (the generic body `_graph` and the trace run) to the analysed
//! [`Program`]: reading the body the trace runs, rather than the user's, is what makes the
//! sweeps record the same operations in the same order. Anything outside the forms below
//! gives `None`, and `name_grad` keeps the trace.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Pat, Stmt as SynStmt};

use super::ir::{Arg, Data, Op, Operand, Place, Program, Stmt, Value, Var, VarId, UNKNOWN};
use super::names::Names;
use crate::ops::{self, Shape};
use crate::parse::signature::{self, Kind, Param};

/// Lowers `graph_body` (the rewrite's output) with the signature's `params`; for the
/// halves other sweeps call (`half`), whose reverse half is a function of its own, data
/// `let`s at the top level are replayed too. `output_type`: the array the function returns
/// (only halves do), with `f64` elements: a local tracked array returned as it is.
/// Data code reads a tracked value's primal through `f64::from`, which is the `f64` itself
/// in `name_grad`'s sweeps and a dual's value in `name_hvp`'s: one program for both.
pub(crate) fn lower(
    graph_body: &TokenStream,
    params: &[Param],
    half: bool,
    output_type: Option<&TokenStream>,
) -> Option<Program> {
    let array_output = output_type.is_some();
    let block: Block = syn::parse2(graph_body.clone()).ok()?;
    // Early `return`s nest the statements after them in blocks (see `returning`), whose
    // `let`s the reverse sweep sees only where it replays them, as the halves' do.
    let nests = !array_output
        && block.stmts.iter().any(|stmt| match stmt {
            SynStmt::Expr(Expr::Block(labelled), None) if labelled.label.is_some() => labelled
                .block
                .stmts
                .iter()
                .any(|stmt| returned(stmt).is_some() || returns_early(stmt).is_some()),
            _ => false,
        });
    let names = Names::of(&block, params, half || nests);
    let mut lower = Lower {
        vars: Vec::new(),
        scopes: vec![Vec::new()],
        ops: 0,
        flags: 0,
        loops: 0,
        depth: 0,
        names,
        pending: Vec::new(),
        spilled: std::collections::HashMap::new(),
        spills: 0,
        half,
        array_output,
        called: Vec::new(),
        seeds: Vec::new(),
        shaped: Vec::new(),
        proven: std::collections::HashSet::new(),
        needs: Vec::new(),
        copied_from: Vec::new(),
        copies: std::collections::HashSet::new(),
        copies_of_params: Vec::new(),
        data_args: 0,
        epilogue: Vec::new(),
        kept_to_end: std::collections::HashSet::new(),
        witnesses: std::collections::HashMap::new(),
        sized_by: Vec::new(),
        if_results: Vec::new(),
        scalar_results: std::collections::HashSet::new(),
        numbers: std::collections::HashMap::new(),
        elements: std::collections::HashMap::new(),
        slice_depths: std::collections::HashMap::new(),
        indexed: indexed_names(&block),
        mentions: mention_counts(&block),
        array_aliases: Vec::new(),
    };
    for param in params {
        let name = param.ident.clone()?;
        match param.kind {
            Kind::Data => {
                if copy_type(&param.ty) {
                    lower.copies.insert(name.to_string());
                }
                lower.number(&name, Numeric::of_type(&param.ty));
                if let Some(elements) = Numeric::of_elements(&param.ty) {
                    lower.elements.insert(name.to_string(), elements);
                }
                lower.bind(&name, None);
            }
            Kind::Scalar | Kind::Array if param.mutability.is_none() => {
                let lengths = signature::array_lengths(&param.ty);
                let var = lower.declare(&name, true, lengths.len(), quote!());
                lower.vars[var].lengths = lengths.iter().map(|len| len.to_token_stream()).collect();
                lower
                    .witnesses
                    .insert(var, crate::emit::f64_shape(&param.ty));
                lower.bind(&name, Some(Place::whole(var)));
            }
            // `mut y: f64`: the body's `y` is a local copy of the parameter (as the
            // prologue's `let mut y = y.clone();` is), assigned as any local is; the
            // parameter's adjoint receives the copy's at its start (in the halves, a
            // versioned copy: see `emit::versioned`).
            Kind::Scalar => {
                let var = lower.declare(&name, true, 0, quote!());
                lower.witnesses.insert(var, quote!(f64));
                let local = lower.declare(&name, false, 0, quote!(0.0f64));
                lower.vars[local].mutable = true;
                let whole = |var| Place::whole(var);
                lower.copies_of_params.push(Stmt::Let {
                    var: local,
                    value: Value::new(Vec::new(), Operand::Place(whole(var))),
                });
                lower.bind(&name, Some(whole(local)));
            }
            // A parameter struct (or a slice, a `Vec`): places are its fields' elements.
            Kind::Declared { ref shape } if param.mutability.is_none() => {
                let var = lower.declare(&name, true, UNKNOWN, quote!());
                if let Some(depth) = param.slice_depth() {
                    lower.slice_depths.insert(var, depth);
                }
                lower.witnesses.insert(var, shape.to_token_stream());
                lower.bind(&name, Some(Place::whole(var)));
            }
            _ => return None,
        }
    }
    // The prologue lends each parameter; the body proper is the block labelled 'body.
    let mut body = None;
    for stmt in &block.stmts {
        match stmt {
            SynStmt::Local(_) if is_prologue(stmt) || is_outlined(stmt) => {}
            // (`use Backend as _;` of a long body's outlined recording.)
            SynStmt::Item(syn::Item::Use(_)) => {}
            SynStmt::Expr(Expr::Block(labelled), None) if labelled.label.is_some() => {
                body = Some(&labelled.block);
            }
            _ => return None,
        }
    }
    let body = body?;
    // Early `return`s (`break 'body v`) assign a result local, the output.
    if body
        .stmts
        .iter()
        .any(|stmt| returned(stmt).is_some() || returns_early(stmt).is_some())
    {
        let name = Ident::new("__output", Span::mixed_site());
        let (start, place) = match output_type {
            // (An array of scalars: each return assigns its elements.)
            Some(ty) => lower.array_result_local(&name, ty)?,
            None => lower.result_local(&name),
        };
        let mut stmts = vec![start];
        stmts.extend(lower.returning(&body.stmts, &place)?);
        let output = Value::new(Vec::new(), Operand::Place(place));
        return lower.finish(stmts, output);
    }
    let (last, rest) = body.stmts.split_last()?;
    let SynStmt::Expr(tail, None) = last else {
        return None;
    };
    let mut stmts = lower.stmts(rest)?;
    // `Ok(if c { a } else { b })`: the branches assign a result local, the output.
    let output = match tail {
        Expr::Call(call) if path_ends(&call.func, "Ok") && call.args.len() == 1 => {
            match &call.args[0] {
                Expr::If(branch) if !array_output => {
                    let name = Ident::new("__output", Span::mixed_site());
                    let branch = lower.if_local(&name, branch)?;
                    let Some(Stmt::Let { var, .. }) = branch.first() else {
                        return None;
                    };
                    let var = *var;
                    stmts.extend(branch);
                    Value::new(Vec::new(), Operand::Place(Place::whole(var)))
                }
                // `[a * b, c.exp()]`: an array of new values (and constants), filled into a
                // local array of its own.
                Expr::Array(array) if array_output => {
                    let array = Expr::Array(array.clone());
                    let place = lower.array_argument(&array, true, &array.to_token_stream())?;
                    Value::new(Vec::new(), Operand::Place(place))
                }
                _ => lower.result(tail)?,
            }
        }
        _ => lower.result(tail)?,
    };
    lower.finish(stmts, output)
}

impl Lower {
    /// The checks that need the whole body, then the program.
    fn finish(mut self, mut stmts: Vec<Stmt>, output: Value) -> Option<Program> {
        stmts.append(&mut self.pending);
        let mut stmts = self.kept_indices(stmts, Some(&output), false)?;
        // The `mut` parameters' local copies come first.
        let mut body = std::mem::take(&mut self.copies_of_params);
        body.append(&mut stmts);
        let stmts = body;
        // A scalar output is a scalar.
        if let (false, Operand::Place(place)) = (self.array_output, &output.result) {
            self.read_as_scalar(place);
        }
        // A branch valued by a scalar proves the other branches' results scalars.
        for (var, source, _) in &self.if_results {
            if self.scalar_results.contains(var) {
                self.proven.insert(source.clone());
            }
        }
        // A copy read as a scalar proves its source one.
        for (var, source) in std::mem::take(&mut self.copied_from) {
            if self.proven.contains(&(var, String::new(), 0)) {
                self.proven.insert(source);
            }
        }
        // A call's result copied whole as an array (see `local`) must be one: read as a
        // scalar at some depth below its own.
        for &var in &self.array_aliases {
            let array = |(read, fields, depth): &(VarId, String, usize)| {
                *read == var && fields.is_empty() && *depth > 0
            };
            if !self.proven.iter().any(array) {
                return None;
            }
        }
        // Where a call's result is copied as a scalar, the trace's types must say it is one:
        // it is read as an operand at that depth somewhere.
        if !self.needs.iter().all(|need| self.proven.contains(need)) {
            // (Most likely an array: say so.)
            if let Some((.., tail)) =
                (self.if_results.iter()).find(|(_, source, _)| !self.proven.contains(source))
            {
                why(IF_ARRAY, tail);
            }
            return None;
        }
        // A local started from data must be a scalar (see `constant_local`).
        for &var in &self.shaped {
            if !self.proven.contains(&(var, String::new(), 0))
                || self
                    .proven
                    .iter()
                    .any(|(read, _, depth)| *read == var && *depth != 0)
            {
                return None;
            }
            self.vars[var].depth = 0;
        }
        for &var in &self.called {
            let read = self.proven.iter().find(|(read, _, _)| *read == var);
            if let Some(&(_, _, depth)) = read {
                self.vars[var].depth = depth;
            }
        }
        Some(Program {
            vars: self.vars,
            body: stmts,
            output,
            epilogue: self.epilogue,
        })
    }
}

/// A loop's iterator chain read by [`Lower::chain`]: over indices, with empty ranges, and
/// where each tracked element sits in the item.
type Chain = (TokenStream, TokenStream, Vec<(Vec<usize>, Place)>);

/// Whether data tokens assign or lend something mutably (`{ k += 1; 0.0 }`).
/// The position of the last statement from `at` on that reads `var` or a copy of it
/// (`let f = e;`, whose reads are `e`'s node's too).
fn last_reader(stmts: &[Stmt], at: usize, var: VarId) -> (usize, Vec<VarId>) {
    let mut vars = vec![var];
    let mut last = at;
    for (offset, stmt) in stmts[at..].iter().enumerate() {
        if let Stmt::Let {
            var: copy,
            value:
                Value {
                    result: Operand::Place(source),
                    ops,
                    ..
                },
        } = stmt
        {
            if ops.is_empty() && vars.contains(&source.var) {
                vars.push(*copy);
            }
        }
        if vars
            .iter()
            .any(|var| names_var(std::slice::from_ref(stmt), *var))
        {
            last = at + offset;
        }
    }
    (last, vars)
}

/// Whether `stmts` assign the whole of `var` to a variable (`prev = e;`), at any depth.
fn copied_whole(stmts: &[Stmt], var: VarId) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Assign { value, .. } => {
            value.ops.is_empty()
                && matches!(&value.result, Operand::Place(p) if p.var == var && p.is_whole())
        }
        Stmt::If {
            then, otherwise, ..
        } => copied_whole(then, var) || copied_whole(otherwise, var),
        Stmt::For { body, .. } => copied_whole(body, var),
        _ => false,
    })
}

/// Whether `stmts` name the tracked variable `var` anywhere.
fn names_var(stmts: &[Stmt], var: VarId) -> bool {
    let place = |place: &Place| place.var == var;
    let value = |value: &Value| value.reads(var);
    stmts.iter().any(|stmt| match stmt {
        Stmt::Let { var: own, value: v } => *own == var || value(v),
        Stmt::LetArray { var: own, .. } => *own == var,
        Stmt::Assign { place: p, value: v } => place(p) || value(v),
        Stmt::Call {
            var: own,
            args,
            store,
            seeds,
            ..
        } => {
            *own == var
                || store.as_ref().is_some_and(place)
                || seeds.iter().any(|(to, from)| place(to) || place(from))
                || args
                    .iter()
                    .any(|arg| matches!(arg, Arg::Tracked(p) if p.var == var))
        }
        Stmt::If {
            then, otherwise, ..
        } => names_var(then, var) || names_var(otherwise, var),
        Stmt::For { body, length, .. } => {
            length.iter().any(|(_, p)| place(p)) || names_var(body, var)
        }
        Stmt::Data { .. } | Stmt::Keep { .. } => false,
    })
}

fn assigns(tokens: &TokenStream) -> bool {
    struct Finds(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finds {
        fn visit_expr(&mut self, expr: &'ast Expr) {
            match expr {
                Expr::Assign(_) => self.0 = true,
                Expr::Reference(reference) if reference.mutability.is_some() => self.0 = true,
                Expr::Binary(binary) => {
                    use syn::BinOp::*;
                    if matches!(
                        binary.op,
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
                    ) {
                        self.0 = true;
                    }
                }
                _ => {}
            }
            syn::visit::visit_expr(self, expr);
        }
    }
    let Ok(block) = syn::parse2::<Block>(quote!({ #tokens })) else {
        return true;
    };
    let mut finds = Finds(false);
    syn::visit::Visit::visit_block(&mut finds, &block);
    finds.0
}

/// Why an `if` valued by another function's array is refused.
const IF_ARRAY: &str = "`if` whose value is another function's array (`let h = if c { f(..) } \
                        else { g(..) };`: write `let mut h = [0.0; N];` before it and assign \
                        `h = f(..);` in each branch)";

/// Whether `block` has the shape of the rewrite's compound assignment (see
/// [`Lower::compound`]): `{ let operand = V; let slot = &mut P; *slot = .. }`.
fn compound_shaped(block: &Block) -> bool {
    matches!(&block.stmts[..], [SynStmt::Local(_), SynStmt::Local(slot), SynStmt::Expr(Expr::Assign(_), _)]
    if slot.init.as_ref().is_some_and(|init| {
        matches!(&*init.expr, Expr::Reference(target) if target.mutability.is_some())
    }))
}

/// Whether `block` has the shape of the rewrite's `.sum()` or `.product()` (see
/// [`Lower::fold`]): a running total started by a call of `new()`.
fn fold_shaped(block: &Block) -> bool {
    matches!(&block.stmts[..], [SynStmt::Local(start), SynStmt::Expr(Expr::ForLoop(_), _), _]
    if start.init.as_ref().is_some_and(|init| {
        matches!(&*init.expr, Expr::Call(new) if path_ends(&new.func, "new") && new.args.is_empty())
    }))
}

/// `if cond { break; }` on data, with no `else` and an unlabelled `break`.
fn stops(stmt: &SynStmt) -> bool {
    let SynStmt::Expr(Expr::If(branch), _) = stmt else {
        return false;
    };
    branch.else_branch.is_none()
        && !mentions(&branch.cond.to_token_stream(), "__backend")
        && matches!(branch.then_branch.stmts.as_slice(),
            [SynStmt::Expr(Expr::Break(exit), _)] if exit.label.is_none() && exit.expr.is_none())
}

/// `differentiable_g(__backend, ..)?` or `self.differentiable_g(__backend, ..)?`: the
/// rewrite of a call of another `#[differentiable]` function or method.
fn called(expr: &Expr) -> Option<Called<'_>> {
    match expr {
        Expr::Try(attempt) => Called::of(&attempt.expr),
        _ => None,
    }
}

/// A call of another `#[differentiable]` function's hidden body, as the rewrite writes it.
struct Called<'e> {
    callee: Callee<'e>,
    /// The arguments after the backend.
    args: Vec<&'e Expr>,
}

/// What a [`Called`] calls.
enum Callee<'e> {
    /// `differentiable_g` or `layers::differentiable_g`.
    Function(&'e syn::ExprPath),
    /// `self.differentiable_g`, or `Self::differentiable_g(self, ..)`: a method of its
    /// receiver, which must be steady data, with its sizes (`::<_, 3>`) if given.
    Method(&'e Expr, &'e Ident, Option<TokenStream>),
}

impl<'e> Called<'e> {
    /// What a refusal of the call points at: the callee's path or the method's name.
    fn blame(&self) -> TokenStream {
        match self.callee {
            Callee::Function(func) => func.to_token_stream(),
            Callee::Method(_, method, _) => method.to_token_stream(),
        }
    }

    /// The call `expr` (without its `?`), if it is one.
    fn of(expr: &'e Expr) -> Option<Called<'e>> {
        let hidden = |name: &Ident| name.to_string().starts_with("differentiable_");
        match expr {
            Expr::Call(call) if call.args.first().is_some_and(is_backend) => match &*call.func {
                Expr::Path(func) if func.qself.is_none() => Some(Called {
                    callee: Callee::Function(func),
                    args: call.args.iter().skip(1).collect(),
                }),
                _ => None,
            },
            // `Self::differentiable_g(self, __backend, ..)`: the method called as a path.
            Expr::Call(call) if call.args.iter().nth(1).is_some_and(is_backend) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let segments = &func.path.segments;
                let last = segments.last()?;
                let method = &last.ident;
                let by_self_type = func.qself.is_none()
                    && segments.len() == 2
                    && segments[0].ident == "Self"
                    && hidden(method);
                let sizes = match &last.arguments {
                    syn::PathArguments::None => None,
                    sizes => Some(sizes.to_token_stream()),
                };
                by_self_type.then(|| Called {
                    callee: Callee::Method(&call.args[0], method, sizes),
                    args: call.args.iter().skip(2).collect(),
                })
            }
            Expr::MethodCall(call)
                if call.args.first().is_some_and(is_backend)
                    && !is_backend(&call.receiver)
                    && hidden(&call.method) =>
            {
                Some(Called {
                    callee: Callee::Method(
                        &call.receiver,
                        &call.method,
                        call.turbofish.as_ref().map(ToTokens::to_token_stream),
                    ),
                    args: call.args.iter().skip(1).collect(),
                })
            }
            _ => None,
        }
    }
}

/// Says on stderr what the sweeps could not compile, when the macro runs with
/// `AUTODIFF_WHY_TRACED` set (a developer's aid: `AUTODIFF_WHY_TRACED=1 cargo build`).
pub(crate) fn why(what: &str, tokens: &dyn ToTokens) {
    let tokens = tokens.to_token_stream();
    if std::env::var_os("AUTODIFF_WHY_TRACED").is_some() {
        eprintln!("sweeps give up on this {what}: {tokens}");
    }
    FIRST_REASON.with(|first| {
        let mut first = first.borrow_mut();
        if first.is_none() {
            let span = tokens
                .into_iter()
                .next()
                .map_or_else(Span::call_site, |token| token.span());
            *first = Some((what.to_owned(), span));
        }
    });
}

thread_local! {
    /// The first place the sweeps gave up on since [`take_reason`] (the innermost: a
    /// statement gives up before its body does).
    static FIRST_REASON: std::cell::RefCell<Option<(String, Span)>> =
        const { std::cell::RefCell::new(None) };
}

/// What the sweeps last gave up on first, and where, clearing it.
pub(crate) fn take_reason() -> Option<(String, Span)> {
    FIRST_REASON.with(|first| first.borrow_mut().take())
}

/// The value of `break 'body value` (a `return`, as the rewrite writes it), as a
/// statement or the block's tail.
fn returned(stmt: &SynStmt) -> Option<&Expr> {
    let SynStmt::Expr(Expr::Break(exit), _) = stmt else {
        return None;
    };
    let label = exit.label.as_ref()?;
    (label.ident == "body").then_some(())?;
    exit.expr.as_deref()
}

/// `if c { ..; return v; }` (with any `else`), as a statement.
fn returns_early(stmt: &SynStmt) -> Option<&syn::ExprIf> {
    let SynStmt::Expr(Expr::If(branch), _) = stmt else {
        return None;
    };
    returned(branch.then_branch.stmts.last()?).map(|_| branch)
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
        // `let mut y = Clone::clone(&*lent_1);` of a `mut` parameter.
        Expr::Call(call) if path_ends(&call.func, "clone") && call.args.len() == 1 => {
            is_prologue_reference(&call.args[0])
        }
        expr => is_prologue_reference(expr) || is_lend(expr),
    }
}

/// `let __backend = &Outlined(__backend);`: a long body records out of line (see
/// `rewrite`), which the sweeps do not see.
fn is_outlined(stmt: &SynStmt) -> bool {
    matches!(stmt, SynStmt::Local(local) if local.init.as_ref().is_some_and(|init| {
        matches!(&*init.expr, Expr::Reference(reference)
            if matches!(&*reference.expr, Expr::Call(call) if path_ends(&call.func, "Outlined")))
    }))
}

/// `lend(..)?`, a prologue's first statement for each parameter.
fn is_lend(expr: &Expr) -> bool {
    matches!(expr, Expr::Try(attempt)
        if matches!(&*attempt.expr, Expr::Call(call) if path_ends(&call.func, "lend")))
}

/// `&*lent_N`.
fn is_prologue_reference(expr: &Expr) -> bool {
    match expr {
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
    /// Results of operations moved into locals of their own (see [`Lower::spill`]).
    spilled: std::collections::HashMap<usize, Place>,
    /// How many spills there were (a `detach` around one cannot be followed).
    spills: usize,
    /// Lowering for the halves (see [`lower`]).
    half: bool,
    /// The function returns an array (see [`lower`]).
    array_output: bool,
    /// The variables holding calls' results, of a shape the macro cannot see.
    called: Vec<VarId>,
    /// Tracked scalars lent as they are by array literals of calls being lowered (see
    /// [`Stmt::Call::seeds`]), the innermost call's last.
    seeds: Vec<(Place, Place)>,
    /// Locals started from data of a shape the macro cannot see (`constant_local`).
    shaped: Vec<VarId>,
    /// Such variables read as scalars, an operand or an assignment's source, with that
    /// many indices: what the trace's types prove about their shapes.
    proven: std::collections::HashSet<(VarId, String, usize)>,
    /// `#[param]` slices of numbers, whose depth their type shows (see
    /// `Param::slice_depth`), though their places stay of [`UNKNOWN`] depth.
    slice_depths: std::collections::HashMap<VarId, usize>,
    /// Reads of such variables that the sweeps write as scalars: each must be proven.
    needs: Vec<(VarId, String, usize)>,
    /// Scalar locals started as copies of such places, with the place: a copy read as a
    /// scalar proves its source one.
    copied_from: Vec<(VarId, (VarId, String, usize))>,
    /// Data names whose values are `Copy`: parameters of such types and the patterns of
    /// loops over references and numbers (names the reverse re-reads are bound once).
    copies: std::collections::HashSet<String>,
    /// `let mut y = y;` of each `mut` scalar parameter: the body's first statements.
    copies_of_params: Vec<Stmt>,
    /// How many data arguments [`Lower::call`] has kept for the reverse (see `Stmt::Keep`).
    data_args: usize,
    /// The indices kept for the output (see [`Program::epilogue`]).
    epilogue: Vec<Stmt>,
    /// Kept indices of rows named by a `let` (`let r = m[j];`), whose [`Stmt::Keep`] moves
    /// to the end of its block (see [`Lower::kept_indices`]).
    kept_to_end: std::collections::HashSet<String>,
    /// Each differentiated parameter's shape, by its variable (see [`Lower::witness`]).
    witnesses: std::collections::HashMap<VarId, TokenStream>,
    /// Local vectors sized by a growable vector's length, with that vector.
    sized_by: Vec<(VarId, VarId)>,
    /// `if` results holding another function's whole result (see
    /// [`Lower::assign_result`]), with that result and the branch's tail.
    if_results: Vec<(VarId, (VarId, String, usize), TokenStream)>,
    /// `if` results a branch gives a scalar of known shape.
    scalar_results: std::collections::HashSet<VarId>,
    /// What the body shows of its data names' types (see [`Lower::numeric`]); `None` for
    /// a name bound twice as different ones.
    numbers: std::collections::HashMap<String, Option<Numeric>>,
    /// The same of data parameters' elements (`xs: &[f64]`), for `xs[k]`.
    elements: std::collections::HashMap<String, Numeric>,
    /// The names the body indexes somewhere (`a[0]`).
    indexed: std::collections::HashSet<String>,
    /// How often the body mentions each name.
    mentions: std::collections::HashMap<String, usize>,
    /// Another function's results copied whole under a name the body indexes (`let a =
    /// h;`, see [`Lower::local`]): each must be proven an array.
    array_aliases: Vec<VarId>,
}

/// What a data expression's type is, as the body shows it (for a value a helper's halves
/// keep, see `Stmt::Keep::typed`).
#[derive(Clone)]
enum Numeric {
    /// `f64` or `f32`.
    Float(TokenStream),
    /// Anything else a number or `bool` can be: never passed for a differentiated
    /// parameter, so rustc infers it from the callee's data parameter.
    Other,
}

impl Numeric {
    /// The elements' of a written array, slice or `Vec` type (through references).
    fn of_elements(ty: &syn::Type) -> Option<Numeric> {
        match signature::ungrouped(ty) {
            syn::Type::Reference(reference) => Numeric::of_elements(&reference.elem),
            syn::Type::Array(array) => Numeric::of_type(&array.elem),
            syn::Type::Slice(slice) => Numeric::of_type(&slice.elem),
            syn::Type::Path(path) => {
                let last = path.path.segments.last()?;
                let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                    return None;
                };
                match (last.ident == "Vec", args.args.first()) {
                    (true, Some(syn::GenericArgument::Type(elem))) => Numeric::of_type(elem),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// From a written type: `f64`, `f32`, an integer or `bool`.
    fn of_type(ty: &syn::Type) -> Option<Numeric> {
        let syn::Type::Path(path) = signature::ungrouped(ty) else {
            return None;
        };
        let name = path.path.get_ident()?.to_string();
        match name.as_str() {
            "f64" | "f32" => Some(Numeric::Float(ty.to_token_stream())),
            "bool" | "usize" | "isize" | "u8" | "u16" | "u32" | "u64" | "i8" | "i16" | "i32"
            | "i64" => Some(Numeric::Other),
            _ => None,
        }
    }

    fn same(&self, other: &Numeric) -> bool {
        match (self, other) {
            (Numeric::Float(a), Numeric::Float(b)) => a.to_string() == b.to_string(),
            (Numeric::Other, Numeric::Other) => true,
            _ => false,
        }
    }
}

/// A loop over a tracked array, as [`Lower::tracked_iter`] rewrites it.
struct OverTracked {
    /// The iterator chain over the indices.
    iter: TokenStream,
    /// The same with a known length, to check that the chain is steady.
    checked: TokenStream,
    /// The loop's pattern, the elements' bound by name.
    pat: TokenStream,
    /// Each tracked element's name and its place.
    elements: Vec<(Ident, Place)>,
    /// Lengths read before the loop (see `Stmt::For`).
    lengths: Vec<(Ident, Place)>,
}

/// A fold being lowered: `let mut total = Fold::new(); for .. { total.add(__backend, item)?; }`.
struct Fold {
    /// The rewrite's name of the accumulator (`total`).
    name: String,
    /// The variable holding the running result.
    var: VarId,
    /// `add` for a sum, `mul` for a product.
    method: Ident,
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
            call: false,
            lengths: Vec::new(),
            growable: false,
        });
        id
    }

    /// A new local array of `len` scalars starting at zero, and its `let`.
    fn zeros_local(&mut self, name: &Ident, len: usize) -> (VarId, Stmt) {
        let zero = quote!([0.0f64; #len]);
        let var = self.declare(name, false, 1, zero.clone());
        self.vars[var].lengths = vec![quote!(#len)];
        (var, Stmt::LetArray { var, init: zero })
    }

    /// An expression of `place`'s type that rustc types without running it: a
    /// parameter's from its declared shape, a local's from its zeros, then the place's
    /// fields and (first) elements. It lets a call's result adjoints be typed, and a const
    /// generic callee's sizes inferred, where the argument's value is out of scope.
    fn witness(&self, place: &Place) -> TokenStream {
        let private = quote!(::scalar_autodiff::__private);
        let base = match self.witnesses.get(&place.var) {
            Some(shape) => quote!((*#private::witness::<#shape>(loop {}))),
            // A growable vector: its own value, declared at the top of `name_grad`'s
            // sweeps, in scope wherever a call's adjoints are (an empty one types too).
            None if self.vars[place.var].growable => {
                let primal = &self.vars[place.var].primal;
                quote!((*#private::shape_witness(&#primal, loop {})))
            }
            None => {
                let zero = &self.vars[place.var].zero;
                quote!((#zero))
            }
        };
        let fields = &place.fields;
        let indices = place.indices.iter().map(|_| quote!([0usize]));
        quote!(#base #fields #(#indices)*)
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
        self.nested(|lower| lower.stmts(&block.stmts))
    }

    /// Runs `lower` one block deeper, in a scope of its own.
    fn nested<T>(&mut self, lower: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        self.scopes.push(Vec::new());
        self.depth += 1;
        let result = lower(self);
        self.depth -= 1;
        self.scopes.pop();
        result
    }

    /// An `if` statement with the next branch flag.
    fn if_stmt(&mut self, cond: TokenStream, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        self.if_let_stmt((cond, None), then, otherwise)
    }

    /// An `if` (or `if let`, see [`Lower::condition`]) statement with the next branch
    /// flag.
    fn if_let_stmt(
        &mut self,
        (cond, bind): (TokenStream, Option<TokenStream>),
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    ) -> Stmt {
        let flag = self.flags;
        self.flags += 1;
        Stmt::If {
            cond,
            then,
            otherwise,
            flag,
            bind,
        }
    }

    /// An `if`'s condition on data and primal values; for `if let pat = s` on steady data,
    /// `matches!(s, pat)` and the binding `pat = s`, with the names `pat` binds.
    fn condition(&mut self, cond: &Expr) -> Option<(TokenStream, Option<TokenStream>, Vec<Ident>)> {
        let Expr::Let(binding) = cond else {
            return Some((self.plain(&cond.to_token_stream())?, None, Vec::new()));
        };
        let scrutinee = self.plain(&binding.expr.to_token_stream())?;
        if self.mentions_tracked(&scrutinee) || !self.names.steady(&scrutinee) {
            return None;
        }
        let pat = &binding.pat;
        let mut names = Vec::new();
        pattern_names(pat, &mut names);
        Some((
            quote!(::core::matches!(#scrutinee, #pat)),
            Some(quote!(#pat = #scrutinee)),
            names,
        ))
    }

    /// Binds `names` as data in a new scope around `lower`.
    fn binding<T>(
        &mut self,
        names: &[Ident],
        lower: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<T> {
        self.nested(|inner| {
            for name in names {
                // (Of a type the body does not show.)
                inner.number(name, None);
                inner.bind(name, None);
            }
            lower(inner)
        })
    }

    fn stmts(&mut self, stmts: &[SynStmt]) -> Option<Vec<Stmt>> {
        let mut out = Vec::new();
        for stmt in stmts {
            let lowered = match stmt {
                SynStmt::Local(local) => self.local(local),
                SynStmt::Expr(expr, semi) => {
                    self.expr_stmt(expr, semi.is_some()).map(|stmt| vec![stmt])
                }
                // A macro statement on data (`assert!`, `println!`: the rewrite rejects one
                // on tracked values) runs in the forward sweep as written.
                SynStmt::Macro(mac) => self.plain(&quote!(#mac)).map(|tokens| {
                    vec![Stmt::Data {
                        tokens,
                        replay: false,
                    }]
                }),
                // An item (`const G: f64 = 9.81;`) at the top of `name_grad`'s body: the
                // sweeps run in one block, where it is visible to both. (A half's reverse
                // is a function of its own, and a nested block's reverse another block.)
                SynStmt::Item(item) if !self.half && self.depth == 0 => Some(vec![Stmt::Data {
                    tokens: item.to_token_stream(),
                    replay: false,
                }]),
                SynStmt::Item(_) => None,
            };
            let Some(lowered) = lowered else {
                why("statement", stmt);
                return None;
            };
            // An `if` value inside the statement's first operand runs before it.
            out.append(&mut self.pending);
            out.extend(lowered);
        }
        // A local sized by a growable vector's length must see no push after it in its
        // block: its reverse reads that length at the block's end.
        for (at, stmt) in out.iter().enumerate() {
            if let Stmt::LetArray { var, .. } = stmt {
                let later = &out[at + 1..];
                let grows = self
                    .sized_by
                    .iter()
                    .any(|&(sized, growable)| sized == *var && pushes(later, growable));
                if grows {
                    why("local sized by a vector pushed to after it", &quote!());
                    return None;
                }
            }
        }
        Some(out)
    }

    /// `stmts` with the indices that may change kept, at every depth (see
    /// [`Lower::keep_indices`]).
    fn kept_indices(
        &mut self,
        stmts: Vec<Stmt>,
        output: Option<&Value>,
        counted: bool,
    ) -> Option<Vec<Stmt>> {
        let mut out = Vec::new();
        // Copies whose source's index is kept (`let e = w[j];`): the copy's reads go back
        // to the source, so its index stays in scope until the last of them.
        let mut copies: Vec<(usize, VarId, Vec<Stmt>)> = Vec::new();
        // Rows named by a `let`, kept to the block's end.
        let mut to_end = Vec::new();
        for mut stmt in stmts {
            if matches!(&stmt, Stmt::Keep { name, .. } if self.kept_to_end.contains(&name.to_string()))
            {
                to_end.push(stmt);
                continue;
            }
            match &mut stmt {
                Stmt::If {
                    then, otherwise, ..
                } => {
                    *then = self.kept_indices(std::mem::take(then), None, false)?;
                    *otherwise = self.kept_indices(std::mem::take(otherwise), None, false)?;
                }
                Stmt::For { body, counted, .. } => {
                    *body = self.kept_indices(std::mem::take(body), None, *counted)?;
                }
                _ => {}
            }
            let copy = match &stmt {
                Stmt::Let { var, value }
                    if value.ops.is_empty() && matches!(value.result, Operand::Place(_)) =>
                {
                    Some(*var)
                }
                _ => None,
            };
            let (before, after) = self.keep_indices(&mut stmt)?;
            out.extend(before);
            out.push(stmt);
            match copy {
                Some(var) if !after.is_empty() => copies.push((out.len() - 1, var, after)),
                _ => out.extend(after),
            }
        }
        // Latest first, so that earlier positions stay where they are.
        for (at, var, keeps) in copies.into_iter().rev() {
            // (Never after a loop body's closing `if !go { break; }`, which is data and must
            // stay last, see `Stmt::For::counted`.) The body's output is read last of all.
            let (last, copies) = last_reader(&out, at, var);
            // A variable assigned the copy (`prev = e;`) reads the element in a later
            // iteration too, where no kept number is: not followed.
            if copies.iter().any(|copy| copied_whole(&out[at..], *copy)) {
                why(
                    "copy of an element at an index that changes (`let e = w[j];`), assigned to \
                     another variable (`prev = e;`): write `prev = e * 1.0;` or read `w[j]` there",
                    &self.vars[var].name.clone(),
                );
                return None;
            }
            let read = |var: &VarId| output.is_some_and(|output| output.reads(*var));
            if copies.iter().any(read) {
                self.epilogue.extend(keeps);
                continue;
            }
            out.splice(last + 1..last + 1, keeps);
        }
        if output.is_some() {
            self.epilogue.append(&mut to_end);
        }
        let end = out.len() - usize::from(counted && !out.is_empty());
        out.splice(end..end, to_end);
        Some(out)
    }

    /// The indices of a `let`'s or an assignment's places that may change before its
    /// reverse (`w[k]` in a `while` that counts `k`): each is bound to a name just before
    /// the statement and kept on the value stack after it, as a call's changing data is
    /// (see `Stmt::Keep`), so that both sweeps index by the same number. The statements to
    /// put before and after it.
    fn keep_indices(&mut self, stmt: &mut Stmt) -> Option<(Vec<Stmt>, Vec<Stmt>)> {
        let mut kept: Vec<(String, Ident)> = Vec::new();
        let mut places: Vec<&mut Place> = Vec::new();
        let mut values: Vec<&mut Value> = Vec::new();
        match stmt {
            // (Not an assigned copy into a variable, whose source the sweeps read where the
            // copy is read, maybe in a later iteration: `h = w[j];`. A `let` copy's index is
            // kept until its last reader, see `kept_indices`; a copy into an element is an
            // element's own.)
            Stmt::Assign { place, value }
                if place.indices.is_empty()
                    && value.ops.is_empty()
                    && matches!(value.result, Operand::Place(_)) => {}
            Stmt::Let { value, .. } => values.push(value),
            Stmt::Assign { place, value } => {
                places.push(place);
                values.push(value);
            }
            // A call's places are read again where its reverse is, just before the keep.
            Stmt::Call {
                args, store, seeds, ..
            } => {
                places.extend(args.iter_mut().filter_map(|arg| match arg {
                    Arg::Tracked(place) => Some(place),
                    Arg::Data(_) => None,
                }));
                places.extend(store.as_mut());
                for (to, from) in seeds {
                    places.push(to);
                    places.push(from);
                }
            }
            _ => {}
        }
        // Data that assigns (`w[k] * x + { k += 1; 0.0 }`) would change an index between
        // its reads, which one kept number cannot follow.
        let mut assigning = values.iter().any(|value| {
            value.ops.iter().any(|op| {
                op.operands.iter().any(|operand| match operand {
                    Operand::Data(data) => assigns(&data.raw),
                    _ => false,
                })
            })
        });
        for value in values {
            for op in &mut value.ops {
                places.extend(op.operands.iter_mut().filter_map(|operand| match operand {
                    Operand::Place(place) => Some(place),
                    _ => None,
                }));
            }
            if let Operand::Place(place) = &mut value.result {
                places.push(place);
            }
        }
        // (Or an index that assigns, `w[{ k += 1; k }]`.)
        assigning |= places.iter().any(|place| place.indices.iter().any(assigns));
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for place in places {
            for index in &mut place.indices {
                if self.names.steady(index) {
                    continue;
                }
                if assigning {
                    why(
                        "statement, whose data changes a name an index of it reads (`{ k += 1; \
                         0.0 }` beside `w[k]`): move the change into a statement of its own",
                        &*index,
                    );
                    return None;
                }
                let key = index.to_string();
                let name = match kept.iter().find(|(seen, _)| *seen == key) {
                    Some((_, name)) => name.clone(),
                    None => {
                        let (name, bind, keep) = self.kept_index(index);
                        before.push(bind);
                        after.push(keep);
                        kept.push((key, name.clone()));
                        name
                    }
                };
                *index = name.to_token_stream();
            }
        }
        Some((before, after))
    }

    /// A name for the number `index` has now, the `let` that binds it, and the
    /// [`Stmt::Keep`] that keeps it for the reverse sweep.
    fn kept_index(&mut self, index: &TokenStream) -> (Ident, Stmt, Stmt) {
        let name = Ident::new(
            &format!("__autodiff_index_{}", self.data_args),
            Span::mixed_site(),
        );
        self.data_args += 1;
        let bind = Stmt::Data {
            tokens: quote!(let #name: usize = #index;),
            replay: false,
        };
        let keep = Stmt::Keep {
            name: name.clone(),
            typed: Some(quote!(usize)),
        };
        (name, bind, keep)
    }

    /// A new tracked scalar that each branch of an `if` value (or each `return`) assigns:
    /// its `let` (a constant start, never read) and its place.
    fn result_local(&mut self, name: &Ident) -> (Stmt, Place) {
        let var = self.declare(name, false, 0, quote!(0.0f64));
        self.vars[var].mutable = true;
        let place = Place::whole(var);
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
        (start, place)
    }

    /// The result local of a function returning an array of scalars (`[f64; N]`, `N`
    /// a literal or a const parameter), its elements zero.
    fn array_result_local(&mut self, name: &Ident, ty: &TokenStream) -> Option<(Stmt, Place)> {
        let syn::Type::Array(array) = syn::parse2::<syn::Type>(ty.clone()).ok()? else {
            return None;
        };
        if !matches!(&*array.elem, syn::Type::Path(elem) if elem.path.is_ident("f64")) {
            why("array returned early: only an array of `f64`s is", ty);
            return None;
        }
        let len = &array.len;
        let zero = quote!([0.0f64; #len]);
        let var = self.declare(name, false, 1, zero.clone());
        self.vars[var].lengths = vec![len.to_token_stream()];
        self.vars[var].mutable = true;
        Some((Stmt::LetArray { var, init: zero }, Place::whole(var)))
    }

    /// `return [a, b]` or `return h` (or the tail) of a function returning an array,
    /// assigned element by element to the result local `place`: a literal's elements
    /// (each a new value or a copy, as the rewrite writes them); a local array's or a
    /// call's result's copied (`copy`), in a loop over the length.
    fn array_returned(&mut self, tail: &Expr, place: &Place) -> Option<Vec<Stmt>> {
        let element = |index: TokenStream| Place {
            var: place.var,
            fields: TokenStream::new(),
            indices: vec![index],
        };
        let mut out = Vec::new();
        if let Expr::Call(call) = tail {
            if let (true, [Expr::Array(array)]) = (
                path_ends(&call.func, "Ok"),
                &call.args.iter().collect::<Vec<_>>()[..],
            ) {
                for (at, elem) in array.elems.iter().enumerate() {
                    let value = self.value(elem)?;
                    if self.place_depth(&value.result) != Some(0) {
                        return None;
                    }
                    out.append(&mut self.pending);
                    out.push(self.assign(element(quote!(#at)), value)?);
                }
                return Some(out);
            }
        }
        let value = self.result(tail)?;
        out.append(&mut self.pending);
        let Operand::Place(source) = value.result else {
            return None;
        };
        if !value.ops.is_empty() || !source.is_whole() {
            return None;
        }
        let index = Ident::new("__element", Span::mixed_site());
        let len = self.vars[place.var].lengths.first()?.clone();
        let from = Place {
            var: source.var,
            fields: TokenStream::new(),
            indices: vec![index.to_token_stream()],
        };
        // (The output's type proves its elements scalars.)
        self.read_as_scalar(&from);
        let copy = self.copy_value(from);
        let assign = self.assign(element(index.to_token_stream()), copy)?;
        out.push(Stmt::For {
            pat: index.to_token_stream(),
            iter: quote!(0..#len),
            length: Vec::new(),
            body: vec![assign],
            after: Vec::new(),
            condition: false,
            counted: false,
        });
        Some(out)
    }

    /// An `if` value into a new local (see [`Lower::result_local`]).
    fn if_local(&mut self, name: &Ident, branch: &syn::ExprIf) -> Option<Vec<Stmt>> {
        let (start, place) = self.result_local(name);
        let branch = self.if_value(branch, &place)?;
        Some(vec![start, branch])
    }

    /// Statements that end in the function's result, assigned to `place`: the result is
    /// the tail or a `return`, and an `if` that returns at the end of its first branch
    /// takes the statements after it into its `else` (which is where they run).
    fn returning(&mut self, stmts: &[SynStmt], place: &Place) -> Option<Vec<Stmt>> {
        // What follows a bare `return` never runs.
        let stmts = match stmts.iter().position(|stmt| returned(stmt).is_some()) {
            Some(at) => &stmts[..=at],
            None => stmts,
        };
        let early = stmts.iter().position(|stmt| returns_early(stmt).is_some());
        let Some(at) = early else {
            let (last, rest) = stmts.split_last()?;
            let tail = match last {
                SynStmt::Expr(_, _) if returned(last).is_some() => returned(last)?,
                SynStmt::Expr(tail, None) => tail,
                _ => return None,
            };
            let mut out = self.stmts(rest)?;
            if self.array_output {
                out.extend(self.array_returned(tail, place)?);
                return Some(out);
            }
            let value = self.result(tail)?;
            out.append(&mut self.pending);
            out.push(self.assign(place.clone(), value)?);
            return Some(out);
        };
        let branch = returns_early(&stmts[at])?;
        if matches!(&*branch.cond, Expr::Let(_)) {
            return None;
        }
        let mut out = self.stmts(&stmts[..at])?;
        let cond = self.plain(&branch.cond.to_token_stream())?;
        let then = self.nested(|lower| lower.returning(&branch.then_branch.stmts, place))?;
        // What runs when the condition is false: the `else`, then the statements after.
        let mut rest: Vec<SynStmt> = match &branch.else_branch {
            None => Vec::new(),
            Some((_, otherwise)) => match &**otherwise {
                Expr::If(_) => vec![SynStmt::Expr((**otherwise).clone(), None)],
                // Its names would stay in scope after it: only a block that binds none.
                Expr::Block(block)
                    if block.label.is_none()
                        && !block
                            .block
                            .stmts
                            .iter()
                            .any(|s| matches!(s, SynStmt::Local(_))) =>
                {
                    block.block.stmts.clone()
                }
                _ => return None,
            },
        };
        rest.extend(stmts[at + 1..].iter().cloned());
        let otherwise = self.nested(|lower| lower.returning(&rest, place))?;
        out.push(self.if_stmt(cond, then, otherwise));
        Some(out)
    }

    /// `if c { ..; a } else { ..; b }` as a value: each branch assigns its value to `place`.
    fn if_value(&mut self, branch: &syn::ExprIf, place: &Place) -> Option<Stmt> {
        let (cond, bind, names) = self.condition(&branch.cond)?;
        let then = self.binding(&names, |lower| {
            lower.value_block(&branch.then_branch, place)
        })?;
        let otherwise = match &branch.else_branch {
            Some((_, otherwise)) => match &**otherwise {
                Expr::Block(block) if block.label.is_none() => {
                    self.value_block(&block.block, place)?
                }
                Expr::If(nested) => vec![self.nested(|lower| lower.if_value(nested, place))?],
                _ => return None,
            },
            None => return None,
        };
        Some(self.if_let_stmt((cond, bind), then, otherwise))
    }

    /// A branch of an `if` value: its statements, then its value assigned to `place`.
    fn value_block(&mut self, block: &Block, place: &Place) -> Option<Vec<Stmt>> {
        let (last, rest) = block.stmts.split_last()?;
        let SynStmt::Expr(tail, None) = last else {
            return None;
        };
        self.nested(|lower| {
            let mut stmts = lower.stmts(rest)?;
            let value = lower.value(tail)?;
            stmts.append(&mut lower.pending);
            stmts.push(lower.assign_result(place.clone(), value, tail)?);
            Some(stmts)
        })
    }

    fn local(&mut self, local: &syn::Local) -> Option<Vec<Stmt>> {
        // `let __part_3 = &x[0];`: a part of a long expression bound first (see
        // `Rewriter::node`), a tracked value read once, as its place or a new local.
        if let Some(part) = part_local(local) {
            return self.local(&part);
        }
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
            let numeric = match (&local.pat, init) {
                (Pat::Type(typed), _) => Numeric::of_type(&typed.ty),
                (Pat::Ident(_), Some(init)) => self.numeric(&init.expr),
                _ => None,
            };
            // A `Copy` value by its spelling (`[row[0], row[1]]`, `k as f64`, a typed
            // number) may be passed twice, to both halves of a call.
            let copy = match (&local.pat, init) {
                (Pat::Type(typed), _) => copy_type(&typed.ty),
                (Pat::Ident(_), Some(init)) => self.copied(&init.expr),
                _ => false,
            };
            for name in &bound {
                self.number(name, numeric.clone());
                match copy {
                    true => self.copies.insert(name.to_string()),
                    false => self.copies.remove(&name.to_string()),
                };
            }
            let replay = (self.depth > 0 || self.half)
                && matches!(&local.pat, Pat::Ident(ident) if ident.mutability.is_none()
                    && ident.subpat.is_none())
                && bound.iter().all(|name| self.names.replayable(name));
            for name in &bound {
                self.bind(name, None);
            }
            return Some(vec![Stmt::Data { tokens, replay }]);
        }
        // `let _ = y * 2.0;`: computed (and checked, as the trace records it), then dropped.
        if let (Pat::Wild(_), Some(init)) = (&local.pat, init) {
            let value = self.value(&init.expr)?;
            if self.place_depth(&value.result) != Some(0) {
                return None;
            }
            let name = Ident::new("__discarded", Span::mixed_site());
            let var = self.declare(&name, false, 0, quote!(0.0f64));
            return Some(vec![Stmt::Let { var, value }]);
        }
        let (name, mutable) = simple_pattern(&local.pat)?;
        let expr = &init?.expr;
        if let Expr::If(branch) = &**expr {
            let stmts = self.if_local(&name, branch)?;
            if let Some(Stmt::Let { var, .. }) = stmts.first() {
                let place = Place::whole(*var);
                self.bind(&name, Some(place));
            }
            return Some(stmts);
        }
        // `growable::<[f64; D], _>(__backend, Vec::new())` or `grown(..)`: a growable
        // vector, at the top level of `name_grad`'s body (its adjoints are declared before
        // the forward sweep, empty, and grow with it).
        if let Some(shape) = growable_call(expr) {
            if self.half || self.depth > 0 || self.loops > 0 || !mutable {
                why(
                    "growable vector: only one declared at the top of the body, whose `name_grad` \
                     runs it, is compiled",
                    &expr.to_token_stream(),
                );
                return None;
            }
            let depth = match &shape {
                Some(shape) => 1 + signature::array_lengths(shape).len(),
                None => UNKNOWN,
            };
            let var = self.declare(&name, false, depth, quote!(::std::vec::Vec::new()));
            self.vars[var].mutable = true;
            self.vars[var].growable = true;
            self.bind(&name, Some(Place::whole(var)));
            let init = quote!(::std::vec::Vec::new());
            return Some(vec![Stmt::LetArray { var, init }]);
        }
        // `constants(__backend, [0.0; N])?`: a tracked array of constants.
        if let Some(array) = constants_call(expr) {
            let Some(zero) = zeros(&array) else {
                return self.constant_local(&name, mutable, &array, expr);
            };
            let depth = array_depth(&array);
            // A run-time length is read again going back: it must not change. A growable
            // vector's (`vec![0.0; keys.len()]`) is read from its adjoints, which have as
            // many rows wherever no push follows in the block (see `Lower::stmts`).
            let (mut array, mut zero, mut sized_by) = (array, zero, Vec::new());
            if let Some((elem, len)) = vec_repeat(&array) {
                let (_, stand_in, grown) = self.growable_lengths(&len);
                let tokens = stand_in.to_token_stream();
                if !self.names.steady(&tokens) || self.mentions_tracked(&tokens) {
                    why("local vector's length", &len);
                    return None;
                }
                if !grown.is_empty() {
                    let inner = zeros(&elem).unwrap_or_else(|| quote!(0.0f64));
                    let adjoints = self.adjoint_lengths(&len, false);
                    zero = quote!(::std::vec![#inner; #adjoints]);
                    let forward = self.adjoint_lengths(&len, true);
                    array = syn::parse_quote!(::std::vec![#elem; #forward]);
                    sized_by = grown.into_iter().map(|(_, place)| place.var).collect();
                }
            }
            let init = self.plain(&array.to_token_stream())?;
            let lengths = lengths(&zero);
            let var = self.declare(&name, false, depth, zero);
            self.vars[var].mutable = mutable;
            self.vars[var].lengths = lengths;
            self.sized_by
                .extend(sized_by.into_iter().map(|growable| (var, growable)));
            let place = Place::whole(var);
            self.bind(&name, Some(place));
            return Some(vec![Stmt::LetArray { var, init }]);
        }
        // `let a = [h; 3];` (`repeated::<_, _, { 3 }>(__backend, &h)?`): a copy of `h` in
        // every element.
        if let Some((elem, len)) = repeated_call(expr) {
            let place = self.repeated_local(&name, mutable, elem, len)?;
            self.bind(&name, Some(place));
            return Some(Vec::new());
        }
        // `let a = [x * 2.0, y.sin(), 1.0];`: a local array, its elements assigned in order.
        if let Expr::Array(array) = strip_parens(expr) {
            let place = self.array_local(&name, mutable, array)?;
            self.bind(&name, Some(place));
            return Some(Vec::new());
        }
        // `let prev = h;` of a local array of a known length that changes later: a copy of
        // each element (`copied_each`), as the trace's.
        if let Some((source, count)) = self.copied_each_array(expr) {
            return self.elementwise_local(&name, mutable, source, count, true);
        }
        // `let a = h;` of another function's whole result, `a` indexed later: an array,
        // which the trace's copy leaves the same nodes, so `a` is another name of `h`
        // (`finish` checks that the trace's types prove it an array).
        if let Some(source) = self.copied_call_result(expr) {
            if !mutable && self.indexed.contains(&name.to_string()) {
                self.array_aliases.push(source);
                self.bind(&name, Some(Place::whole(source)));
                return Some(Vec::new());
            }
        }
        // `let t = h[0];` of a place whose shape only rustc knows, `t` never mentioned
        // again: a copy the output never reaches, which the trace's reverse pass never
        // visits, so the sweeps need not compute it (nor know whether it is a scalar).
        if self.mentions.get(&name.to_string()) == Some(&1) {
            if let Some(place) = self.copied_unknown(expr) {
                if literal_indices(&place) {
                    return Some(Vec::new());
                }
            }
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
            // `let r = m[j];` of a row, `j` changing later: another name of the row at the
            // index `j` has here, kept until the block ends (see `kept_indices`).
            let row = source.depth != UNKNOWN && source.depth > place.indices.len();
            if unchanging && row && !place.indices.iter().any(assigns) {
                let mut place = place.clone();
                let mut stmts = Vec::new();
                for index in &mut place.indices {
                    if self.names.steady(index) {
                        continue;
                    }
                    let (kept, bind, keep) = self.kept_index(index);
                    self.kept_to_end.insert(kept.to_string());
                    stmts.extend([bind, keep]);
                    *index = kept.to_token_stream();
                }
                self.bind(&name, Some(place));
                return Some(stmts);
            }
        }
        // `let mut h = g(..);`: `h` is the call's fresh result itself, changed in place
        // from here on.
        if let (true, Operand::Place(place), true, Some(_)) =
            (mutable, &value.result, value.ops.is_empty(), called(expr))
        {
            if self.vars[place.var].call && place.is_whole() && !self.vars[place.var].mutable {
                let place = place.clone();
                self.vars[place.var].mutable = true;
                self.bind(&name, Some(place));
                return Some(Vec::new());
            }
        }
        // `let prev = h;` of a local array of a known length: its elements copied, one
        // by one (which the sweeps follow by sharing nodes, see `emit::shared_nodes`).
        if let (Operand::Place(source), true) = (&value.result, value.ops.is_empty()) {
            if let Some(count) = self.copied_array(source) {
                let source = source.var;
                return self.elementwise_local(&name, mutable, source, count, false);
            }
        }
        // A copy of a place whose shape only rustc knows (`let mut s = p.b[k];` of a
        // parameter struct's field) is a scalar if the copy is read as one later: the
        // trace's `s` has the type of `p.b[k]`.
        let unknown_copy = match &value.result {
            Operand::Place(place) if value.ops.is_empty() => {
                (self.vars[place.var].depth == UNKNOWN).then(|| place.key())
            }
            _ => None,
        };
        if self.place_depth(&value.result) != Some(0) {
            return None;
        }
        let var = self.declare(&name, false, 0, quote!(0.0f64));
        if let Some(source) = unknown_copy.or_else(|| self.unknown_copy(&value)) {
            self.copied_from.push((var, source));
        }
        self.vars[var].mutable = mutable;
        self.bind(&name, Some(Place::whole(var)));
        Some(vec![Stmt::Let { var, value }])
    }

    /// `let mut v = x;` of data `x` that `v` later holds tracked values in place of: the
    /// rewrite's `constants(__backend, x)?`, whose shape only rustc knows. A scalar if the
    /// trace's types prove it (`v` read as an operand somewhere); else the trace.
    fn constant_local(
        &mut self,
        name: &Ident,
        mutable: bool,
        data: &Expr,
        init: &Expr,
    ) -> Option<Vec<Stmt>> {
        let Expr::Try(attempt) = init else {
            return None;
        };
        let Expr::Call(call) = &*attempt.expr else {
            return None;
        };
        let raw = self.plain(&data.to_token_stream())?;
        let convert = Some(call.func.to_token_stream());
        let var = self.declare(name, false, UNKNOWN, quote!(0.0f64));
        self.vars[var].mutable = mutable;
        self.shaped.push(var);
        self.bind(name, Some(Place::whole(var)));
        let value = Value::new(Vec::new(), Operand::Data(Data { raw, convert }));
        Some(vec![Stmt::Let { var, value }])
    }

    /// How many indices a place operand still lacks to be a scalar (0 for other operands);
    /// for a call's result, 0, if the trace's types prove it (see [`Lower::needs`]).
    fn place_depth(&mut self, operand: &Operand) -> Option<usize> {
        match operand {
            Operand::Place(place) if self.vars[place.var].depth == UNKNOWN => {
                self.needs.push(place.key());
                Some(0)
            }
            Operand::Place(place) => self.vars[place.var].depth.checked_sub(place.indices.len()),
            _ => Some(0),
        }
    }

    /// Notes that the trace reads `place` where only a scalar fits.
    fn read_as_scalar(&mut self, place: &Place) {
        self.proven.insert(place.key());
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
            // `keys.push(g(..))` on a growable vector: the call's result is its new row.
            Expr::MethodCall(push) if self.growable_push(push).is_some() => {
                let (place, call) = self.growable_push(push)?;
                let result = self.hoisted(|lower| lower.call(&call))?;
                let Some(Stmt::Call {
                    var,
                    store,
                    push: pushed,
                    ..
                }) = self.pending.last_mut()
                else {
                    return None;
                };
                let Operand::Place(result) = result else {
                    return None;
                };
                if *var != result.var {
                    return None;
                }
                *store = Some(place);
                *pushed = true;
                self.pending.pop()
            }
            Expr::Assign(assign) if called(&assign.right).is_some() => {
                let place = self.place(&assign.left)?;
                let var = &self.vars[place.var];
                // A row (not a scalar: that is an `Assign` of a copy) of a local array, or
                // the whole of a local holding an earlier call's result (`h = g(x, h);`).
                let row = !var.param
                    && !var.call
                    && var.depth != UNKNOWN
                    && place.indices.len() < var.depth
                    && place.fields.is_empty();
                let again = !var.param && var.call && place.is_whole();
                if !row && !again {
                    return self.assign_value(place, &assign.right);
                }
                let call = called(&assign.right)?;
                let result = self.hoisted(|lower| lower.call(&call))?;
                let Some(Stmt::Call { var, store, .. }) = self.pending.last_mut() else {
                    return None;
                };
                let Operand::Place(result) = result else {
                    return None;
                };
                // (An index that may change before the call's reverse is kept, see
                // `keep_indices`.)
                if *var != result.var {
                    return None;
                }
                *store = Some(place.clone());
                self.vars[place.var].mutable = true;
                self.pending.pop()
            }
            Expr::Assign(assign) if is_tracked_form(&assign.right) => {
                let place = self.place(&assign.left)?;
                self.assign_value(place, &assign.right)
            }
            Expr::Block(block) if block.label.is_none() && compound_shaped(&block.block) => {
                self.compound(&block.block)
            }
            // A block statement: a block of its own (an `if true`, see `operand`).
            Expr::Block(block) if block.label.is_none() => {
                let stmts = self.block(&block.block)?;
                Some(self.if_stmt(quote!(true), stmts, Vec::new()))
            }
            Expr::If(branch) => self.branch(branch),
            // A loop over data alone (`for d in data.iter_mut() { *d += 1.0; }`) is data:
            // it runs going forward, and nothing of it is reversed. (Not one that leaves
            // an outer loop or the body by a label.)
            Expr::ForLoop(lp)
                if lp.label.is_none()
                    && !self.mentions_tracked(&lp.to_token_stream())
                    && !exits_by_label(&lp.body.to_token_stream()) =>
            {
                let tokens = self.plain(&lp.to_token_stream())?;
                Some(Stmt::Data {
                    tokens,
                    replay: false,
                })
            }
            Expr::ForLoop(lp) if lp.label.is_none() => self.for_loop(lp, None),
            Expr::While(lp) if lp.label.is_none() => self.while_loop(lp),
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

    /// `for pat in iter { .. }`; for a fold, the body's last statement adds its item to
    /// the fold's variable (`total.add(__backend, item)?;`).
    fn for_loop(&mut self, lp: &syn::ExprForLoop, fold: Option<&Fold>) -> Option<Stmt> {
        // Over a tracked array: the same chain over its indices.
        // `0..w.len()` over a parameter array: its length, as its type gives it.
        let expr = self.known_lengths(&lp.expr);
        // `0..keys.len()` of a growable vector: its length before the loop, read from its
        // adjoints going back (which then have as many rows), unless the loop pushes.
        let (expr, stand_in, grown) = self.growable_lengths(&expr);
        let Some(over) = self.tracked_iter(&expr, &lp.pat) else {
            why("loop's iterator chain", &lp.expr);
            return None;
        };
        let (iter, pat, elements, mut length) = match over {
            Some(over) => {
                let steady = self.names.steady(&over.checked);
                (
                    steady.then_some(over.iter)?,
                    over.pat,
                    over.elements,
                    over.lengths,
                )
            }
            None => {
                let iter = expr.to_token_stream();
                let steady = self.names.steady(&stand_in.to_token_stream());
                if !steady {
                    why(
                        "loop's iterator: it reads data that changes before the reverse sweep \
                         walks the loop back",
                        &iter,
                    );
                }
                (
                    steady.then_some(iter)?,
                    lp.pat.to_token_stream(),
                    Vec::new(),
                    Vec::new(),
                )
            }
        };
        if !reversible(&expr) || self.mentions_tracked(&iter) {
            why("loop's iterator", &lp.expr);
            return None;
        }
        length.extend(grown.iter().cloned());
        let mut bound = Vec::new();
        pattern_names(&lp.pat, &mut bound);
        // A counter over a range of integers.
        let counter = match (&*lp.pat, strip_parens(&lp.expr)) {
            (Pat::Ident(_), Expr::Range(range)) => {
                let ends = range.start.iter().chain(range.end.iter());
                let ends: Vec<Option<Numeric>> = ends.map(|end| self.numeric(end)).collect();
                ends.iter()
                    .all(|end| matches!(end, Some(Numeric::Other)))
                    .then_some(Numeric::Other)
            }
            _ => None,
        };
        for name in &bound {
            self.number(name, counter.clone());
        }
        // `for &x in xs`: a name bound through `&` is a copy, whatever the iterator.
        if self.yields_copies(&lp.expr) || matches!(&*lp.pat, Pat::Reference(_)) {
            self.copies
                .extend(bound.iter().map(|name| name.to_string()));
        }
        let mut scope: Vec<(String, Option<Place>)> =
            bound.iter().map(|name| (name.to_string(), None)).collect();
        scope.extend(
            elements
                .into_iter()
                .map(|(name, place)| (name.to_string(), Some(place))),
        );
        self.scopes.push(scope);
        self.loops += 1;
        // `if !go { break; }` last (a `break` as `desugar` writes it): the loop stops
        // early, and the sweeps count the iterations that ran.
        let stop = match (fold, lp.body.stmts.split_last()) {
            (None, Some((last, _))) if stops(last) => self.plain(&last.to_token_stream()),
            _ => None,
        };
        let body = match (fold, &stop) {
            (None, Some(_)) => {
                let rest = &lp.body.stmts[..lp.body.stmts.len() - 1];
                self.nested(|lower| lower.stmts(rest))
            }
            (None, None) => self.block(&lp.body),
            (Some(fold), _) => self.fold_body(&lp.body, fold),
        };
        self.loops -= 1;
        self.scopes.pop();
        let mut body = body?;
        if grown.iter().any(|(_, place)| pushes(&body, place.var)) {
            why(
                "loop over a growable vector's length that pushes to it",
                &lp.expr,
            );
            return None;
        }
        let counted = stop.is_some();
        if let Some(tokens) = stop {
            body.push(Stmt::Data {
                tokens,
                replay: false,
            });
        }
        Some(Stmt::For {
            pat,
            iter,
            length,
            body,
            after: Vec::new(),
            condition: false,
            counted,
        })
    }

    /// `while cond { .. }`, its condition on data and primal values.
    fn while_loop(&mut self, lp: &syn::ExprWhile) -> Option<Stmt> {
        if matches!(&*lp.cond, Expr::Let(_)) {
            return None;
        }
        let cond = self.plain(&lp.cond.to_token_stream())?;
        self.loops += 1;
        let body = self.block(&lp.body);
        self.loops -= 1;
        Some(Stmt::For {
            pat: TokenStream::new(),
            iter: cond,
            length: Vec::new(),
            body: body?,
            after: Vec::new(),
            condition: true,
            counted: false,
        })
    }

    /// `R.iter()` of a tracked array `R` at the root of a loop's iterator chain, or as the
    /// argument of one of its `zip`s (through `zip`, `enumerate`, `rev`, `skip`, `take`):
    /// `Some` of the chain over `R`'s indices instead, `0..len`, with the pattern's name
    /// for each element (`x` or `&x`) now bound to its index. `Some(None)` for a chain
    /// over data alone; `None` for one this cannot follow.
    fn tracked_iter(&mut self, iter: &Expr, pat: &Pat) -> Option<Option<OverTracked>> {
        if !self.mentions_tracked(&iter.to_token_stream()) {
            return Some(None);
        }
        let mut lengths = Vec::new();
        let (rebuilt, checked, elements) = self.chain(iter, &mut lengths)?;
        let mut pat = pat.clone();
        let mut bound = Vec::new();
        for (path, mut place) in elements {
            let mut element = &mut pat;
            for &at in &path {
                let Pat::Tuple(tuple) = element else {
                    return None;
                };
                element = tuple.elems.iter_mut().nth(at)?;
            }
            // `&x` binds the element as `x` does; the index loop binds the index to `x`.
            if let Pat::Reference(reference) = element {
                if reference.mutability.is_some() {
                    return None;
                }
                let inner = (*reference.pat).clone();
                *element = inner;
            }
            let name = match element {
                Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    ident.ident.clone()
                }
                _ => return None,
            };
            place.indices.push(quote!(#name));
            bound.push((name, place));
        }
        Some(Some(OverTracked {
            iter: rebuilt,
            checked,
            pat: pat.to_token_stream(),
            elements: bound,
            lengths,
        }))
    }

    /// A loop's iterator chain rooted at `R.iter()`, through `zip` (of such a chain, at any
    /// depth), `enumerate`, `rev`, `skip`, `take` and `step_by`: the chain over the tracked arrays'
    /// indices instead, the same chain with empty ranges (which rustc checks for the
    /// pattern's shape), and each tracked element's position in the item (tuple positions
    /// from the outside in) with its array's place. Data is kept as written.
    fn chain(&mut self, iter: &Expr, lengths: &mut Vec<(Ident, Place)>) -> Option<Chain> {
        if !self.mentions_tracked(&iter.to_token_stream()) {
            return Some((iter.to_token_stream(), iter.to_token_stream(), Vec::new()));
        }
        // `&R` yields what `R.iter()` does.
        if let Expr::Reference(reference) = strip_parens(iter) {
            if reference.mutability.is_some() {
                return None;
            }
            let (range, place) = self.over_indices(&reference.expr, lengths)??;
            return Some((range, quote!((0..0)), vec![(Vec::new(), place)]));
        }
        // The adapters from the outside in, down to the root.
        let mut adapters = Vec::new();
        let mut root = iter;
        while let Expr::MethodCall(call) = strip_parens(root) {
            adapters.push(call);
            if call.method == "iter" && call.args.is_empty() {
                break;
            }
            root = &call.receiver;
        }
        let mut elements: Vec<(Vec<usize>, Place)> = Vec::new();
        let (mut rebuilt, mut checked) = match adapters.last() {
            Some(innermost) if innermost.method == "iter" => {
                match self.over_indices(&innermost.receiver, lengths)? {
                    Some((range, place)) => {
                        elements.push((Vec::new(), place));
                        (range, quote!((0..0)))
                    }
                    None => {
                        let receiver = &innermost.receiver;
                        (quote!(#receiver.iter()), quote!(#receiver.iter()))
                    }
                }
            }
            _ => return None,
        };
        for call in adapters.iter().rev().skip(1) {
            let (method, args) = (&call.method, &call.args);
            match method.to_string().as_str() {
                "zip" => {
                    elements.iter_mut().for_each(|(path, _)| path.insert(0, 0));
                    let (zipped, zipped_checked, inner) = self.chain(args.first()?, lengths)?;
                    elements.extend(inner.into_iter().map(|(mut path, place)| {
                        path.insert(0, 1);
                        (path, place)
                    }));
                    rebuilt = quote!(#rebuilt.zip(#zipped));
                    checked = quote!(#checked.zip(#zipped_checked));
                    continue;
                }
                "enumerate" => elements.iter_mut().for_each(|(path, _)| path.insert(0, 1)),
                "rev" | "skip" | "take" | "step_by" => {}
                _ => return None,
            }
            rebuilt = quote!(#rebuilt.#method(#args));
            checked = quote!(#checked.#method(#args));
        }
        Some((rebuilt, checked, elements))
    }

    /// `R` of `R.iter()` if it is a tracked array: the range over its indices and its
    /// place; a length the macro cannot see is read before the loop (see `Stmt::For`)
    /// under a name added to `lengths`. `Some(None)` for data.
    fn over_indices(
        &mut self,
        receiver: &Expr,
        lengths: &mut Vec<(Ident, Place)>,
    ) -> Option<Option<(TokenStream, Place)>> {
        let receiver = strip_reference(receiver);
        if !self.mentions_tracked(&receiver.to_token_stream()) {
            return Some(None);
        }
        let place = self.place(receiver)?;
        let len = match self.vars[place.var].lengths.get(place.indices.len()) {
            Some(len) => len.clone(),
            None => {
                let at = self.ops + lengths.len();
                let name = Ident::new(&format!("__length_{at}"), Span::mixed_site());
                lengths.push((name.clone(), place.clone()));
                quote!(#name)
            }
        };
        Some(Some((quote!((0..(#len))), place)))
    }

    /// `place = expr;` of a tracked value.
    fn assign_value(&mut self, place: Place, expr: &Expr) -> Option<Stmt> {
        let value = self.value(expr)?;
        self.assign(place, value)
    }

    /// A branch's value into an `if`'s result local (a scalar). Another function's whole
    /// result, whose shape the macro cannot see, is a scalar only if the local is read
    /// as one: rustc types the local as the result, which may be an array.
    fn assign_result(&mut self, place: Place, value: Value, tail: &Expr) -> Option<Stmt> {
        let source = match &value.result {
            Operand::Place(source)
                if value.ops.is_empty()
                    && source.is_whole()
                    && self.vars[source.var].depth == UNKNOWN
                    && place.is_whole()
                    && self.vars[place.var].depth == 0
                    && !self.vars[place.var].param =>
            {
                source.key()
            }
            _ => {
                // A scalar: rustc types every branch's value alike (see `finish`).
                let known = match &value.result {
                    Operand::Place(source) => self.vars[source.var].depth != UNKNOWN,
                    _ => true,
                };
                if known {
                    self.scalar_results.insert(place.var);
                }
                return self.assign(place, value);
            }
        };
        self.needs.push(source.clone());
        self.copied_from.push((place.var, source.clone()));
        self.if_results
            .push((place.var, source, tail.to_token_stream()));
        self.vars[place.var].mutable = true;
        Some(Stmt::Assign { place, value })
    }

    fn assign(&mut self, place: Place, value: Value) -> Option<Stmt> {
        if let Operand::Place(source) = &value.result {
            self.read_as_scalar(source);
        }
        // A copy into a scalar place reads a scalar.
        let into = &self.vars[place.var];
        if into.depth != UNKNOWN && into.depth == place.indices.len() {
            if let Some(source) = self.unknown_copy(&value) {
                self.proven.insert(source);
            }
        }
        if self.shaped.contains(&place.var) {
            self.needs.push(place.key());
        }
        // A call's result, changed element by element: the trace's types must say that
        // the place is a scalar (it is read as one somewhere).
        if self.vars[place.var].call && self.vars[place.var].depth == UNKNOWN {
            self.needs.push(place.key());
            // (A new scalar assigned there proves it: rustc types the place as the value.)
            let scalar = match &value.result {
                Operand::Temp(_) => true,
                Operand::Place(source) => {
                    let depth = self.vars[source.var].depth;
                    depth != UNKNOWN && depth == source.indices.len()
                }
                Operand::Data(_) => false,
            };
            if scalar {
                self.read_as_scalar(&place);
            }
        }
        let var = &mut self.vars[place.var];
        let unknown = var.depth == UNKNOWN && (self.shaped.contains(&place.var) || var.call);
        if var.param || (var.depth != place.indices.len() && !unknown) {
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
        let (cond, bind, names) = self.condition(&branch.cond)?;
        let then = self.binding(&names, |lower| lower.block(&branch.then_branch))?;
        let otherwise = match &branch.else_branch {
            None => Vec::new(),
            Some((_, otherwise)) => match &**otherwise {
                Expr::Block(block) if block.label.is_none() => self.block(&block.block)?,
                Expr::If(nested) => vec![self.nested(|lower| lower.branch(nested))?],
                _ => return None,
            },
        };
        Some(self.if_let_stmt((cond, bind), then, otherwise))
    }

    /// The function's result: `Ok(copy)`, an operation's call without its `?`, or a
    /// constant.
    fn result(&mut self, tail: &Expr) -> Option<Value> {
        // `{ let __part_0 = ..; ..; Ok(..) }`: a long expression's parts bound first (see
        // `Rewriter::node`), then its result.
        if let Expr::Block(block) = tail {
            let (last, rest) = block.block.stmts.split_last()?;
            let (None, SynStmt::Expr(tail, None)) = (&block.label, last) else {
                return None;
            };
            let mut stmts = self.stmts(rest)?;
            self.pending.append(&mut stmts);
            return self.result(tail);
        }
        let ok =
            matches!(tail, Expr::Call(call) if path_ends(&call.func, "Ok") && call.args.len() == 1);
        if self.array_output && ok {
            // `Ok(out)` of a local tracked array, as it is.
            let Expr::Call(call) = tail else {
                return None;
            };
            let value = self.value(&call.args[0])?;
            let Operand::Place(place) = &value.result else {
                return None;
            };
            let var = &self.vars[place.var];
            // (Or another function's result, kept in a local and changed in place:
            // `let mut h = g(w, x); h[i] = ..; h`.)
            let local_array = !var.param && (var.call || (var.depth != UNKNOWN && var.depth > 0));
            return (local_array && place.indices.is_empty() && value.ops.is_empty())
                .then_some(value);
        }
        // An array output is a local (above) or another function's array result
        // (`linear(w, y)` last); a scalar one any of these.
        let scalar = !self.array_output;
        match tail {
            Expr::Call(call) if scalar && path_ends(&call.func, "Ok") && call.args.len() == 1 => {
                let value = self.value(&call.args[0])?;
                (self.place_depth(&value.result) == Some(0)).then_some(value)
            }
            Expr::MethodCall(call) if scalar && is_backend(&call.receiver) => {
                let mut ops = Vec::new();
                let result = self.backend_op(call, &mut ops)?;
                Some(Value::new(ops, result))
            }
            Expr::Call(call) if scalar && is_constant(&call.func) => {
                let data = self.constant(call)?;
                Some(Value::new(Vec::new(), data))
            }
            // A call of another `#[differentiable]` function, its result returned.
            _ => {
                let call = Called::of(tail)?;
                let called = self.hoisted(|lower| lower.call(&call))?;
                Some(Value::new(Vec::new(), called))
            }
        }
    }

    fn value(&mut self, expr: &Expr) -> Option<Value> {
        let mut ops = Vec::new();
        let result = self.operand(expr, &mut ops)?;
        let result = self.respill(result);
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
                Expr::Call(call) if is_constant(&call.func) => self.constant(call),
                Expr::Call(call) if is_copy(&call.func) && call.args.len() == 2 => {
                    self.copied_place(&call.args[1], ops)
                }
                // A call of another `#[differentiable]` function runs first, as a
                // statement, like an `if` value.
                inner => {
                    let call = Called::of(inner)?;
                    self.spill(ops)?;
                    self.hoisted(|lower| lower.call(&call))
                }
            },
            Expr::Call(call) if path_ends(&call.func, "clone") && call.args.len() == 1 => {
                match self.operand(&call.args[0], ops)? {
                    Operand::Place(place) => Some(Operand::Place(place)),
                    _ => None,
                }
            }
            Expr::Path(_) | Expr::Index(_) | Expr::Field(_) => self.place(expr).map(Operand::Place),
            // An `if` value or a fold runs first, as statements, into a local of its own;
            // what the expression recorded before it moves into locals too, so that
            // nothing is reordered.
            Expr::Block(block) if block.label.is_none() && fold_shaped(&block.block) => {
                self.spill(ops)?;
                self.hoisted(|lower| lower.fold(&block.block))
            }
            // A block as a value (`{ let t = y + 1.0; t / 2.0 }`): its statements, then its
            // value into a local of its own, like an `if` value.
            Expr::Block(block) if block.label.is_none() => {
                self.spill(ops)?;
                self.hoisted(|lower| {
                    let name = Ident::new("__block", Span::mixed_site());
                    let (start, place) = lower.result_local(&name);
                    let stmts = lower.value_block(&block.block, &place)?;
                    // A block of its own (an `if true`), whose reverse declares the
                    // adjoints of its locals.
                    let block = lower.if_stmt(quote!(true), stmts, Vec::new());
                    lower.pending.push(start);
                    lower.pending.push(block);
                    Some(Operand::Place(place))
                })
            }
            Expr::If(branch) => {
                self.spill(ops)?;
                self.hoisted(|lower| {
                    let name = Ident::new("__branch", Span::mixed_site());
                    let stmts = lower.if_local(&name, branch)?;
                    let Some(Stmt::Let { var, .. }) = stmts.first() else {
                        return None;
                    };
                    let var = *var;
                    lower.pending.extend(stmts);
                    Some(Operand::Place(Place::whole(var)))
                })
            }
            _ => None,
        }
    }

    /// The variable of `copied(__backend, &h)?`, where `h` is another function's whole
    /// result, unchanged, of a shape the macro cannot see.
    fn copied_call_result(&mut self, expr: &Expr) -> Option<VarId> {
        let place = self.copied_unknown(expr)?;
        let var = &self.vars[place.var];
        (place.is_whole() && var.call && !var.mutable).then_some(place.var)
    }

    /// The source of `copied_each(__backend, &h)?` and its length, where `h` is a whole
    /// local array of a known length (see [`Lower::copied_array`]).
    fn copied_each_array(&mut self, expr: &Expr) -> Option<(VarId, usize)> {
        let (true, source) = copy_call(expr)? else {
            return None;
        };
        let place = self.place(source)?;
        let count = self.copied_array(&place)?;
        Some((place.var, count))
    }

    /// The place of `copied(__backend, &place)?` (or `copied_each`), where the place's
    /// variable has a shape the macro cannot see.
    fn copied_unknown(&mut self, expr: &Expr) -> Option<Place> {
        let place = self.place(copy_call(expr)?.1)?;
        (self.vars[place.var].depth == UNKNOWN).then_some(place)
    }

    /// `let b = a;` of a whole local array of `count` scalars, element by element into a
    /// local of its own: each a `copy` operation (`copies`, as the trace's `copied_each`
    /// records), or the source's element assigned as it is (which the sweeps follow by
    /// sharing nodes, see `emit::shared_nodes`).
    fn elementwise_local(
        &mut self,
        name: &Ident,
        mutable: bool,
        source: VarId,
        count: usize,
        copies: bool,
    ) -> Option<Vec<Stmt>> {
        let (var, start) = self.zeros_local(name, count);
        self.vars[var].mutable = mutable;
        let mut stmts = vec![start];
        for at in 0..count {
            let element = |var| Place {
                var,
                fields: TokenStream::new(),
                indices: vec![quote!(#at)],
            };
            let copy = match copies {
                true => self.copy_value(element(source)),
                false => Value::new(Vec::new(), Operand::Place(element(source))),
            };
            stmts.push(self.assign(element(var), copy)?);
        }
        self.bind(name, Some(Place::whole(var)));
        Some(stmts)
    }

    /// `copied(__backend, &place)?`, a statement's copy (`let v = y;`): a scalar's is an
    /// operation of its own, `copy` (the trace's node, with slope 1); a row's or an
    /// array's is another name of the same place, as the trace's is.
    fn copied_place(&mut self, expr: &Expr, ops: &mut Vec<Op>) -> Option<Operand> {
        let Operand::Place(place) = self.operand(expr, ops)? else {
            return None;
        };
        let depth = match self.slice_depths.get(&place.var) {
            Some(&depth) if place.fields.is_empty() => {
                // (A scalar by the slice's type.)
                if depth == place.indices.len() {
                    self.read_as_scalar(&place);
                }
                depth
            }
            _ => self.vars[place.var].depth,
        };
        if depth != UNKNOWN && depth > place.indices.len() {
            return Some(Operand::Place(place));
        }
        // (A place whose shape only rustc knows must be read as a scalar somewhere.)
        if self.place_depth(&Operand::Place(place.clone())) != Some(0) {
            return None;
        }
        let copy = self.copy_value(place);
        ops.extend(copy.ops);
        Some(copy.result)
    }

    /// The source of `value` if it is a [`copied_place`](Self::copied_place) of a place
    /// whose shape only rustc knows.
    fn unknown_copy(&self, value: &Value) -> Option<(VarId, String, usize)> {
        match (&value.ops[..], &value.result) {
            ([op], Operand::Temp(id)) if op.id == *id && op.method == "copy" => {
                match &op.operands[..] {
                    [Operand::Place(place)] if self.vars[place.var].depth == UNKNOWN => {
                        Some(place.key())
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// Moves the operations recorded so far into `let`s of their own, one per result
    /// still to be read, in order, so that statements can run before the rest of the
    /// expression without reordering what the trace records; those results are read from
    /// the new locals from then on. (Each result is read once, and the operations are in
    /// evaluation order, so each result's operations are the run of them ending at it.)
    fn spill(&mut self, ops: &mut Vec<Op>) -> Option<()> {
        if ops.is_empty() {
            return Some(());
        }
        if ops.iter().any(|op| !op.live) {
            return None;
        }
        let read: std::collections::HashSet<usize> = ops
            .iter()
            .flat_map(|op| &op.operands)
            .filter_map(|operand| match operand {
                Operand::Temp(id) => Some(*id),
                _ => None,
            })
            .collect();
        self.spills += 1;
        let mut run = Vec::new();
        for op in ops.drain(..) {
            let id = op.id;
            run.push(op);
            if !read.contains(&id) {
                let name = Ident::new("__spilled", Span::mixed_site());
                let var = self.declare(&name, false, 0, quote!(0.0f64));
                let value = Value::new(std::mem::take(&mut run), Operand::Temp(id));
                self.pending.push(Stmt::Let { var, value });
                let place = Place::whole(var);
                self.spilled.insert(id, place);
            }
        }
        run.is_empty().then_some(())
    }

    /// `differentiable_g(__backend, args..)?`, the rewrite of a call of another
    /// `#[differentiable]` function: a call of its halves into a new scalar variable.
    fn call(&mut self, call: &Called<'_>) -> Option<Operand> {
        let (seeded, pending) = (self.seeds.len(), self.pending.len());
        let path = match call.callee {
            Callee::Function(func) => func.to_token_stream(),
            // A method of steady data (`self.g(..)`), called on the same receiver going
            // back.
            Callee::Method(receiver, method, ref sizes) => {
                let receiver = self.plain(&receiver.to_token_stream())?;
                if !self.names.steady(&receiver) || self.mentions_tracked(&receiver) {
                    return None;
                }
                quote!(#receiver.#method #sizes)
            }
        };
        let mut args = Vec::new();
        // Data arguments kept for the reverse (see `Stmt::Keep`).
        let mut kept = Vec::new();
        let mut assigning = false;
        for &arg in &call.args {
            match arg {
                Expr::Call(lend) if path_ends(&lend.func, "Tracked") && lend.args.len() == 1 => {
                    let lent = strip_reference(&lend.args[0]);
                    let place = match self.place(lent) {
                        Some(place) => place,
                        // `[a * b, c.exp()]`: a local array of new values.
                        None if matches!(lent, Expr::Array(_)) => {
                            let blame = call.blame();
                            self.array_argument(lent, false, &blame)?
                        }
                        // `[x; 3]`: one value seeded into each element.
                        None if repeated_call(lent).is_some() => {
                            let blame = call.blame();
                            self.repeated_argument(lent, &blame)?
                        }
                        // An expression: its value into a local of its own, first; a
                        // call's result (`g(h(x))`) is lent as it is, its own nodes.
                        None => {
                            let value = self.value(lent)?;
                            match &value.result {
                                Operand::Place(place)
                                    if value.ops.is_empty() && self.vars[place.var].call =>
                                {
                                    place.clone()
                                }
                                _ => self.local_argument(value)?,
                            }
                        }
                    };
                    // (An index that may change before the call's reverse, `w[j]` in a
                    // `while` counting `j`, is kept, see `keep_indices`.)
                    // Two lent parts of one variable would be two `&mut` of its adjoints,
                    // unless they are two different fields (`p.w, p.b`); or parts of one
                    // array (`dot(v, v)`, `f(w[i], w[j])`: the call then shares their
                    // adjoints, see `Stmt::Call::seeds`).
                    let shared = args.iter().any(|arg| {
                        matches!(arg, Arg::Tracked(other)
                            if other.var == place.var
                                && !disjoint_fields(other, &place)
                                && other.fields.to_string() != place.fields.to_string())
                    });
                    if shared {
                        return None;
                    }
                    args.push(Arg::Tracked(place));
                }
                _ => {
                    let tokens = self.plain(&arg.to_token_stream())?;
                    if self.mentions_tracked(&tokens) {
                        return None;
                    }
                    assigning |= assigns(&tokens);
                    if !self.names.steady(&tokens) || !self.copied(arg) {
                        // Data that may change before the call's reverse (a loop's counter,
                        // `x.detach().ceil()`, a data `if` on tracked values): a number,
                        // bound first and kept for the reverse (see `Stmt::Keep`).
                        if matches!(
                            strip_parens(arg),
                            Expr::Reference(_) | Expr::Array(_) | Expr::Repeat(_)
                        ) {
                            return None;
                        }
                        // In the halves, whose reverse half is a function of its own, no
                        // scope sees the forward's value: its type must show in the body.
                        let typed = match self.half {
                            false => None,
                            true => match self.numeric(arg) {
                                Some(Numeric::Float(ty)) => Some(ty),
                                Some(Numeric::Other) => Some(quote!(_)),
                                None => {
                                    why(
                                        "call's data argument, which changes before the call's \
                                         reverse: in a helper, only a number whose type the body \
                                         shows is kept (a float literal, `as f64`, `.detach()`, \
                                         a loop's counter, a local or parameter declared so)",
                                        arg,
                                    );
                                    return None;
                                }
                            },
                        };
                        let name = format!("__autodiff_data_{}", self.data_args);
                        self.data_args += 1;
                        let name = Ident::new(&name, Span::mixed_site());
                        let private = quote!(::scalar_autodiff::__private);
                        self.pending.push(Stmt::Data {
                            tokens: quote!(let #name = #private::kept(#tokens);),
                            replay: false,
                        });
                        args.push(Arg::Data(name.to_token_stream()));
                        kept.push((name, typed));
                        continue;
                    }
                    args.push(Arg::Data(tokens));
                }
            }
        }
        // Data bound before the call that changes a lent element's index (`g(w[j], { j +=
        // 1; j })`) would move the index, kept just before the call, past its read.
        let moving = args.iter().any(|arg| {
            matches!(arg, Arg::Tracked(place)
                if place.indices.iter().any(|index| !self.names.steady(index)))
        });
        // (Or an argument computed by an expression that changes it: `g(w[j], { j += 1;
        // 0.5 } * s)`, whose local is bound before the call too.)
        let assigning = assigning || call.args.iter().any(|arg| assigns(&arg.to_token_stream()));
        if assigning && moving {
            why(
                "call, whose data changes a name an index of it reads (`{ k += 1; k }` beside \
                 `w[k]`): move the change into a statement of its own",
                &path,
            );
            return None;
        }
        let name = Ident::new("__called", Span::mixed_site());
        // Each tracked argument's type, for rustc to infer the result's (and a const
        // generic callee's sizes) from.
        let private = quote!(::scalar_autodiff::__private);
        let witnesses: Vec<TokenStream> = args
            .iter()
            .map(|arg| match arg {
                Arg::Tracked(place) => {
                    let witness = self.witness(place);
                    quote!(#private::Whole(&#witness))
                }
                // A kept value's name is bound in neither sweep where the result's
                // adjoints are declared: its type's witness is (see `Stmt::Keep`).
                Arg::Data(tokens) => {
                    match kept.iter().find(|(name, _)| *name == tokens.to_string()) {
                        Some((_, Some(ty))) => quote!(<#ty as #private::Kept>::take(0.0)),
                        Some((name, None)) => {
                            let witness = super::emit::kept_type(name);
                            quote!(#private::take_like(0.0, &#witness))
                        }
                        None => tokens.clone(),
                    }
                }
            })
            .collect();
        let seeds = self.seeds.split_off(seeded);
        // A call that shares adjoints copies each array lent whole: not a parameter
        // struct's (nor a slice's, whose helper takes no value twice compiled).
        let whole_struct = args.iter().any(|arg| {
            matches!(arg, Arg::Tracked(place)
                if place.fields.is_empty()
                    && self.vars[place.var].param
                    && self.vars[place.var].depth == UNKNOWN)
        });
        if whole_struct && lends_twice(&args, &seeds) {
            let at = call.blame();
            why(
                "call's arguments: one tracked value lent twice beside a parameter struct or \
                 slice lent whole",
                &at,
            );
            return None;
        }
        if !self.seeds_apart(&seeds, &args, pending) {
            let at = call.blame();
            why(
                "call's arguments: one tracked value lent twice (in an array literal, or as \
                 an argument and an element), whose two adjoints the callee adds into one \
                 node on the tape",
                &at,
            );
            return None;
        }
        let var = self.declare(&name, false, UNKNOWN, zero_of(&path, &witnesses));
        self.vars[var].call = true;
        self.called.push(var);
        self.pending.push(Stmt::Call {
            var,
            path,
            args,
            store: None,
            push: false,
            seeds,
        });
        self.pending.extend(
            kept.into_iter()
                .map(|(name, typed)| Stmt::Keep { name, typed }),
        );
        Some(Operand::Place(Place::whole(var)))
    }

    /// Whether a call's seeded sources (see [`Stmt::Call::seeds`]) are apart from each
    /// other and from its lent places, and unwritten by the statements its arguments
    /// needed (from `pending` on): the callee's contributions to each source then come
    /// as one run, the trace's order. Two elements of one array are apart when their
    /// indices are different literals.
    fn seeds_apart(&self, seeds: &[(Place, Place)], args: &[Arg], pending: usize) -> bool {
        let literal = literal_indices;
        let apart = |one: &Place, other: &Place| {
            one.var != other.var
                || disjoint_fields(one, other)
                || (literal(one)
                    && literal(other)
                    && one.fields.to_string() == other.fields.to_string()
                    && one.indices.len() == other.indices.len()
                    && one
                        .indices
                        .iter()
                        .zip(&other.indices)
                        .any(|(a, b)| a.to_string() != b.to_string()))
        };
        seeds.iter().enumerate().all(|(at, (_, source))| {
            let lent = args.iter().all(|arg| match arg {
                Arg::Tracked(place) => place.var != source.var || same_root(place, source),
                Arg::Data(_) => true,
            });
            let others = seeds[at + 1..]
                .iter()
                .all(|(_, other)| apart(source, other) || same_root(source, other));
            lent && others && !super::checks::writes(&self.pending[pending..], source.var)
        })
    }

    /// A scalar expression lent to a call, as a local of its own (its node).
    fn local_argument(&mut self, value: Value) -> Option<Place> {
        if self.place_depth(&value.result) != Some(0) {
            return None;
        }
        let name = Ident::new("__argument", Span::mixed_site());
        let var = self.declare(&name, false, 0, quote!(0.0f64));
        self.pending.push(Stmt::Let { var, value });
        Some(Place::whole(var))
    }

    /// `[value; n]` of a tracked value lent to a call (`n` a literal): a local array
    /// whose every element is a copy of one place, the value's own or a new local's (as
    /// the trace's `repeated` copies it into each element).
    fn repeated_argument(&mut self, repeat: &Expr, blame: &TokenStream) -> Option<Place> {
        let (elem, len) = repeated_call(repeat)?;
        let refuse = || {
            why(
                "call's `[value; n]` (a length that is not a literal, a value that is not a \
                 scalar, or an element at an index that changes)",
                &quote!(#blame #repeat),
            );
            None
        };
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(len),
            ..
        }) = strip_parens(len)
        else {
            return refuse();
        };
        let len: usize = len.base10_parse().ok()?;
        let value = self.value(uncloned(elem))?;
        if self.place_depth(&value.result) != Some(0) {
            return refuse();
        }
        // Each element a copy of the value's place, or of a new local's.
        let source = match &value.result {
            Operand::Place(place) if value.ops.is_empty() => {
                if !place.indices.iter().all(|index| self.names.steady(index)) {
                    return refuse();
                }
                place.clone()
            }
            _ => self.local_argument(value)?,
        };
        let name = Ident::new("__argument", Span::mixed_site());
        let (var, start) = self.zeros_local(&name, len);
        self.pending.push(start);
        for at in 0..len {
            let place = Place {
                var,
                fields: TokenStream::new(),
                indices: vec![quote!(#at)],
            };
            let copy = self.copy_value(source.clone());
            let assign = self.assign(place, copy)?;
            self.pending.push(assign);
        }
        Some(Place::whole(var))
    }

    /// An array literal lent to a call, as a local tracked array whose elements are
    /// assigned in order. Each element must be a new node (an operation's result): a
    /// copied place would receive the callee's contributions as one sum, where the trace
    /// adds them into its node one by one.
    /// `[a * b, c.exp()]` lent to a call, or (`tail`) returned: a local array of new
    /// values and constants. A returned one may also hold scalar locals as they are, each
    /// once: nothing reads them after the body's tail, so their adjoints are the output's.
    fn array_argument(&mut self, array: &Expr, tail: bool, blame: &TokenStream) -> Option<Place> {
        // (Said at `blame`, the callee or the array: the rewrite's tokens for an element
        // are its own, spanned at the attribute.)
        let what = match tail {
            true => {
                "returned array literal (an element of it is an array, or an element at an \
                     index that changes)"
            }
            false => {
                "call's array literal (an element of it is an array, or an element at an \
                      index that changes)"
            }
        };
        let Expr::Array(array) = array else {
            return None;
        };
        // `[[a, b], [c, d]]` or `[w, m[1]]`: rows, lent as a local matrix.
        // (Read without `place_depth`, which would take an unknown shape for a scalar.)
        let row = |lower: &mut Self, elem: &Expr| match uncloned(elem) {
            Expr::Array(_) => true,
            elem if repeat_call(elem).is_some() || repeated_call(elem).is_some() => true,
            elem => lower.place(elem).is_some_and(|place| {
                let depth = lower.vars[place.var].depth;
                depth != UNKNOWN && depth.checked_sub(place.indices.len()) == Some(1)
            }),
        };
        if !tail && array.elems.iter().any(|elem| row(self, elem)) {
            return self.rows_argument(array, blame);
        }
        // The places held as they are, each once: an element by the indices written
        // (`[a[1], a[0]]` holds two).
        let mut held: Vec<(VarId, String, String)> = Vec::new();
        let spelled =
            |place: &Place| (place.var, place.fields.to_string(), place.spelled_indices());
        let mut scalars = Elements::default();
        let len = array.elems.len();
        let name = Ident::new("__argument", Span::mixed_site());
        let (var, start) = self.zeros_local(&name, len);
        self.pending.push(start);
        for (at, elem) in array.elems.iter().enumerate() {
            // New values and constants; a copy of a tracked place would sum its adjoints
            // in another order than the trace's edges to the place.
            let value = self.value(elem)?;
            let local = match &value.result {
                Operand::Place(place) if tail && value.ops.is_empty() => {
                    let var = &self.vars[place.var];
                    let scalar =
                        var.depth == 0 && place.indices.is_empty() && place.fields.is_empty();
                    (scalar && !var.param && !held.contains(&spelled(place))).then_some(place)
                }
                _ => None,
            };
            // An element of a local array or of another function's result at a constant
            // index (`[a[0] * x, a[1]]`): the output's element is that scalar, read once,
            // as a local's is. (The output's type proves it a scalar.)
            let element = match &value.result {
                Operand::Place(place) if tail && value.ops.is_empty() && local.is_none() => {
                    let var = &self.vars[place.var];
                    let constant = literal_indices(place);
                    let depth = var.depth == UNKNOWN || var.depth == place.indices.len();
                    (!place.indices.is_empty()
                        && place.fields.is_empty()
                        && constant
                        && depth
                        && !var.param
                        && !held.contains(&spelled(place)))
                    .then_some(place)
                }
                _ => None,
            };
            let local = local.or(element).cloned();
            if let Some(place) = &local {
                self.read_as_scalar(place);
                held.push(spelled(place));
            }
            let place = Place {
                var,
                fields: TokenStream::new(),
                indices: vec![quote!(#at)],
            };
            // A tracked scalar as it is, lent to a call: seeded (see `Stmt::Call::seeds`).
            // (A changing index is kept, see `keep_indices`.)
            if let (false, None, Operand::Place(source)) = (tail, &local, &value.result) {
                if self.place_depth(&value.result) != Some(0) {
                    why(what, &quote!(#blame #elem));
                    return None;
                }
                scalars.note(self, source);
                self.seeds.push((place, source.clone()));
                continue;
            }
            scalars.known = true;
            // A parameter's scalar returned as it is (`[x, y * 2.0]`): a copy into the
            // output, which the trace copies into a node of its own when a body calls this
            // one (see `Backend::returned`, and `emit::copies_a_parameter`).
            let returned = tail
                && matches!(&value.result, Operand::Place(source)
                    if value.ops.is_empty() && self.vars[source.var].param)
                && self.place_depth(&value.result) == Some(0);
            if local.is_none()
                && !returned
                && !matches!(value.result, Operand::Temp(_) | Operand::Data(_))
            {
                why(what, &quote!(#blame #elem));
                return None;
            }
            let assign = self.assign(place, value)?;
            self.pending.push(assign);
        }
        scalars.prove(self);
        Some(Place::whole(var))
    }

    /// `[[a * b, c], [d, e.exp()]]` or `[w, [a, b, c]]` lent to a call: a local matrix of
    /// zeros whose elements are assigned (new values, constants) or seeded (tracked
    /// scalars as they are, and each element of a whole array of known length), row by
    /// row, as [`Lower::array_argument`] does for one row.
    fn rows_argument(&mut self, array: &syn::ExprArray, blame: &TokenStream) -> Option<Place> {
        let what = "call's array literal of rows (a row that is neither a literal nor a whole \
                    array of a length the macro knows, rows of different lengths, or an element \
                    at an index that changes)";
        let refuse = |elem: &Expr| {
            why(what, &quote!(#blame #elem));
            None
        };
        // Each row: its elements' expressions, or a whole array's place and length (that
        // of a literal row, where one is: rustc checks that the rows agree).
        let literal = array.elems.iter().find_map(|elem| match uncloned(elem) {
            Expr::Array(inner) => Some(inner.elems.len()),
            _ => None,
        });
        let mut rows: Vec<Result<Vec<Expr>, (Place, usize)>> = Vec::new();
        // Rows of data named or computed (`[[x, y], r]`), by position: constants read one
        // by one once the other rows give their length.
        let mut data = Vec::new();
        for elem in &array.elems {
            match uncloned(elem) {
                Expr::Array(inner) => rows.push(Ok(inner.elems.iter().cloned().collect())),
                other if constants_call(other).is_some() => {
                    let row = constants_call(other)?;
                    let plain = self.plain(&row.to_token_stream())?;
                    if self.mentions_tracked(&plain) {
                        return refuse(elem);
                    }
                    // Computed once, as written (`basis(k)`), then read element by element.
                    let name = format!("__autodiff_row_{}", self.data_args);
                    self.data_args += 1;
                    let name = Ident::new(&name, Span::mixed_site());
                    self.pending.push(Stmt::Data {
                        tokens: quote!(let #name = #plain;),
                        replay: false,
                    });
                    data.push((rows.len(), name));
                    rows.push(Ok(Vec::new()));
                }
                // `[0.5; 2]`: a row of one constant (a tracked value repeated is one node
                // the trace sums into once, which separate elements would not be).
                other if constant_row(other).is_some() => {
                    let (value, len) = constant_row(other)?;
                    rows.push(Ok(vec![value.clone(); len]));
                }
                other => {
                    let Some(place) = self.place(other) else {
                        return refuse(elem);
                    };
                    let var = &self.vars[place.var];
                    // A whole result of another function (`[h, v]`): rustc types it as
                    // the other rows, which give its length (0 until one does). (A changing
                    // index is kept, see `keep_indices`.)
                    if var.call && var.depth == UNKNOWN && place.is_whole() {
                        rows.push(Err((place, 0)));
                        continue;
                    }
                    let len = var
                        .lengths
                        .get(place.indices.len())
                        .and_then(|len| syn::parse2::<syn::LitInt>(len.clone()).ok())
                        .and_then(|len| len.base10_parse::<usize>().ok())
                        .or(literal.filter(|_| var.lengths.len() > place.indices.len()));
                    // (A row of scalars: `[m, ..]` of a matrix `m` is rows of rows.)
                    let flat = var.depth == place.indices.len() + 1;
                    match len {
                        Some(len) if flat && place.fields.is_empty() && !var.call => {
                            rows.push(Err((place, len)));
                        }
                        _ => return refuse(elem),
                    }
                }
            }
        }
        let width = |row: &Result<Vec<Expr>, (Place, usize)>| match row {
            Ok(elems) => elems.len(),
            Err((_, len)) => *len,
        };
        let Some(cols) = rows.iter().map(width).find(|&len| len > 0) else {
            return refuse(&Expr::Array(array.clone()));
        };
        for (at, row) in data {
            let backend = crate::rewrite::backend();
            rows[at] = Ok((0..cols)
                .map(|c| {
                    syn::parse_quote!(::scalar_autodiff::__private::constant(#backend, (#row)[#c])?)
                })
                .collect());
        }
        // The results' rows, each as long as the others; their elements are read as
        // scalars (which is what proves the callee's result a row of them).
        let mut results = Vec::new();
        for row in &mut rows {
            if let Err((place, len @ 0)) = row {
                *len = cols;
                results.push(place.clone());
            }
        }
        for place in results {
            let mut element = place;
            element.indices.push(quote!(0));
            self.read_as_scalar(&element);
        }
        if rows.iter().any(|row| width(row) != cols) {
            return refuse(&Expr::Array(array.clone()));
        }
        let count = rows.len();
        let mut scalars = Elements::default();
        let name = Ident::new("__argument", Span::mixed_site());
        let zero = quote!([[0.0f64; #cols]; #count]);
        let var = self.declare(&name, false, 2, zero.clone());
        self.vars[var].lengths = vec![quote!(#count), quote!(#cols)];
        self.pending.push(Stmt::LetArray { var, init: zero });
        for (r, row) in rows.iter().enumerate() {
            for c in 0..cols {
                let place = Place {
                    var,
                    fields: TokenStream::new(),
                    indices: vec![quote!(#r), quote!(#c)],
                };
                let elem = match row {
                    Err((source, _)) => {
                        let mut source = source.clone();
                        source.indices.push(quote!(#c));
                        scalars.known = true;
                        self.seeds.push((place, source));
                        continue;
                    }
                    Ok(elems) => &elems[c],
                };
                let value = self.value(elem)?;
                if let Operand::Place(source) = &value.result {
                    if !value.ops.is_empty() || self.place_depth(&value.result) != Some(0) {
                        return refuse(elem);
                    }
                    scalars.note(self, source);
                    self.seeds.push((place, source.clone()));
                    continue;
                }
                if !matches!(value.result, Operand::Temp(_) | Operand::Data(_)) {
                    return refuse(elem);
                }
                scalars.known = true;
                let assign = self.assign(place, value)?;
                self.pending.push(assign);
            }
        }
        scalars.prove(self);
        Some(Place::whole(var))
    }

    /// `let name = [e0, e1, ..];` of scalars: a local array of zeros whose elements are
    /// then assigned in order (into [`Lower::pending`], each after what its value needs),
    /// as the trace records them. An element copied from a tracked place is a copy, which
    /// the sweeps follow where its source is not read again.
    fn array_local(
        &mut self,
        name: &Ident,
        mutable: bool,
        array: &syn::ExprArray,
    ) -> Option<Place> {
        let (var, start) = self.zeros_local(name, array.elems.len());
        self.vars[var].mutable = mutable;
        self.pending.push(start);
        for (at, elem) in array.elems.iter().enumerate() {
            let value = self.value(elem)?;
            if self.place_depth(&value.result) != Some(0) {
                why("local array's element", elem);
                return None;
            }
            let place = Place {
                var,
                fields: TokenStream::new(),
                indices: vec![quote!(#at)],
            };
            let assign = self.assign(place, value)?;
            self.pending.push(assign);
        }
        Some(Place::whole(var))
    }

    /// `let name = [value; n];` of a scalar value and a literal `n`: the value (a node of
    /// its own, if it is an expression) copied (`copy`) into each element of a local array.
    fn repeated_local(
        &mut self,
        name: &Ident,
        mutable: bool,
        elem: &Expr,
        len: &Expr,
    ) -> Option<Place> {
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(count),
            ..
        }) = strip_parens(len)
        else {
            why("repeated array's length", len);
            return None;
        };
        let count: usize = count.base10_parse().ok()?;
        let value = self.value(elem)?;
        if self.place_depth(&value.result) != Some(0) {
            why("repeated array's element", elem);
            return None;
        }
        let source = match &value.result {
            Operand::Place(place) if value.ops.is_empty() => place.clone(),
            _ => self.local_argument(value)?,
        };
        let (var, start) = self.zeros_local(name, count);
        self.vars[var].mutable = mutable;
        self.pending.push(start);
        for at in 0..count {
            let place = Place {
                var,
                fields: TokenStream::new(),
                indices: vec![quote!(#at)],
            };
            let copy = self.copy_value(source.clone());
            let assign = self.assign(place, copy)?;
            self.pending.push(assign);
        }
        Some(Place::whole(var))
    }

    /// A `copy` of the scalar at `source`, a value of its own.
    fn copy_value(&mut self, source: Place) -> Value {
        let id = self.next_op();
        let op = Op {
            id,
            method: Ident::new("copy", Span::call_site()),
            operands: vec![Operand::Place(source)],
            exponent: None,
            live: true,
        };
        Value::new(vec![op], Operand::Temp(id))
    }

    /// The length of a whole local array of scalars that `let b = a;` copies element by
    /// element: one declared with a literal length, neither a call's result nor growable.
    /// (Not a parameter: lent whole to a const-generic helper, a copy's shared array
    /// leaves the helper's sizes to rustc, which cannot infer them.)
    fn copied_array(&self, source: &Place) -> Option<usize> {
        let var = &self.vars[source.var];
        if !source.is_whole() || var.depth != 1 || var.param || var.call || var.growable {
            return None;
        }
        let [length] = var.lengths.as_slice() else {
            return None;
        };
        syn::parse2::<syn::LitInt>(length.clone())
            .ok()?
            .base10_parse()
            .ok()
    }

    /// Whether a data argument can be passed twice (to the forward and the reverse half):
    /// a literal, a reference, an element (which the trace's call could not move out
    /// of), arithmetic, an array literal of these, or a name known to be `Copy` (see
    /// [`Lower::copies`]).
    fn copied(&self, arg: &Expr) -> bool {
        match arg {
            Expr::Lit(_) | Expr::Reference(_) | Expr::Index(_) => true,
            Expr::Paren(paren) => self.copied(&paren.expr),
            Expr::Group(group) => self.copied(&group.expr),
            Expr::Cast(_) | Expr::Binary(_) | Expr::Unary(_) => true,
            // `dot([1.0, 2.0, 3.0], v)`: an array literal of such, built again going back.
            Expr::Array(array) => array.elems.iter().all(|elem| self.copied(elem)),
            Expr::Repeat(repeat) => self.copied(&repeat.expr),
            // A name known to be `Copy`, or one the body does not bind: a constant (each use
            // its own value) or a static (which plain Rust passes by value only if `Copy`).
            Expr::Path(path) => match path.path.get_ident() {
                Some(name) => {
                    let name = name.to_string();
                    self.copies.contains(&name) || !self.names.binds(&name)
                }
                // `f64::EPSILON`, `consts::PI`: never a local.
                None => path.qself.is_none(),
            },
            // `if c { 0.75 } else { -2.0 }` of such values.
            Expr::If(branch) => {
                let value = |block: &Block| matches!(block.stmts.as_slice(), [SynStmt::Expr(value, None)] if self.copied(value));
                value(&branch.then_branch)
                    && branch.else_branch.as_ref().is_some_and(
                        |(_, otherwise)| match &**otherwise {
                            Expr::Block(block) => value(&block.block),
                            otherwise => self.copied(otherwise),
                        },
                    )
            }
            _ => false,
        }
    }

    /// Whether a loop over `iter` binds only references and numbers: a range, or a chain
    /// rooted at `.iter()`, `.chunks(..)` or `.windows(..)`, zipped with such a chain or
    /// a reference.
    fn yields_copies(&self, iter: &Expr) -> bool {
        match strip_parens(iter) {
            Expr::Range(_) => true,
            // A `Copy` name iterated is a reference (`rows: &[Vec<f64>]`) or an array of
            // numbers: either yields copies.
            Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|name| self.copies.contains(&name.to_string())),
            Expr::MethodCall(call) => match call.method.to_string().as_str() {
                "iter" | "chunks" | "chunks_exact" | "windows" => true,
                "enumerate" | "rev" | "copied" | "cloned" | "skip" | "take" | "step_by" => {
                    self.yields_copies(&call.receiver)
                }
                "zip" => {
                    self.yields_copies(&call.receiver)
                        && call.args.first().is_some_and(|arg| {
                            self.yields_copies(arg)
                                || matches!(arg, Expr::Reference(_))
                                || matches!(arg, Expr::Path(path) if path.path.get_ident()
                                    .is_some_and(|name| self.copies.contains(&name.to_string())))
                        })
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// Runs `lower` (which lowers statements to run before the expression, into
    /// `pending`) with the statements already pending set aside, so that none of them
    /// lands inside the new ones (in a branch, in a loop); they stay first.
    fn hoisted<T>(&mut self, lower: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let before = std::mem::take(&mut self.pending);
        let result = lower(self);
        let new = std::mem::replace(&mut self.pending, before);
        self.pending.extend(new);
        result
    }

    /// `keys.push(g(..)?)` of a growable vector: the vector's place and the call.
    fn growable_push<'e>(&self, push: &'e syn::ExprMethodCall) -> Option<(Place, Called<'e>)> {
        if push.method != "push" || push.args.len() != 1 {
            return None;
        }
        let Expr::Path(path) = strip_parens(&push.receiver) else {
            return None;
        };
        let Some(Some(place)) = self.lookup(path.path.get_ident()?) else {
            return None;
        };
        if !place.is_whole() || !self.vars[place.var].growable {
            return None;
        }
        Some((place.clone(), called(&push.args[0])?))
    }

    /// An operand, read from its spilled local if it was moved into one.
    fn respill(&self, operand: Operand) -> Operand {
        match operand {
            Operand::Temp(id) => match self.spilled.get(&id) {
                Some(place) => Operand::Place(place.clone()),
                None => Operand::Temp(id),
            },
            _ => operand,
        }
    }

    /// The rewrite of `.sum()` or `.product()` over an iterator:
    /// `{ let mut total = Fold::new(); for pat in iter { ..; total.add(__backend, item)?; }
    /// total.sum(__backend)? }`. Lowered as a variable starting at `-0.0` (or `1.0`)
    /// that every item is added to (multiplied by): the trace's fold starts at the first
    /// item instead, but `-0.0 + x` and `1.0 * x` are `x` bit for bit, the slope to the
    /// item is exactly 1 (or the running product, which is 1 then), and what the start
    /// receives goes nowhere, so every result and every contribution is the same.
    fn fold(&mut self, block: &Block) -> Option<Operand> {
        let [SynStmt::Local(start), SynStmt::Expr(Expr::ForLoop(lp), _), SynStmt::Expr(end, None)] =
            &block.stmts[..]
        else {
            return None;
        };
        let Pat::Ident(total) = &start.pat else {
            return None;
        };
        let Expr::Call(new) = &*start.init.as_ref()?.expr else {
            return None;
        };
        if !path_ends(&new.func, "new") || !new.args.is_empty() || lp.label.is_some() {
            return None;
        }
        let Expr::Try(end) = end else {
            return None;
        };
        let Expr::MethodCall(end) = &*end.expr else {
            return None;
        };
        let (method, first) = match end.method.to_string().as_str() {
            "sum" => ("add", quote!(-0.0f64)),
            "product" => ("mul", quote!(1.0f64)),
            _ => return None,
        };
        let name = total.ident.to_string();
        if !matches!(&*end.receiver, Expr::Path(path) if path.path.is_ident(&name)) {
            return None;
        }
        let var = self.declare(&total.ident, false, 0, quote!(0.0f64));
        self.vars[var].mutable = true;
        let start = Value::new(
            Vec::new(),
            Operand::Data(Data {
                raw: first,
                convert: None,
            }),
        );
        let fold = Fold {
            name,
            var,
            method: Ident::new(method, Span::call_site()),
        };
        let lowered = self.for_loop(lp, Some(&fold))?;
        self.pending.push(Stmt::Let { var, value: start });
        self.pending.push(lowered);
        Some(Operand::Place(Place::whole(var)))
    }

    /// A fold's loop body: its statements, then `total.add(__backend, item)?;` as
    /// `total = total + item` on the fold's variable.
    fn fold_body(&mut self, block: &Block, fold: &Fold) -> Option<Vec<Stmt>> {
        let (last, rest) = block.stmts.split_last()?;
        let SynStmt::Expr(Expr::Try(step), Some(_)) = last else {
            return None;
        };
        let Expr::MethodCall(step) = &*step.expr else {
            return None;
        };
        let receiver_is_total =
            matches!(&*step.receiver, Expr::Path(path) if path.path.is_ident(&fold.name));
        if !receiver_is_total || step.method != fold.method || step.args.len() != 2 {
            return None;
        }
        let item = step.args.iter().nth(1)?;
        self.nested(|lower| {
            let mut stmts = lower.stmts(rest)?;
            let mut ops = Vec::new();
            let item = lower.operand(item, &mut ops)?;
            let item = lower.respill(item);
            stmts.append(&mut lower.pending);
            let id = lower.next_op();
            let total = Operand::Place(Place::whole(fold.var));
            ops.push(Op {
                id,
                method: fold.method.clone(),
                operands: vec![total, item],
                exponent: None,
                live: true,
            });
            stmts.push(Stmt::Assign {
                place: Place::whole(fold.var),
                value: Value::new(ops, Operand::Temp(id)),
            });
            Some(stmts)
        })
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
    /// Notes what the body shows of data name `name`'s type where it is bound.
    fn number(&mut self, name: &Ident, numeric: Option<Numeric>) {
        let name = name.to_string();
        // (A data parameter's elements, shadowed from here on.)
        self.elements.remove(&name);
        let numeric = match self.numbers.get(&name) {
            // Bound before as another: shadowed, so unknown here.
            Some(before) => match (before, &numeric) {
                (Some(before), Some(now)) if before.same(now) => numeric,
                _ => None,
            },
            None => numeric,
        };
        self.numbers.insert(name, numeric);
    }

    /// What the body shows of a data expression's type: a float literal, `as f64`,
    /// `.detach()`, `f64::..` and arithmetic of these; an integer literal, `as usize`,
    /// `.len()`, a comparison; a name bound as one of these. `None` where it shows
    /// neither.
    fn numeric(&self, expr: &Expr) -> Option<Numeric> {
        self.numeric_in(expr, &mut Vec::new())
    }

    /// [`Lower::numeric`] inside blocks that bind `scope`'s names, innermost last.
    fn numeric_in(
        &self,
        expr: &Expr,
        scope: &mut Vec<(String, Option<Numeric>)>,
    ) -> Option<Numeric> {
        match expr {
            Expr::Lit(lit) => match &lit.lit {
                syn::Lit::Float(float) => Some(Numeric::Float(match float.suffix() {
                    "f32" => quote!(f32),
                    _ => quote!(f64),
                })),
                syn::Lit::Int(int) if int.suffix().is_empty() => Some(Numeric::Other),
                syn::Lit::Int(int) => {
                    let ty = syn::parse_str::<syn::Type>(int.suffix()).ok()?;
                    Numeric::of_type(&ty)
                }
                syn::Lit::Bool(_) => Some(Numeric::Other),
                _ => None,
            },
            Expr::Paren(paren) => self.numeric_in(&paren.expr, scope),
            Expr::Group(group) => self.numeric_in(&group.expr, scope),
            Expr::Cast(cast) => Numeric::of_type(&cast.ty),
            Expr::Unary(unary) if !matches!(unary.op, syn::UnOp::Deref(_)) => {
                self.numeric_in(&unary.expr, scope)
            }
            Expr::Binary(binary) => match binary.op {
                syn::BinOp::Eq(_)
                | syn::BinOp::Ne(_)
                | syn::BinOp::Lt(_)
                | syn::BinOp::Le(_)
                | syn::BinOp::Gt(_)
                | syn::BinOp::Ge(_)
                | syn::BinOp::And(_)
                | syn::BinOp::Or(_) => Some(Numeric::Other),
                // (A shift's type is its left operand's.)
                syn::BinOp::Shl(_) | syn::BinOp::Shr(_) => self.numeric_in(&binary.left, scope),
                _ => {
                    // Both operands have the type (no `f64 * &f64` can be told apart).
                    let left = self.numeric_in(&binary.left, scope);
                    let right = self.numeric_in(&binary.right, scope);
                    match (left, right) {
                        (Some(left), Some(right)) => left.same(&right).then_some(left),
                        (known, None) | (None, known) => known,
                    }
                }
            },
            Expr::MethodCall(call) => match call.method.to_string().as_str() {
                "len" | "count" => Some(Numeric::Other),
                // (`__backend.value(x)`: the rewrite's `x.detach()`.)
                "detach" => Some(Numeric::Float(quote!(f64))),
                "value" if is_backend(&call.receiver) => Some(Numeric::Float(quote!(f64))),
                // Methods of a number that keep its type.
                "ceil" | "floor" | "round" | "trunc" | "abs" | "sqrt" | "powi" | "powf" | "exp"
                | "ln" | "max" | "min" | "clamp" | "signum" | "fract" | "sin" | "cos" | "tanh" => {
                    self.numeric_in(&call.receiver, scope)
                }
                _ => None,
            },
            Expr::Call(call) => {
                let Expr::Path(func) = &*call.func else {
                    return None;
                };
                let first = func.path.segments.first()?.ident.to_string();
                (func.path.segments.len() == 2 && (first == "f64" || first == "f32"))
                    .then(|| Numeric::Float(first.parse().unwrap_or_default()))
            }
            // An element of a data parameter (not shadowed since).
            Expr::Index(index) => {
                let Expr::Path(path) = strip_parens(&index.expr) else {
                    return None;
                };
                let name = path.path.get_ident()?.to_string();
                self.elements.get(&name).cloned()
            }
            // `{ let b = c; b * c + b }`: its tail's, with its `let`s in scope.
            Expr::Block(block) if block.label.is_none() => {
                let (last, lets) = block.block.stmts.split_last()?;
                let SynStmt::Expr(tail, None) = last else {
                    return None;
                };
                let outer = scope.len();
                let mut known = Some(());
                for stmt in lets {
                    match stmt {
                        SynStmt::Local(local) => {
                            let (Pat::Ident(ident), Some(init)) = (&local.pat, &local.init) else {
                                known = None;
                                break;
                            };
                            let numeric = self.numeric_in(&init.expr, scope);
                            scope.push((ident.ident.to_string(), numeric));
                        }
                        _ => {
                            known = None;
                            break;
                        }
                    }
                }
                let numeric = known.and_then(|()| self.numeric_in(tail, scope));
                scope.truncate(outer);
                numeric
            }
            Expr::Path(path) => {
                let name = path.path.get_ident()?.to_string();
                if let Some((_, known)) = scope.iter().rev().find(|(bound, _)| *bound == name) {
                    return known.clone();
                }
                match self.numbers.get(&name) {
                    Some(known) => known.clone(),
                    // `f64::EPSILON`-like paths have no ident; a constant is unknown.
                    None => None,
                }
            }
            _ => None,
        }
    }

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
                if let Some((.., tail)) = self.if_results.iter().find(|(var, ..)| *var == place.var)
                {
                    why(IF_ARRAY, tail);
                    return None;
                }
                (place.indices.len() <= self.vars[place.var].depth).then_some(place)
            }
            // A field of a parameter struct, before any index.
            Expr::Field(field) => {
                let mut place = self.place(&field.base)?;
                let var = &self.vars[place.var];
                if !(var.param && var.depth == UNKNOWN && place.indices.is_empty()) {
                    return None;
                }
                let member = &field.member;
                place.fields.extend(quote!(.#member));
                Some(place)
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
            let (first, spills) = (ops.len(), self.spills);
            let operand = self.operand(args[0], ops)?;
            if self.spills != spills {
                return None;
            }
            let operand = self.respill(operand);
            for op in ops.iter_mut().skip(first) {
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
            "neg" | "copy" => 1,
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
            if let Operand::Place(place) = &operand {
                if self.vars[place.var].depth != UNKNOWN && self.place_depth(&operand) != Some(0) {
                    return None;
                }
                // (Also for a copy of a place of unknown shape, see `copied_from`.)
                self.read_as_scalar(place);
            }
            operands.push(operand);
        }
        // A later operand (an `if` value, a fold, a call) may have spilled the earlier
        // ones' operations into locals: read those.
        let operands: Vec<Operand> = operands
            .into_iter()
            .map(|operand| self.respill(operand))
            .collect();
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
        let (fields, indices) = (&place.fields, &place.indices);
        quote!(#primal #fields #([#indices])*)
    }

    /// Plain tokens: every `__backend.value(place)` read as the place's primal. `None` if
    /// anything else of the graph remains.
    fn plain(&mut self, tokens: &TokenStream) -> Option<TokenStream> {
        if !mentions(tokens, "__backend") && !self.mentions_tracked(tokens) {
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

    /// `expr` with each `a.len()` of a tracked array whose length the macro knows (from
    /// its type: `0..w.len()` over `w: [f64; N]`) written as that length, data.
    /// `expr` with each `keys.len()` of a growable vector (or `w.len()` of a slice or `Vec`
    /// parameter) written as a length name, the same with `0` there (to check the rest is
    /// steady), and the names with the vectors.
    fn growable_lengths(&mut self, expr: &Expr) -> (Expr, Expr, Vec<(Ident, Place)>) {
        struct Lengths<'a> {
            lower: &'a Lower,
            zero: bool,
            found: Vec<(Ident, Place)>,
        }
        impl VisitMut for Lengths<'_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                if let Expr::MethodCall(call) = expr {
                    if let (true, Expr::Path(path)) = (
                        call.method == "len" && call.args.is_empty(),
                        strip_parens(&call.receiver),
                    ) {
                        let place = path
                            .path
                            .get_ident()
                            .and_then(|ident| self.lower.lookup(ident))
                            .and_then(Option::as_ref);
                        // (A parameter's length, a slice's or a `Vec` field's, never
                        // changes: its adjoints have it too.)
                        let var = |place: &&Place| &self.lower.vars[place.var];
                        if let Some(place) = place.filter(|place| {
                            place.indices.is_empty()
                                && ((var(place).growable && place.fields.is_empty())
                                    || (var(place).param && var(place).depth == UNKNOWN))
                        }) {
                            let (at, nth) = (self.lower.ops, self.found.len());
                            let name =
                                Ident::new(&format!("__rows_{at}_{nth}"), Span::mixed_site());
                            *expr = match self.zero {
                                true => syn::parse_quote!(0usize),
                                false => syn::parse_quote!(#name),
                            };
                            self.found.push((name, place.clone()));
                            return;
                        }
                    }
                }
                syn::visit_mut::visit_expr_mut(self, expr);
            }
        }
        let mut named = expr.clone();
        let mut lengths = Lengths {
            lower: self,
            zero: false,
            found: Vec::new(),
        };
        lengths.visit_expr_mut(&mut named);
        let found = std::mem::take(&mut lengths.found);
        let mut stand_in = expr.clone();
        lengths.zero = true;
        lengths.visit_expr_mut(&mut stand_in);
        (named, stand_in, found)
    }

    /// `expr` with each `keys.len()` of a growable vector read from its adjoints, which
    /// have its length going forward and wherever its reverse reads it; a parameter's
    /// (`#[param] keys: &[..]`, whose length never changes) going forward (`forward`) from
    /// its values, since a half's forward has no adjoints.
    fn adjoint_lengths(&mut self, expr: &Expr, forward: bool) -> Expr {
        let (mut named, _, grown) = self.growable_lengths(expr);
        struct Adjoints<'a>(&'a [(Ident, Ident)]);
        impl VisitMut for Adjoints<'_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                if let Expr::Path(path) = expr {
                    let found = self.0.iter().find(|(name, _)| path.path.is_ident(name));
                    if let Some((_, adjoint)) = found {
                        *expr = syn::parse_quote!(#adjoint.len());
                        return;
                    }
                }
                syn::visit_mut::visit_expr_mut(self, expr);
            }
        }
        let pairs: Vec<(Ident, Ident)> = grown
            .into_iter()
            .map(|(name, place)| {
                let var = &self.vars[place.var];
                match forward && var.param {
                    true => (name, var.primal.clone()),
                    false => (name, var.adjoint.clone()),
                }
            })
            .collect();
        Adjoints(&pairs).visit_expr_mut(&mut named);
        named
    }

    fn known_lengths(&mut self, expr: &Expr) -> Expr {
        struct Lengths<'a> {
            lower: &'a mut Lower,
        }
        impl VisitMut for Lengths<'_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                if let Expr::MethodCall(call) = expr {
                    if call.method == "len" && call.args.is_empty() {
                        if let Some(place) = self.lower.place(&call.receiver) {
                            let var = &self.lower.vars[place.var];
                            if place.fields.is_empty() {
                                if let Some(len) = var.lengths.get(place.indices.len()) {
                                    *expr = syn::parse_quote!((#len));
                                    return;
                                }
                            }
                        }
                    }
                }
                syn::visit_mut::visit_expr_mut(self, expr);
            }
        }
        let mut expr = expr.clone();
        Lengths { lower: self }.visit_expr_mut(&mut expr);
        expr
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

/// Replaces `__backend.value(place)` by the place's primal, and `place.len()` of a
/// tracked array or vector by its length (its primal's, as the forward sweep reads it; a
/// `let` of it is replayed only where `Names` finds the vector steady). Any other read of
/// a tracked name fails.
struct PrimalReads<'a> {
    lower: &'a mut Lower,
    failed: bool,
}

impl VisitMut for PrimalReads<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::MethodCall(call) = expr {
            // (`is_empty` too: the form clippy asks for.)
            let method = call.method.to_string();
            if matches!(method.as_str(), "len" | "is_empty")
                && call.args.is_empty()
                && !is_backend(&call.receiver)
            {
                if let Some(place) = self.lower.place(&call.receiver) {
                    let var = &self.lower.vars[place.var];
                    let known = var.lengths.get(place.indices.len()).filter(|len| {
                        place.fields.is_empty()
                            && syn::parse2::<syn::LitInt>((*len).clone()).is_ok()
                    });
                    let method = &call.method;
                    *expr = Expr::Verbatim(match known {
                        Some(len) if method == "len" => quote!((#len)),
                        Some(len) => quote!(((#len) == 0)),
                        None => {
                            let primal = self.lower.primal_place(&place);
                            quote!((#primal).#method())
                        }
                    });
                    return;
                }
            }
        }
        if let Expr::Path(path) = expr {
            if let Some(name) = path.path.get_ident() {
                if matches!(self.lower.lookup(name), Some(Some(_))) {
                    self.failed = true;
                    return;
                }
            }
        }
        if let Expr::MethodCall(call) = expr {
            if is_backend(&call.receiver) && call.method == "value" && call.args.len() == 1 {
                let place = self.lower.place(strip_reference(&call.args[0]));
                // (`Backend::value` takes one scalar: where the macro cannot see the
                // place's shape, the trace's types prove it one.)
                let scalar = place.as_ref().is_some_and(|place| {
                    if self.lower.vars[place.var].depth == UNKNOWN {
                        self.lower.read_as_scalar(place);
                        return true;
                    }
                    self.lower.place_depth(&Operand::Place(place.clone())) == Some(0)
                });
                match place {
                    Some(place) if scalar => {
                        let primal = self.lower.primal_place(&place);
                        *expr = Expr::Verbatim(quote!(::core::primitive::f64::from(#primal)));
                    }
                    _ => self.failed = true,
                }
                return;
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The elements of a lent array literal: rustc types them alike, so one known to be a
/// scalar (a new value, a constant, a scalar variable) proves the others scalars too,
/// elements of another function's result among them (whose depth the macro learns from
/// how the trace reads them, see [`Lower::finish`]).
#[derive(Default)]
struct Elements {
    known: bool,
    unknown: Vec<Place>,
}

impl Elements {
    fn note(&mut self, lower: &Lower, source: &Place) {
        match lower.vars[source.var].depth == UNKNOWN {
            true => self.unknown.push(source.clone()),
            false => self.known = true,
        }
    }

    fn prove(self, lower: &mut Lower) {
        if self.known {
            for place in &self.unknown {
                lower.read_as_scalar(place);
            }
        }
    }
}

/// `expr` without the parentheses and the `Clone::clone(&..)` the rewrite wraps a lent
/// row in.
/// Whether every index of `place` is an integer literal (`h[0][1]`).
pub(crate) fn literal_indices(place: &Place) -> bool {
    (place.indices.iter()).all(|index| syn::parse2::<syn::LitInt>(index.clone()).is_ok())
}

/// The names `block` indexes somewhere (`a[i]`, `a[i][j]`).
fn indexed_names(block: &Block) -> std::collections::HashSet<String> {
    struct Indexed(std::collections::HashSet<String>);
    impl<'ast> Visit<'ast> for Indexed {
        fn visit_expr_index(&mut self, index: &'ast syn::ExprIndex) {
            if let Expr::Path(path) = strip_parens(&index.expr) {
                if let Some(ident) = path.path.get_ident() {
                    self.0.insert(ident.to_string());
                }
            }
            syn::visit::visit_expr_index(self, index);
        }
    }
    let mut indexed = Indexed(std::collections::HashSet::new());
    indexed.visit_block(block);
    indexed.0
}

/// How often `block` mentions each name.
fn mention_counts(block: &Block) -> std::collections::HashMap<String, usize> {
    fn count(tokens: TokenStream, counts: &mut std::collections::HashMap<String, usize>) {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => *counts.entry(ident.to_string()).or_default() += 1,
                TokenTree::Group(group) => count(group.stream(), counts),
                _ => {}
            }
        }
    }
    let mut counts = std::collections::HashMap::new();
    count(block.to_token_stream(), &mut counts);
    counts
}

fn uncloned(expr: &Expr) -> &Expr {
    match strip_parens(expr) {
        Expr::Call(call) if path_ends(&call.func, "clone") && call.args.len() == 1 => {
            strip_parens(strip_reference(&call.args[0]))
        }
        // (A row's `copied` is another name of it; a scalar's is read as a value.)
        Expr::Try(attempt) => match strip_parens(&attempt.expr) {
            Expr::Call(call) if is_copy(&call.func) && call.args.len() == 2 => {
                strip_parens(strip_reference(&call.args[1]))
            }
            _ => expr,
        },
        expr => expr,
    }
}

/// Whether a type is known to be `Copy` from its syntax: a shared reference, a number,
/// `bool`, `char`, or an array or tuple of these.
pub(crate) fn copy_type(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(reference) => reference.mutability.is_none(),
        syn::Type::Path(path) => {
            path.qself.is_none()
                && path.path.get_ident().is_some_and(|ident| {
                    matches!(
                        ident.to_string().as_str(),
                        "f64"
                            | "f32"
                            | "usize"
                            | "isize"
                            | "u8"
                            | "u16"
                            | "u32"
                            | "u64"
                            | "u128"
                            | "i8"
                            | "i16"
                            | "i32"
                            | "i64"
                            | "i128"
                            | "bool"
                            | "char"
                    )
                })
        }
        syn::Type::Array(array) => copy_type(&array.elem),
        syn::Type::Tuple(tuple) => tuple.elems.iter().all(copy_type),
        syn::Type::Paren(paren) => copy_type(&paren.elem),
        syn::Type::Group(group) => copy_type(&group.elem),
        _ => false,
    }
}

fn strip_parens(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(paren) => strip_parens(&paren.expr),
        Expr::Group(group) => strip_parens(&group.expr),
        _ => expr,
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
/// `let __part_3 = &value;` of a long body's flattened expression, as `let __part_3 =
/// value;` (a `Clone::clone` of a place, so that it is read as tracked, a parameter's
/// element too).
fn part_local(local: &syn::Local) -> Option<syn::Local> {
    let Pat::Ident(ident) = &local.pat else {
        return None;
    };
    if !ident.ident.to_string().starts_with("__part_") {
        return None;
    }
    let Expr::Reference(reference) = &*local.init.as_ref()?.expr else {
        return None;
    };
    let value = &reference.expr;
    let mut part = local.clone();
    part.init.as_mut()?.expr = if is_tracked_form(value) {
        value.clone()
    } else {
        Box::new(syn::parse_quote!(::core::clone::Clone::clone(#value)))
    };
    Some(part)
}

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
        // The rewrite copies a tracked value with `Clone::clone(x)` (in an array literal,
        // say: `[x, 1.0]`).
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            self.0 |= path_ends(&call.func, "clone");
            syn::visit::visit_expr_call(self, call);
        }
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
    let row = path_ends(&call.func, "constants") || path_ends(&call.func, "constant_element");
    (row && call.args.len() == 2).then(|| call.args[1].clone())
}

/// Whether `func` is the runtime's `__private::name`.
/// A statement's copy: `copied`, or `copied_each` of a value that changes later.
fn is_copy(func: &Expr) -> bool {
    is_private(func, "copied") || is_private(func, "copied_each")
}

/// Of a statement's copy `copied(__backend, &source)?` (see [`is_copy`]): whether it is
/// `copied_each`, and the source.
fn copy_call(expr: &Expr) -> Option<(bool, &Expr)> {
    let Expr::Try(attempt) = expr else {
        return None;
    };
    let Expr::Call(call) = &*attempt.expr else {
        return None;
    };
    (is_copy(&call.func) && call.args.len() == 2).then(|| {
        let each = is_private(&call.func, "copied_each");
        (each, strip_reference(&call.args[1]))
    })
}

fn is_private(func: &Expr, name: &str) -> bool {
    matches!(func, Expr::Path(path) if {
        let mut segments = path.path.segments.iter().rev();
        segments.next().is_some_and(|s| s.ident == name)
            && segments.next().is_some_and(|s| s.ident == "__private")
    })
}

/// The rewrite's conversion of a data scalar to a constant: `constant`, or
/// `constant_element` in an array literal (data of a shape only rustc knows, a scalar where
/// the sweeps read one).
fn is_constant(func: &Expr) -> bool {
    path_ends(func, "constant") || path_ends(func, "constant_element")
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
        // `vec![e; n]`: a local sized at run time (`n` steady data, see `Lower::local`).
        Expr::Macro(_) => {
            let (elem, len) = vec_repeat(array)?;
            let inner = zeros(&elem).unwrap_or_else(|| quote!(0.0f64));
            Some(quote!(::std::vec![#inner; #len]))
        }
        _ => None,
    }
    .filter(|_| array_depth(array) > 0)
}

/// The element shape of a growable vector's start, `growable::<S, _>(__backend, ..)`
/// (`Some(S)`) or `grown(__backend, ..)` (`None`), as the rewrite writes them.
fn growable_call(expr: &Expr) -> Option<Option<syn::Type>> {
    let Expr::Call(call) = expr else {
        return None;
    };
    let Expr::Path(path) = &*call.func else {
        return None;
    };
    let last = path.path.segments.last()?;
    match last.ident.to_string().as_str() {
        "grown" => Some(None),
        "growable" => match &last.arguments {
            syn::PathArguments::AngleBracketed(args) => match args.args.first() {
                Some(syn::GenericArgument::Type(shape)) => Some(Some(shape.clone())),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Whether `tokens` hold a `break 'label` or `continue 'label` (a `return`, as the rewrite
/// writes it, is `break 'body`).
fn exits_by_label(tokens: &TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.clone().into_iter().collect();
    tokens.iter().enumerate().any(|(at, token)| match token {
        TokenTree::Ident(ident) if ident == "break" || ident == "continue" => {
            matches!(tokens.get(at + 1), Some(TokenTree::Punct(quote)) if quote.as_char() == '\'')
        }
        TokenTree::Group(group) => exits_by_label(&group.stream()),
        _ => false,
    })
}

/// Whether `stmts` (nested ones too) push to the growable vector `var`.
fn pushes(stmts: &[Stmt], var: VarId) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Call {
            store: Some(place),
            push: true,
            ..
        } => place.var == var,
        Stmt::If {
            then, otherwise, ..
        } => pushes(then, var) || pushes(otherwise, var),
        Stmt::For { body, .. } => pushes(body, var),
        _ => false,
    })
}

/// `repeat::<_, { n }>(e)` (the rewrite's `[e; n]` of data beside tracked values) as
/// `(e, n)`.
fn repeat_call(expr: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Call(call) = expr else {
        return None;
    };
    repeat_of(call, "repeat", 1)
}

/// `repeated::<_, _, { n }>(__backend, &e)?`, `[e; n]` of a tracked value (`n` copies of
/// it), as `(e, n)`.
fn repeated_call(expr: &Expr) -> Option<(&Expr, &Expr)> {
    let Expr::Try(attempt) = expr else {
        return None;
    };
    let Expr::Call(call) = &*attempt.expr else {
        return None;
    };
    let (elem, len) = repeat_of(call, "repeated", 2)?;
    Some((strip_reference(elem), len))
}

/// A call of the runtime's function `name` taking `arguments`, whose last argument is
/// the element and whose last generic argument the length (as written, braces removed).
fn repeat_of<'e>(
    call: &'e syn::ExprCall,
    name: &str,
    arguments: usize,
) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Path(func) = &*call.func else {
        return None;
    };
    let last = func.path.segments.last()?;
    if last.ident != name || call.args.len() != arguments {
        return None;
    }
    let syn::PathArguments::AngleBracketed(generics) = &last.arguments else {
        return None;
    };
    let len = match generics.args.last()? {
        syn::GenericArgument::Const(len) => len,
        _ => return None,
    };
    let len = match len {
        Expr::Block(block) if block.block.stmts.len() == 1 => match &block.block.stmts[0] {
            SynStmt::Expr(inner, None) => inner,
            _ => return None,
        },
        other => other,
    };
    Some((call.args.last()?, len))
}

/// `repeat::<_, { n }>(constant(..))` with a literal `n`: a row of data, as `(e, n)`.
fn constant_row(expr: &Expr) -> Option<(&Expr, usize)> {
    let (value, len) = repeat_call(expr)?;
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Int(len),
        ..
    }) = strip_parens(len)
    else {
        return None;
    };
    let constant = matches!(strip_parens(value), Expr::Try(value)
        if matches!(&*value.expr, Expr::Call(call) if path_ends(&call.func, "constant")));
    constant.then_some((value, len.base10_parse().ok()?))
}

/// `vec![e; n]` as `(e, n)`.
fn vec_repeat(expr: &Expr) -> Option<(Expr, Expr)> {
    let Expr::Macro(mac) = expr else {
        return None;
    };
    let last = mac.mac.path.segments.last()?;
    if last.ident != "vec" {
        return None;
    }
    mac.mac
        .parse_body_with(|input: syn::parse::ParseStream| {
            let elem: Expr = input.parse()?;
            input.parse::<syn::Token![;]>()?;
            let len: Expr = input.parse()?;
            Ok((elem, len))
        })
        .ok()
}

fn array_depth(array: &Expr) -> usize {
    match array {
        Expr::Repeat(repeat) => 1 + array_depth(&repeat.expr),
        Expr::Array(array) => 1 + array.elems.first().map_or(0, array_depth),
        Expr::Paren(paren) => array_depth(&paren.expr),
        Expr::Macro(_) => vec_repeat(array).map_or(0, |(elem, _)| 1 + array_depth(&elem)),
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

/// Whether two places are different fields of one struct, neither inside the other and
/// not indexed (their `&mut`s can be taken side by side).
/// Whether a call lends parts of one array (or one value) twice: as two arguments, as an
/// argument and an element of an array literal, or as two elements (see
/// `Emit::shared_call`).
pub(crate) fn lends_twice(args: &[Arg], seeds: &[(Place, Place)]) -> bool {
    let lent = args.iter().filter_map(|arg| match arg {
        Arg::Tracked(place) => Some(place),
        Arg::Data(_) => None,
    });
    let places: Vec<&Place> = lent.chain(seeds.iter().map(|(_, source)| source)).collect();
    places
        .iter()
        .enumerate()
        .any(|(at, place)| places[at + 1..].iter().any(|other| same_root(place, other)))
}

/// Whether two places are parts of one variable's array (or field), which one call may
/// lend both of (`v` and `v`, `w[i]` and `w[j]`): the call then shares their adjoints.
pub(crate) fn same_root(a: &Place, b: &Place) -> bool {
    a.var == b.var && a.fields.to_string() == b.fields.to_string()
}

fn disjoint_fields(a: &Place, b: &Place) -> bool {
    let fields = |place: &Place| -> Vec<String> {
        place
            .fields
            .clone()
            .into_iter()
            .filter_map(|token| match token {
                TokenTree::Punct(_) => None,
                other => Some(other.to_string()),
            })
            .collect()
    };
    let (a_fields, b_fields) = (fields(a), fields(b));
    let prefix = a_fields.iter().zip(&b_fields).all(|(x, y)| x == y);
    // Fields that part ways are disjoint whatever indices follow them (`p.wte[tok], p.b`).
    !a_fields.is_empty() && !b_fields.is_empty() && !prefix
}

/// The lengths of a zeros array `[[0.0f64; A]; B]`: `[B, A]`.
fn lengths(zero: &TokenStream) -> Vec<TokenStream> {
    let mut out = Vec::new();
    let mut expr = syn::parse2::<Expr>(zero.clone()).ok();
    loop {
        match expr {
            Some(Expr::Repeat(repeat)) => {
                out.push(repeat.len.to_token_stream());
                expr = Some(*repeat.expr);
            }
            Some(ref vec @ Expr::Macro(_)) => match vec_repeat(vec) {
                Some((elem, len)) => {
                    out.push(len.to_token_stream());
                    expr = Some(elem);
                }
                None => return out,
            },
            _ => return out,
        }
    }
}

/// The adjoints of a call's result: zeros of the type the callee's hidden body returns
/// on the `Halves` backend, which rustc infers from a call that never runs (in a closure
/// never called, with each tracked argument's [`Lower::witness`]; the data, steady, are
/// in scope wherever the reverse sweep declares its adjoints).
fn zero_of(path: &TokenStream, args: &[TokenStream]) -> TokenStream {
    let private = quote!(::scalar_autodiff::__private);
    quote! {
        #private::zero_of(|| #path(
            &#private::Halves::forward(loop {}),
            #(#args),*
        ))
    }
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
                // A range backwards (`(0..n).rev()`): walked back, it runs forwards.
                "rev" if is_range(&call.receiver) => true,
                "enumerate" | "rev" | "copied" | "cloned" | "skip" | "take" | "step_by" => {
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

/// A range with both ends (in parentheses, as `.rev()` needs one).
fn is_range(expr: &Expr) -> bool {
    match expr {
        Expr::Range(range) => range.start.is_some() && range.end.is_some(),
        Expr::Paren(paren) => is_range(&paren.expr),
        Expr::Group(group) => is_range(&group.expr),
        _ => false,
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
