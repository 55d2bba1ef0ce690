//! The body analysed once for every compiled form that is written from it. `lower` reads
//! the rewritten body into a [`Program`]; here its copies are checked (which the sweeps hand
//! on in the trace's order, which are versioned, which share nodes), its checks placed
//! (`checks`) and its names found (`names`). `name_grad`'s sweeps and `name_hvp`'s (the
//! same sweeps on duals) are written from one analysis; the halves other functions'
//! sweeps call, on `f64`s and on duals, from a second, because their reverse half is a
//! function of its own (top-level `let`s are replayed there, see `Names::of`).

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};

use super::checks;
use super::emit::{versioned, COMPILED_UP_TO};
use super::ir::{Arg, Operand, Place, Program, Stmt, Value, VarId};
use super::lower::{literal_indices, lower, take_reason, why};
use super::names::Names;
use crate::parse::signature::{Kind, Param};

/// Where the analysis stopped, and what it could not follow there (from `lower::why`).
pub(crate) type Reason = (String, Span);

/// One function's body, analysed for each compiled form: `Err` where a form does not
/// apply (`None`) or the body is outside what the sweeps compile (the reason).
pub(crate) struct Analysis {
    /// For `name_grad`'s and `name_hvp`'s sweeps.
    pub(crate) sweeps: Result<Analysed, Option<Reason>>,
    /// For the halves other functions' sweeps call.
    pub(crate) halves: Result<Analysed, Option<Reason>>,
}

/// Where a form's sweeps stopped, once its emitter has run: the analysis's reason, or else
/// the emitter's own (the first `lower::why` since the emitter began).
pub(crate) fn stopped(analysed: &Result<Analysed, Option<Reason>>) -> Option<Reason> {
    match analysed {
        Err(reason) => reason.clone().or_else(take_reason),
        Ok(_) => take_reason(),
    }
}

/// A program with what the sweeps need to write it.
pub(crate) struct Analysed {
    pub(crate) program: Program,
    pub(crate) names: Names,
    /// Copies count their source's assignments (see `emit::versioned`).
    pub(crate) versioning: bool,
    /// The scalars that share nodes in `name_grad`'s sweeps (see [`shared_nodes`]).
    pub(crate) shared: HashSet<VarId>,
    /// The rewritten body, to say where an emitter gives up (see `lower::why`).
    pub(crate) body: TokenStream,
}

impl Analysis {
    /// Analyses `graph_body` (the rewrite's output) of a function with `params` and
    /// `generics`, whose output is `array_output` (its type with `f64` elements) if it is
    /// an array: for the sweeps if `sweeps` (a scalar function whose user did not choose
    /// the tape) and for the halves if `halves`.
    pub(crate) fn of(
        graph_body: &TokenStream,
        params: &[Param],
        generics: &syn::Generics,
        array_output: Option<&TokenStream>,
        (sweeps, halves): (bool, bool),
    ) -> Analysis {
        let long = crate::rewrite::operations(graph_body) > COMPILED_UP_TO;
        let sweeps = match sweeps {
            false => Err(None),
            true => {
                // (A `mut` scalar is a local copy of the parameter, see `lower`.)
                let mutable = |param: &Param| {
                    param.mutability.is_some() && !matches!(param.kind, Kind::Scalar | Kind::Data)
                };
                take_reason();
                if params.iter().any(mutable) || long {
                    why(
                        "body: it is longer than the sweeps compile, or takes a `mut` array \
                         or struct",
                        graph_body,
                    );
                    Err(take_reason())
                } else {
                    analysed(graph_body, params, false, None).ok_or_else(take_reason)
                }
            }
        };
        // The halves are functions with the body's signature: a `mut` array or struct, a
        // pattern for a parameter or a type parameter has no place in them.
        let only_consts = generics
            .params
            .iter()
            .all(|param| matches!(param, syn::GenericParam::Const(_)));
        let unwritable = params.iter().any(|param| {
            (param.mutability.is_some() && !matches!(param.kind, Kind::Scalar))
                || param.ident.is_none()
        }) || !only_consts
            || generics.where_clause.is_some();
        let halves = match halves && !unwritable && !long {
            false => Err(None),
            true => {
                take_reason();
                analysed(graph_body, params, true, array_output).ok_or_else(take_reason)
            }
        };
        Analysis { sweeps, halves }
    }
}

/// The body lowered, its copies checked (versioned in the halves, and in `name_grad`'s
/// sweeps where a copy's source is read again), its checks placed, and its names (for the
/// halves if `half`).
fn analysed(
    graph_body: &TokenStream,
    params: &[Param],
    half: bool,
    array_output: Option<&TokenStream>,
) -> Option<Analysed> {
    let Some(mut program) = lower(graph_body, params, half, array_output) else {
        why("body", graph_body);
        return None;
    };
    let none = HashSet::new();
    let mut versioning = half || !copies_are_safe(&program, false, &none);
    // Copies the sweeps cannot hand on in the trace's order: in `name_grad`'s sweeps,
    // their scalars share nodes (see `shared_nodes`).
    let mut shared = HashSet::new();
    if !half && !copies_are_safe(&program, versioning, &none) {
        if let Some(nodes) = shared_nodes(&program) {
            shared = nodes;
            versioning = true;
        }
    }
    if !copies_are_safe(&program, versioning, &shared) || (half && copies_a_parameter(&program)) {
        why(
            "body's copies: another name of a tracked value that is assigned or read \
             again later in an order the sweeps do not follow (an element of a `#[param]` \
             struct, `let v = p.w[0];`, a row or a whole array, `let r = m[j];`; \
             a new value, `let v = p.w[0] * 1.0;`, is always followed)",
            graph_body,
        );
        return None;
    }
    checks::place(&mut program);
    let block: syn::Block = syn::parse2(graph_body.clone()).ok()?;
    Some(Analysed {
        program,
        names: Names::of(&block, params, half),
        versioning,
        shared,
        body: graph_body.clone(),
    })
}

/// The scalars whose copies the sweeps follow as the trace does, by sharing nodes, or
/// `None` if a copy joins one of them to an array's element or a call's result. Every
/// scalar variable (whole, not a call's result) that a copy (`let v = y;`, `v = y;`)
/// reads or writes: each holds the number of its node (`__node_v`, kept going forward
/// and restored going back, like any value the reverse sweep needs), a copy copies the
/// number, anything else takes a new one, and the adjoints are one cell per node
/// (`__cells`), so that every read adds into its node's cell in the trace's order,
/// whichever variable it went through.
fn shared_nodes(program: &Program) -> Option<HashSet<VarId>> {
    // A scalar variable, or an element of an array of scalars whose length the macro
    // knows (its elements' numbers are an array of that length).
    fn whole_scalar(program: &Program, place: &Place) -> bool {
        let var = &program.vars[place.var];
        let shape = match var.depth {
            0 => place.is_whole(),
            1 => place.indices.len() == 1 && var.lengths.len() == 1,
            _ => false,
        };
        // (Not a vector sized at run time: its numbers would be an array of no fixed size.)
        let sized = !var.zero.to_string().contains("vec");
        shape && sized && place.fields.is_empty() && !var.call && !var.growable
    }
    fn copies(stmts: &[Stmt], out: &mut Vec<(Place, Place)>) {
        for stmt in stmts {
            match stmt {
                Stmt::Let { var, value } if value.ops.is_empty() => {
                    if let Operand::Place(source) = &value.result {
                        out.push((Place::whole(*var), source.clone()));
                    }
                }
                Stmt::Assign { place, value } if value.ops.is_empty() => {
                    if let Operand::Place(source) = &value.result {
                        out.push((place.clone(), source.clone()));
                    }
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    copies(then, out);
                    copies(otherwise, out);
                }
                Stmt::For { body, .. } => copies(body, out),
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    copies(&program.body, &mut found);
    let mut shared = HashSet::new();
    for (target, source) in &found {
        if whole_scalar(program, target) && whole_scalar(program, source) {
            shared.insert(source.var);
            shared.insert(target.var);
        }
    }
    // A copy between a shared scalar and an element (or a call's result) would join a
    // node to adjoints that are not cells.
    let joined = found.iter().any(|(target, source)| {
        let ends = [target, source];
        let inside = ends.iter().any(|place| shared.contains(&place.var));
        let outside = ends
            .iter()
            .any(|place| !whole_scalar(program, place) || !shared.contains(&place.var));
        inside && outside
    });
    // (A call that lends two shared scalars, which may be one node, shares their
    // adjoints: see `Emit::shared_call`.)
    // A shared array's adjoints are cells, not an array: it cannot be lent whole, stored
    // into by a call, or have its length read from its adjoints.
    fn whole_use(stmts: &[Stmt], program: &Program, shared: &HashSet<VarId>) -> bool {
        let array = |place: &Place| {
            shared.contains(&place.var) && program.vars[place.var].depth > place.indices.len()
        };
        stmts.iter().any(|stmt| match stmt {
            // (A shared array lent whole, or stored into whole, by a call goes element by
            // element: see `Emit::shared_call` and `Emit::stored_nodes`.)
            Stmt::Call {
                args,
                store,
                var,
                push,
                ..
            } => {
                let whole = |place: &Place| place.is_whole() && program.vars[place.var].depth == 1;
                shared.contains(var)
                    || store.as_ref().is_some_and(|place| {
                        shared.contains(&place.var) && (*push || !whole(place))
                    })
                    || args.iter().any(
                        |arg| matches!(arg, Arg::Tracked(place) if array(place) && !whole(place)),
                    )
            }
            Stmt::If {
                then, otherwise, ..
            } => whole_use(then, program, shared) || whole_use(otherwise, program, shared),
            Stmt::For { body, length, .. } => {
                length.iter().any(|(_, place)| shared.contains(&place.var))
                    || whole_use(body, program, shared)
            }
            _ => false,
        })
    }
    (!shared.is_empty()
        && !joined
        && !whole_use(&program.body, program, &shared)
        && !matches!(&program.output.result, Operand::Place(place) if
            shared.contains(&place.var) && program.vars[place.var].depth > place.indices.len()))
    .then_some(shared)
}

/// Whether a copy reads a parameter (`let mut v = x;`, `v = x`):
/// in a half, a parameter's adjoints are the caller's, already holding contributions, so
/// handing a copy's whole adjoint to them would add in another order than the trace.
/// Not a copy the output alone reads (`m = y; .. m`, `if x > 0.0 { x } else { 0.0 }`), nor
/// the output `x`: the trace copies a parameter a helper returns as it is into a node of
/// its own (see `Backend::returned`), whose one sum reaches the parameter as one term, as
/// the copy's does.
fn copies_a_parameter(program: &Program) -> bool {
    copies_into(program, &program.body)
}

/// Whether `var` reaches only the output: read by nothing but the output as it is, or by
/// whole copies into variables that do the same (`__ret = v[i]; .. __result = __ret;` of
/// a `return` from a loop).
fn returned_only(program: &Program, var: VarId, seen: &mut Vec<VarId>) -> bool {
    if seen.contains(&var) {
        return false;
    }
    seen.push(var);
    let output = &program.output;
    let whole = |value: &Value| {
        value.ops.is_empty()
            && matches!(&value.result, Operand::Place(p) if p.var == var && p.is_whole())
    };
    if output.reads(var) && !whole(output) {
        return false;
    }
    let mut targets = Vec::new();
    if !copied_only(&program.body, var, &mut targets) {
        return false;
    }
    targets
        .into_iter()
        .all(|target| returned_only(program, target, seen))
}

/// Whether `body` reads `var` only in whole copies into variables (`y = var;`), gathered
/// into `targets`.
fn copied_only(body: &[Stmt], var: VarId, targets: &mut Vec<VarId>) -> bool {
    body.iter().all(|stmt| match stmt {
        Stmt::Let { var: target, value }
        | Stmt::Assign {
            place: Place { var: target, .. },
            value,
        } if value.ops.is_empty()
            && matches!(&value.result, Operand::Place(p) if p.var == var && p.is_whole()) =>
        {
            let whole = match stmt {
                Stmt::Assign { place, .. } => place.is_whole(),
                _ => true,
            };
            targets.push(*target);
            whole
        }
        Stmt::If {
            then, otherwise, ..
        } => copied_only(then, var, targets) && copied_only(otherwise, var, targets),
        Stmt::For { body, length, .. } => {
            copied_only(body, var, targets) && !length.iter().any(|(_, p)| p.var == var)
        }
        other => !reads_var(std::slice::from_ref(other), var),
    })
}

/// Whether `body` copies a parameter into a variable that does not reach only the output
/// (see [`returned_only`]).
fn copies_into(program: &Program, body: &[Stmt]) -> bool {
    let copies = |value: &Value| matches!(&value.result, Operand::Place(place) if program.vars[place.var].param);
    body.iter().any(|stmt| match stmt {
        // (A `let` copy is versioned instead, see `versioned`.)
        Stmt::Assign { place, value } => {
            copies(value) && !returned_only(program, place.var, &mut Vec::new())
        }
        Stmt::Let { .. } => false,
        Stmt::If {
            then, otherwise, ..
        } => copies_into(program, then) || copies_into(program, otherwise),
        Stmt::For { body, .. } => copies_into(program, body),
        Stmt::Data { .. } | Stmt::Keep { .. } | Stmt::LetArray { .. } | Stmt::Call { .. } => false,
    })
}

/// Whether `body` reads `var` in an operation, a call or a copy (not where it is only
/// assigned).
fn reads_var(body: &[Stmt], var: VarId) -> bool {
    body.iter().any(|stmt| match stmt {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } => value.reads(var),
        Stmt::Call { args, seeds, .. } => {
            args.iter()
                .any(|arg| matches!(arg, Arg::Tracked(p) if p.var == var))
                || seeds.iter().any(|(_, from)| from.var == var)
        }
        Stmt::If {
            then, otherwise, ..
        } => reads_var(then, var) || reads_var(otherwise, var),
        Stmt::For { body, length, .. } => {
            length.iter().any(|(_, p)| p.var == var) || reads_var(body, var)
        }
        Stmt::Data { .. } | Stmt::Keep { .. } | Stmt::LetArray { .. } => false,
    })
}

/// Whether every copy (`let mut v = x;`, `v = w;`) may hand its adjoint to its source at
/// its place in the reverse sweep and still add in the trace's order: the source is read
/// nowhere after the copy, and nowhere in a loop around it. (Versioned copies
/// hand nothing on.)
fn copies_are_safe(program: &Program, versioning: bool, shared: &HashSet<VarId>) -> bool {
    let mut walk = Walk {
        versioned: versioned(program, versioning).into_keys().collect(),
        shared: shared.clone(),
        ..Walk::default()
    };
    walk.stmts(&program.body);
    walk.value(&program.output, None);
    walk.copies.iter().all(|copy| {
        // A loop around the source's declaration makes a new source each iteration: only
        // the loops between the declaration and the copy repeat reads of the same one.
        let declared = walk.declared.get(&copy.var).cloned().unwrap_or_default();
        walk.reads.iter().all(|(var, spot, at, arms)| {
            let (var, at) = (*var, *at);
            // Another element at a constant index is another node (`[a[1], a[0]]`).
            let elsewhere =
                matches!((spot, &copy.spot), (Some(read), Some(copied)) if read != copied);
            // The other arm of a branch around the copy never runs with it.
            let apart = arms
                .iter()
                .any(|&(branch, arm)| copy.arms.contains(&(branch, !arm)));
            let in_loop = copy
                .loops
                .iter()
                .filter(|index| !declared.contains(index))
                .any(|&index| {
                    let (start, stop) = walk.loops[index];
                    (start..=stop).contains(&at)
                });
            var != copy.var || elsewhere || at == copy.at || apart || (at < copy.at && !in_loop)
        })
    })
}

/// The element a place names, where its indices are all literals (`a[1]`, `m[0][2]`):
/// two places of one variable with different spots are different nodes.
fn spot(place: &Place) -> Option<String> {
    (place.fields.is_empty() && !place.indices.is_empty() && literal_indices(place))
        .then(|| place.spelled_indices())
}

/// Branch arms, as (branch, then-arm).
type Arms = Vec<(usize, bool)>;

/// A copy: its source variable (and element, see [`spot`]), where it happens, the loops
/// around it.
struct CopySite {
    var: usize,
    spot: Option<String>,
    at: usize,
    loops: Vec<usize>,
    arms: Vec<(usize, bool)>,
}

/// Statement positions in program order, reads of each variable and copies.
#[derive(Default)]
struct Walk {
    position: usize,
    /// Each read: the variable (and element, see [`spot`]), where, and the branch arms
    /// around it.
    reads: Vec<(usize, Option<String>, usize, Arms)>,
    copies: Vec<CopySite>,
    /// The branch arms around the current point: (branch, then-arm).
    arms: Vec<(usize, bool)>,
    /// Every loop's first and last position.
    loops: Vec<(usize, usize)>,
    open: Vec<usize>,
    /// The loops open where each local was declared.
    declared: std::collections::HashMap<usize, Vec<usize>>,
    /// Copies that hand nothing on (see `versioned`).
    versioned: std::collections::HashSet<usize>,
    /// Scalars sharing nodes: their copies hand nothing on (see `shared_nodes`).
    shared: HashSet<VarId>,
}

impl Walk {
    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.position += 1;
            let at = self.position;
            match stmt {
                Stmt::Data { .. } | Stmt::Keep { .. } => {}
                Stmt::LetArray { var, .. } => {
                    self.declared.insert(*var, self.open.clone());
                }
                Stmt::Let { var, value } => {
                    self.declared.insert(*var, self.open.clone());
                    let copies = self.copies.len();
                    self.value(value, Some(at));
                    if self.versioned.contains(var) || self.shared.contains(var) {
                        self.copies.truncate(copies);
                    }
                }
                Stmt::Assign { place, value } => {
                    let copies = self.copies.len();
                    self.value(value, Some(at));
                    if self.shared.contains(&place.var) {
                        self.copies.truncate(copies);
                    }
                }
                Stmt::Call {
                    var, args, seeds, ..
                } => {
                    self.declared.insert(*var, self.open.clone());
                    for arg in args {
                        if let Arg::Tracked(place) = arg {
                            self.reads
                                .push((place.var, spot(place), at, self.arms.clone()));
                        }
                    }
                    for (_, place) in seeds {
                        self.reads
                            .push((place.var, spot(place), at, self.arms.clone()));
                    }
                }
                Stmt::If {
                    then,
                    otherwise,
                    flag,
                    ..
                } => {
                    self.arms.push((*flag, true));
                    self.stmts(then);
                    self.arms.pop();
                    self.arms.push((*flag, false));
                    self.stmts(otherwise);
                    self.arms.pop();
                }
                Stmt::For { body, .. } => {
                    let index = self.loops.len();
                    self.loops.push((at, at));
                    self.open.push(index);
                    self.stmts(body);
                    self.open.pop();
                    self.loops[index].1 = self.position;
                }
            }
        }
    }

    fn value(&mut self, value: &Value, at: Option<usize>) {
        let at = at.unwrap_or_else(|| {
            self.position += 1;
            self.position
        });
        for op in value.ops.iter().filter(|op| op.live) {
            for operand in &op.operands {
                if let Operand::Place(place) = operand {
                    self.reads
                        .push((place.var, spot(place), at, self.arms.clone()));
                }
            }
        }
        if let Operand::Place(place) = &value.result {
            self.reads
                .push((place.var, spot(place), at, self.arms.clone()));
            // (The output read from a shared node adds into its cell.)
            if self.shared.contains(&place.var) {
                return;
            }
            self.copies.push(CopySite {
                var: place.var,
                spot: spot(place),
                at,
                loops: self.open.clone(),
                arms: self.arms.clone(),
            });
        }
    }
}
