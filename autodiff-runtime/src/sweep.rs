//! What `name_grad`'s compiled sweeps call: one value stack per thread, and the value and
//! local derivatives of each operation from the one table in [`ScalarOperation`].
//!
//! The forward half of a compiled sweep computes plain `f64`s and [`Stack::save`]s, for
//! each operation inside a loop, exactly what its local derivatives read and the reverse
//! half cannot recompute; the reverse half [`Stack::restore`]s them in the opposite
//! order. The values come from [`value`] and the slopes from [`slopes`], the very
//! functions the tape's reverse pass calls, so a sweep that adds the same contributions in
//! the same order gives the same bits. A sweep decides no error: it gives up (`None`) on
//! the first non-finite number, and `name_grad` then runs the checked path.
//!
//! `name_hvp`'s sweeps are the same code on [`Dual`]s ([`Number`]): forward over reverse.

use std::cell::RefCell;

use std::ops::{Add, AddAssign, Mul};

use crate::dual::{Dual, Real};
use crate::operation::{Reads, ScalarOperation};
use crate::parameters::Parameters;

/// The values a forward half keeps for its reverse half, last in, first out.
///
/// Both buffers are kept initialized to their length, with a count of the part in use:
/// a push is a store and an increment, and growing is a cold call, so that a sweep's
/// loop keeps its numbers in registers (a call that may run in the loop would make it
/// save them around every iteration). Boxed slices rather than `Vec`s, and no `Option`
/// helpers: in a debug build each of those is a function call per push.
#[derive(Debug, Default)]
pub struct Stack {
    words: Box<[f64]>,
    /// How many of `words` are kept.
    top: usize,
    /// Branch flags, 64 to a word: a loop of branches keeps a bit per iteration.
    flags: Box<[u64]>,
    /// How many flags are kept.
    taken: usize,
    /// The adjoint cells of shared nodes (see [`Stack::cells`]), kept between calls for
    /// their capacity.
    cells: Vec<f64>,
    /// The same on duals (see [`Stack::dual_cells`]).
    dual_cells: Vec<Dual>,
    /// The buffer and positions of a call over shared adjoints (see
    /// [`Stack::shared`]), kept for their capacity.
    pub(crate) shared: (Vec<f64>, Vec<usize>),
    /// The same on duals.
    pub(crate) dual_shared: (Vec<Dual>, Vec<usize>),
}

thread_local! {
    static STACK: RefCell<Stack> = RefCell::new(Stack::default());
}

/// Runs `run` on this thread's stack and leaves the stack as it found it (its capacity
/// stays, so a warm call allocates nothing). `None` if `run` gave up, or if the stack is
/// unavailable (re-entered, or the thread is tearing down its storage).
#[inline]
pub fn sweep<R>(run: impl FnOnce(&mut Stack) -> Option<R>) -> Option<R> {
    // The result is written once, where it is returned from: a gradient of thousands of
    // parameters is a large value, and each `Option`/`Result` it would be rewrapped in
    // on the way out is a copy of it.
    let mut result = None;
    let _ = STACK.try_with(|cell| {
        if let Ok(mut stack) = cell.try_borrow_mut() {
            let (top, taken) = (stack.top, stack.taken);
            result = run(&mut stack);
            stack.top = top;
            stack.taken = taken;
        }
    });
    result
}

/// The first size of a stack's buffer, in items (512 KiB of `f64`s): zeros, which the
/// allocator takes from pages the system maps only when first written, so a small sweep
/// costs no more than before, and a first call on a thread grows once instead of
/// doubling from a few items with a copy each time (1.8x a warm call's time, measured on
/// the MLP batch, before; 1.4x after).
const FIRST_SIZE: usize = 1 << 16;

/// `buffer` doubled (at least to `least` items), zeros in the new part.
#[cold]
#[inline(never)]
fn grow<T: Copy + Default>(buffer: &mut Box<[T]>, least: usize) {
    let len = buffer.len().saturating_mul(2).max(least).max(FIRST_SIZE);
    let mut grown = vec![T::default(); len];
    grown[..buffer.len()].copy_from_slice(buffer);
    *buffer = grown.into_boxed_slice();
}

impl Stack {
    /// `count` adjoint cells, zeros, for a sweep whose scalars share nodes: taken out of
    /// the stack (so that the sweep can still push and pop) and given back with
    /// [`Stack::return_cells`], whose capacity a warm call then reuses.
    pub fn cells(&mut self, count: usize) -> Vec<f64> {
        let mut cells = core::mem::take(&mut self.cells);
        cells.clear();
        cells.resize(count, 0.0);
        cells
    }

    /// Gives back the cells [`Stack::cells`] handed out.
    pub fn return_cells(&mut self, cells: Vec<f64>) {
        self.cells = cells;
    }

    /// [`Stack::cells`] on duals, for `name_hvp`'s sweeps.
    pub fn dual_cells(&mut self, count: usize) -> Vec<Dual> {
        let mut cells = core::mem::take(&mut self.dual_cells);
        cells.clear();
        cells.resize(count, Dual::ZERO);
        cells
    }

    /// Gives back the cells [`Stack::dual_cells`] handed out.
    pub fn return_dual_cells(&mut self, cells: Vec<Dual>) {
        self.dual_cells = cells;
    }

    /// Keeps `value`.
    #[inline(always)]
    pub fn push(&mut self, value: f64) {
        if self.top >= self.words.len() {
            grow(&mut self.words, self.top + 1);
        }
        if self.top < self.words.len() {
            self.words[self.top] = value;
            self.top += 1;
        }
    }

    /// The last value kept (0 on an empty stack, which a sweep never pops).
    #[inline(always)]
    pub fn pop(&mut self) -> f64 {
        if self.top == 0 || self.top > self.words.len() {
            return 0.0;
        }
        self.top -= 1;
        self.words[self.top]
    }

    /// Keeps which way a branch went.
    #[inline(always)]
    pub fn push_flag(&mut self, flag: bool) {
        let (index, bit) = (self.taken / 64, self.taken % 64);
        if index >= self.flags.len() {
            grow(&mut self.flags, index + 1);
        }
        if index < self.flags.len() {
            let word = &mut self.flags[index];
            *word = (*word & !(1 << bit)) | (flag as u64) << bit;
            self.taken += 1;
        }
    }

    /// The last branch kept.
    #[inline(always)]
    pub fn pop_flag(&mut self) -> bool {
        if self.taken == 0 || (self.taken - 1) / 64 >= self.flags.len() {
            return false;
        }
        self.taken -= 1;
        self.flags[self.taken / 64] >> (self.taken % 64) & 1 == 1
    }

    /// Keeps every scalar of `value`, in order: a compiled forward half keeps its
    /// parameters this way for its reverse half.
    #[inline]
    pub fn keep<P: Parameters + ?Sized>(&mut self, value: &P) {
        match value.as_flat() {
            // An array of numbers: one copy.
            Some(flat) => {
                let end = self.top + flat.len();
                if end > self.words.len() {
                    grow(&mut self.words, end);
                }
                if let Some(slots) = self.words.get_mut(self.top..end) {
                    slots.copy_from_slice(flat);
                    self.top = end;
                }
            }
            None => value.visit(&mut |scalar| self.push(scalar)),
        }
    }

    /// Fills `value` (of the same shape) with what [`Stack::keep`] kept last, and drops
    /// it from the stack.
    #[inline]
    pub fn take<P: Parameters + ?Sized>(&mut self, value: &mut P) {
        let start = self.top.saturating_sub(value.parameter_count());
        let words = &self.words;
        match value.as_flat_mut() {
            // An array of numbers: one copy.
            Some(flat) => match words.get(start..start + flat.len()) {
                Some(kept) => flat.copy_from_slice(kept),
                None => flat.fill(0.0),
            },
            None => {
                let mut at = start;
                value.visit_mut(&mut |scalar| {
                    *scalar = words.get(at).copied().unwrap_or(0.0);
                    at += 1;
                });
            }
        }
        self.top = start;
    }

    /// Keeps what `reads` (from [`kept_reads`], a constant) says: operand values, then
    /// the result.
    #[inline(always)]
    pub fn save<N: Number>(&mut self, reads: Reads, operands: [N; 3], value: N) {
        if reads.operands[0] {
            operands[0].push(self);
        }
        if reads.operands[1] {
            operands[1].push(self);
        }
        if reads.operands[2] {
            operands[2].push(self);
        }
        if reads.value {
            value.push(self);
        }
    }

    /// Pops what [`Stack::save`] kept, in reverse; the operand values the reverse half has
    /// come in through `operands`, and `same` copies operand 0 to operand 1. Returns the
    /// operand values and the result.
    #[inline(always)]
    pub fn restore<N: Number>(
        &mut self,
        reads: Reads,
        same: bool,
        mut operands: [N; 3],
    ) -> ([N; 3], N) {
        let value = if reads.value { N::pop(self) } else { N::ZERO };
        if reads.operands[2] {
            operands[2] = N::pop(self);
        }
        if reads.operands[1] {
            operands[1] = N::pop(self);
        }
        if reads.operands[0] {
            operands[0] = N::pop(self);
        }
        if same {
            operands[1] = operands[0];
        }
        (operands, value)
    }
}

/// What the slopes of `op`'s `tracked` slots read, for generated code's constants.
#[inline]
pub const fn reads(op: ScalarOperation, tracked: [bool; 3]) -> Reads {
    op.reads(tracked)
}

/// What [`Stack::save`] keeps for `op`: what the slopes of its `tracked` slots read, less
/// the operands the reverse half has (`kept`), and operand 1 as operand 0 when they are
/// the same (`same`, as in `e * e`). Generated code evaluates it as a constant inside
/// loops; elsewhere optimized builds inline and fold it.
#[inline]
pub const fn kept_reads(
    op: ScalarOperation,
    tracked: [bool; 3],
    kept: [bool; 3],
    same: bool,
) -> Reads {
    let mut reads = op.reads(tracked);
    if same {
        reads.operands[0] = reads.operands[0] || reads.operands[1];
        reads.operands[1] = false;
    }
    reads.operands[0] = reads.operands[0] && !kept[0];
    reads.operands[1] = reads.operands[1] && !kept[1];
    reads.operands[2] = reads.operands[2] && !kept[2];
    reads
}

/// Whether `op` carries a non-finite operand in `slot` into its result
/// ([`ScalarOperation::propagates`]), for generated code's constants.
// Not `inline(always)`: outside loops generated code calls it at run time, and a debug
// build would paste the whole table at every call; optimized builds inline and fold it.
#[inline]
pub const fn propagates(op: ScalarOperation, slot: usize) -> bool {
    op.propagates(slot)
}

/// The value of `op` on `operands`, as the tape computes it.
#[inline(always)]
pub fn value<N: Number>(op: ScalarOperation, operands: [N; 3], exponent: i32) -> N {
    N::value(op, operands, exponent)
}

/// The local derivatives of `op` with respect to its `tracked` slots (0 elsewhere), with
/// the very formulas, and the very calls, of the tape's reverse pass.
#[inline(always)]
pub fn slopes<N: Number>(
    op: ScalarOperation,
    tracked: [bool; 3],
    operands: [N; 3],
    value: N,
    exponent: i32,
) -> [N; 3] {
    N::slopes(op, tracked, operands, value, exponent)
}

/// What compiled sweeps compute on: `f64` in `name_grad`'s, and [`Dual`] in `name_hvp`'s,
/// where the same sweeps on (value, tangent) pairs are forward over reverse: the values
/// are `name_grad`'s, operation for operation, and each adjoint's tangent along the
/// direction is a row of `H v`.
pub trait Number: Copy + Add<Output = Self> + Mul<Output = Self> + AddAssign {
    /// Zero, a constant.
    const ZERO: Self;
    /// `op` on `operands` (see [`value`]).
    fn value(op: ScalarOperation, operands: [Self; 3], exponent: i32) -> Self;
    /// `op`'s slopes (see [`slopes`]).
    fn slopes(
        op: ScalarOperation,
        tracked: [bool; 3],
        operands: [Self; 3],
        value: Self,
        exponent: i32,
    ) -> [Self; 3];
    /// Keeps the number on `stack`.
    fn push(self, stack: &mut Stack);
    /// The number [`Number::push`] kept last.
    fn pop(stack: &mut Stack) -> Self;
    /// Whether it is finite (a dual's tangent too).
    fn finite(self) -> bool;
}

impl Number for f64 {
    const ZERO: f64 = 0.0;

    #[inline(always)]
    fn value(op: ScalarOperation, operands: [f64; 3], exponent: i32) -> f64 {
        op.apply(operands, exponent)
    }

    #[inline(always)]
    fn slopes(
        op: ScalarOperation,
        tracked: [bool; 3],
        operands: [f64; 3],
        value: f64,
        exponent: i32,
    ) -> [f64; 3] {
        let [x, y, _] = operands;
        match op.arity() {
            1 => [op.unary_derivative(x, value, exponent), 0.0, 0.0],
            2 => {
                let [a, b] = op.binary_derivatives(x, y, value, [tracked[0], tracked[1]]);
                [a, b, 0.0]
            }
            _ => [0, 1, 2].map(|slot| match tracked[slot] {
                true => op.local_derivative(slot, operands, value, exponent),
                false => 0.0,
            }),
        }
    }

    #[inline(always)]
    fn push(self, stack: &mut Stack) {
        stack.push(self);
    }

    #[inline(always)]
    fn pop(stack: &mut Stack) -> f64 {
        stack.pop()
    }

    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// On duals, the value parts are the `f64` formulas' own (the table's `slope` is one
/// function for both), so `name_hvp`'s gradient has `name_grad`'s bits.
impl Number for Dual {
    const ZERO: Dual = Dual {
        value: 0.0,
        tangent: 0.0,
        tracked: false,
    };

    #[inline(always)]
    fn value(op: ScalarOperation, operands: [Dual; 3], exponent: i32) -> Dual {
        <Dual as Real>::call(op, operands, exponent)
    }

    #[inline(always)]
    fn slopes(
        op: ScalarOperation,
        tracked: [bool; 3],
        operands: [Dual; 3],
        value: Dual,
        exponent: i32,
    ) -> [Dual; 3] {
        // Written out, not `[0, 1, 2].map(..)`: through `map`'s closure, called out of
        // line, the operation was no longer a constant and every slope dispatched over
        // the whole table (two thirds of `name_hvp`'s time on the MLP).
        let arity = op.arity();
        let zero = Dual::ZERO;
        [
            match tracked[0] && arity > 0 {
                true => op.slope(0, operands, value, exponent),
                false => zero,
            },
            match tracked[1] && arity > 1 {
                true => op.slope(1, operands, value, exponent),
                false => zero,
            },
            match tracked[2] && arity > 2 {
                true => op.slope(2, operands, value, exponent),
                false => zero,
            },
        ]
    }

    /// Three words: the value, the tangent, and whether it is tracked.
    #[inline(always)]
    fn push(self, stack: &mut Stack) {
        stack.push(self.value);
        stack.push(self.tangent);
        stack.push(f64::from(u8::from(self.tracked)));
    }

    #[inline(always)]
    fn pop(stack: &mut Stack) -> Dual {
        let tracked = stack.pop() != 0.0;
        let tangent = stack.pop();
        Dual {
            value: stack.pop(),
            tangent,
            tracked,
        }
    }

    #[inline(always)]
    fn finite(self) -> bool {
        self.is_finite()
    }
}

/// Shapes of a sweep's numbers (a number, arrays of them), for locals a forward half
/// keeps for its reverse half and checks.
pub trait Numbers {
    /// Whether every number is finite (a dual's tangent too).
    fn all_finite(&self) -> bool;
    /// Keeps every number, in order.
    fn keep(&self, stack: &mut Stack);
    /// Takes back what [`Numbers::keep`] kept, in reverse.
    fn take(&mut self, stack: &mut Stack);
}

impl<N: Number> Numbers for N {
    #[inline(always)]
    fn all_finite(&self) -> bool {
        self.finite()
    }
    #[inline(always)]
    fn keep(&self, stack: &mut Stack) {
        self.push(stack);
    }
    #[inline(always)]
    fn take(&mut self, stack: &mut Stack) {
        *self = N::pop(stack);
    }
}

impl<T: Numbers, const K: usize> Numbers for [T; K] {
    #[inline]
    fn all_finite(&self) -> bool {
        self.iter().all(Numbers::all_finite)
    }
    #[inline]
    fn keep(&self, stack: &mut Stack) {
        self.iter().for_each(|number| number.keep(stack));
    }
    #[inline]
    fn take(&mut self, stack: &mut Stack) {
        self.iter_mut().rev().for_each(|number| number.take(stack));
    }
}

impl<T: Numbers> Numbers for Vec<T> {
    #[inline]
    fn all_finite(&self) -> bool {
        self.iter().all(Numbers::all_finite)
    }
    #[inline]
    fn keep(&self, stack: &mut Stack) {
        self.iter().for_each(|number| number.keep(stack));
    }
    #[inline]
    fn take(&mut self, stack: &mut Stack) {
        self.iter_mut().rev().for_each(|number| number.take(stack));
    }
}

/// `f64` constants as duals, in any array shape: a local array of constants in
/// `name_hvp`'s sweeps.
pub trait Lift {
    /// The same shape of duals.
    type Dual;
    /// Every number a constant dual.
    fn lift(self) -> Self::Dual;
}

impl Lift for f64 {
    type Dual = Dual;
    #[inline(always)]
    fn lift(self) -> Dual {
        Dual::constant(self)
    }
}

impl<T: Lift, const K: usize> Lift for [T; K] {
    type Dual = [T::Dual; K];
    #[inline]
    fn lift(self) -> [T::Dual; K] {
        self.map(T::lift)
    }
}

impl<T: Lift> Lift for Vec<T> {
    type Dual = Vec<T::Dual>;
    #[inline]
    fn lift(self) -> Vec<T::Dual> {
        self.into_iter().map(T::lift).collect()
    }
}

/// A detached value in `name_hvp`'s sweeps: its value, a constant.
#[inline(always)]
pub fn detached<N: Into<f64>>(value: N) -> Dual {
    Dual::constant(value.into())
}

/// Zero duals shaped like a parameter: its adjoints in `name_hvp`'s sweeps.
#[inline]
pub fn dual_zeros<P: Parameters + ?Sized>(like: &P) -> Option<P::Tracked<Dual>> {
    like.try_track(&mut |_| Ok(Dual::ZERO)).ok()
}

/// Writes the adjoints' values (the gradient) and tangents (`H v`) into `gradient` and
/// `product` from `next` on, in parameter order, as a pass stores them (`0 + adjoint`:
/// never -0.0); false if one is not finite.
#[inline]
pub fn pairs_into<P: Parameters + ?Sized>(
    like: &P,
    adjoints: &P::Tracked<Dual>,
    (gradient, product): (&mut [f64], &mut [f64]),
    next: &mut usize,
) -> bool {
    let _ = like;
    let mut finite = Finite::default();
    P::visit_tracked(adjoints, &mut |adjoint| {
        let (value, tangent) = (0.0 + adjoint.value, 0.0 + adjoint.tangent);
        finite.add(value);
        finite.add(tangent);
        if let (Some(g), Some(p)) = (gradient.get_mut(*next), product.get_mut(*next)) {
            (*g, *p) = (value, tangent);
        }
        *next += 1;
    });
    finite.all()
}

/// A shape of adjoints: `f64` or arrays of it, all zero.
pub trait Zero: Sized {
    /// All zeros.
    fn zero() -> Self;
}

impl Zero for f64 {
    #[inline(always)]
    fn zero() -> f64 {
        0.0
    }
}

impl Zero for Dual {
    #[inline(always)]
    fn zero() -> Dual {
        Dual::ZERO
    }
}

impl<T: Zero + Copy, const N: usize> Zero for [T; N] {
    #[inline(always)]
    fn zero() -> Self {
        [T::zero(); N]
    }
}

/// Zeros of the shape `call` returns, without calling it: the adjoints of another
/// function's result, whose shape only its signature knows (the caller's sweep passes a
/// closure that is never run, so that rustc infers `R`).
#[inline(always)]
pub fn zero_of<R: Zero, E>(call: impl FnOnce() -> core::result::Result<R, E>) -> R {
    let _ = call;
    R::zero()
}

/// Zeros of the shape of `like`: the adjoints of a parameter or a local array.
#[inline(always)]
pub fn zeros_like<T: Zero>(like: &T) -> T {
    let _ = like;
    T::zero()
}

/// Whether every scalar of `value` is finite.
#[inline]
pub fn finite<P: Parameters + ?Sized>(value: &P) -> bool {
    let mut finite = Finite::default();
    value.visit_runs(&mut |run| finite.run(run));
    finite.all()
}

/// A finiteness check over many scalars: sums of `x * 0.0`, which stay zero while every
/// `x` is finite and turn NaN at the first that is not. Not `ok &= x.is_finite()`: LLVM's
/// SLP vectorizer takes minutes over a reduction of thousands of `and`s once a
/// parameter struct's walk is unrolled (a 4,192-parameter struct cost 200 s of a
/// release build). Sums in strict order are no reduction to it.
#[derive(Default)]
pub(crate) struct Finite {
    lanes: [f64; 8],
}

impl Finite {
    /// Counts `x` in. The lanes rotate, so that eight sums run side by side with no index
    /// to compute: one vector add where the target has them.
    #[inline(always)]
    pub(crate) fn add(&mut self, x: f64) {
        let [a, b, c, d, e, f, g, h] = self.lanes;
        self.lanes = [b, c, d, e, f, g, h, a + x * 0.0];
    }

    /// Counts a run of side-by-side scalars in, eight lanes at a time: vector adds where
    /// the scalar walk of a parameter struct's thousands of numbers was one add each.
    #[inline]
    pub(crate) fn run(&mut self, run: &[f64]) {
        let mut chunks = run.chunks_exact(8);
        for chunk in &mut chunks {
            for (lane, x) in self.lanes.iter_mut().zip(chunk) {
                *lane += x * 0.0;
            }
        }
        for &x in chunks.remainder() {
            self.add(x);
        }
    }

    /// [`Finite::run`] over adjoints, each first given `+ 0.0` (as a pass stores its
    /// gradients: never -0.0).
    #[inline]
    pub(crate) fn settle_run(&mut self, run: &mut [f64]) {
        let mut chunks = run.chunks_exact_mut(8);
        for chunk in &mut chunks {
            for (lane, x) in self.lanes.iter_mut().zip(chunk) {
                *x += 0.0;
                *lane += *x * 0.0;
            }
        }
        for x in chunks.into_remainder() {
            *x += 0.0;
            self.add(*x);
        }
    }

    /// Whether every scalar counted in was finite.
    #[inline(always)]
    pub(crate) fn all(&self) -> bool {
        self.lanes.iter().all(|lane| *lane == 0.0)
    }
}

/// Writes the gradients in `adjoints` (`0 + adjoint`, as a pass stores them: never -0.0)
/// into `out` from `next` on, in parameter order; false if one is not finite.
#[inline]
pub fn gradient_into<P: Parameters + ?Sized>(
    adjoints: &P,
    out: &mut [f64],
    next: &mut usize,
) -> bool {
    let mut finite = Finite::default();
    adjoints.visit(&mut |adjoint| {
        let gradient = 0.0 + adjoint;
        finite.add(gradient);
        if let Some(slot) = out.get_mut(*next) {
            *slot = gradient;
        }
        *next += 1;
    });
    finite.all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarOperation as Op;

    const ALL: [Op; 37] = [
        Op::Add,
        Op::Subtract,
        Op::Multiply,
        Op::Divide,
        Op::Negate,
        Op::Copy,
        Op::Recip,
        Op::Powi,
        Op::Powf,
        Op::Sqrt,
        Op::Cbrt,
        Op::Exp,
        Op::Exp2,
        Op::ExpM1,
        Op::Ln,
        Op::Ln1p,
        Op::Log,
        Op::Log2,
        Op::Log10,
        Op::Sin,
        Op::Cos,
        Op::Tan,
        Op::Asin,
        Op::Acos,
        Op::Atan,
        Op::Atan2,
        Op::Sinh,
        Op::Cosh,
        Op::Tanh,
        Op::Asinh,
        Op::Acosh,
        Op::Atanh,
        Op::Abs,
        Op::Max,
        Op::Min,
        Op::Hypot,
        Op::MulAdd,
    ];

    /// The table of what each slope reads is the truth: replacing everything it says is
    /// not read by NaN changes no slope.
    #[test]
    fn arrays_keep_and_take_in_one_copy_as_a_walk_would() {
        let nested = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let mut walked = Vec::new();
        nested.visit(&mut |x| walked.push(x));
        assert_eq!(nested.as_flat(), Some(walked.as_slice()));
        assert_eq!([2.5].as_flat(), Some([2.5].as_slice()));
        assert_eq!(vec![1.0, 2.0].as_flat(), None);
        let mut stack = Stack::default();
        stack.push(-1.0);
        stack.keep(&nested);
        stack.keep(&vec![7.0, 8.0]);
        let (mut back, mut tail) = ([[0.0; 3]; 2], vec![0.0; 2]);
        stack.take(&mut tail);
        stack.take(&mut back);
        assert_eq!((back, tail), (nested, vec![7.0, 8.0]));
        assert_eq!(stack.pop(), -1.0);
    }

    #[test]
    fn finite_finds_one_bad_number_in_any_place() {
        let bad = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY];
        let good = [
            0.0,
            -0.0,
            1.0,
            -2.5,
            f64::MAX,
            -f64::MAX,
            f64::MIN_POSITIVE / 2.0,
        ];
        for length in [1usize, 7, 8, 9, 100] {
            let mut numbers: Vec<f64> = (0..length).map(|i| good[i % good.len()]).collect();
            assert!(finite(numbers.as_slice()));
            // Settling keeps every number but -0.0, which it stores as 0.0.
            let mut settled = numbers.clone();
            assert!(crate::halves::settle(settled.as_mut_slice()));
            for (settled, number) in settled.iter().zip(&numbers) {
                assert_eq!(settled.to_bits(), (number + 0.0).to_bits());
            }
            assert!(settled.iter().all(|x| x.is_sign_positive() || *x < 0.0));
            for place in 0..length {
                for &value in &bad {
                    let kept = numbers[place];
                    numbers[place] = value;
                    assert!(
                        !finite(numbers.as_slice()),
                        "{value} at {place} of {length}"
                    );
                    let mut settled = numbers.clone();
                    assert!(!crate::halves::settle(settled.as_mut_slice()));
                    numbers[place] = kept;
                }
            }
        }
    }

    #[test]
    fn slopes_read_only_what_the_table_says() {
        let points = [
            [0.3, 0.7, -0.2],
            [1.5, 2.0, 0.25],
            [-0.4, -0.4, 3.0],
            [0.0, 0.5, 1.0],
        ];
        for op in ALL {
            for tracked in [
                [true, false, false],
                [false, true, false],
                [true, true, true],
            ] {
                let tracked = match op.arity() {
                    1 => [true, false, false],
                    2 => [tracked[0], tracked[1], false],
                    _ => tracked,
                };
                for operands in points {
                    let exponent = if op == Op::Powi { 3 } else { 0 };
                    let result = value(op, operands, exponent);
                    let full = slopes(op, tracked, operands, result, exponent);
                    let reads = op.reads(tracked);
                    let mut blind = operands;
                    for (value, read) in blind.iter_mut().zip(reads.operands) {
                        if !read {
                            *value = f64::NAN;
                        }
                    }
                    let blind_value = if reads.value { result } else { f64::NAN };
                    let seen = slopes(op, tracked, blind, blind_value, exponent);
                    for slot in 0..op.arity() {
                        if tracked[slot] && !full[slot].is_nan() {
                            assert_eq!(
                                full[slot].to_bits(),
                                seen[slot].to_bits(),
                                "{op} slot {slot} at {operands:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// An operand the table says propagates gives a non-finite result at every infinity
    /// and NaN, whatever the other operands are (non-finite ones included); one it says
    /// does not is absorbed somewhere.
    #[test]
    fn propagation_table_holds_at_every_non_finite_operand() {
        let bad = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
        let others = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.5,
            1e308,
            -1e308,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for op in ALL {
            for slot in 0..op.arity() {
                let mut absorbed = false;
                for &x in &bad {
                    for &p in &others {
                        for &q in &others {
                            let mut operands = [p, q, 0.5];
                            operands[slot] = x;
                            for exponent in [0, 1, 2, -1] {
                                if value(op, operands, exponent).is_finite() {
                                    absorbed = true;
                                }
                            }
                        }
                    }
                }
                assert_eq!(op.propagates(slot), !absorbed, "{op} slot {slot}");
            }
        }
    }

    #[test]
    fn saved_values_come_back_in_order() {
        let mut stack = Stack::default();
        let (tracked, kept) = ([true, true, false], [false, false, false]);
        let unary = [true, false, false];
        let product = kept_reads(Op::Multiply, tracked, kept, false);
        let square = kept_reads(Op::Multiply, tracked, kept, true);
        let ratio = kept_reads(Op::Divide, tracked, kept, true);
        let tanh = kept_reads(Op::Tanh, unary, kept, false);
        stack.save(product, [2.0, 3.0, 0.0], 6.0);
        stack.save(tanh, [0.5, 0.0, 0.0], 0.5f64.tanh());
        stack.save(square, [4.0, 4.0, 0.0], 16.0);
        assert_eq!(stack.top, 4);
        stack.save(ratio, [5.0, 5.0, 0.0], 1.0);
        assert_eq!(stack.top, 6);
        assert_eq!(stack.restore(ratio, true, [0.0; 3]), ([5.0, 5.0, 0.0], 1.0));
        assert_eq!(stack.restore(square, true, [0.0; 3]).0, [4.0, 4.0, 0.0]);
        assert_eq!(stack.restore(tanh, false, [0.0; 3]).1, 0.5f64.tanh());
        assert_eq!(stack.restore(product, false, [0.0; 3]).0, [2.0, 3.0, 0.0]);
        assert_eq!(stack.top, 0);
        let flags: Vec<bool> = (0..200).map(|i| i % 3 == 0 || i % 7 == 1).collect();
        for &flag in &flags {
            stack.push_flag(flag);
        }
        assert_eq!(stack.taken, 200);
        for &flag in flags.iter().rev() {
            assert_eq!(stack.pop_flag(), flag);
        }
        // A bit reused after a pop is overwritten, not or-ed.
        stack.push_flag(true);
        stack.push_flag(true);
        assert!(stack.pop_flag());
        stack.push_flag(false);
        assert!(!stack.pop_flag());
        assert!(stack.pop_flag());
        assert_eq!(stack.taken, 0);
    }
}
