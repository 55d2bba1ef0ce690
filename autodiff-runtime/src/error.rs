//! Every way building, differentiating or checking a graph can be refused.

use std::fmt;
use std::panic::Location;

use crate::operation::{Operands, ScalarOperation};

/// Where an operation was written: the `#[differentiable]` function it is in, and the
/// file, line and column of the operation (the operator or the method name).
///
/// Carried by an error that arises from an operation (see
/// [`ScalarAutodiffError::location`]) and shown at the end of its message:
/// `` in `loss` at src/model.rs:14:21``. An operation of the plain [`Scalar`](crate::Scalar)
/// API has the location of its call and no function.
///
/// ```
/// use autodiff_runtime::Scalar;
///
/// let x = Scalar::variable(0.0)?;
/// let error = x.ln().unwrap_err();
/// let at = error.location().expect("ln was called here");
/// assert_eq!((at.file(), at.line()), (file!(), line!() - 2));
/// assert_eq!(at.function(), None);
/// assert!(error.to_string().ends_with(&format!(" at {}", at)));
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SourceLocation {
    function: Option<&'static str>,
    file: &'static str,
    line: u32,
    column: u32,
}

impl SourceLocation {
    /// This location, in `function` unless it names one already.
    pub(crate) fn in_function(mut self, function: &'static str) -> Self {
        self.function.get_or_insert(function);
        self
    }

    /// The location of a call, as `#[track_caller]` reports it.
    pub(crate) fn of(code: &'static Location<'static>) -> Self {
        Self {
            function: None,
            file: code.file(),
            line: code.line(),
            column: code.column(),
        }
    }

    /// The name of the `#[differentiable]` function the operation is written in (its
    /// innermost one, for an operation in a helper another function calls), or `None` for
    /// the plain `Scalar` API.
    pub fn function(&self) -> Option<&'static str> {
        self.function
    }

    /// The source file, as the compiler names it (relative to the package's root, such as
    /// `src/model.rs`).
    pub fn file(&self) -> &'static str {
        self.file
    }

    /// The 1-based line.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The 1-based column of the operation: its operator (`*` in `a * b`) or method name
    /// (`ln` in `x.ln()`).
    pub fn column(&self) -> u32 {
        self.column
    }
}

/// `file:line:column`, after `` `function` in `` when there is a function (the way the
/// end of an error's message shows it, without the leading `in`).
impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(function) = self.function {
            write!(f, "`{function}` at ")?;
        }
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The end of a located error's message: `` in `loss` at src/model.rs:14:21``, or
/// ` at src/main.rs:3:7` without a function; nothing without a location.
struct Located<'a>(Option<&'a SourceLocation>);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(location) if location.function.is_some() => write!(f, " in {location}"),
            Some(location) => write!(f, " at {location}"),
            None => Ok(()),
        }
    }
}

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
    #[error("{operation} scalar value {value:?} must be finite{}", Located(.location.as_deref()))]
    NonFiniteLeaf {
        /// `variable`, `constant`, or the leaf whose value was being set.
        operation: ScalarOperation,
        /// The rejected value.
        value: f64,
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// An operation's result is NaN or infinite (`ln(-1)`, `0/0`, overflow).
    #[error("{operation}({operands}) produced non-finite value {value:?}{}", Located(.location.as_deref()))]
    NonFiniteResult {
        /// The operation.
        operation: ScalarOperation,
        /// Its operand values.
        operands: Operands,
        /// The non-finite result.
        value: f64,
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
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
        "{operation}({operands}) at topology node {node} has no finite derivative with respect to operand {operand} (it is {derivative:?}); keep the operand inside the domain where the derivative exists{}", Located(.location.as_deref())
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
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// A forward (`name_jvp`) or second-order (`name_hvp`, `name_hessian`) pass met an
    /// operation without a finite derivative with respect to an operand that depends on a
    /// differentiated input (`sqrt` at 0), the error the reverse pass reports as
    /// [`NonFiniteDerivative`](Self::NonFiniteDerivative). These passes check every
    /// operation on an input's path, and they number no nodes.
    #[error(
        "{operation}({operands}) has no finite derivative with respect to operand {operand} (it is {derivative:?}); keep the operand inside the domain where the derivative exists{}", Located(.location.as_deref())
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
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// A tangent (a directional derivative of a forward pass) overflowed.
    #[error("the tangent of {operation}({operands}) is {tangent:?}: the directional derivative overflowed{}", Located(.location.as_deref()))]
    NonFiniteTangent {
        /// The operation.
        operation: ScalarOperation,
        /// Its operand values.
        operands: Operands,
        /// The non-finite tangent.
        tangent: f64,
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// A second-order pass (`name_hvp`, `name_hessian`) met a non-finite number: the
    /// derivative of a local derivative, an edge's second-order contribution or a node's
    /// sum of them.
    #[error(
        "the second-order pass through {operation}({operands}) produced {value:?} for operand {operand}: the second derivative does not exist here or overflowed{}", Located(.location.as_deref())
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
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// Upstream adjoint times local derivative overflowed.
    #[error(
        "edge {operand} from topology node {child} ({operation}) to {parent} produced a non-finite contribution from upstream {upstream:?} and local derivative {local_derivative:?}{}", Located(.location.as_deref())
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
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
    },
    /// Summing contributions into one node's pass adjoint overflowed.
    #[error(
        "topology node {node} ({operation}) cannot accumulate pass adjoint {previous:?} plus contribution {contribution:?}{}", Located(.location.as_deref())
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
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
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
        "{operation} has a custom derivative whose slope function is not #[differentiable] (or whose hidden body is not in scope where the rule is defined), so second derivatives through it are unknown; put #[differentiable] on the slope function to use name_hvp and name_hessian{}", Located(.location.as_deref())
    )]
    NoSecondDerivative {
        /// The custom operation's name.
        operation: &'static str,
        /// Where in a `#[differentiable]` body the operation was written, when it was:
        /// see [`ScalarAutodiffError::location`].
        location: Option<Box<SourceLocation>>,
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
    /// An optimizer's setting is out of its range (a learning rate that is not finite and
    /// positive, a momentum of 1, a beta outside `[0, 1)`).
    #[error("{optimizer}: {setting} {value:?} must be {expected}")]
    InvalidHyperparameter {
        /// `Sgd` or `Adam`.
        optimizer: &'static str,
        /// The setting's name, e.g. `learning_rate`.
        setting: &'static str,
        /// The rejected value.
        value: f64,
        /// The range it must be in, in words.
        expected: &'static str,
    },
    /// A cost function handed to an optimizer (argmin's, through the `argmin` feature)
    /// returned NaN or an infinity, which no minimiser can compare.
    #[error("the cost function returned {value:?}")]
    NonFiniteCost {
        /// The non-finite cost.
        value: f64,
    },
    /// An optimizer step met a non-finite number: in the gradient it was given, or in a
    /// parameter or state it would have written. Nothing was changed.
    #[error(
        "{optimizer} step refused: {what} {index} is {value:?}; no parameter or state was changed"
    )]
    NonFiniteStep {
        /// `Sgd` or `Adam`.
        optimizer: &'static str,
        /// `gradient entry`, `new parameter`, or the new optimizer state's name
        /// (`new momentum`, `new first moment`, `new second moment`).
        what: &'static str,
        /// The scalar's place in the order of a flat gradient.
        index: usize,
        /// The non-finite value.
        value: f64,
    },
    /// A batch was to be split into chunks of no rows (`scalar_autodiff::parallel`'s
    /// `batch_grad` with a chunk length of 0).
    #[error("a batch cannot be split into chunks of {chunk_len} rows; give a chunk length of at least 1")]
    InvalidChunkLength {
        /// The rejected chunk length.
        chunk_len: usize,
    },
    /// Adding one chunk's value or partial derivative to the sum of the chunks before it
    /// gave an infinity or NaN (`scalar_autodiff::parallel`'s `batch_grad`): the batch's
    /// sum overflowed, as `total += ...` over all its rows in one call would have.
    #[error(
        "adding chunk {chunk}'s {} {contribution:?} to the sum {previous:?} of the chunks before it overflowed", Summand(*.parameter)
    )]
    NonFiniteChunkSum {
        /// The chunk's place in the batch: 1 for the second chunk (the first one starts the
        /// sum).
        chunk: usize,
        /// The gradient's scalar, in the order of a flat gradient, or `None` for the value.
        parameter: Option<usize>,
        /// The sum of the chunks before this one.
        previous: f64,
        /// This chunk's value or partial derivative.
        contribution: f64,
    },
}

/// What a chunk sum adds: `value`, or `gradient[3]` for a flat gradient's scalar.
struct Summand(Option<usize>);

impl fmt::Display for Summand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(parameter) => write!(f, "gradient[{parameter}]"),
            None => write!(f, "value"),
        }
    }
}

/// The `location` of the variants that have one, borrowed as `$error` is.
macro_rules! located_variants {
    ($error:expr) => {
        match $error {
            Self::NonFiniteLeaf { location, .. }
            | Self::NonFiniteResult { location, .. }
            | Self::NonFiniteDerivative { location, .. }
            | Self::NonFiniteSlope { location, .. }
            | Self::NonFiniteTangent { location, .. }
            | Self::NonFiniteSecondOrder { location, .. }
            | Self::NonFiniteContribution { location, .. }
            | Self::NonFinitePassAdjoint { location, .. }
            | Self::NoSecondDerivative { location, .. } => Some(location),
            _ => None,
        }
    };
}

impl ScalarAutodiffError {
    /// Where the operation behind this error was written, for an error that arises from
    /// an operation: a non-finite result, leaf constant, derivative, tangent, second-order
    /// number, edge contribution or adjoint sum, or a custom rule without second
    /// derivatives.
    ///
    /// Inside a `#[differentiable]` body it is the operation's function, file, line and
    /// column; for a backward-pass error, the operation whose edge failed. The plain
    /// [`Scalar`](crate::Scalar) API gives the location of its call (no function) for
    /// errors it raises while recording; its backward pass locates nodes a generated
    /// `name_graph` recorded. `None` otherwise.
    ///
    /// ```
    /// use autodiff_runtime::Scalar;
    ///
    /// let x = Scalar::variable(1e300)?;
    /// let y = x.mul(&x); // overflows
    /// let at = y.as_ref().err().and_then(|error| error.location()).copied();
    /// assert_eq!(at.map(|at| (at.line(), at.column())), Some((line!() - 2, 11)));
    /// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
    /// ```
    pub fn location(&self) -> Option<&SourceLocation> {
        self.location_slot().and_then(|slot| slot.as_deref())
    }

    fn location_slot(&self) -> Option<&Option<Box<SourceLocation>>> {
        located_variants!(self)
    }

    fn location_mut(&mut self) -> Option<&mut Option<Box<SourceLocation>>> {
        located_variants!(self)
    }

    /// This error without its location: what went wrong, not where, for comparing errors
    /// of code written in different places.
    ///
    /// ```
    /// use autodiff_runtime::Scalar;
    ///
    /// let x = Scalar::variable(0.0)?;
    /// let (first, second) = (x.ln().unwrap_err(), x.ln().unwrap_err());
    /// assert_ne!(first, second); // two lines
    /// assert_eq!(first.without_location(), second.without_location());
    /// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
    /// ```
    pub fn without_location(mut self) -> Self {
        if let Some(slot) = self.location_mut() {
            *slot = None;
        }
        self
    }

    /// This error, located at `code` unless it already has a location.
    #[cold]
    #[inline(never)]
    pub(crate) fn at(mut self, code: &'static Location<'static>) -> Self {
        self.locate(SourceLocation::of(code));
        self
    }

    /// Gives this error `location` unless it already has one.
    pub(crate) fn locate(&mut self, location: SourceLocation) {
        if let Some(slot @ None) = self.location_mut() {
            *slot = Some(Box::new(location));
        }
    }

    /// Names the function of a location that has none yet: the innermost generated body
    /// an error passes through is the one its operation is written in.
    #[cold]
    #[inline(never)]
    pub(crate) fn in_function(mut self, function: &'static str) -> Self {
        if let Some(Some(location)) = self.location_mut() {
            if location.function.is_none() {
                location.function = Some(function);
            }
        }
        self
    }

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
            location: None,
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
            Self::InvalidHyperparameter { .. } => "invalid-hyperparameter",
            Self::NonFiniteCost { .. } => "non-finite-cost",
            Self::NonFiniteStep { .. } => "non-finite-step",
            Self::InvalidChunkLength { .. } => "invalid-chunk-length",
            Self::NonFiniteChunkSum { .. } => "non-finite-chunk-sum",
        }
    }
}
