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

use std::cell::RefCell;

use crate::error::ScalarAutodiffError;
use crate::operation::{Operands, ScalarOperation};

/// The node is tracked: some variable reaches it.
pub(crate) const TRACKED: u8 = 1;
/// Scratch mark used inside one walk; clear outside of walks.
const REACHED: u8 = 2;
/// Operand `slot` is tracked (bits 2, 3, 4).
const fn operand_tracked(slot: usize) -> u8 {
    4 << slot
}

/// One recorded value. 40 bytes; local derivatives are not stored but computed from the
/// operand values when a pass needs them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Node {
    pub(crate) value: f64,
    /// Stored gradient, accumulated over completed passes (tracked nodes only).
    pub(crate) grad: f64,
    /// Pass-local adjoint, meaningful only while `REACHED` is set.
    adjoint: f64,
    /// Operand indices; for `powi`, `args[1]` holds the exponent's bits.
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

/// One thread's graph storage.
#[derive(Debug)]
pub(crate) struct Tape {
    nodes: Vec<Node>,
    /// The third operand of each live `mul_add` node, as (node, operand), ascending.
    addends: Vec<(u32, u32)>,
}

thread_local! {
    pub(crate) static TAPE: RefCell<Tape> = const {
        RefCell::new(Tape { nodes: Vec::new(), addends: Vec::new() })
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

/// Adds `contribution` to the pass adjoint of `parent`, marking it reached.
#[inline]
fn accumulate(nodes: &mut [Node], parent: usize, contribution: f64, lowest: &mut usize) {
    let target = &mut nodes[parent];
    if target.flags & REACHED != 0 {
        target.adjoint += contribution;
    } else {
        target.flags |= REACHED;
        target.adjoint = contribution;
        *lowest = (*lowest).min(parent);
    }
}

/// What the reverse pass found wrong, before it is explained with topology indices.
pub(crate) struct PassFailed;

impl Tape {
    pub(crate) fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }

    /// The tape index of operand `slot` of node `index`.
    #[inline]
    pub(crate) fn operand(&self, index: u32, slot: usize) -> u32 {
        match slot {
            0 | 1 => self.nodes[index as usize].args[slot],
            _ => self
                .addends
                .binary_search_by_key(&index, |&(node, _)| node)
                .map_or(index, |at| self.addends[at].1),
        }
    }

    /// The `powi` exponent of node `index` (0 for other operations).
    #[inline]
    pub(crate) fn exponent(&self, index: u32) -> i32 {
        let node = &self.nodes[index as usize];
        match node.op {
            ScalarOperation::Powi => node.args[1] as i32,
            _ => 0,
        }
    }

    /// Operand values of node `index`, padded with zeros.
    #[inline]
    pub(crate) fn operand_values(&self, index: u32) -> [f64; 3] {
        let mut values = [0.0; 3];
        for (slot, value) in values
            .iter_mut()
            .enumerate()
            .take(self.nodes[index as usize].op.arity())
        {
            *value = self.nodes[self.operand(index, slot) as usize].value;
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
        node.op.local_derivative(
            slot,
            self.operand_values(index),
            node.value,
            self.exponent(index),
        )
    }

    /// Computes `op` on the first `N` of `operands` with `forward` and records the result.
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
        let value = forward(values);
        if !value.is_finite() {
            return Recorded::NonFinite(value);
        }
        match self.push(value, op, operands, exponent, flags) {
            Some(index) => Recorded::Node(index),
            None => Recorded::Full,
        }
    }

    /// Records a node with one handle and the given flags (`None`: the tape is full).
    /// `operands` holds `op.arity()` live indices.
    #[inline]
    pub(crate) fn push(
        &mut self,
        value: f64,
        op: ScalarOperation,
        operands: [u32; 3],
        exponent: i32,
        flags: u8,
    ) -> Option<u32> {
        let index = self.nodes.len();
        if index >= u32::MAX as usize {
            return None;
        }
        let index = index as u32;
        let second = match op {
            ScalarOperation::Powi => exponent as u32,
            _ => operands[1],
        };
        if op == ScalarOperation::MulAdd {
            self.addends.push((index, operands[2]));
        }
        self.nodes.push(Node {
            value,
            grad: 0.0,
            adjoint: 0.0,
            args: [operands[0], second],
            handles: 1,
            op,
            flags,
        });
        Some(index)
    }

    /// The number of nodes on the tape.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Pops every node at `len` and above, handles or not (for traces, which hold none).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.nodes.truncate(len);
        let kept = self
            .addends
            .partition_point(|&(node, _)| (node as usize) < len);
        self.addends.truncate(kept);
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
        while let Some(top) = self.nodes.last() {
            if top.handles != 0 {
                break;
            }
            if top.op == ScalarOperation::MulAdd {
                self.addends.pop();
            }
            self.nodes.pop();
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
            });
        }
        let above = index as usize + 1..self.nodes.len();
        for consumer in above.map(|at| at as u32) {
            let node = &self.nodes[consumer as usize];
            if (0..node.op.arity()).any(|slot| self.operand(consumer, slot) == index) {
                return Err(ScalarAutodiffError::LeafInUse {
                    operation: op,
                    consumer: node.op,
                });
            }
        }
        self.nodes[index as usize].value = value;
        Ok(())
    }

    /// One fresh reverse pass from `output` with `seed`, committed only if every pass
    /// adjoint and every prospective stored gradient is finite.
    ///
    /// Non-finite values absorb under `+` and `*`, so a bad derivative, contribution or
    /// partial sum anywhere ends as a non-finite adjoint in some tracked node, and one
    /// check per node catches it. The caller explains a failure with topology indices.
    /// `record` receives each committed (index, gradient) in ascending order.
    pub(crate) fn backward(
        &mut self,
        output: u32,
        seed: f64,
        mut record: Option<&mut Vec<(u32, f64)>>,
    ) -> Result<(), PassFailed> {
        let out = output as usize;
        self.nodes[out].adjoint = seed;
        self.nodes[out].flags |= REACHED;
        let mut lowest = out;
        let mut finite = true;
        let mut at = out;
        loop {
            let node = &self.nodes[at];
            let flags = node.flags;
            if flags & REACHED != 0 {
                let (op, value, upstream, args) = (node.op, node.value, node.adjoint, node.args);
                if !(node.grad + upstream).is_finite() {
                    finite = false;
                    break;
                }
                // Unary and binary nodes (nearly all) read their operands directly.
                match op.arity() {
                    0 => {}
                    1 => {
                        if flags & operand_tracked(0) != 0 {
                            let parent = args[0] as usize;
                            let exponent = if op == ScalarOperation::Powi {
                                args[1] as i32
                            } else {
                                0
                            };
                            let x = self.nodes[parent].value;
                            let local = op.local_derivative(0, [x, 0.0, 0.0], value, exponent);
                            accumulate(&mut self.nodes, parent, upstream * local, &mut lowest);
                        }
                    }
                    2 => {
                        let [left, right] = [args[0] as usize, args[1] as usize];
                        let tracked = [
                            flags & operand_tracked(0) != 0,
                            flags & operand_tracked(1) != 0,
                        ];
                        let (x, y) = (self.nodes[left].value, self.nodes[right].value);
                        let slopes = op.binary_derivatives(x, y, value, tracked);
                        for (slot, parent) in [(0, left), (1, right)] {
                            if tracked[slot] {
                                let contribution = upstream * slopes[slot];
                                accumulate(&mut self.nodes, parent, contribution, &mut lowest);
                            }
                        }
                    }
                    arity => {
                        let index = at as u32;
                        let values = self.operand_values(index);
                        for slot in 0..arity {
                            if flags & operand_tracked(slot) != 0 {
                                let local = op.local_derivative(slot, values, value, 0);
                                let parent = self.operand(index, slot) as usize;
                                accumulate(&mut self.nodes, parent, upstream * local, &mut lowest);
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
        for (index, node) in self.nodes[lowest..=out].iter_mut().enumerate() {
            if node.flags & REACHED != 0 {
                node.flags &= !REACHED;
                if finite {
                    node.grad += node.adjoint;
                    if let Some(record) = record.as_deref_mut() {
                        record.push(((lowest + index) as u32, node.grad));
                    }
                }
            }
        }
        if finite {
            Ok(())
        } else {
            Err(PassFailed)
        }
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
                self.nodes[at].grad = 0.0;
                for slot in 0..node.op.arity() {
                    if node.flags & operand_tracked(slot) != 0 {
                        let parent = self.operand(at as u32, slot) as usize;
                        self.nodes[parent].flags |= REACHED;
                        lowest = lowest.min(parent);
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
                    reached[self.operand(at as u32, slot) as usize] = true;
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
