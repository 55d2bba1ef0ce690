//! The reverse pass as a learner reads it: one record per node and per operand edge.
//!
//! Training loops never pay for these records: [`Scalar::backward`] only keeps the
//! gradients it stored, and [`BackwardPass::ledger`] replays the pass on request.

mod html;
mod page;

pub use page::{Page, Panel};

use std::fmt;

use crate::error::{ScalarAutodiffError, SourceLocation};
use crate::operation::ScalarOperation;
use crate::scalar::Scalar;
use crate::tape::{with_tape, Tape};

/// Validates the request, runs the fast pass, and on failure explains it.
pub(crate) fn run_pass(
    output: &Scalar,
    seed: f64,
    record: Option<&mut Vec<(u32, f64)>>,
) -> Result<(), ScalarAutodiffError> {
    with_tape(|tape| pass(tape, output.index(), seed, record))?
}

/// [`run_pass`] on a tape already borrowed.
pub(crate) fn pass(
    tape: &mut Tape,
    output: u32,
    seed: f64,
    record: Option<&mut Vec<(u32, f64)>>,
) -> Result<(), ScalarAutodiffError> {
    let node = tape.node(output);
    if !node.tracked() {
        return Err(ScalarAutodiffError::UntrackedOutput { operation: node.op });
    }
    if !seed.is_finite() {
        return Err(ScalarAutodiffError::NonFiniteSeed { seed });
    }
    let outcome = tape
        .propagate(output, seed)
        .and_then(|lowest| tape.commit(lowest, output as usize, record));
    outcome.map_err(|_| explain(tape, output, seed))
}

/// The typed error of a pass the fast loop found non-finite.
#[cold]
pub(crate) fn explain(tape: &Tape, output: u32, seed: f64) -> ScalarAutodiffError {
    // The replay checks what the fast pass checked, so it finds the failure; the
    // fallback only keeps this function total.
    tape.take_blame();
    let error = replay(tape, output, seed, false)
        .error
        .unwrap_or(ScalarAutodiffError::NonFiniteSeed { seed });
    tape.located(error)
}

/// The seed's reference pass over the dependency subgraph, with topology indices.
struct Replay {
    /// Tape indices of the subgraph, ascending (a topological order).
    topology: Vec<u32>,
    /// Pass adjoint per topology index (0 for untracked nodes).
    adjoints: Vec<f64>,
    edges: Vec<LedgerEdge>,
    /// The first check that failed, in the order the chapter checks them.
    error: Option<ScalarAutodiffError>,
}

///
/// Indexing: `topology` holds every operand of every node in it, so `position` has a rank
/// for each operand, and ranks index `adjoints`.
fn replay(tape: &Tape, output: u32, seed: f64, keep_edges: bool) -> Replay {
    let topology = tape.dependencies(output);
    let mut position = vec![usize::MAX; output as usize + 1];
    for (rank, &index) in topology.iter().enumerate() {
        position[index as usize] = rank;
    }
    let mut adjoints = vec![0.0; topology.len()];
    if let Some(last) = adjoints.last_mut() {
        *last = seed;
    }
    let mut edges = Vec::new();
    let mut error = None;
    for child in (0..topology.len()).rev() {
        let index = topology[child];
        let node = tape.node(index);
        let upstream = adjoints[child];
        for operand in 0..node.op.arity() {
            // An immediate constant (only in handle-free traces) has no node and no edge.
            let Some(parent_index) = tape.operand(index, operand) else {
                continue;
            };
            let parent = position[parent_index as usize];
            let parent_tracked = tape.node(parent_index).tracked();
            let local_derivative = tape.local_derivative(index, operand);
            let contribution = upstream * local_derivative;
            let (mut before, mut after) = (None, None);
            if parent_tracked {
                let previous = adjoints[parent];
                let next = previous + contribution;
                let failure = if !local_derivative.is_finite() {
                    Some(ScalarAutodiffError::NonFiniteDerivative {
                        node: child,
                        operation: node.op,
                        operand,
                        operands: tape.operands_of(index),
                        derivative: local_derivative,
                        location: None,
                    })
                } else if !contribution.is_finite() {
                    Some(ScalarAutodiffError::NonFiniteContribution {
                        child,
                        operation: node.op,
                        parent,
                        operand,
                        upstream,
                        local_derivative,
                        location: None,
                    })
                } else if !next.is_finite() {
                    Some(ScalarAutodiffError::NonFinitePassAdjoint {
                        node: parent,
                        operation: tape.node(parent_index).op,
                        previous,
                        contribution,
                        location: None,
                    })
                } else {
                    None
                };
                if error.is_none() && failure.is_some() {
                    tape.blame(index);
                    error = failure;
                }
                adjoints[parent] = next;
                (before, after) = (Some(previous), Some(next));
            }
            if keep_edges {
                edges.push(LedgerEdge {
                    reverse_index: edges.len(),
                    child,
                    parent,
                    operand,
                    local_derivative,
                    upstream,
                    contribution,
                    parent_tracked,
                    parent_adjoint_before: before,
                    parent_adjoint_after: after,
                });
            }
        }
    }
    if error.is_none() {
        error = topology.iter().zip(&adjoints).enumerate().find_map(
            |(rank, (&index, &pass_adjoint))| {
                let node = tape.node(index);
                let stored = tape.grad(index);
                (node.tracked() && !(stored + pass_adjoint).is_finite()).then_some(
                    ScalarAutodiffError::NonFiniteAccumulatedGradient {
                        node: rank,
                        operation: node.op,
                        stored,
                        pass_adjoint,
                    },
                )
            },
        );
    }
    Replay {
        topology,
        adjoints,
        edges,
        error,
    }
}

/// What one successful [`Scalar::backward`] call did: its seed, and on request its ledger.
///
/// It keeps the output's graph alive, so the ledger can be built later; drop it to let
/// the graph go.
#[derive(Debug)]
pub struct BackwardPass {
    output: Scalar,
    seed: f64,
    /// (tape index, stored gradient right after this pass), ascending.
    committed: Vec<(u32, f64)>,
}

impl BackwardPass {
    pub(crate) fn new(output: Scalar, seed: f64, committed: Vec<(u32, f64)>) -> Self {
        Self {
            output,
            seed,
            committed,
        }
    }

    /// The seed installed at the output.
    pub fn seed(&self) -> f64 {
        self.seed
    }

    /// Builds the full per-node and per-edge record of this pass by replaying it.
    pub fn ledger(&self) -> Ledger {
        let built = with_tape(|tape| {
            let replay = replay(tape, self.output.index(), self.seed, true);
            let nodes = replay
                .topology
                .iter()
                .zip(&replay.adjoints)
                .enumerate()
                .map(|(topology_index, (&index, &adjoint))| {
                    let node = tape.node(index);
                    let tracked = node.tracked();
                    let accumulated_gradient = self
                        .committed
                        .binary_search_by_key(&index, |&(at, _)| at)
                        .ok()
                        .map(|at| self.committed[at].1);
                    LedgerNode {
                        topology_index,
                        node: index as usize,
                        operation: node.op,
                        value: node.value,
                        tracked,
                        pass_adjoint: tracked.then_some(adjoint),
                        accumulated_gradient,
                        location: tape.site(index),
                    }
                })
                .collect();
            (nodes, replay.edges)
        });
        let (nodes, edges) = built.unwrap_or_default();
        Ledger {
            seed: self.seed,
            nodes,
            edges,
            names: Vec::new(),
            locations: false,
        }
    }
}

impl fmt::Display for BackwardPass {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.ledger().fmt(formatter)
    }
}

/// One node of a pass's dependency subgraph.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LedgerNode {
    /// Position in the subgraph's topological order (0 first, the output last).
    pub topology_index: usize,
    /// Position on the thread's tape.
    pub node: usize,
    /// The node's operation.
    pub operation: ScalarOperation,
    /// The primal value.
    pub value: f64,
    /// Whether gradients flow to it.
    pub tracked: bool,
    /// This pass's adjoint (`None` for untracked nodes).
    pub pass_adjoint: Option<f64>,
    /// The stored gradient right after this pass (`None` for untracked nodes).
    pub accumulated_gradient: Option<f64>,
    /// Where the operation that made the node was written, for a node a generated
    /// `name_graph` recorded (`None` for the plain `Scalar` API and for the caller's
    /// leaves).
    pub location: Option<SourceLocation>,
}

/// One operand edge, in the order the pass used it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LedgerEdge {
    /// 0 for the first edge the pass followed.
    pub reverse_index: usize,
    /// Topology index of the consuming result.
    pub child: usize,
    /// Topology index of the operand.
    pub parent: usize,
    /// The operand slot (0 for the left operand).
    pub operand: usize,
    /// The result's derivative with respect to this operand occurrence.
    pub local_derivative: f64,
    /// The consuming result's pass adjoint.
    pub upstream: f64,
    /// `upstream * local_derivative`.
    pub contribution: f64,
    /// Whether the operand is tracked; untracked operands receive nothing.
    pub parent_tracked: bool,
    /// The operand's pass adjoint before this contribution.
    pub parent_adjoint_before: Option<f64>,
    /// The operand's pass adjoint after this contribution.
    pub parent_adjoint_after: Option<f64>,
}

/// The full record of one reverse pass.
///
/// `Display` renders the edge table in reverse order; [`Ledger::to_dot`] draws the graph
/// for Graphviz. Name nodes with [`Ledger::name`] to see `x` instead of `variable#0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ledger {
    /// The seed installed at the output.
    pub seed: f64,
    /// One record per node, in topological order.
    pub nodes: Vec<LedgerNode>,
    /// One record per operand edge, in reverse order.
    pub edges: Vec<LedgerEdge>,
    names: Vec<(usize, String)>,
    locations: bool,
}

impl Ledger {
    /// Labels the node `scalar` as `name` in the table and the drawing (ignored if the
    /// node is not part of this pass).
    pub fn name(mut self, scalar: &Scalar, name: &str) -> Self {
        self.names
            .retain(|(node, _)| *node != scalar.index() as usize);
        self.names.push((scalar.index() as usize, name.to_owned()));
        self
    }

    /// Adds a last column to the text table: where the consuming result's operation was
    /// written (`` `loss` at src/model.rs:14:21``), for a graph a generated `name_graph`
    /// recorded; `-` for an operation of the plain `Scalar` API.
    ///
    /// ```
    /// use autodiff_runtime::Scalar;
    ///
    /// // The plain API notes no locations (a `name_graph` does): the column shows `-`.
    /// let x = Scalar::variable(3.0)?;
    /// let pass = x.mul(&x)?.backward()?;
    /// let table = pass.ledger().name(&x, "x").with_locations().to_string();
    /// assert!(table.lines().nth(1).is_some_and(|header| header.ends_with("written at")));
    /// assert!(table.lines().skip(2).all(|row| row.ends_with(" -")));
    /// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
    /// ```
    pub fn with_locations(mut self) -> Self {
        self.locations = true;
        self
    }

    /// The label of the node at `topology_index`: its given name, or `operation#index`.
    pub fn label(&self, topology_index: usize) -> String {
        let Some(node) = self.nodes.get(topology_index) else {
            return format!("#{topology_index}");
        };
        self.names
            .iter()
            .find(|(at, _)| *at == node.node)
            .map_or_else(
                || format!("{}#{topology_index}", node.operation),
                |(_, name)| name.clone(),
            )
    }

    /// Graphviz DOT: one box per node (operation, value, pass adjoint) and one arrow per
    /// operand edge, labelled with its slot and contribution, so `x*x` draws two arrows.
    pub fn to_dot(&self) -> String {
        let mut dot = String::from(
            "digraph backward {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
        );
        for node in &self.nodes {
            let adjoint = node
                .pass_adjoint
                .map_or_else(|| "untracked".to_owned(), |a| format!("adjoint {a:.12}"));
            dot.push_str(&format!(
                "  n{} [label=\"{}\\n{}\\nvalue {:.12}\\n{}\"];\n",
                node.topology_index,
                escape(&self.label(node.topology_index)),
                node.operation,
                node.value,
                adjoint
            ));
        }
        for edge in &self.edges {
            dot.push_str(&format!(
                "  n{} -> n{} [label=\"slot {}\\ncontribution {:.12}\"];\n",
                edge.parent, edge.child, edge.operand, edge.contribution
            ));
        }
        dot.push_str("}\n");
        dot
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

impl fmt::Display for Ledger {
    /// The edge table: reverse order, consuming result, operand use, operand value,
    /// local derivative, upstream adjoint, edge contribution.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut header = vec![
            "reverse order",
            "consuming result",
            "operand use",
            "operand value",
            "local derivative",
            "upstream adjoint",
            "edge contribution",
        ];
        if self.locations {
            header.push("written at");
        }
        let rows: Vec<Vec<String>> = self
            .edges
            .iter()
            .map(|edge| {
                let mut row = vec![
                    edge.reverse_index.to_string(),
                    self.label(edge.child),
                    edge.operand.to_string(),
                    self.label(edge.parent),
                    format!("{:.12}", edge.local_derivative),
                    format!("{:.12}", edge.upstream),
                    format!("{:.12}", edge.contribution),
                ];
                if self.locations {
                    let at = self.nodes.get(edge.child).and_then(|node| node.location);
                    row.push(at.map_or_else(|| "-".to_owned(), |at| at.to_string()));
                }
                row
            })
            .collect();
        let mut widths: Vec<usize> = header.iter().map(|cell| cell.len()).collect();
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        writeln!(
            formatter,
            "backward pass: seed {:.12}, {} nodes, {} edges",
            self.seed,
            self.nodes.len(),
            self.edges.len()
        )?;
        let header: Vec<String> = header.into_iter().map(str::to_owned).collect();
        for row in std::iter::once(&header).chain(&rows) {
            let line: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, width)| format!("{cell:<width$}"))
                .collect();
            writeln!(formatter, "{}", line.join("  ").trim_end())?;
        }
        Ok(())
    }
}
