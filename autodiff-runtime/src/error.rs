//! Every way building, differentiating or checking a graph can be refused.

use crate::operation::{Operands, ScalarOperation};

/// A rejection from graph construction, the reverse pass or a gradient check.
///
/// Node numbers (`node`, `child`, `parent`) are topology indices of the pass's dependency
/// subgraph, the same numbering the [`Ledger`](crate::Ledger) uses: 0 is the earliest node
/// the output depends on, the output itself is last. (A generated `name_grad` keeps
/// constants out of its graph, so its numbers count only the nodes that depend on a
/// parameter or are leaves; `name_graph`'s ledger also counts the constants.)
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ScalarAutodiffError {
    /// A leaf was given NaN or an infinity.
    #[error("{operation} scalar value {value:?} must be finite")]
    NonFiniteLeaf {
        /// `variable`, `constant`, or the leaf whose value was being set.
        operation: ScalarOperation,
        /// The rejected value.
        value: f64,
    },
    /// An operation's result is NaN or infinite (`ln(-1)`, `0/0`, overflow).
    #[error("{operation}({operands}) produced non-finite value {value:?}")]
    NonFiniteResult {
        /// The operation.
        operation: ScalarOperation,
        /// Its operand values.
        operands: Operands,
        /// The non-finite result.
        value: f64,
    },
    /// `backward` was asked of a node with no path to any variable.
    #[error("cannot backpropagate from untracked {operation} output: it depends on no variable")]
    UntrackedOutput {
        /// The output's operation.
        operation: ScalarOperation,
    },
    /// `backward_with_seed` was given NaN or an infinity.
    #[error("backward seed {seed:?} must be finite")]
    NonFiniteSeed {
        /// The rejected seed.
        seed: f64,
    },
    /// An operation has no finite derivative at its operands (`sqrt` at 0, `acos` at 1).
    #[error(
        "{operation}({operands}) at topology node {node} has no finite derivative with respect to operand {operand} (it is {derivative:?}); keep the operand inside the domain where the derivative exists"
    )]
    NonFiniteDerivative {
        /// The node whose derivative is undefined.
        node: usize,
        /// Its operation.
        operation: ScalarOperation,
        /// The operand slot.
        operand: usize,
        /// The operand values.
        operands: Operands,
        /// The non-finite derivative.
        derivative: f64,
    },
    /// A forward (`name_jvp`) or second-order (`name_hvp`, `name_hessian`) pass met an
    /// operation without a finite derivative with respect to an operand that depends on a
    /// differentiated input (`sqrt` at 0), the error the reverse pass reports as
    /// [`NonFiniteDerivative`](Self::NonFiniteDerivative). These passes check every
    /// operation on an input's path, and they number no nodes.
    #[error(
        "{operation}({operands}) has no finite derivative with respect to operand {operand} (it is {derivative:?}); keep the operand inside the domain where the derivative exists"
    )]
    NonFiniteSlope {
        /// The operation.
        operation: ScalarOperation,
        /// The operand slot.
        operand: usize,
        /// The operand values.
        operands: Operands,
        /// The non-finite derivative.
        derivative: f64,
    },
    /// A tangent (a directional derivative of a forward pass) overflowed.
    #[error("the tangent of {operation}({operands}) is {tangent:?}: the directional derivative overflowed")]
    NonFiniteTangent {
        /// The operation.
        operation: ScalarOperation,
        /// Its operand values.
        operands: Operands,
        /// The non-finite tangent.
        tangent: f64,
    },
    /// A second-order pass (`name_hvp`, `name_hessian`) met a non-finite number: the
    /// derivative of a local derivative, an edge's second-order contribution or a node's
    /// sum of them.
    #[error(
        "the second-order pass through {operation}({operands}) produced {value:?} for operand {operand}: the second derivative does not exist here or overflowed"
    )]
    NonFiniteSecondOrder {
        /// The consuming operation.
        operation: ScalarOperation,
        /// Its operand values.
        operands: Operands,
        /// The operand slot.
        operand: usize,
        /// The non-finite number.
        value: f64,
    },
    /// Upstream adjoint times local derivative overflowed.
    #[error(
        "edge {operand} from topology node {child} ({operation}) to {parent} produced a non-finite contribution from upstream {upstream:?} and local derivative {local_derivative:?}"
    )]
    NonFiniteContribution {
        /// The consuming node.
        child: usize,
        /// Its operation.
        operation: ScalarOperation,
        /// The operand node.
        parent: usize,
        /// The operand slot.
        operand: usize,
        /// The consuming node's pass adjoint.
        upstream: f64,
        /// The edge's local derivative.
        local_derivative: f64,
    },
    /// Summing contributions into one node's pass adjoint overflowed.
    #[error(
        "topology node {node} ({operation}) cannot accumulate pass adjoint {previous:?} plus contribution {contribution:?}"
    )]
    NonFinitePassAdjoint {
        /// The node.
        node: usize,
        /// Its operation.
        operation: ScalarOperation,
        /// The adjoint before this contribution.
        previous: f64,
        /// The contribution being added.
        contribution: f64,
    },
    /// Adding the pass to a stored gradient would overflow; nothing was stored.
    #[error(
        "topology node {node} ({operation}) cannot accumulate stored gradient {stored:?} plus pass adjoint {pass_adjoint:?}"
    )]
    NonFiniteAccumulatedGradient {
        /// The node.
        node: usize,
        /// Its operation.
        operation: ScalarOperation,
        /// The stored gradient, left unchanged.
        stored: f64,
        /// This pass's adjoint.
        pass_adjoint: f64,
    },
    /// `name_hvp` or `name_hessian` met a custom rule whose slope function is not
    /// `#[differentiable]`, so its second derivatives are unknown.
    #[error(
        "{operation} has a custom derivative whose slope function is not #[differentiable] (or whose hidden body is not in scope where the rule is defined), so second derivatives through it are unknown; put #[differentiable] on the slope function to use name_hvp and name_hessian"
    )]
    NoSecondDerivative {
        /// The custom operation's name.
        operation: &'static str,
    },
    /// More custom rules were used in one program than an operation can number.
    #[error("more than {limit} custom derivative rules were used in one program")]
    TooManyCustomRules {
        /// The number of rules an operation can name.
        limit: usize,
    },
    /// This thread's tape holds `u32::MAX` nodes; drop graphs you no longer need.
    #[error("the tape is full at {limit} nodes; drop graphs that are no longer needed")]
    TapeFull {
        /// The node limit.
        limit: usize,
    },
    /// The thread's tape is gone (the thread is exiting), so no node can be made.
    #[error("the thread's tape has already been torn down")]
    TapeUnavailable,
    /// `set_value` on a node that is not a leaf.
    #[error("cannot set the value of a {operation} node: only leaves (variables and constants) have values of their own")]
    NotALeaf {
        /// The node's operation.
        operation: ScalarOperation,
    },
    /// `set_value` on a leaf that live nodes were computed from.
    #[error("cannot set the value of this {operation} leaf while a {consumer} node computed from it is alive; drop the graph first")]
    LeafInUse {
        /// The leaf's operation.
        operation: ScalarOperation,
        /// The operation of a live node that reads the leaf.
        consumer: ScalarOperation,
    },
    /// The central-difference step is not finite and positive, or vanishes next to the input.
    #[error("gradient check step {step:?} must be finite, positive, and change input {input:?}")]
    InvalidStep {
        /// The rejected step.
        step: f64,
        /// The input it was meant to perturb.
        input: f64,
    },
    /// The tolerance is not finite and non-negative.
    #[error("gradient check tolerance {tolerance:?} must be finite and non-negative")]
    InvalidTolerance {
        /// The rejected tolerance.
        tolerance: f64,
    },
    /// The analytic derivative given to the check is not finite.
    #[error("analytic derivative {value:?} must be finite")]
    NonFiniteAnalytic {
        /// The rejected derivative.
        value: f64,
    },
    /// The checked function returned NaN or an infinity.
    #[error("the checked function returned {value:?} at input {input:?}")]
    NonFiniteEvaluation {
        /// The input at which it was evaluated.
        input: f64,
        /// The non-finite value.
        value: f64,
    },
    /// A flat list of scalars or a gradient does not have the number of scalars of the
    /// parameters it is meant for.
    #[error("expected {expected} scalars, found {found}")]
    LengthMismatch {
        /// The parameters' number of scalars.
        expected: usize,
        /// The number given.
        found: usize,
    },
}

impl ScalarAutodiffError {
    /// The tape cannot hold another node.
    #[cold]
    pub(crate) fn tape_full() -> Self {
        Self::TapeFull {
            limit: u32::MAX as usize,
        }
    }

    /// `operation` on `operands` gave the non-finite `value`; `powi` reports its exponent
    /// as a second operand.
    #[cold]
    pub(crate) fn non_finite_result(
        operation: ScalarOperation,
        operands: &[f64],
        exponent: i32,
        value: f64,
    ) -> Self {
        let mut values = [0.0; 3];
        for (slot, &operand) in operands.iter().enumerate().take(3) {
            values[slot] = operand;
        }
        let mut count = operands.len();
        if operation == ScalarOperation::Powi {
            values[1] = f64::from(exponent);
            count = 2;
        }
        Self::NonFiniteResult {
            operation,
            operands: Operands::new(values, count),
            value,
        }
    }

    /// A short stable kebab-case name for the kind of error, e.g. `non-finite-seed`.
    ///
    /// An untracked output is named after its operation: `constant-output`,
    /// `detached-output`, or `untracked-output` for an operation on constants.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NonFiniteLeaf { .. } => "non-finite-leaf",
            Self::NonFiniteResult { .. } => "non-finite-result",
            Self::UntrackedOutput { operation } => match operation {
                ScalarOperation::Constant => "constant-output",
                ScalarOperation::Detached => "detached-output",
                _ => "untracked-output",
            },
            Self::NonFiniteSeed { .. } => "non-finite-seed",
            Self::NonFiniteDerivative { .. } => "non-finite-derivative",
            Self::NonFiniteContribution { .. } => "non-finite-contribution",
            Self::NonFiniteSlope { .. } => "non-finite-slope",
            Self::NonFiniteTangent { .. } => "non-finite-tangent",
            Self::NonFiniteSecondOrder { .. } => "non-finite-second-order",
            Self::NonFinitePassAdjoint { .. } => "non-finite-pass-adjoint",
            Self::NonFiniteAccumulatedGradient { .. } => "non-finite-accumulated-gradient",
            Self::NoSecondDerivative { .. } => "no-second-derivative",
            Self::TooManyCustomRules { .. } => "too-many-custom-rules",
            Self::TapeFull { .. } => "tape-full",
            Self::TapeUnavailable => "tape-unavailable",
            Self::NotALeaf { .. } => "not-a-leaf",
            Self::LeafInUse { .. } => "leaf-in-use",
            Self::InvalidStep { .. } => "invalid-step",
            Self::InvalidTolerance { .. } => "invalid-tolerance",
            Self::NonFiniteAnalytic { .. } => "non-finite-analytic",
            Self::NonFiniteEvaluation { .. } => "non-finite-evaluation",
            Self::LengthMismatch { .. } => "length-mismatch",
        }
    }
}
