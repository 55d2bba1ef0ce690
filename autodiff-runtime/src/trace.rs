//! Straight-line graph building without handles, for the code `#[differentiable]` writes.
//!
//! A [`Trace`] borrows this thread's tape once for a whole `name_grad` call. Its values
//! are plain indices or constants ([`Id`], `Copy`), nothing is reference-counted, and
//! everything it recorded is popped at the end, leaving the tape's buffers for the next
//! call. A constant is not a node here: an operation on constants alone is computed on
//! the spot, and a constant operand of a binary operation is kept inside its node, so
//! `x * 0.5` records one node, not two. The same generated body runs on [`Handles`] (real
//! [`Scalar`]s) for `name_graph`, where every constant is a node the ledger can show: both
//! implement [`Backend`], so both compute the same operations in the same order and give
//! the same value and gradient bits and the same errors, except that error node numbers
//! in a trace do not count constants.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::Location;

use crate::custom::CustomRule;
use crate::dual::{Dual, Forward};
use crate::error::ScalarAutodiffError;
use crate::ledger::explain;
use crate::operation::ScalarOperation;
use crate::scalar::Scalar;
use crate::tape::{
    exponent_aux, operand_immediate, operand_tracked, Recorded, Tape, TAPE, TRACKED,
};

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// A value of a [`Trace`]: a node (an index valid until the trace ends) or a constant.
/// The lifetime ties it to its trace, so it cannot outlive the nodes it names.
///
/// It is one `u64`, NaN-boxed: a constant is its own (always finite) `f64` bits, and a node
/// is a quiet NaN carrying its index and whether it is tracked. Eight bytes travel in a
/// register through every `?` of generated code; a wider value was copied through the
/// stack in pieces and stalled on every operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Id<'t> {
    bits: u64,
    trace: PhantomData<&'t ()>,
}

/// The quiet-NaN pattern of a node [`Id`]; bit 32 marks it tracked, bits 0-31 its index.
const NODE: u64 = 0x7FF8_0000_0000_0000;
const TRACKED_BIT: u64 = 1 << 32;

impl Id<'_> {
    fn node(index: u32, tracked: bool) -> Self {
        let tracked = if tracked { TRACKED_BIT } else { 0 };
        Self {
            bits: NODE | tracked | u64::from(index),
            trace: PhantomData,
        }
    }

    /// A constant; `value` must be finite, so its bits are never NaN.
    fn constant(value: f64) -> Self {
        Self {
            bits: value.to_bits(),
            trace: PhantomData,
        }
    }

    /// The node's index, or `None` for a constant.
    #[inline]
    fn slot(&self) -> Option<u32> {
        (self.bits & NODE == NODE).then_some(self.bits as u32)
    }

    fn tracked(&self) -> bool {
        self.bits & (NODE | TRACKED_BIT) == NODE | TRACKED_BIT
    }
}

/// Records nodes on a borrowed tape; see the module docs.
#[derive(Debug)]
pub struct Trace<'t> {
    tape: RefCell<&'t mut Tape>,
    /// The tape's length when the trace began: everything above is the trace's own.
    base: usize,
    /// Whether a pass has run, so adjoints are no longer all 0.
    spent: Cell<bool>,
    /// Whether the trace notes where each operation was written (see [`trace_located`]).
    locate: bool,
    /// How many generated bodies are running on it (see [`Backend::nest`]).
    depth: Cell<usize>,
}

thread_local! {
    static TRACES: Cell<u64> = const { Cell::new(0) };
}

/// How many traces [`trace`] has started on this thread: how tests see that a warm
/// `name_grad` call ran its compiled sweeps alone (the checked path traces).
pub fn traces() -> u64 {
    TRACES.with(Cell::get)
}

/// [`trace`], noting where each operation was written (file, line, column and function),
/// so that an error of the reverse pass or a second-order sweep names where the operation
/// whose edge failed is written: what generated code runs. An operation's own error is
/// located either way (`#[track_caller]`); the notes cost one small store per operation.
#[inline(never)]
pub fn trace_located<R>(build: impl FnOnce(&Trace<'_>) -> Result<R>) -> Result<R> {
    run(build, true)
}

/// Runs `build` on a fresh trace of this thread's tape and pops what it recorded.
///
/// Code inside `build` must not use [`Scalar`]s: the tape is borrowed, so they would
/// fail with [`ScalarAutodiffError::TapeUnavailable`]. An [`Id`] cannot leave its trace:
///
/// ```compile_fail
/// let leaked = autodiff_runtime::__private::trace(|t| t.variable(1.0));
/// ```
#[inline]
pub fn trace<R>(build: impl FnOnce(&Trace<'_>) -> Result<R>) -> Result<R> {
    run(build, false)
}

#[inline]
fn run<R>(build: impl FnOnce(&Trace<'_>) -> Result<R>, locate: bool) -> Result<R> {
    TRACES.with(|count| count.set(count.get().wrapping_add(1)));
    TAPE.try_with(|cell| match cell.try_borrow_mut() {
        Ok(mut tape) => {
            let base = tape.len();
            let popped = Popped {
                tape: &mut tape,
                base,
            };
            build(&Trace {
                tape: RefCell::new(&mut *popped.tape),
                base,
                spent: Cell::new(false),
                locate,
                depth: Cell::new(0),
            })
        }
        Err(_) => Err(ScalarAutodiffError::TapeUnavailable),
    })
    .unwrap_or(Err(ScalarAutodiffError::TapeUnavailable))
}

/// Pops what a trace recorded when it ends, also when `build` panics: the tape is
/// thread-local and outlives a caught panic, which must not leave the trace's nodes on it.
struct Popped<'a> {
    tape: &'a mut Tape,
    base: usize,
}

impl Drop for Popped<'_> {
    fn drop(&mut self) {
        self.tape.truncate(self.base);
    }
}

impl<'t> Trace<'t> {
    /// A tracked leaf.
    #[inline]
    pub fn variable(&self, value: f64) -> Result<Id<'t>> {
        let operation = ScalarOperation::Variable;
        if !value.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteLeaf {
                operation,
                value,
                location: None,
            });
        }
        let mut tape = self.tape.borrow_mut();
        match tape.leaf(value, operation) {
            Some(index) => Ok(Id::node(index, true)),
            None => Err(ScalarAutodiffError::tape_full()),
        }
    }

    /// The primal value of `id`.
    #[inline]
    fn primal(tape: &Tape, id: Id<'t>) -> f64 {
        match id.slot() {
            Some(index) => tape.node(index).value,
            None => f64::from_bits(id.bits),
        }
    }

    /// A node for `id`, recording a constant leaf if it is a constant.
    fn materialize(tape: &mut Tape, id: Id<'t>) -> Result<u32> {
        match id.slot() {
            Some(index) => Ok(index),
            None => tape
                .leaf(f64::from_bits(id.bits), ScalarOperation::Constant)
                .ok_or_else(ScalarAutodiffError::tape_full),
        }
    }

    /// Records a unary `operation` on `a`, or computes it on the spot for a constant.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[track_caller]
    fn unary(
        &self,
        operation: ScalarOperation,
        a: Id<'t>,
        exponent: i32,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Result<Id<'t>> {
        let mut tape = self.tape.borrow_mut();
        let values = [Self::primal(&tape, a), 0.0, 0.0];
        let Some(index) = a.slot() else {
            return fold(operation, values, 1, exponent, forward);
        };
        let flags = match a.tracked() {
            false => 0,
            true => TRACKED | operand_tracked(0),
        };
        let aux = match operation {
            ScalarOperation::Powi => exponent_aux(exponent),
            _ => 0,
        };
        let recorded = tape.record_values(operation, [index, 0], aux, values, flags, forward);
        self.noted(
            &mut tape,
            finish(recorded, operation, values, 1, exponent, flags),
        )
    }

    /// `id`, noting where its operation was written when the trace locates.
    #[inline(always)]
    #[track_caller]
    fn noted(&self, tape: &mut Tape, id: Result<Id<'t>>) -> Result<Id<'t>> {
        if let (true, Ok(id)) = (self.locate, &id) {
            if let Some(index) = id.slot() {
                tape.note(index, Location::caller());
            }
        }
        id
    }

    /// Records a binary `operation`; a constant operand is kept inside the node, and two
    /// constants are computed on the spot.
    #[cfg_attr(not(debug_assertions), inline(always))]
    #[track_caller]
    fn binary(
        &self,
        operation: ScalarOperation,
        a: Id<'t>,
        b: Id<'t>,
        forward: impl FnOnce([f64; 3]) -> f64,
    ) -> Result<Id<'t>> {
        let mut tape = self.tape.borrow_mut();
        let (mut flags, mut args, mut aux) = (0, [0; 2], 0);
        let mut values = [0.0; 3];
        match (a.slot(), b.slot()) {
            (Some(left), Some(right)) => {
                values = [tape.node(left).value, tape.node(right).value, 0.0];
                args = [left, right];
            }
            (Some(left), None) => {
                values = [tape.node(left).value, f64::from_bits(b.bits), 0.0];
                args[0] = left;
                (flags, aux) = (operand_immediate(1), b.bits);
            }
            (None, Some(right)) => {
                values = [f64::from_bits(a.bits), tape.node(right).value, 0.0];
                args[1] = right;
                (flags, aux) = (operand_immediate(0), a.bits);
            }
            (None, None) => {
                values[0] = f64::from_bits(a.bits);
                values[1] = f64::from_bits(b.bits);
                return fold(operation, values, 2, 0, forward);
            }
        }
        if a.tracked() {
            flags |= TRACKED | operand_tracked(0);
        }
        if b.tracked() {
            flags |= TRACKED | operand_tracked(1);
        }
        let recorded = tape.record_values(operation, args, aux, values, flags, forward);
        self.noted(&mut tape, finish(recorded, operation, values, 2, 0, flags))
    }

    /// Records `a.mul_add(b, c)`; constant operands become leaves (a node holds one).
    #[track_caller]
    fn ternary(&self, a: Id<'t>, b: Id<'t>, c: Id<'t>) -> Result<Id<'t>> {
        let operation = ScalarOperation::MulAdd;
        let forward = |a: [f64; 3]| operation.apply(a, 0);
        let mut tape = self.tape.borrow_mut();
        let values = [a, b, c].map(|operand| Self::primal(&tape, operand));
        if [a, b, c].iter().all(|operand| operand.slot().is_none()) {
            return fold(operation, values, 3, 0, forward);
        }
        let mut flags = 0;
        let mut indices = [0; 3];
        for (slot, operand) in [a, b, c].into_iter().enumerate() {
            indices[slot] = Self::materialize(&mut tape, operand)?;
            if operand.tracked() {
                flags |= TRACKED | operand_tracked(slot);
            }
        }
        let args = [indices[0], indices[1]];
        let aux = u64::from(indices[2]);
        let recorded = tape.record_values(operation, args, aux, values, flags, forward);
        self.noted(&mut tape, finish(recorded, operation, values, 3, 0, flags))
    }

    /// Records the custom operation `rule` on `operands`; constant operands become leaves
    /// (as `mul_add`'s do), and constants alone are computed on the spot.
    #[track_caller]
    fn custom_node(&self, rule: &'static CustomRule, operands: &[&Id<'t>]) -> Result<Id<'t>> {
        let at = Location::caller();
        let mut tape = self.tape.borrow_mut();
        let values = crate::custom::padded(rule, operands, |id| Self::primal(&tape, **id))?;
        // The user's functions run with the tape borrowed: they are plain `f64` code.
        let (op, value, slopes) =
            crate::custom::evaluate(rule, values).map_err(|error| error.at(at))?;
        if operands.iter().all(|operand| operand.slot().is_none()) {
            return Ok(Id::constant(value));
        }
        let mut indices = [0; 3];
        for (slot, &&operand) in operands.iter().enumerate() {
            indices[slot] = Self::materialize(&mut tape, operand)?;
        }
        match tape.record_custom(op, indices, value, slopes) {
            Recorded::Node(index) => {
                let id = Ok(Id::node(index, tape.node(index).tracked()));
                self.noted(&mut tape, id)
            }
            _ => Err(ScalarAutodiffError::tape_full()),
        }
    }

    /// One validated reverse pass from `output` (seed 1): its value and the gradients of
    /// `variables`. An output that depends on no variable has an all-zero gradient.
    #[inline]
    pub fn value_and_gradient<const N: usize>(
        &self,
        output: Id<'t>,
        variables: [Id<'t>; N],
    ) -> Result<(f64, [f64; N])> {
        self.pass(output, |gradients| {
            variables.map(|variable| variable.slot().map_or(0.0, |index| gradients.of(index)))
        })
    }

    /// One validated reverse pass from `output` (seed 1): its value, and `build` applied to
    /// the gradients of the first `count` nodes of the trace, which must be its variables
    /// (made first, in gradient order). An output that depends on no variable has an
    /// all-zero gradient.
    #[inline]
    pub fn value_and_gradients<G>(
        &self,
        output: Id<'t>,
        count: usize,
        build: impl FnOnce(&mut Gradients<'_>) -> G,
    ) -> Result<(f64, G)> {
        let (next, end) = (self.base, self.base + count);
        self.pass(output, |gradients| {
            build(&mut Gradients {
                next,
                end,
                ..*gradients
            })
        })
    }

    /// The validated reverse pass from `output` into `gradient` (the first
    /// `gradient.len()` nodes of the trace, its variables), then one Hessian-vector product
    /// per direction: `directions` and `products` hold rows of `gradient.len()` scalars.
    /// Returns the output's value. Every number of the second-order sweeps is checked.
    pub fn value_gradient_products(
        &self,
        output: Id<'t>,
        gradient: &mut [f64],
        directions: &[f64],
        products: &mut [f64],
    ) -> Result<f64> {
        let count = gradient.len();
        check_rows(count, directions.len())?;
        check_rows(count, products.len())?;
        let value = self.first_order(output, gradient)?;
        products.fill(0.0);
        if let Some(out) = self.reaching(output) {
            let tape = self.tape.borrow();
            tape.take_blame();
            crate::second::products(&tape, self.base, out, count, directions, products)
                .map_err(|error| tape.located(error))?;
        }
        Ok(value)
    }

    /// The validated reverse pass from `output` into `gradient` (the first
    /// `gradient.len()` nodes of the trace, its variables), then the Hessian, row-major
    /// and exactly symmetric, into `hessian` (`gradient.len()` squared scalars). Returns the
    /// output's value.
    pub fn value_gradient_hessian(
        &self,
        output: Id<'t>,
        gradient: &mut [f64],
        hessian: &mut [f64],
    ) -> Result<f64> {
        let count = gradient.len();
        check_length(count * count, hessian.len())?;
        let value = self.first_order(output, gradient)?;
        hessian.fill(0.0);
        if let Some(out) = self.reaching(output) {
            let tape = self.tape.borrow();
            tape.take_blame();
            crate::second::hessian(&tape, self.base, out, count, hessian)
                .map_err(|error| tape.located(error))?;
        }
        Ok(value)
    }

    /// [`Trace::value_and_gradients`] into a slice.
    fn first_order(&self, output: Id<'t>, gradient: &mut [f64]) -> Result<f64> {
        let count = gradient.len();
        let (value, ()) = self.value_and_gradients(output, count, |gradients| {
            for slot in gradient.iter_mut() {
                *slot = gradients.next_or_zero();
            }
        })?;
        Ok(value)
    }

    /// The output's node, if a variable reaches it.
    fn reaching(&self, output: Id<'t>) -> Option<u32> {
        let tape = self.tape.borrow();
        output.slot().filter(|&out| tape.node(out).tracked())
    }

    /// The pass behind both: `read` sees the gradients once the pass has succeeded.
    #[inline]
    fn pass<G>(&self, output: Id<'t>, read: impl FnOnce(&Gradients<'_>) -> G) -> Result<(f64, G)> {
        let mut tape = self.tape.borrow_mut();
        let Some(out) = output.slot() else {
            let value = Self::primal(&tape, output);
            return Ok((value, read(&Gradients::after(&tape, Adjoints::Zero))));
        };
        let value = tape.node(out).value;
        if !tape.node(out).tracked() {
            return Ok((value, read(&Gradients::after(&tape, Adjoints::Zero))));
        }
        // The first pass needs no marks: every adjoint of the trace is still 0. If it meets
        // a non-finite number, the marked pass decides (the number may come from a node the
        // output does not reach).
        if !self.spent.replace(true) && tape.propagate_fresh(self.base, out).is_ok() {
            return Ok((value, read(&Gradients::after(&tape, Adjoints::Fresh))));
        }
        let Ok(lowest) = tape.propagate(out, 1.0) else {
            return Err(explain(&tape, out, 1.0));
        };
        let built = read(&Gradients::after(&tape, Adjoints::Marked));
        tape.clear_marks(lowest, out as usize);
        Ok((value, built))
    }
}

/// `scalar`, a node a generated `name_graph` just recorded, noting where its operation was
/// written: for errors of a later `backward` and for the ledger.
#[inline]
#[track_caller]
fn noted(scalar: Result<Scalar>) -> Result<Scalar> {
    if let Ok(scalar) = &scalar {
        let at = Location::caller();
        let _ = crate::tape::try_tape(|tape| tape.note(scalar.index(), at));
    }
    scalar
}

/// `Ok` if `found` scalars are whole rows of `count`.
fn check_rows(count: usize, found: usize) -> Result<()> {
    match (count, found) {
        (0, 0) => Ok(()),
        (0, _) => Err(ScalarAutodiffError::LengthMismatch { expected: 0, found }),
        _ if found.is_multiple_of(count) => Ok(()),
        _ => Err(ScalarAutodiffError::LengthMismatch {
            expected: found.next_multiple_of(count),
            found,
        }),
    }
}

/// `Ok` if `found` is `expected`.
fn check_length(expected: usize, found: usize) -> Result<()> {
    match expected == found {
        true => Ok(()),
        false => Err(ScalarAutodiffError::LengthMismatch { expected, found }),
    }
}

/// Which adjoints a finished pass left.
#[derive(Clone, Copy, Debug)]
enum Adjoints {
    /// The output depends on no variable.
    Zero,
    /// The first pass: no marks, every adjoint it did not reach is still 0.
    Fresh,
    /// A marked pass: an unmarked node's adjoint is stale, and counts as 0.
    Marked,
}

/// The gradients of a trace's variables, in order (see [`Trace::value_and_gradients`]).
#[derive(Debug)]
pub struct Gradients<'a> {
    tape: &'a Tape,
    next: usize,
    end: usize,
    adjoints: Adjoints,
}

impl<'a> Gradients<'a> {
    /// The gradients a pass left in `tape`, with no variables to stream yet.
    fn after(tape: &'a Tape, adjoints: Adjoints) -> Self {
        Gradients {
            tape,
            next: 0,
            end: 0,
            adjoints,
        }
    }

    /// The gradient of the variable at `index`.
    #[inline]
    fn of(&self, index: u32) -> f64 {
        // A stored gradient is 0 + adjoint, as on handles: never -0.0.
        0.0 + match self.adjoints {
            Adjoints::Zero => 0.0,
            Adjoints::Fresh => self.tape.fresh_adjoint(index),
            Adjoints::Marked => self.tape.adjoint(index),
        }
    }

    /// The next variable's gradient; 0 past the last one.
    #[inline]
    pub fn next_or_zero(&mut self) -> f64 {
        if self.next >= self.end {
            return 0.0;
        }
        let index = self.next as u32;
        self.next += 1;
        self.of(index)
    }
}

/// The [`Id`] of a recorded node, or the error of a refused one.
#[inline]
#[track_caller]
fn finish<'t>(
    recorded: Recorded,
    operation: ScalarOperation,
    values: [f64; 3],
    count: usize,
    exponent: i32,
    flags: u8,
) -> Result<Id<'t>> {
    match recorded {
        Recorded::Node(index) => Ok(Id::node(index, flags & TRACKED != 0)),
        Recorded::NonFinite(value) => Err(refusal(operation, values, count, exponent, value)),
        Recorded::Full => Err(ScalarAutodiffError::tape_full()),
    }
}

/// [`refused`] at the caller's location, with the operands unpacked here, inline.
#[inline(always)]
#[track_caller]
fn refusal(
    operation: ScalarOperation,
    values: [f64; 3],
    count: usize,
    exponent: i32,
    value: f64,
) -> ScalarAutodiffError {
    let [a, b, c] = values;
    refused(
        operation,
        a,
        b,
        c,
        count,
        exponent,
        value,
        Location::caller(),
    )
}

/// The error of an operation whose result is not finite. Out of line and taking the
/// operands one by one, so the hot path keeps them in registers: a slice of them made
/// every operation store them to the stack. `at` is where the operation was written.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn refused(
    operation: ScalarOperation,
    a: f64,
    b: f64,
    c: f64,
    count: usize,
    exponent: i32,
    value: f64,
    at: &'static Location<'static>,
) -> ScalarAutodiffError {
    ScalarAutodiffError::non_finite_result(operation, &[a, b, c][..count], exponent, value).at(at)
}

/// An operation on constants alone: computed on the spot, recorded nowhere.
#[inline]
#[track_caller]
fn fold<'t>(
    operation: ScalarOperation,
    values: [f64; 3],
    count: usize,
    exponent: i32,
    forward: impl FnOnce([f64; 3]) -> f64,
) -> Result<Id<'t>> {
    let value = forward(values);
    match value.is_finite() {
        true => Ok(Id::constant(value)),
        false => Err(refusal(operation, values, count, exponent, value)),
    }
}

/// Another backend with every operation called out of line.
///
/// A trace's operations are inlined into the code that calls them in optimized builds:
/// the fastest gradients, but compile time grows with every inlined copy. A generated
/// body with hundreds of operations records through this wrapper instead, one shared copy
/// of each operation, so that it still compiles in seconds.
#[derive(Clone, Copy, Debug)]
pub struct Outlined<'b, B>(pub &'b B);

/// Every backend but [`Halves`]: the bound of a hidden body that has no compiled halves
/// (written `#[differentiable(tape)]`, or a body they do not cover), so that a function
/// whose compiled sweeps would call it is a compile error at the call, not a call that
/// falls back to the tape at run time.
#[diagnostic::on_unimplemented(
    message = "this helper has no compiled halves: a compiled gradient cannot call it",
    label = "this call would record the whole gradient on the tape, many times slower",
    note = "the helper is `#[differentiable(tape)]`, or its body holds a form its compiled \
            halves do not follow: the note `required by this bound` below points at it",
    note = "give the helper a body its halves cover, or write `#[differentiable(tape)]` on \
            this function too to record every call on the tape knowingly"
)]
pub trait Recordable {}

/// No backend: the bound of the stand-in hidden body of a function returning `Vec<f64>`,
/// which has `name_vjp` but no graph form another body records into, so that a call of
/// it from a `#[differentiable]` body is this compile error, not a missing name.
#[diagnostic::on_unimplemented(
    message = "a function returning `Vec<f64>` cannot be called from a #[differentiable] \
               function yet",
    label = "called here",
    note = "a `Vec<f64>` result gets `name_vjp`, but no graph form that another \
            differentiable body records into",
    note = "return an array `[f64; M]` from the helper (callable, with `name_jacobian`), or \
            compute the vector in the calling function's own body"
)]
pub trait CallableVector {}

#[diagnostic::do_not_recommend]
impl Recordable for Handles {}
#[diagnostic::do_not_recommend]
impl Recordable for Trace<'_> {}
#[diagnostic::do_not_recommend]
impl<const CHECKED: bool> Recordable for Primal<CHECKED> {}
#[diagnostic::do_not_recommend]
impl Recordable for crate::dual::Forward {}
#[diagnostic::do_not_recommend]
impl<const K: usize> Recordable for crate::lanes::ForwardLanes<K> {}
#[diagnostic::do_not_recommend]
impl<B: Recordable> Recordable for Outlined<'_, B> {}

/// Plain `f64`s, no graph: compiled sweeps convert their data through it with the
/// trace's own `constant`, so that a type error in the user's data reads the same (and
/// is reported once) on both paths.
///
/// `Primal::<false>` does not check that a constant is finite: for data that the
/// operation reading it carries into a result checked anyway (see
/// [`ScalarOperation::propagates`](crate::ScalarOperation::propagates)).
#[derive(Clone, Copy, Debug, Default)]
pub struct Primal<const CHECKED: bool = true>;

use crate::halves::{DualHalves, Halves, Run};

/// Builds graphs of [`Scalar`]s: the backend of `name_graph`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Handles;

thread_local! {
    /// How many generated bodies are running on this thread's tape (see [`Backend::nest`]).
    static HANDLES_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Where a [`Nest`] counts the bodies running.
enum Depth<'a> {
    /// Nowhere: the backend records nothing.
    None,
    /// This thread's tape.
    Thread,
    /// A trace's own count.
    Cell(&'a Cell<usize>),
}

/// A generated body running: made by [`Backend::nest`], it counts the body out when
/// dropped, and knows how many nodes were recorded before a nested body began.
pub struct Nest<'a> {
    depth: Depth<'a>,
    since: Option<usize>,
}

impl Nest<'_> {
    /// The guard of a backend that records nothing.
    #[inline(always)]
    pub fn flat() -> Self {
        Nest {
            depth: Depth::None,
            since: None,
        }
    }
}

impl Drop for Nest<'_> {
    #[inline]
    fn drop(&mut self) {
        match self.depth {
            Depth::None => {}
            Depth::Thread => HANDLES_DEPTH.with(|depth| depth.set(depth.get().saturating_sub(1))),
            Depth::Cell(depth) => depth.set(depth.get().saturating_sub(1)),
        }
    }
}

/// The shape of a body's output (`f64`, or arrays of it), handed back by
/// [`Backend::returned`] value by value (see there).
pub trait Returned: crate::Parameters {
    /// The output, each node recorded before `nest` began copied into one of its own.
    fn returned<B: Backend>(
        value: Self::Tracked<B::Value>,
        backend: &B,
        nest: &Nest<'_>,
    ) -> Self::Tracked<B::Value>;
}

impl Returned for f64 {
    #[inline]
    fn returned<B: Backend>(value: B::Value, backend: &B, nest: &Nest<'_>) -> B::Value {
        match nest.since {
            Some(since) => backend.returned(since, &value),
            None => value,
        }
    }
}

impl<T: Returned, const N: usize> Returned for [T; N] {
    #[inline]
    fn returned<B: Backend>(
        value: [T::Tracked<B::Value>; N],
        backend: &B,
        nest: &Nest<'_>,
    ) -> [T::Tracked<B::Value>; N] {
        value.map(|value| T::returned(value, backend, nest))
    }
}

macro_rules! backend {
    (
        unary { $($unary:ident => $unary_op:ident;)* }
        binary { $($binary:ident => $binary_op:ident;)* }
    ) => {
        /// What generated code needs from a graph: one method per operation, with the
        /// same operand order, values and errors as [`Scalar`]'s own methods.
        pub trait Backend {
            /// A node of this backend's graph (a scalar: its shape is `f64`).
            type Value: Clone
                + crate::generated::Untracked<Shape = f64>
                + crate::generated::Copied<Self::Value>
                + crate::generated::CopiedEach<Self::Value>;
            /// An untracked leaf.
            #[track_caller]
            fn constant(&self, value: f64) -> Result<Self::Value>;
            /// A stop-gradient copy of `value`.
            #[track_caller]
            fn detach(&self, value: &Self::Value) -> Result<Self::Value>;
            /// The primal value, for comparisons and plain arithmetic on data.
            fn value(&self, value: &Self::Value) -> f64;
            /// `value.powi(n)`.
            #[track_caller]
            fn powi(&self, value: &Self::Value, n: i32) -> Result<Self::Value>;
            /// `value.mul_add(a, b)`.
            #[track_caller]
            fn mul_add(&self, value: &Self::Value, a: &Self::Value, b: &Self::Value) -> Result<Self::Value>;
            /// The custom operation `rule` on `operands` (its arity of them).
            #[track_caller]
            fn custom(&self, rule: &'static CustomRule, operands: &[&Self::Value]) -> Result<Self::Value>;
            /// `Some` when the call comes from another function's compiled sweep, which
            /// wants this body's compiled halves rather than a recording.
            #[inline(always)]
            fn halves(&self) -> Option<&dyn Run> {
                None
            }
            /// Whether [`halves`](Self::halves) can be `Some`: a constant, so that rustc
            /// compiles a body's halves to machine code only for the backend that runs them,
            /// where another function's compiled sweep calls the body.
            const HALVES: bool = false;
            /// A compiled half's `f64` result as this backend's values (constants).
            #[inline]
            fn half_output<T: crate::halves::HalfOutput>(
                &self,
                value: T,
            ) -> Result<T::Tracked<Self::Value>> {
                value.try_track(&mut |value| self.constant(value))
            }
            /// Runs `run` when the call comes from another function's compiled sweep on
            /// duals (`name_hvp`'s), which wants this body's halves on duals. Otherwise
            /// `run` is dropped uncalled, so that a body's halves on duals are compiled to
            /// machine code only where such a sweep calls them.
            #[inline(always)]
            fn dual_halves<R>(&self, run: impl FnOnce(&dyn Run) -> R) -> Option<R> {
                let _ = run;
                None
            }
            /// Runs `run` on the stack and the buffer of a reverse call over shared
            /// adjoints on `f64`s (see `SharedHalves`); otherwise `run` is dropped uncalled,
            /// so that a body's reverse half over shared adjoints is compiled to machine
            /// code only where a caller lends it one value twice.
            #[inline(always)]
            fn shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<f64>) -> R,
            ) -> Option<R> {
                let _ = run;
                None
            }
            /// [`shared_halves`](Self::shared_halves) on duals.
            #[inline(always)]
            fn dual_shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<Dual>) -> R,
            ) -> Option<R> {
                let _ = run;
                None
            }
            /// A compiled half's result on duals as this backend's values: only the
            /// `DualHalves` backend, whose values are duals, takes one.
            #[inline]
            fn dual_half_output<T: crate::halves::HalfOutput>(
                &self,
                value: T::Tracked<Dual>,
            ) -> Result<T::Tracked<Self::Value>> {
                let _ = value;
                Err(crate::halves::gave_up())
            }
            /// A generated body begins: the guard that ends it, holding, for a body nested in
            /// another on a backend that records, how many nodes came before it (see
            /// [`returned`](Self::returned)).
            #[inline(always)]
            fn nest(&self) -> Nest<'_> {
                Nest::flat()
            }
            /// `value`, returned by a body nested in another: a node recorded before the
            /// body began (a parameter returned as it is, `if x > 0.0 { x } else { 0.0 }`)
            /// becomes a node of its own, a `copy`, so that the caller's reads of the
            /// result sum apart from the argument's reads and reach the argument as one term,
            /// as a helper's compiled halves hand them on. Exact: the value and every slope
            /// are the same numbers. Backends that record nothing hand it on.
            #[inline(always)]
            fn returned(&self, since: usize, value: &Self::Value) -> Self::Value {
                let _ = since;
                value.clone()
            }
            /// A generated body begins: a mark for [`leave`](Self::leave).
            #[inline(always)]
            fn enter(&self) -> usize {
                0
            }
            /// A generated body returned: its operations since `mark` are written in
            /// `function` (those of a helper it called were named by the helper).
            #[inline(always)]
            fn leave(&self, mark: usize, function: &'static str) {
                let _ = (mark, function);
            }
            $(
                #[doc = concat!("`", stringify!($unary), "` of one operand.")]
                #[track_caller]
                fn $unary(&self, value: &Self::Value) -> Result<Self::Value>;
            )*
            $(
                #[doc = concat!("`", stringify!($binary), "` of two operands.")]
                #[track_caller]
                fn $binary(&self, left: &Self::Value, right: &Self::Value) -> Result<Self::Value>;
            )*
        }

        // Each node is noted where it is recorded, in the same borrow of the tape: where
        // its operation was written, for the ledger and for errors of a later pass.
        impl Backend for Handles {
            type Value = Scalar;
            fn nest(&self) -> Nest<'_> {
                let outer = HANDLES_DEPTH.with(|depth| depth.replace(depth.get() + 1));
                let since = match outer {
                    0 => None,
                    _ => crate::tape::try_tape(|tape| tape.mark()),
                };
                Nest { depth: Depth::Thread, since }
            }
            fn returned(&self, since: usize, value: &Scalar) -> Scalar {
                if value.index() as usize >= since {
                    return value.clone();
                }
                let operation = ScalarOperation::Copy;
                Scalar::record_noted(operation, [value], 0, |a| operation.apply(a, 0), None)
                    .unwrap_or_else(|_| value.clone())
            }
            #[inline]
            fn enter(&self) -> usize {
                crate::tape::try_tape(|tape| tape.mark()).unwrap_or(0)
            }
            #[inline]
            fn leave(&self, mark: usize, function: &'static str) {
                let _ = crate::tape::try_tape(|tape| tape.name_since(mark, function));
            }
            fn constant(&self, value: f64) -> Result<Scalar> {
                Scalar::leaf_noted(value, ScalarOperation::Constant, Some(Location::caller()))
            }
            fn detach(&self, value: &Scalar) -> Result<Scalar> {
                let at = Some(Location::caller());
                Scalar::leaf_noted(value.value(), ScalarOperation::Detached, at)
            }
            fn value(&self, value: &Scalar) -> f64 {
                value.value()
            }
            fn powi(&self, value: &Scalar, n: i32) -> Result<Scalar> {
                let operation = ScalarOperation::Powi;
                let at = Some(Location::caller());
                Scalar::record_noted(operation, [value], n, |a| operation.apply(a, n), at)
            }
            fn mul_add(&self, value: &Scalar, a: &Scalar, b: &Scalar) -> Result<Scalar> {
                let operation = ScalarOperation::MulAdd;
                let at = Some(Location::caller());
                Scalar::record_noted(operation, [value, a, b], 0, |a| operation.apply(a, 0), at)
            }
            fn custom(&self, rule: &'static CustomRule, operands: &[&Scalar]) -> Result<Scalar> {
                match operands.split_first() {
                    Some((first, others)) => noted(first.custom(rule, others)),
                    None => Err(ScalarAutodiffError::LengthMismatch { expected: rule.arity(), found: 0 }),
                }
            }
            $(
                #[inline]
                fn $unary(&self, value: &Scalar) -> Result<Scalar> {
                    let operation = ScalarOperation::$unary_op;
                    let at = Some(Location::caller());
                    Scalar::record_noted(operation, [value], 0, |a| operation.apply(a, 0), at)
                }
            )*
            $(
                #[inline]
                fn $binary(&self, left: &Scalar, right: &Scalar) -> Result<Scalar> {
                    let operation = ScalarOperation::$binary_op;
                    let at = Some(Location::caller());
                    Scalar::record_noted(operation, [left, right], 0, |a| operation.apply(a, 0), at)
                }
            )*
        }

        impl<'t> Backend for Trace<'t> {
            type Value = Id<'t>;
            fn nest(&self) -> Nest<'_> {
                let outer = self.depth.replace(self.depth.get() + 1);
                let since = (outer > 0).then(|| self.tape.borrow().mark());
                Nest { depth: Depth::Cell(&self.depth), since }
            }
            fn returned(&self, since: usize, value: &Id<'t>) -> Id<'t> {
                match value.slot() {
                    Some(slot) if value.tracked() && (slot as usize) < since => {
                        self.copy(value).unwrap_or(*value)
                    }
                    _ => *value,
                }
            }
            #[inline(always)]
            fn enter(&self) -> usize {
                match self.locate {
                    true => self.tape.borrow().mark(),
                    false => 0,
                }
            }
            #[inline(always)]
            fn leave(&self, mark: usize, function: &'static str) {
                if self.locate {
                    self.tape.borrow_mut().name_since(mark, function);
                }
            }
            #[inline]
            fn constant(&self, value: f64) -> Result<Id<'t>> {
                match value.is_finite() {
                    true => Ok(Id::constant(value)),
                    false => Err(ScalarAutodiffError::NonFiniteLeaf {
                        operation: ScalarOperation::Constant,
                        value,
                        location: None,
                    }
                    .at(Location::caller())),
                }
            }
            fn detach(&self, value: &Id<'t>) -> Result<Id<'t>> {
                Ok(Id::constant(Self::primal(&self.tape.borrow(), *value)))
            }
            #[inline]
            fn value(&self, value: &Id<'t>) -> f64 {
                Self::primal(&self.tape.borrow(), *value)
            }
            fn powi(&self, value: &Id<'t>, n: i32) -> Result<Id<'t>> {
                self.unary(ScalarOperation::Powi, *value, n, |a| ScalarOperation::Powi.apply(a, n))
            }
            fn mul_add(&self, value: &Id<'t>, a: &Id<'t>, b: &Id<'t>) -> Result<Id<'t>> {
                self.ternary(*value, *a, *b)
            }
            fn custom(&self, rule: &'static CustomRule, operands: &[&Id<'t>]) -> Result<Id<'t>> {
                self.custom_node(rule, operands)
            }
            $(
                #[cfg_attr(not(debug_assertions), inline(always))]
                fn $unary(&self, value: &Id<'t>) -> Result<Id<'t>> {
                    let operation = ScalarOperation::$unary_op;
                    self.unary(operation, *value, 0, |a| operation.apply(a, 0))
                }
            )*
            $(
                #[cfg_attr(not(debug_assertions), inline(always))]
                fn $binary(&self, left: &Id<'t>, right: &Id<'t>) -> Result<Id<'t>> {
                    let operation = ScalarOperation::$binary_op;
                    self.binary(operation, *left, *right, |a| operation.apply(a, 0))
                }
            )*
        }

        impl<const CHECKED: bool> Backend for Primal<CHECKED> {
            type Value = f64;
            #[inline(always)]
            fn constant(&self, value: f64) -> Result<f64> {
                match !CHECKED || value.is_finite() {
                    true => Ok(value),
                    false => Err(ScalarAutodiffError::NonFiniteLeaf {
                        operation: ScalarOperation::Constant,
                        value,
                        location: None,
                    }
                    .at(Location::caller())),
                }
            }
            fn detach(&self, value: &f64) -> Result<f64> {
                Ok(*value)
            }
            #[inline(always)]
            fn value(&self, value: &f64) -> f64 {
                *value
            }
            fn powi(&self, value: &f64, n: i32) -> Result<f64> {
                Ok(ScalarOperation::Powi.apply([*value, 0.0, 0.0], n))
            }
            fn mul_add(&self, value: &f64, a: &f64, b: &f64) -> Result<f64> {
                Ok(ScalarOperation::MulAdd.apply([*value, *a, *b], 0))
            }
            fn custom(&self, rule: &'static CustomRule, operands: &[&f64]) -> Result<f64> {
                let at = Location::caller();
                let values = crate::custom::padded(rule, operands, |value| **value)?;
                crate::custom::evaluate(rule, values).map(|(_, value, _)| value).map_err(|error| error.at(at))
            }
            $(
                fn $unary(&self, value: &f64) -> Result<f64> {
                    Ok(ScalarOperation::$unary_op.apply([*value, 0.0, 0.0], 0))
                }
            )*
            $(
                fn $binary(&self, left: &f64, right: &f64) -> Result<f64> {
                    Ok(ScalarOperation::$binary_op.apply([*left, *right, 0.0], 0))
                }
            )*
        }

        impl Backend for Halves<'_> {
            type Value = f64;
            #[inline]
            fn constant(&self, value: f64) -> Result<f64> {
                Primal::<true>.constant(value)
            }
            fn detach(&self, value: &f64) -> Result<f64> {
                Ok(*value)
            }
            #[inline]
            fn value(&self, value: &f64) -> f64 {
                *value
            }
            const HALVES: bool = true;
            #[inline(always)]
            fn halves(&self) -> Option<&dyn Run> {
                Some(self)
            }
            // The values are `f64`s already: checked, and handed on as they are.
            #[inline]
            fn half_output<T: crate::halves::HalfOutput>(&self, value: T) -> Result<T::Tracked<f64>> {
                match crate::sweep::finite(&value) {
                    true => Ok(value.into_f64s()),
                    false => Err(crate::halves::gave_up()),
                }
            }
            fn powi(&self, value: &f64, n: i32) -> Result<f64> {
                Primal::<true>.powi(value, n)
            }
            fn mul_add(&self, value: &f64, a: &f64, b: &f64) -> Result<f64> {
                Primal::<true>.mul_add(value, a, b)
            }
            // A rule's hidden body answers a compiled sweep itself, before it would record
            // (see the macro's `rule.rs`): never reached, and it refuses rather than give
            // a value without its derivative.
            fn custom(&self, _: &'static CustomRule, _: &[&f64]) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            $(
                fn $unary(&self, value: &f64) -> Result<f64> {
                    Primal::<true>.$unary(value)
                }
            )*
            $(
                fn $binary(&self, left: &f64, right: &f64) -> Result<f64> {
                    Primal::<true>.$binary(left, right)
                }
            )*
        }

        // Nothing is computed on it: a body answers it with its halves on duals, or
        // gives up at its first operation (and its caller's sweep with it).
        impl Backend for DualHalves<'_> {
            type Value = Dual;
            fn constant(&self, _: f64) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn detach(&self, _: &Dual) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            #[inline]
            fn value(&self, value: &Dual) -> f64 {
                value.value
            }
            #[inline(always)]
            fn dual_halves<R>(&self, run: impl FnOnce(&dyn Run) -> R) -> Option<R> {
                Some(run(self))
            }
            // Checked, and handed on as they are.
            #[inline]
            fn dual_half_output<T: crate::halves::HalfOutput>(
                &self,
                value: T::Tracked<Dual>,
            ) -> Result<T::Tracked<Dual>> {
                let mut finite = true;
                T::visit_tracked(&value, &mut |dual: &Dual| finite &= dual.is_finite());
                match finite {
                    true => Ok(value),
                    false => Err(crate::halves::gave_up()),
                }
            }
            fn powi(&self, _: &Dual, _: i32) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn mul_add(&self, _: &Dual, _: &Dual, _: &Dual) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn custom(&self, _: &'static CustomRule, _: &[&Dual]) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            $(
                fn $unary(&self, _: &Dual) -> Result<Dual> {
                    Err(crate::halves::gave_up())
                }
            )*
            $(
                fn $binary(&self, _: &Dual, _: &Dual) -> Result<Dual> {
                    Err(crate::halves::gave_up())
                }
            )*
        }

        // Nothing is computed on either: a body answers them with its reverse half over
        // shared adjoints, or gives up at its first operation.
        impl Backend for crate::shared::SharedHalves<'_, f64> {
            type Value = f64;
            fn constant(&self, _: f64) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            fn detach(&self, _: &f64) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            #[inline]
            fn value(&self, value: &f64) -> f64 {
                crate::shared::primal_of(value)
            }
            #[inline(always)]
            fn shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<f64>) -> R,
            ) -> Option<R> {
                self.run(run)
            }
            // (The reverse half's result is zeros, handed on as they are.)
            #[inline]
            fn half_output<T: crate::halves::HalfOutput>(&self, value: T) -> Result<T::Tracked<f64>> {
                Ok(value.into_f64s())
            }
            fn powi(&self, _: &f64, _: i32) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            fn mul_add(&self, _: &f64, _: &f64, _: &f64) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            fn custom(&self, _: &'static CustomRule, _: &[&f64]) -> Result<f64> {
                Err(crate::halves::gave_up())
            }
            $(
                fn $unary(&self, _: &f64) -> Result<f64> {
                    Err(crate::halves::gave_up())
                }
            )*
            $(
                fn $binary(&self, _: &f64, _: &f64) -> Result<f64> {
                    Err(crate::halves::gave_up())
                }
            )*
        }

        impl Backend for crate::shared::SharedHalves<'_, Dual> {
            type Value = Dual;
            fn constant(&self, _: f64) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn detach(&self, _: &Dual) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            #[inline]
            fn value(&self, value: &Dual) -> f64 {
                crate::shared::primal_of(value)
            }
            #[inline(always)]
            fn dual_shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<Dual>) -> R,
            ) -> Option<R> {
                self.run(run)
            }
            #[inline]
            fn dual_half_output<T: crate::halves::HalfOutput>(
                &self,
                value: T::Tracked<Dual>,
            ) -> Result<T::Tracked<Dual>> {
                Ok(value)
            }
            fn powi(&self, _: &Dual, _: i32) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn mul_add(&self, _: &Dual, _: &Dual, _: &Dual) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            fn custom(&self, _: &'static CustomRule, _: &[&Dual]) -> Result<Dual> {
                Err(crate::halves::gave_up())
            }
            $(
                fn $unary(&self, _: &Dual) -> Result<Dual> {
                    Err(crate::halves::gave_up())
                }
            )*
            $(
                fn $binary(&self, _: &Dual, _: &Dual) -> Result<Dual> {
                    Err(crate::halves::gave_up())
                }
            )*
        }

        impl Backend for Forward {
            type Value = Dual;
            #[inline]
            fn constant(&self, value: f64) -> Result<Dual> {
                Primal::<true>.constant(value).map(Dual::constant)
            }
            fn detach(&self, value: &Dual) -> Result<Dual> {
                Ok(Dual::constant(value.value))
            }
            #[inline]
            fn value(&self, value: &Dual) -> f64 {
                value.value
            }
            fn powi(&self, value: &Dual, n: i32) -> Result<Dual> {
                let zero = Dual::constant(0.0);
                Dual::checked(ScalarOperation::Powi, [*value, zero, zero], n)
            }
            fn mul_add(&self, value: &Dual, a: &Dual, b: &Dual) -> Result<Dual> {
                Dual::checked(ScalarOperation::MulAdd, [*value, *a, *b], 0)
            }
            fn custom(&self, rule: &'static CustomRule, operands: &[&Dual]) -> Result<Dual> {
                let at = Location::caller();
                crate::custom::forward(rule, operands).map_err(|error| error.at(at))
            }
            $(
                #[inline]
                fn $unary(&self, value: &Dual) -> Result<Dual> {
                    let zero = Dual::constant(0.0);
                    Dual::checked(ScalarOperation::$unary_op, [*value, zero, zero], 0)
                }
            )*
            $(
                #[inline]
                fn $binary(&self, left: &Dual, right: &Dual) -> Result<Dual> {
                    let zero = Dual::constant(0.0);
                    Dual::checked(ScalarOperation::$binary_op, [*left, *right, zero], 0)
                }
            )*
        }

        impl<const K: usize> Backend for crate::lanes::ForwardLanes<K> {
            type Value = crate::lanes::Lanes<K>;
            #[inline]
            fn constant(&self, value: f64) -> Result<crate::lanes::Lanes<K>> {
                Primal::<true>.constant(value).map(crate::lanes::Lanes::constant)
            }
            fn detach(&self, value: &crate::lanes::Lanes<K>) -> Result<crate::lanes::Lanes<K>> {
                Ok(crate::lanes::Lanes::constant(value.value))
            }
            #[inline]
            fn value(&self, value: &crate::lanes::Lanes<K>) -> f64 {
                value.value
            }
            fn powi(&self, value: &crate::lanes::Lanes<K>, n: i32) -> Result<crate::lanes::Lanes<K>> {
                let zero = crate::lanes::Lanes::constant(0.0);
                crate::lanes::Lanes::checked(ScalarOperation::Powi, [value, &zero, &zero], n)
            }
            fn mul_add(&self, value: &crate::lanes::Lanes<K>, a: &crate::lanes::Lanes<K>, b: &crate::lanes::Lanes<K>) -> Result<crate::lanes::Lanes<K>> {
                crate::lanes::Lanes::checked(ScalarOperation::MulAdd, [value, a, b], 0)
            }
            fn custom(&self, rule: &'static CustomRule, operands: &[&crate::lanes::Lanes<K>]) -> Result<crate::lanes::Lanes<K>> {
                let at = Location::caller();
                crate::lanes::Lanes::custom(rule, operands).map_err(|error| error.at(at))
            }
            $(
                #[inline]
                fn $unary(&self, value: &crate::lanes::Lanes<K>) -> Result<crate::lanes::Lanes<K>> {
                    let zero = crate::lanes::Lanes::constant(0.0);
                    crate::lanes::Lanes::checked(ScalarOperation::$unary_op, [value, &zero, &zero], 0)
                }
            )*
            $(
                #[inline]
                fn $binary(&self, left: &crate::lanes::Lanes<K>, right: &crate::lanes::Lanes<K>) -> Result<crate::lanes::Lanes<K>> {
                    let zero = crate::lanes::Lanes::constant(0.0);
                    crate::lanes::Lanes::checked(ScalarOperation::$binary_op, [left, right, &zero], 0)
                }
            )*
        }

        /// The operation each backend method records, under the method's name: what
        /// compiled sweeps name (`op::tanh`), from this one table.
        #[allow(non_upper_case_globals)]
        pub mod op {
            use crate::operation::ScalarOperation;
            /// `value.powi(n)`.
            pub const powi: ScalarOperation = ScalarOperation::Powi;
            /// `value.mul_add(a, b)`.
            pub const mul_add: ScalarOperation = ScalarOperation::MulAdd;
            $(
                #[doc = concat!("`", stringify!($unary), "`.")]
                pub const $unary: ScalarOperation = ScalarOperation::$unary_op;
            )*
            $(
                #[doc = concat!("`", stringify!($binary), "`.")]
                pub const $binary: ScalarOperation = ScalarOperation::$binary_op;
            )*
        }

        impl<B: Backend> Backend for Outlined<'_, B> {
            type Value = B::Value;
            const HALVES: bool = B::HALVES;
            #[inline]
            fn nest(&self) -> Nest<'_> {
                self.0.nest()
            }
            #[inline]
            fn returned(&self, since: usize, value: &B::Value) -> B::Value {
                self.0.returned(since, value)
            }
            #[inline]
            fn enter(&self) -> usize {
                self.0.enter()
            }
            #[inline]
            fn leave(&self, mark: usize, function: &'static str) {
                self.0.leave(mark, function)
            }
            #[inline]
            fn halves(&self) -> Option<&dyn Run> {
                self.0.halves()
            }

            #[inline]
            fn dual_halves<R>(&self, run: impl FnOnce(&dyn Run) -> R) -> Option<R> {
                self.0.dual_halves(run)
            }
            #[inline]
            fn shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<f64>) -> R,
            ) -> Option<R> {
                self.0.shared_halves(run)
            }
            #[inline]
            fn dual_shared_halves<R>(
                &self,
                run: impl FnOnce(&mut crate::sweep::Stack, &mut Vec<Dual>) -> R,
            ) -> Option<R> {
                self.0.dual_shared_halves(run)
            }
            #[inline]
            fn dual_half_output<T: crate::halves::HalfOutput>(
                &self,
                value: T::Tracked<Dual>,
            ) -> Result<T::Tracked<B::Value>> {
                self.0.dual_half_output::<T>(value)
            }
            #[inline]
            fn constant(&self, value: f64) -> Result<B::Value> {
                self.0.constant(value)
            }
            #[inline(never)]
            fn detach(&self, value: &B::Value) -> Result<B::Value> {
                self.0.detach(value)
            }
            #[inline]
            fn value(&self, value: &B::Value) -> f64 {
                self.0.value(value)
            }
            #[inline(never)]
            fn powi(&self, value: &B::Value, n: i32) -> Result<B::Value> {
                self.0.powi(value, n)
            }
            #[inline(never)]
            fn mul_add(&self, value: &B::Value, a: &B::Value, b: &B::Value) -> Result<B::Value> {
                self.0.mul_add(value, a, b)
            }
            #[inline(never)]
            fn custom(&self, rule: &'static CustomRule, operands: &[&B::Value]) -> Result<B::Value> {
                self.0.custom(rule, operands)
            }
            $(
                #[inline(never)]
                fn $unary(&self, value: &B::Value) -> Result<B::Value> {
                    self.0.$unary(value)
                }
            )*
            $(
                #[inline(never)]
                fn $binary(&self, left: &B::Value, right: &B::Value) -> Result<B::Value> {
                    self.0.$binary(left, right)
                }
            )*
        }
    };
}

backend! {
    unary {
        neg => Negate;
        copy => Copy;
        recip => Recip;
        sqrt => Sqrt;
        cbrt => Cbrt;
        exp => Exp;
        exp2 => Exp2;
        exp_m1 => ExpM1;
        ln => Ln;
        ln_1p => Ln1p;
        log2 => Log2;
        log10 => Log10;
        sin => Sin;
        cos => Cos;
        tan => Tan;
        asin => Asin;
        acos => Acos;
        atan => Atan;
        sinh => Sinh;
        cosh => Cosh;
        tanh => Tanh;
        asinh => Asinh;
        acosh => Acosh;
        atanh => Atanh;
        abs => Abs;
    }
    binary {
        add => Add;
        sub => Subtract;
        mul => Multiply;
        div => Divide;
        powf => Powf;
        log => Log;
        atan2 => Atan2;
        max => Max;
        min => Min;
        hypot => Hypot;
    }
}
