//! Where the forward sweep checks that its numbers are finite.
//!
//! The trace checks every result; a sweep need only give up whenever the trace would
//! fail (its result is thrown away then), so it checks a number where no later check
//! would see it. A non-finite operand of an operation whose table entry says it carries
//! one into its result (`ScalarOperation::propagates`: `inf * 0` is NaN, but `x / inf`
//! is 0) is seen by that result's check. Three places use it:
//! - an operation read by one other in such a slot is checked through it (in `emit`);
//! - a variable read that way by a later statement of its block, before anything
//!   overwrites it, is checked through that statement (`let e = ..; total += e * e;`);
//! - a running sum (`total += ..` in a loop, where every read of `total` in the loop is
//!   its own update) is checked once, after the loop.
//!
//! What the table says is only known to the compiler, so each skipped check is a
//! constant condition over table lookups. A variable whose primal a condition, an index
//! or other plain code reads is always checked at once, as the trace would: plain code
//! never sees a non-finite number the trace would have refused.

use std::collections::HashSet;

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

use super::ir::{Arg, Op, Operand, Program, Stmt, Value, VarId};

/// Decides every check the forward sweep leaves out.
pub(crate) fn place(program: &mut Program) {
    let mut mentioned = HashSet::new();
    mentions_in(&program.body, &mut mentioned);
    for op in &program.output.ops {
        op_mentions(op, &mut mentioned);
    }
    let scalar: Vec<bool> = program.vars.iter().map(|var| var.depth == 0).collect();
    let context = Context { mentioned, scalar };
    context.block(&mut program.body, &HashSet::new());
}

struct Context {
    /// Variables whose primal plain code reads.
    mentioned: HashSet<VarId>,
    /// Scalar variables (the ones these rules follow).
    scalar: Vec<bool>,
}

impl Context {
    fn followed(&self, var: VarId) -> bool {
        self.scalar[var] && !self.mentioned.contains(&var)
    }

    /// `deferred`: variables a loop around this block checks after itself.
    fn block(&self, stmts: &mut [Stmt], deferred: &HashSet<VarId>) {
        for at in 0..stmts.len() {
            if let Some(var) = defined(&stmts[at]).filter(|&var| self.followed(var)) {
                let later = self.seen_later(&stmts[at + 1..], var);
                if let Some(value) = value_mut(&mut stmts[at]) {
                    value.unchecked = or(&value.unchecked, &later);
                }
            }
            match &mut stmts[at] {
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.block(then, deferred);
                    self.block(otherwise, deferred);
                }
                Stmt::For { body, after, .. } => {
                    let mut inner = deferred.clone();
                    for (var, condition) in self.running_sums(body, deferred) {
                        mark_updates(body, var, &condition);
                        after.push(var);
                        inner.insert(var);
                    }
                    self.block(body, &inner);
                }
                _ => {}
            }
        }
    }

    /// The condition under which the first statement of `rest` that reads or writes
    /// `var` carries a non-finite `var` into its checked result; `false` if that is a
    /// nested statement that writes it, or if nothing reads it.
    fn seen_later(&self, rest: &[Stmt], var: VarId) -> TokenStream {
        for stmt in rest {
            match stmt {
                Stmt::Let { value, .. } | Stmt::Assign { value, .. } => {
                    let sites = sites(value, var);
                    if !sites.is_empty() {
                        return any(&sites);
                    }
                    if matches!(stmt, Stmt::Assign { place, .. } if place.var == var) {
                        return quote!(false);
                    }
                }
                Stmt::Call {
                    store: Some(place), ..
                } if place.var == var => return quote!(false),
                Stmt::If { .. } | Stmt::For { .. } => {
                    if writes(std::slice::from_ref(stmt), var) {
                        return quote!(false);
                    }
                }
                // A call reads its arguments as plain code does (`mentions_in`).
                Stmt::Data { .. }
                | Stmt::Keep { .. }
                | Stmt::LetArray { .. }
                | Stmt::Call { .. } => {}
            }
        }
        quote!(false)
    }

    /// The running sums of a loop: scalars declared outside it, not already checked
    /// after an outer loop, that it updates, and reads only in their own updates. Each
    /// with the condition that every update carries the old value into the new one.
    fn running_sums(&self, body: &[Stmt], deferred: &HashSet<VarId>) -> Vec<(VarId, TokenStream)> {
        let mut declared = HashSet::new();
        declarations(body, &mut declared);
        let mut assigned = Vec::new();
        assignments(body, &mut assigned);
        let mut sums = Vec::new();
        for var in assigned {
            if sums.iter().any(|(sum, _)| *sum == var)
                || declared.contains(&var)
                || deferred.contains(&var)
                || !self.followed(var)
            {
                continue;
            }
            if let Some(condition) = updates_only(body, var) {
                sums.push((var, condition));
            }
        }
        sums
    }
}

/// The condition that every statement of `stmts` (nested ones too) reading `var` is an
/// update `var = f(var, ..)` carrying it on; `None` if one is not, or an update does not
/// read it.
fn updates_only(stmts: &[Stmt], var: VarId) -> Option<TokenStream> {
    let mut condition = quote!(true);
    for stmt in stmts {
        match stmt {
            Stmt::Let { value, .. } => {
                if value.reads(var) {
                    return None;
                }
            }
            Stmt::Assign { place, value } => {
                let update = place.var == var;
                let sites = sites(value, var);
                if update {
                    if sites.is_empty() || !matches!(value.result, Operand::Temp(_)) {
                        return None;
                    }
                    let carried = any(&sites);
                    condition = quote!((#condition && #carried));
                } else if value.reads(var) {
                    return None;
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                let then = updates_only(then, var)?;
                let otherwise = updates_only(otherwise, var)?;
                condition = quote!((#condition && #then && #otherwise));
            }
            Stmt::For { body, .. } => {
                let inner = updates_only(body, var)?;
                condition = quote!((#condition && #inner));
            }
            Stmt::Data { .. } | Stmt::Keep { .. } | Stmt::LetArray { .. } | Stmt::Call { .. } => {}
        }
    }
    Some(condition)
}

/// Leaves the updates of a running sum unchecked (under `condition`).
fn mark_updates(stmts: &mut [Stmt], var: VarId, condition: &TokenStream) {
    for stmt in stmts {
        match stmt {
            Stmt::Assign { place, value } if place.var == var => {
                value.unchecked = or(&value.unchecked, condition);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                mark_updates(then, var, condition);
                mark_updates(otherwise, var, condition);
            }
            Stmt::For { body, .. } => mark_updates(body, var, condition),
            _ => {}
        }
    }
}

/// The scalar variable a statement defines or overwrites as a whole.
fn defined(stmt: &Stmt) -> Option<VarId> {
    match stmt {
        Stmt::Let { var, value } => matches!(value.result, Operand::Temp(_)).then_some(*var),
        Stmt::Assign { place, value } if place.is_whole() => {
            matches!(value.result, Operand::Temp(_)).then_some(place.var)
        }
        _ => None,
    }
}

fn value_mut(stmt: &mut Stmt) -> Option<&mut Value> {
    match stmt {
        Stmt::Let { value, .. } | Stmt::Assign { value, .. } => Some(value),
        _ => None,
    }
}

/// Whether any statement of `stmts` (nested ones too) assigns `var`.
pub(crate) fn writes(stmts: &[Stmt], var: VarId) -> bool {
    stmts.iter().any(|stmt| match stmt {
        Stmt::Assign { place, .. }
        | Stmt::Call {
            store: Some(place), ..
        } => place.var == var,
        Stmt::If {
            then, otherwise, ..
        } => writes(then, var) || writes(otherwise, var),
        Stmt::For { body, .. } => writes(body, var),
        _ => false,
    })
}

fn declarations(stmts: &[Stmt], out: &mut HashSet<VarId>) {
    for stmt in stmts {
        match stmt {
            Stmt::Let { var, .. } | Stmt::LetArray { var, .. } | Stmt::Call { var, .. } => {
                out.insert(*var);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                declarations(then, out);
                declarations(otherwise, out);
            }
            Stmt::For { body, .. } => declarations(body, out),
            Stmt::Data { .. } | Stmt::Keep { .. } | Stmt::Assign { .. } => {}
        }
    }
}

fn assignments(stmts: &[Stmt], out: &mut Vec<VarId>) {
    for stmt in stmts {
        match stmt {
            Stmt::Assign { place, .. } if place.is_whole() => out.push(place.var),
            Stmt::If {
                then, otherwise, ..
            } => {
                assignments(then, out);
                assignments(otherwise, out);
            }
            Stmt::For { body, .. } => assignments(body, out),
            _ => {}
        }
    }
}

/// For each read of scalar `var` in `value` that may carry it into the result: the
/// condition that it does (each operation on the way carries that slot). Empty if the
/// value does not read it so (a copy does not: it has no result of its own to check).
fn sites(value: &Value, var: VarId) -> Vec<TokenStream> {
    let Operand::Temp(root) = value.result else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for op in &value.ops {
        for (slot, operand) in op.operands.iter().enumerate() {
            if let Operand::Place(place) = operand {
                if place.var == var && place.is_whole() {
                    if let Some(path) = carried(value, op, slot, root) {
                        out.push(path);
                    }
                }
            }
        }
    }
    out
}

/// The condition that a non-finite operand in `slot` of `op` reaches the value's result
/// `root`; `None` where it cannot (a dead operation, a result read twice).
fn carried(value: &Value, op: &Op, slot: usize, root: usize) -> Option<TokenStream> {
    let private = quote!(::scalar_autodiff::__private);
    let mut condition = TokenStream::new();
    let (mut op, mut slot) = (op, slot);
    loop {
        if !op.live {
            return None;
        }
        let method = &op.method;
        condition.extend(quote!(#private::propagates(#private::op::#method, #slot) &&));
        if op.id == root {
            return Some(quote!((#condition true)));
        }
        let (reader, at) = reader(value, op.id)?;
        (op, slot) = (reader, at);
    }
}

/// The one operation reading the result of operation `id`, and its slot.
pub(crate) fn reader(value: &Value, id: usize) -> Option<(&Op, usize)> {
    let mut readers = value.ops.iter().flat_map(|reader| {
        reader
            .operands
            .iter()
            .enumerate()
            .filter(|(_, operand)| matches!(operand, Operand::Temp(read) if *read == id))
            .map(move |(slot, _)| (reader, slot))
    });
    match (readers.next(), readers.next()) {
        (Some(reader), None) => Some(reader),
        _ => None,
    }
}

fn any(conditions: &[TokenStream]) -> TokenStream {
    quote!((false #(|| #conditions)*))
}

fn or(a: &TokenStream, b: &TokenStream) -> TokenStream {
    quote!((#a || #b))
}

/// Every variable whose primal plain code reads: conditions, loops, indices, data.
fn mentions_in(stmts: &[Stmt], out: &mut HashSet<VarId>) {
    for stmt in stmts {
        match stmt {
            Stmt::Data { tokens, .. } => primals(tokens, out),
            Stmt::Keep { .. } => {}
            Stmt::LetArray { init, .. } => primals(init, out),
            Stmt::Let { value, .. } => value_mentions(value, out),
            Stmt::Assign { place, value } => {
                place.indices.iter().for_each(|index| primals(index, out));
                value_mentions(value, out);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                primals(cond, out);
                mentions_in(then, out);
                mentions_in(otherwise, out);
            }
            Stmt::For {
                pat, iter, body, ..
            } => {
                primals(pat, out);
                primals(iter, out);
                mentions_in(body, out);
            }
            // The callee reads its arguments' values, not a later check of ours.
            Stmt::Call { args, seeds, .. } => {
                for arg in args {
                    match arg {
                        Arg::Tracked(place) => {
                            out.insert(place.var);
                            place.indices.iter().for_each(|index| primals(index, out));
                        }
                        Arg::Data(tokens) => primals(tokens, out),
                    }
                }
                for (_, place) in seeds {
                    out.insert(place.var);
                    place.indices.iter().for_each(|index| primals(index, out));
                }
            }
        }
    }
}

fn value_mentions(value: &Value, out: &mut HashSet<VarId>) {
    for op in &value.ops {
        op_mentions(op, out);
    }
    operand_mentions(&value.result, out);
}

fn op_mentions(op: &Op, out: &mut HashSet<VarId>) {
    op.operands
        .iter()
        .for_each(|operand| operand_mentions(operand, out));
    if let Some(exponent) = &op.exponent {
        primals(exponent, out);
    }
}

fn operand_mentions(operand: &Operand, out: &mut HashSet<VarId>) {
    match operand {
        Operand::Temp(_) => {}
        Operand::Place(place) => place.indices.iter().for_each(|index| primals(index, out)),
        Operand::Data(data) => primals(&data.raw, out),
    }
}

/// The variables whose primal (`__primal_N`) `tokens` name.
fn primals(tokens: &TokenStream, out: &mut HashSet<VarId>) {
    let mut stack = vec![tokens.clone()];
    while let Some(tokens) = stack.pop() {
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => {
                    let name = ident.to_string();
                    if let Some(id) = name.strip_prefix("__primal_") {
                        if let Ok(id) = id.parse() {
                            out.insert(id);
                        }
                    }
                }
                TokenTree::Group(group) => stack.push(group.stream()),
                _ => {}
            }
        }
    }
}
