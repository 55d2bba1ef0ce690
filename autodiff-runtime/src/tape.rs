//! The thread-local arena tape that every [`Scalar`](crate::Scalar) lives on.
//!
//! Nodes sit in one `Vec` in creation order, which is already a topological order: an
//! operand is always older than its result. A reverse pass is therefore one loop down the
//! indices, with no sort, no hash map and no recursion.
//!
//! Memory is freed last in, first out. A node is popped when it is on top of the tape and
//! no handle names it; its results, being younger, are already gone. A training step's
//! graph therefore vanishes when its handles drop, while parameters made earlier stay, and
//! the `Vec` keeps its capacity so the next step allocates nothing. The trade-off: a handle
//! kept alive high on the tape pins every dead node below it until it is dropped.
//!
//! Indexing: every index stored in a handle or as an operand names a live node, because a
//! node is only popped when no handle names it and everything above it (all its results)
//! is gone. The `nodes[..]` indexing below relies on that invariant.

use std::cell::{Cell, RefCell};
use std::panic::Location;

use crate::error::{ScalarAutodiffError, SourceLocation};
use crate::operation::{Operands, ScalarOperation};

/// The node is tracked: some variable reaches it.
pub(crate) const TRACKED: u8 = 1;
/// Scratch mark used inside one walk; clear outside of walks.
const REACHED: u8 = 2;
/// Operand `slot` is tracked (bits 2, 3, 4).
pub(crate) const fn operand_tracked(slot: usize) -> u8 {
    4 << slot
}
/// Operand `slot` (0 or 1) is a constant held in `aux`, not a node (bits 5, 6).
pub(crate) const fn operand_immediate(slot: usize) -> u8 {
    32 << slot
}

/// The `aux` word of a `powi` node: its exponent's bits.
pub(crate) fn exponent_aux(exponent: i32) -> u64 {
    u64::from(exponent as u32)
}

/// The `powi` exponent kept in `aux` by [`exponent_aux`].
fn aux_exponent(aux: u64) -> i32 {
    aux as u32 as i32
}

/// One recorded value. 40 bytes; local derivatives are not stored but computed from the
/// operand values when a pass needs them, and stored gradients live beside the nodes
/// (only graphs built from handles need them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) value: f64,
    /// Pass-local adjoint, meaningful only while `REACHED` is set.
    adjoint: f64,
    /// An immediate operand's bits, the `powi` exponent, or `mul_add`'s third operand.
    aux: u64,
    /// Operand indices (an immediate operand's slot is unused).
    args: [u32; 2],
    handles: u32,
    pub(crate) op: ScalarOperation,
    flags: u8,
}

impl Node {
    pub(crate) fn tracked(&self) -> bool {
        self.flags & TRACKED != 0
    }
}

/// What a custom node keeps beside the tape (its `aux` is the entry's index): its third
/// operand and the local derivatives its rule gave when it was recorded.
#[derive(Clone, Copy, Debug)]
struct CustomEntry {
    node: u32,
    third: u32,
    slopes: [f64; 3],
}

/// One thread's graph storage.
#[derive(Debug)]
pub(crate) struct Tape {
    nodes: Vec<Node>,
    /// Stored gradients by node index; shorter than `nodes` where none was stored yet.
    grads: Vec<f64>,
    /// The custom nodes' entries, in node order.
    customs: Vec<CustomEntry>,
    /// The node whose edge the last refused pass failed on, for a trace to locate.
    blamed: Cell<Option<u32>>,
    /// Where the operation behind each node was written, by node index (no longer than
    /// `nodes`): noted by `name_graph` and by a trace, for errors of a pass and for the
    /// ledger. Eight bytes a node; the plain API's nodes have `None`.
    sites: Vec<Option<&'static Location<'static>>>,
    /// The generated bodies that returned, each over the nodes it recorded: where a site's
    /// function name comes from. Their ends never decrease, so freeing nodes pops them.
    scopes: Vec<Scope>,
}

/// A generated body's nodes, `start..end`, are written in `function` (the innermost scope
/// of a node names it: a helper's, not its caller's).
#[derive(Clone, Copy, Debug)]
struct Scope {
    start: u32,
    end: u32,
    function: &'static str,
}

thread_local! {
    pub(crate) static TAPE: RefCell<Tape> = const {
        RefCell::new(Tape {
            nodes: Vec::new(),
            grads: Vec::new(),
            customs: Vec::new(),
            blamed: Cell::new(None),
            sites: Vec::new(),
            scopes: Vec::new(),
        })
    };
}

/// Runs `f` on this thread's tape.
///
/// Fails only while the thread is tearing down its storage, or on re-entry, which the
/// crate never does: no user code runs while the tape is borrowed.
pub(crate) fn with_tape<R>(f: impl FnOnce(&mut Tape) -> R) -> Result<R, ScalarAutodiffError> {
    try_tape(f).ok_or(ScalarAutodiffError::TapeUnavailable)
}

/// [`with_tape`] for hot paths: `None` instead of a (large) error value.
#[inline]
pub(crate) fn try_tape<R>(f: impl FnOnce(&mut Tape) -> R) -> Option<R> {
    TAPE.try_with(|tape| tape.try_borrow_mut().ok().map(|mut tape| f(&mut tape)))
        .ok()
        .flatten()
}

/// What recording one operation came to, kept small for the hot path.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Recorded {
    /// The new node's index.
    Node(u32),
    /// The result was not finite; nothing was recorded.
    NonFinite(f64),
    /// The tape is full.
    Full,
}

/// The number of nodes on this thread's tape (live or pinned below a live one).
///
/// Useful to check that a training loop frees each step's graph. Returns 0 while the
/// thread is being torn down.
pub fn tape_len() -> usize {
    with_tape(|tape| tape.nodes.len()).unwrap_or(0)
}

/// Adds `contribution` to the pass adjoint of `parent`; a marked walk also marks it
/// reached (its first contribution sets the adjoint) and tracks the lowest index reached.
#[inline]
fn accumulate<const MARKED: bool>(
    nodes: &mut [Node],
    parent: usize,
    contribution: f64,
    lowest: &mut usize,
) {
    let target = &mut nodes[parent];
    if !MARKED || target.flags & REACHED != 0 {
        target.adjoint += contribution;
    } else {
        target.flags |= REACHED;
        target.adjoint = contribution;
        *lowest = (*lowest).min(parent);
    }
}

/// Adds `contribution` to the pass adjoint of `parent`, an operand of node `at`. An
/// unmarked walk keeps the sum for `at - 1` (the next node down, and the commonest operand
/// by far) in `carry` instead of storing it and loading it back one step later, a round
/// trip through memory that every node of a chain waited on. Same sums, same order.
#[inline(always)]
fn give<const MARKED: bool>(
    nodes: &mut [Node],
    at: usize,
    parent: usize,
    contribution: f64,
    lowest: &mut usize,
    carry: &mut Option<f64>,
) {
    if !MARKED && parent + 1 == at {
        let sum = carry.unwrap_or(nodes[parent].adjoint);
        *carry = Some(sum + contribution);
    } else {
        accumulate::<MARKED>(nodes, parent, contribution, lowest);
    }
}

/// A reverse pass met a non-finite number; the caller explains it with topology indices.
pub(crate) struct PassFailed;

impl Tape {
    pub(crate) fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }

    /// The stored gradient of node `index` (0 until a pass stores one).
    pub(crate) fn grad(&self, index: u32) -> f64 {
        self.grads.get(index as usize).copied().unwrap_or(0.0)
    }

    /// The tape index of operand `slot` of node `index`, or `None` for an immediate.
    #[inline]
    pub(crate) fn operand(&self, index: u32, slot: usize) -> Option<u32> {
        let node = &self.nodes[index as usize];
        match slot {
            _ if slot < 2 && node.flags & operand_immediate(slot) != 0 => None,
            0 | 1 => Some(node.args[slot]),
            _ => match node.op {
                ScalarOperation::Custom(_) => Some(self.customs[node.aux as usize].third),
                _ => Some(node.aux as u32),
            },
        }
    }

    /// Whether operand `slot` of node `index` is tracked (some variable reaches it).
    #[inline]
    pub(crate) fn operand_tracked(&self, index: u32, slot: usize) -> bool {
        self.nodes[index as usize].flags & operand_tracked(slot) != 0
    }

    /// The `powi` exponent of node `index` (0 for other operations).
    #[inline]
    pub(crate) fn exponent(&self, index: u32) -> i32 {
        let node = &self.nodes[index as usize];
        match node.op {
            ScalarOperation::Powi => aux_exponent(node.aux),
            _ => 0,
        }
    }

    /// Operand values of node `index`, padded with zeros.
    #[inline]
    pub(crate) fn operand_values(&self, index: u32) -> [f64; 3] {
        let mut values = [0.0; 3];
        let node = &self.nodes[index as usize];
        for (slot, value) in values.iter_mut().enumerate().take(node.op.arity()) {
            *value = match self.operand(index, slot) {
                Some(operand) => self.nodes[operand as usize].value,
                None => f64::from_bits(node.aux),
            };
        }
        values
    }

    /// The operand values as an error reports them (`powi` adds its exponent).
    pub(crate) fn operands_of(&self, index: u32) -> Operands {
        let op = self.nodes[index as usize].op;
        let mut values = self.operand_values(index);
        if op == ScalarOperation::Powi {
            values[1] = f64::from(self.exponent(index));
            return Operands::new(values, 2);
        }
        Operands::new(values, op.arity())
    }

    /// The local derivative of node `index` with respect to operand `slot`.
    pub(crate) fn local_derivative(&self, index: u32, slot: usize) -> f64 {
        let node = &self.nodes[index as usize];
        if let ScalarOperation::Custom(_) = node.op {
            return self.customs[node.aux as usize].slopes[slot];
        }
        node.op.local_derivative(
            slot,
            self.operand_values(index),
            node.value,
            self.exponent(index),
        )
    }

    /// Computes `op` on the first `N` of `operands` (live nodes) with `forward` and
    /// records the result. `powi` takes its exponent in `exponent`.
    #[inline]
    pub(crate) fn record<const N: usize>(
        &mut self,
        op: ScalarOperation,
        operands: [u32; 3],
        exponent: i32,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Recorded {
        let mut values = [0.0; 3];
        let mut flags = 0;
        for slot in 0..N {
            let node = &self.nodes[operands[slot] as usize];
            values[slot] = node.value;
            if node.tracked() {
                flags |= TRACKED | operand_tracked(slot);
            }
        }
        let aux = match op {
            ScalarOperation::Powi => exponent_aux(exponent),
            ScalarOperation::MulAdd => u64::from(operands[2]),
            _ => 0,
        };
        self.record_values(op, [operands[0], operands[1]], aux, values, flags, forward)
    }

    /// Computes `op` on operand `values` already known, and records it with the given
    /// operand indices, `aux` and flags (see [`Node`]).
    #[inline]
    pub(crate) fn record_values(
        &mut self,
        op: ScalarOperation,
        args: [u32; 2],
        aux: u64,
        values: [f64; 3],
        flags: u8,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Recorded {
        let value = forward(values);
        if !value.is_finite() {
            return Recorded::NonFinite(value);
        }
        match self.push(value, op, args, aux, flags) {
            Some(index) => Recorded::Node(index),
            None => Recorded::Full,
        }
    }

    /// Records a custom operation on `operands` (live nodes, `op`'s arity of them) whose
    /// rule gave the finite `value` and the local derivatives `slopes`.
    pub(crate) fn record_custom(
        &mut self,
        op: ScalarOperation,
        operands: [u32; 3],
        value: f64,
        slopes: [f64; 3],
    ) -> Recorded {
        let mut flags = 0;
        for (slot, &operand) in operands.iter().enumerate().take(op.arity()) {
            if self.nodes[operand as usize].tracked() {
                flags |= TRACKED | operand_tracked(slot);
            }
        }
        let entry = self.customs.len() as u64;
        let args = [operands[0], operands[1]];
        match self.push(value, op, args, entry, flags) {
            Some(index) => {
                self.customs.push(CustomEntry {
                    node: index,
                    third: operands[2],
                    slopes,
                });
                Recorded::Node(index)
            }
            None => Recorded::Full,
        }
    }

    /// Records a leaf with one handle (`None`: the tape is full).
    #[inline]
    pub(crate) fn leaf(&mut self, value: f64, op: ScalarOperation) -> Option<u32> {
        let flags = if op == ScalarOperation::Variable {
            TRACKED
        } else {
            0
        };
        self.push(value, op, [0; 2], 0, flags)
    }

    #[inline]
    fn push(
        &mut self,
        value: f64,
        op: ScalarOperation,
        args: [u32; 2],
        aux: u64,
        flags: u8,
    ) -> Option<u32> {
        let index = self.nodes.len();
        if index >= u32::MAX as usize {
            return None;
        }
        self.nodes.push(Node {
            value,
            adjoint: 0.0,
            aux,
            args,
            handles: 1,
            op,
            flags,
        });
        Some(index as u32)
    }

    /// Notes that a pass failed on an edge of node `index` (its consuming operation).
    #[cold]
    pub(crate) fn blame(&self, index: u32) {
        self.blamed.set(Some(index));
    }

    /// The node the last refused pass failed on, if one was noted since the last call.
    pub(crate) fn take_blame(&self) -> Option<u32> {
        self.blamed.take()
    }

    /// `error`, at the operation whose edge the refused pass failed on (see
    /// [`blame`](Self::blame)) if generated code noted where it was written.
    #[cold]
    pub(crate) fn located(&self, mut error: ScalarAutodiffError) -> ScalarAutodiffError {
        if let Some(location) = self.take_blame().and_then(|node| self.site(node)) {
            error.locate(location);
        }
        error
    }

    /// Notes that the operation that recorded the newest node, `index`, was written at
    /// `code`.
    #[inline]
    pub(crate) fn note(&mut self, index: u32, code: &'static Location<'static>) {
        let index = index as usize;
        if self.sites.len() != index {
            self.sites.resize(index, None);
        }
        self.sites.push(Some(code));
    }

    /// A mark for [`name_since`](Self::name_since): a generated body begins.
    pub(crate) fn mark(&self) -> usize {
        self.nodes.len()
    }

    /// A generated body returned: the nodes it recorded since `mark` are written in
    /// `function`, unless a helper it called named them first.
    #[inline]
    pub(crate) fn name_since(&mut self, mark: usize, function: &'static str) {
        let end = self.nodes.len();
        if mark < end {
            self.scopes.push(Scope {
                start: mark as u32,
                end: end as u32,
                function,
            });
        }
    }

    /// Where the operation that recorded node `index` was written, if it was noted, in
    /// the innermost body that holds it.
    #[cold]
    pub(crate) fn site(&self, index: u32) -> Option<SourceLocation> {
        let code = (*self.sites.get(index as usize)?)?;
        let location = SourceLocation::of(code);
        let innermost = self
            .scopes
            .iter()
            .filter(|scope| (scope.start..scope.end).contains(&index))
            .max_by_key(|scope| (scope.start, std::cmp::Reverse(scope.end)));
        Some(match innermost {
            Some(scope) => location.in_function(scope.function),
            None => location,
        })
    }

    /// The number of nodes on the tape.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Pops every node at `len` and above, handles or not (for traces, which hold none).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.nodes.truncate(len);
        self.grads.truncate(len);
        self.sites.truncate(len);
        while self
            .scopes
            .last()
            .is_some_and(|scope| scope.end as usize > len)
        {
            self.scopes.pop();
        }
        while self
            .customs
            .last()
            .is_some_and(|entry| entry.node as usize >= len)
        {
            self.customs.pop();
        }
    }

    /// One more handle names `index`. A count that would overflow sticks at the maximum,
    /// which keeps the node alive for good rather than freeing it early.
    pub(crate) fn retain(&mut self, index: u32) {
        let handles = &mut self.nodes[index as usize].handles;
        *handles = handles.saturating_add(1);
    }

    /// One handle to `index` is gone; pop every dead node from the top.
    #[inline]
    pub(crate) fn release(&mut self, index: u32) {
        let handles = &mut self.nodes[index as usize].handles;
        if *handles != u32::MAX {
            *handles -= 1;
        }
        let mut len = self.nodes.len();
        while len > 0 && self.nodes[len - 1].handles == 0 {
            len -= 1;
        }
        if len < self.nodes.len() {
            self.truncate(len);
        }
    }

    /// Replaces a leaf's value, refusing when a live node was computed from it.
    pub(crate) fn set_value(&mut self, index: u32, value: f64) -> Result<(), ScalarAutodiffError> {
        let op = self.nodes[index as usize].op;
        if op.arity() != 0 {
            return Err(ScalarAutodiffError::NotALeaf { operation: op });
        }
        if !value.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteLeaf {
                operation: op,
                value,
                location: None,
            });
        }
        let above = index as usize + 1..self.nodes.len();
        for consumer in above.map(|at| at as u32) {
            let node = &self.nodes[consumer as usize];
            if (0..node.op.arity()).any(|slot| self.operand(consumer, slot) == Some(index)) {
                return Err(ScalarAutodiffError::LeafInUse {
                    operation: op,
                    consumer: node.op,
                });
            }
        }
        self.nodes[index as usize].value = value;
        Ok(())
    }

    /// Fresh pass-local adjoints of everything `output` (tracked) depends on, under `seed`.
    ///
    /// Leaves `REACHED` set on exactly the tracked nodes reached, all at or above the
    /// returned lowest index, for [`Tape::commit`] or [`Tape::adjoint`] and
    /// [`Tape::clear_marks`]. Non-finite values absorb under `+` and `*`, so a bad
    /// derivative, contribution or partial sum anywhere ends as a non-finite adjoint in
    /// some reached node: one check per node finds it, and then the marks are cleared.
    pub(crate) fn propagate(&mut self, output: u32, seed: f64) -> Result<usize, PassFailed> {
        self.walk::<true>(output, seed, 0)
    }

    /// [`Tape::propagate`] for a trace's one pass over nodes pushed since `base`, whose
    /// adjoints are all still 0: no marks, every tracked node from `output` down to `base`
    /// is visited (an unreached one only passes on zeros). A failure may come from a node
    /// the output does not reach, so the caller repeats the pass marked to be sure.
    pub(crate) fn propagate_fresh(&mut self, base: usize, output: u32) -> Result<(), PassFailed> {
        self.walk::<false>(output, 1.0, base).map(|_| ())
    }

    /// The reverse walk behind both passes; see [`Tape::propagate`] and
    /// [`Tape::propagate_fresh`].
    #[inline]
    fn walk<const MARKED: bool>(
        &mut self,
        output: u32,
        seed: f64,
        base: usize,
    ) -> Result<usize, PassFailed> {
        let out = output as usize;
        self.nodes[out].adjoint = seed;
        if MARKED {
            self.nodes[out].flags |= REACHED;
        }
        let mut lowest = if MARKED { out } else { base };
        let mut at = out;
        // The sum for node `at`, if the node above kept it (see `give`).
        let mut carry = None;
        loop {
            let carried = carry.take();
            if let Some(sum) = carried {
                self.nodes[at].adjoint = sum;
            }
            let node = &self.nodes[at];
            let flags = node.flags;
            let visit = if MARKED { REACHED } else { TRACKED };
            if flags & visit != 0 {
                let (op, value) = (node.op, node.value);
                let upstream = carried.unwrap_or(node.adjoint);
                let (args, aux) = (node.args, node.aux);
                if !upstream.is_finite() {
                    if MARKED {
                        self.clear_marks(lowest, out);
                    }
                    return Err(PassFailed);
                }
                // Unary and binary nodes (nearly all) read their operands directly.
                let custom = matches!(op, ScalarOperation::Custom(_));
                match op.arity() {
                    0 => {}
                    1 if !custom => {
                        if flags & operand_tracked(0) != 0 {
                            let parent = args[0] as usize;
                            let exponent = if op == ScalarOperation::Powi {
                                aux_exponent(aux)
                            } else {
                                0
                            };
                            let x = self.nodes[parent].value;
                            let local = op.unary_derivative(x, value, exponent);
                            give::<MARKED>(
                                &mut self.nodes,
                                at,
                                parent,
                                upstream * local,
                                &mut lowest,
                                &mut carry,
                            );
                        }
                    }
                    2 if !custom => {
                        let [left, right] = [args[0] as usize, args[1] as usize];
                        let tracked = [
                            flags & operand_tracked(0) != 0,
                            flags & operand_tracked(1) != 0,
                        ];
                        let slopes = match op {
                            // The commonest slopes need no operand values.
                            ScalarOperation::Add => [1.0, 1.0],
                            ScalarOperation::Subtract => [1.0, -1.0],
                            _ => {
                                let immediate = f64::from_bits(aux);
                                let x = match flags & operand_immediate(0) {
                                    0 => self.nodes[left].value,
                                    _ => immediate,
                                };
                                let y = match flags & operand_immediate(1) {
                                    0 => self.nodes[right].value,
                                    _ => immediate,
                                };
                                op.binary_derivatives(x, y, value, tracked)
                            }
                        };
                        if MARKED && tracked == [true, true] && left == right {
                            // x * x, s + s: two edges into one node, added in slot order
                            // as `give` would, without a store and reload in between.
                            let (first, second) = (upstream * slopes[0], upstream * slopes[1]);
                            let target = &mut self.nodes[left];
                            if !MARKED || target.flags & REACHED != 0 {
                                target.adjoint = target.adjoint + first + second;
                            } else {
                                target.flags |= REACHED;
                                target.adjoint = first + second;
                                lowest = lowest.min(left);
                            }
                        } else {
                            for (slot, parent) in [(0, left), (1, right)] {
                                if tracked[slot] {
                                    let contribution = upstream * slopes[slot];
                                    give::<MARKED>(
                                        &mut self.nodes,
                                        at,
                                        parent,
                                        contribution,
                                        &mut lowest,
                                        &mut carry,
                                    );
                                }
                            }
                        }
                    }
                    arity => {
                        // `mul_add` and custom operations.
                        let index = at as u32;
                        let values = self.operand_values(index);
                        for slot in 0..arity {
                            if flags & operand_tracked(slot) != 0 {
                                let local = match custom {
                                    true => self.customs[aux as usize].slopes[slot],
                                    false => op.local_derivative(slot, values, value, 0),
                                };
                                if let Some(parent) = self.operand(index, slot) {
                                    let parent = parent as usize;
                                    let contribution = upstream * local;
                                    give::<MARKED>(
                                        &mut self.nodes,
                                        at,
                                        parent,
                                        contribution,
                                        &mut lowest,
                                        &mut carry,
                                    );
                                }
                            }
                        }
                    }
                }
            }
            if at == lowest {
                break;
            }
            at -= 1;
        }
        Ok(lowest)
    }

    /// The pass adjoint of `index` after [`Tape::propagate_fresh`].
    pub(crate) fn fresh_adjoint(&self, index: u32) -> f64 {
        self.nodes[index as usize].adjoint
    }

    /// The pass adjoint of `index` after [`Tape::propagate`] (0 if the pass missed it).
    pub(crate) fn adjoint(&self, index: u32) -> f64 {
        let node = &self.nodes[index as usize];
        if node.flags & REACHED != 0 {
            node.adjoint
        } else {
            0.0
        }
    }

    /// Clears the marks [`Tape::propagate`] left on `lowest..=out`.
    pub(crate) fn clear_marks(&mut self, lowest: usize, out: usize) {
        for node in &mut self.nodes[lowest..=out] {
            node.flags &= !REACHED;
        }
    }

    /// Adds the pass adjoints left by [`Tape::propagate`] to the stored gradients, if every
    /// sum is finite (else nothing is stored), and clears the marks. `record` receives
    /// each committed (index, gradient), ascending.
    pub(crate) fn commit(
        &mut self,
        lowest: usize,
        out: usize,
        record: Option<&mut Vec<(u32, f64)>>,
    ) -> Result<(), PassFailed> {
        if self.grads.len() <= out {
            self.grads.resize(out + 1, 0.0);
        }
        let nodes = &self.nodes[lowest..=out];
        let grads = &self.grads[lowest..=out];
        let finite = nodes
            .iter()
            .zip(grads)
            .all(|(node, grad)| node.flags & REACHED == 0 || (grad + node.adjoint).is_finite());
        if !finite {
            self.clear_marks(lowest, out);
            return Err(PassFailed);
        }
        let mut record = record;
        let nodes = &mut self.nodes[lowest..=out];
        let grads = &mut self.grads[lowest..=out];
        for (offset, (node, grad)) in nodes.iter_mut().zip(grads).enumerate() {
            if node.flags & REACHED != 0 {
                node.flags &= !REACHED;
                *grad += node.adjoint;
                if let Some(record) = record.as_deref_mut() {
                    record.push(((lowest + offset) as u32, *grad));
                }
            }
        }
        Ok(())
    }

    /// Sets the stored gradient of every tracked node `output` depends on to zero.
    pub(crate) fn zero_grad(&mut self, output: u32) {
        let out = output as usize;
        if !self.nodes[out].tracked() {
            return;
        }
        self.nodes[out].flags |= REACHED;
        let mut lowest = out;
        let mut at = out;
        loop {
            let node = self.nodes[at];
            if node.flags & REACHED != 0 {
                self.nodes[at].flags &= !REACHED;
                if let Some(grad) = self.grads.get_mut(at) {
                    *grad = 0.0;
                }
                for slot in 0..node.op.arity() {
                    if node.flags & operand_tracked(slot) != 0 {
                        if let Some(parent) = self.operand(at as u32, slot) {
                            self.nodes[parent as usize].flags |= REACHED;
                            lowest = lowest.min(parent as usize);
                        }
                    }
                }
            }
            if at == lowest {
                break;
            }
            at -= 1;
        }
    }

    /// Every node `output` depends on, tracked or not, in ascending (topological) order.
    pub(crate) fn dependencies(&self, output: u32) -> Vec<u32> {
        let out = output as usize;
        let mut reached = vec![false; out + 1];
        reached[out] = true;
        for at in (0..=out).rev() {
            if reached[at] {
                for slot in 0..self.nodes[at].op.arity() {
                    if let Some(operand) = self.operand(at as u32, slot) {
                        reached[operand as usize] = true;
                    }
                }
            }
        }
        (0..=output).filter(|&at| reached[at as usize]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_takes_forty_bytes() {
        // The performance issue's budget is 48 bytes per recorded node at peak.
        assert_eq!(std::mem::size_of::<Node>(), 40);
    }

    #[test]
    fn dead_nodes_are_freed_last_in_first_out() -> Result<(), ScalarAutodiffError> {
        let base = crate::tape_len();
        let x = crate::Scalar::variable(1.0)?;
        let y = x.exp()?;
        let z = y.sin()?;
        drop(y); // pinned below z
        assert_eq!(crate::tape_len(), base + 3);
        drop(z); // z goes, then the dead y below it
        assert_eq!(crate::tape_len(), base + 1);
        drop(x);
        assert_eq!(crate::tape_len(), base);
        Ok(())
    }
}
