//! `name_jvp` and `name_hvp` against `name_grad`, over the random programs of the binary's
//! generated file. A module of both `sweep_bits_*` binaries, beside `bits`, so that the
//! programs are compiled once for both comparisons.
//!
//! Cases are drawn as `bits` draws them (third-family functions from their own
//! stream), round robin over the functions, from a seed of their own, each with a
//! pseudo-random tangent `t` (mostly uniform in `[-1, 1)`, some exact zeros and unit
//! steps). `AUTODIFF_SECOND_CASES` sets the number of cases over both files' functions, of
//! which each binary runs its share (default [`DEFAULT_CASES`], a few seconds in a debug
//! build; `AUTODIFF_SECOND_CASES=200000 cargo test --release --test 'sweep_bits_*'
//! second_order` is a thorough run), `AUTODIFF_SECOND_SEED` the seed, and
//! `-- --nocapture` prints the counts. Per case:
//!
//! 1. **`name_jvp`.** If `name_grad` finishes with value `v` and gradient `g`:
//!    - `name_jvp` finishes with the bits of `v` and a derivative `d` within `1e-14` of
//!      `g · t`, relative to `Σ |g_i t_i|` (as `tests/sweeps/second_order.rs` checks; plus
//!      [`UNDERFLOW`], for numbers that round as subnormals). Where the gradient itself
//!      cancels (`g_i` a small difference of large path products), both modes' rounding
//!      is relative to the path products instead: `d` must then be within `1e-14` of
//!      `g · t` relative to `Σ_paths |t_leaf · Π local derivatives|`, computed on the
//!      ledger of `name_graph` and `backward()` (the bound rounding obeys in either order
//!      of summation). Neither tolerance reads `d`. Only where the graph's numbers at `p`
//!      or the tangents carried forward along it are near the ends of the floating-point
//!      range (see [`RANGE`]: an input of `5e-324` or `1e300`) is a `d` further apart not
//!      compared but counted: there one mode's products underflow or overflow where the
//!      other's do not (`(t · x) · x⁻²` against `t · (x · x⁻²)`), and either can lose a
//!      whole term;
//!    - or `name_jvp` fails with `non-finite-slope` or `non-finite-tangent`: forward mode
//!      checks every operation on a parameter's path, also ones the result does not use,
//!      and its tangents are not the reverse pass's numbers.
//!
//!    If `name_grad` fails on a primal number (`non-finite-leaf`, `non-finite-result`),
//!    the primal values are the same in both modes, so `name_jvp` fails too: with the same
//!    kind and operation, or with a forward-mode error (`non-finite-slope`,
//!    `non-finite-tangent`) that it met on the way. If `name_grad` fails with
//!    `non-finite-derivative`, `name_jvp` computes the same slope on its way and fails
//!    with `non-finite-slope` or `non-finite-tangent`. Other reverse-pass failures
//!    (overflowing contributions and sums) have no forward counterpart and are counted.
//! 2. **`name_hvp`.** It records the graph and runs the validated reverse pass before any
//!    second-order number, so: if `name_grad` fails, `name_hvp` fails with the same
//!    [`Facts`] (`bits`' comparison of errors: kind, operation, values); if
//!    `name_grad` finishes, `name_hvp` finishes with the bits of its value and gradient, or
//!    fails with `non-finite-second-order` or `non-finite-tangent` (the second-order
//!    pass's errors). A finished product is checked against central differences of
//!    `name_grad` where those are trustworthy (see below).
//!
//! **Central differences.** Along `u` (`t` with each component scaled by its parameter's
//! size, at least 1), with steps `h` = [`STEP`] and `h / 10`: `D(h) = (g(p + h u) -
//! g(p - h u)) / 2h`, against `name_hvp` along `u`. They are trusted, and compared, only if
//! all of:
//!
//! - every input (parameter and datum) is finite and at most [`MODERATE`] in magnitude
//!   (far out, values overflow and cancel, and a step relative to the parameter is no
//!   longer small for the function);
//! - every number of the graph at `p` (values, local derivatives, adjoints in the ledger of
//!   `name_graph` and `backward()`) is 0 or between `1e-100` and `1e100` in magnitude
//!   ([`RANGE`]): near the ends of the floating-point range, the products that make up
//!   first and second derivatives underflow or overflow (`-(1/s)²` is 0 for `s` = 1e300,
//!   and a gradient through it has already lost a term), and the two orders differ in
//!   which ones do;
//! - `name_grad` finishes at the four points `p ± h u`, `p ± h u / 10`;
//! - the function is the same smooth composition at all five points: the graph of
//!   `name_graph` and `backward()` has the same operations and edges at each, the values
//!   the gradient holds constant (untracked nodes: constants, detached values and what is
//!   computed from them) are the same bits (else the gradient's central differences see a
//!   held value move, which `name_hvp` rightly holds), and no operation is at or crosses a
//!   point where its derivative is a convention or jumps (`abs` at 0, a tie of `max` or
//!   `min` between different nodes, `hypot` at the origin, `powf` of a zero base), which
//!   each operation's regime (the sign of `abs`'s operand, the order of `max`'s operands,
//!   ...) records;
//! - every tracked value of the graph moves as its tangent along `u` (carried forward on
//!   the ledger at `p`) says: over the step `h / 10` by at least [`RESOLVED`] units in its
//!   last place (else it is absorbed, `1e81 + 200 * x`, or saturated, `tanh` at 17, and
//!   its changes, which derivatives see, are below what its rounding shows), and over the
//!   step `h` linearly, its central difference within [`LINEAR`] of its tangent (else a
//!   value like `sin(1e5 x)` turns within the step);
//! - the two step sizes agree: `max_i |D(h)_i - D(h/10)_i|` is at most [`STEPS_AGREE`]
//!   times the scale `max(|D(h)|, |D(h/10)|, |g|)` (largest components; curvature too
//!   sharp for the step, or rounding that swamps the small step, fails this).
//!
//! None of these reads `name_hvp`'s answer, so they cannot excuse a wrong product; they
//! only decide which cases are compared, and at least [`MIN_CHECKED`] of the finished
//! products must be. A trusted case compares every component `i`: `|Hu_i - D(h/10)_i|` at
//! most [`HVP_RELATIVE`] of the larger of the two, plus [`HVP_SCALE`] of the scale, plus
//! [`HVP_ROUNDING`] times `max(1, |g|)` (what central differences of a rounded gradient
//! resolve), plus three times `max_i |D(h)_i - D(h/10)_i|` (the central differences' own
//! error, which the two steps show). A product of an output that depends on no parameter
//! must be exactly zero.
//!
//! `planted_errors_are_found` runs the same checks on a `name_jvp` and a `name_hvp` with
//! small deliberate errors (100 times the jvp tolerance; 5% of the product's or the
//! gradient's size), and requires every one that is compared to be reported: the checks
//! can fail.

use std::panic::AssertUnwindSafe;

use scalar_autodiff::{tape_len, Ledger, ScalarAutodiffError, ScalarOperation};

use super::generated;
use super::support::{
    env_number, harsh, share_of, slot_of, with_ledger, Case, Outcome, Program, Rng, DEFAULT_SEED,
    HARSH_STREAM,
};

/// Cases over the functions of both files when `AUTODIFF_SECOND_CASES` is not set.
const DEFAULT_CASES: usize = 8_000;

/// Mixed into the default seed, so that the cases are not `bits`' first ones.
const SECOND_STREAM: u64 = 0x5EC0_0D00_0000_0005;

/// Mixed into the seed for the tangents.
const TANGENT_STREAM: u64 = 0x7A96_E470_0000_0004;

/// The relative tolerance of a directional derivative against `g · t`.
const JVP_RELATIVE: f64 = 1e-14;

/// An absolute floor under the directional derivatives' tolerance: products that round
/// into subnormal numbers (`5e-324 * 0.84`) lose digits absolutely, not relatively.
const UNDERFLOW: f64 = 1e-300;

/// Inputs of larger magnitude are not moderate (see the module's documentation).
const MODERATE: f64 = 1e3;

/// Numbers in the graph beyond this magnitude, or nonzero below its inverse, are near the
/// ends of the floating-point range (see the module's documentation).
const RANGE: f64 = 1e100;

/// The central differences' step along `u`.
const STEP: f64 = 1e-5;

/// How many units in its last place a tracked value must move over the small step.
const RESOLVED: f64 = 1e3;

/// How far a tracked value's central difference over the large step may be from its
/// tangent, relative to the tangent.
const LINEAR: f64 = 1e-2;

/// How far apart the central differences of the two steps may be, relative to the scale.
const STEPS_AGREE: f64 = 1e-3;

/// A product's tolerance against central differences: relative per component...
const HVP_RELATIVE: f64 = 1e-4;
/// ...and relative to the scale `max(|D|, |g|)`.
const HVP_SCALE: f64 = 1e-6;
/// ...and absolute, times `max(1, |g|)`: the central differences' resolution. A gradient
/// is formed from numbers of about that size (local derivatives like `1 - tanh²` are
/// differences of numbers of size 1), so it is known to a few units of `2^-52` of it,
/// and its differences over a step of `2e-6` (`h / 5`) to about `1e-9` of it. Where the
/// product is smaller still (a saturated `tanh`), the gradient at the shifted points may
/// round to the same bits, and its central differences to 0.
const HVP_ROUNDING: f64 = 1e-8;

/// The least fraction of the products where both `name_grad` and `name_hvp` finish that
/// must be compared with central differences.
const MIN_CHECKED: f64 = 0.4;

/// A pseudo-random tangent: mostly uniform in `[-1, 1)`, now and then an exact zero (a
/// direction that leaves a parameter alone) or a unit step.
fn tangent(slots: usize, rng: &mut Rng) -> Vec<f64> {
    (0..slots)
        .map(|_| match rng.below(20) {
            0..=16 => rng.uniform(-1.0, 1.0),
            17 | 18 => 0.0,
            _ => [1.0, -1.0][rng.below(2)],
        })
        .collect()
}

/// The operation an error names, if it names one.
fn operation_of(error: &ScalarAutodiffError) -> Option<ScalarOperation> {
    use ScalarAutodiffError as E;
    match error {
        E::NonFiniteLeaf { operation, .. }
        | E::NonFiniteResult { operation, .. }
        | E::UntrackedOutput { operation }
        | E::NonFiniteDerivative { operation, .. }
        | E::NonFiniteSlope { operation, .. }
        | E::NonFiniteTangent { operation, .. }
        | E::NonFiniteSecondOrder { operation, .. }
        | E::NonFiniteContribution { operation, .. }
        | E::NonFinitePassAdjoint { operation, .. }
        | E::NonFiniteAccumulatedGradient { operation, .. } => Some(*operation),
        _ => None,
    }
}

/// The same kind and operation.
fn alike(a: &ScalarAutodiffError, b: &ScalarAutodiffError) -> bool {
    a.kind() == b.kind() && operation_of(a) == operation_of(b)
}

/// `kind operation`, for counting.
fn key(error: &ScalarAutodiffError) -> String {
    match operation_of(error) {
        Some(operation) => format!("{} {}", error.kind(), operation.as_str()),
        None => error.kind().to_owned(),
    }
}

/// Counts by key.
#[derive(Default)]
struct Counts(Vec<(String, usize)>);

impl Counts {
    fn add(&mut self, key: String) {
        match self.0.iter_mut().find(|(seen, _)| *seen == key) {
            Some((_, count)) => *count += 1,
            None => self.0.push((key, 1)),
        }
    }

    fn total(&self) -> usize {
        self.0.iter().map(|(_, count)| count).sum()
    }

    /// Most frequent first.
    fn sorted(&self) -> Vec<(&str, usize)> {
        let mut sorted: Vec<(&str, usize)> = self
            .0
            .iter()
            .map(|(key, count)| (key.as_str(), *count))
            .collect();
        sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        sorted
    }
}

/// The largest magnitude in `values`.
fn largest(values: &[f64]) -> f64 {
    values.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
}

/// `Σ g_i t_i` and `Σ |g_i t_i|`.
fn dot(gradient: &[f64], tangent: &[f64]) -> (f64, f64) {
    gradient
        .iter()
        .zip(tangent)
        .fold((0.0, 0.0), |(sum, terms), (g, t)| {
            (sum + g * t, terms + (g * t).abs())
        })
}

/// `Σ_paths |t_leaf · Π local derivatives|` from the variables to the output: the tangent's
/// magnitudes carried forward over the ledger's tracked edges with the magnitudes of their
/// local derivatives. Both modes' sums of path products round relative to it.
fn path_scale(ledger: &Ledger, tangent: &[f64]) -> f64 {
    carried(ledger, tangent, true)
        .last()
        .copied()
        .unwrap_or(0.0)
}

/// Per node of `ledger`, its tangent along `tangent`: `Σ d_k ṫ_k` over its tracked
/// operands `k` from the variables' `tangent[slot]` on, with the local derivatives at the
/// ledger's point. With `magnitudes`, `Σ |d_k| ṫ_k` from `|tangent[slot]|`: the sum over
/// paths of `|t_leaf · Π local derivatives|`.
fn carried(ledger: &Ledger, tangent: &[f64], magnitudes: bool) -> Vec<f64> {
    let mut incoming: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ledger.nodes.len()];
    for edge in ledger.edges.iter().rev() {
        if edge.parent_tracked {
            let local = if magnitudes {
                edge.local_derivative.abs()
            } else {
                edge.local_derivative
            };
            incoming[edge.child].push((edge.parent, local));
        }
    }
    let mut carried = vec![0.0_f64; ledger.nodes.len()];
    for at in 0..ledger.nodes.len() {
        carried[at] = match slot_of(ledger, at) {
            Some(slot) if magnitudes => tangent[slot].abs(),
            Some(slot) => tangent[slot],
            None => incoming[at]
                .iter()
                .map(|&(parent, local)| local * carried[parent])
                .sum(),
        };
    }
    carried
}

/// Where an operation whose derivative has a convention or a jump is: its regime, which
/// must not change between the points of the central differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Regime {
    /// Away from any convention: the sign of `abs`'s operand or `powf`'s base, the order
    /// of `max`'s or `min`'s operands, or `hypot` away from the origin.
    Side(std::cmp::Ordering),
    /// At the convention: `abs` or `powf`'s base at 0, a tie of different nodes, `hypot`
    /// at the origin.
    Convention,
}

/// What the smoothness rules compare between the points of the central differences.
#[derive(Debug, PartialEq)]
struct Shape {
    /// Per node in topological order: its operation and whether it is tracked.
    operations: Vec<(ScalarOperation, bool)>,
    /// Per edge: child, parent and operand slot.
    edges: Vec<(usize, usize, usize)>,
    /// The bits of every untracked node's value: what the gradient holds constant.
    held: Vec<u64>,
    /// The regime of every tracked `abs`, `max`, `min`, `hypot` and `powf`.
    regimes: Vec<Regime>,
}

impl Shape {
    fn of(ledger: &Ledger) -> Shape {
        use ScalarOperation as Op;
        // Each node's operands by slot: (parent, value, tracked).
        let mut operands: Vec<[Option<(usize, f64, bool)>; 3]> =
            vec![[None; 3]; ledger.nodes.len()];
        for edge in &ledger.edges {
            if let Some(slot) = operands[edge.child].get_mut(edge.operand) {
                *slot = Some((
                    edge.parent,
                    ledger.nodes[edge.parent].value,
                    edge.parent_tracked,
                ));
            }
        }
        let side = |a: f64, b: f64| match a.partial_cmp(&b) {
            Some(std::cmp::Ordering::Equal) | None => Regime::Convention,
            Some(order) => Regime::Side(order),
        };
        let mut regimes = Vec::new();
        for (node, &[a, b, _]) in ledger.nodes.iter().zip(&operands) {
            if !node.tracked {
                continue;
            }
            let regime = match (node.operation, a, b) {
                (Op::Abs, Some((_, x, _)), _) => side(x, 0.0),
                (Op::Max | Op::Min, Some((x, left, _)), Some((y, right, _))) => {
                    if x == y {
                        // `x.max(x)`: the same node, a tie everywhere, and smooth.
                        Regime::Side(std::cmp::Ordering::Equal)
                    } else {
                        side(left, right)
                    }
                }
                (Op::Hypot, _, _) => side(node.value.abs(), 0.0),
                (Op::Powf, Some((_, base, _)), _) => side(base, 0.0),
                _ => continue,
            };
            regimes.push(regime);
        }
        Shape {
            operations: ledger
                .nodes
                .iter()
                .map(|node| (node.operation, node.tracked))
                .collect(),
            edges: ledger
                .edges
                .iter()
                .map(|edge| (edge.child, edge.parent, edge.operand))
                .collect(),
            held: ledger
                .nodes
                .iter()
                .filter(|node| !node.tracked)
                .map(|node| node.value.to_bits())
                .collect(),
            regimes,
        }
    }

    fn at_convention(&self) -> bool {
        self.regimes.contains(&Regime::Convention)
    }
}

/// Whether `x` is 0 or within [`RANGE`] of 1 in magnitude.
fn moderate(x: f64) -> bool {
    x == 0.0 || (1.0 / RANGE..=RANGE).contains(&x.abs())
}

/// Whether every value, tracked local derivative and pass adjoint of `ledger` is
/// [`moderate`].
fn in_range(ledger: &Ledger) -> bool {
    ledger
        .nodes
        .iter()
        .all(|node| moderate(node.value) && node.pass_adjoint.is_none_or(moderate))
        && ledger
            .edges
            .iter()
            .all(|edge| !edge.parent_tracked || moderate(edge.local_derivative))
}

/// `name_graph`'s ledger at parameters `p` (`None` for an output that depends on no
/// parameter, or a failure).
fn ledger_at(program: &Program, p: &[f64], case: &Case) -> Option<Ledger> {
    let (outcome, ledger) = with_ledger(|| (program.graph)(p, &case.xs, case.n));
    match outcome {
        Outcome::Finished { .. } => ledger,
        Outcome::Failed(_) => None,
    }
}

/// Why a finished product was not compared with central differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Skip {
    Immoderate,
    Range,
    Domain,
    Structure,
    Held,
    Regime,
    Unresolved,
    Nonlinear,
    Steps,
}

impl Skip {
    const ALL: [Skip; 9] = [
        Skip::Immoderate,
        Skip::Range,
        Skip::Domain,
        Skip::Structure,
        Skip::Held,
        Skip::Regime,
        Skip::Unresolved,
        Skip::Nonlinear,
        Skip::Steps,
    ];

    fn describe(self) -> &'static str {
        match self {
            Skip::Immoderate => "an input is not finite or not moderate",
            Skip::Range => "a number in the graph is near the ends of the range",
            Skip::Domain => "name_grad fails at a shifted point",
            Skip::Structure => "the graph's operations or edges change (a branch flips)",
            Skip::Held => "a value the gradient holds constant changes",
            Skip::Regime => "an operation is at or crosses a convention (tie, kink)",
            Skip::Unresolved => "a value moves by too few units in its last place (absorbed)",
            Skip::Nonlinear => "a value is not linear over the step (sharper than the step)",
            Skip::Steps => "the two step sizes disagree",
        }
    }
}

/// What `name_jvp` returns: the value and the directional derivative.
type JvpResult = Result<(f64, f64), ScalarAutodiffError>;

/// What `name_hvp` returns: the value, the gradient and the product, flattened.
type HvpResult = Result<(f64, Vec<f64>, Vec<f64>), ScalarAutodiffError>;

/// The functions under test, called at a case along a tangent, so that
/// `planted_errors_are_found` can swap in wrong ones.
struct Calls {
    jvp: fn(&Program, &Case, &[f64]) -> JvpResult,
    hvp: fn(&Program, &Case, &[f64]) -> HvpResult,
}

/// The generated `name_jvp` and `name_hvp`.
const GENERATED: Calls = Calls {
    jvp: |program, case, t| (program.jvp)(&case.p, &case.xs, case.n, t),
    hvp: |program, case, t| (program.hvp)(&case.p, &case.xs, case.n, t),
};

/// What a sweep counted and found.
#[derive(Default)]
struct Tally {
    cases: usize,
    grad_finished: usize,
    /// Derivatives within `1e-14` of `Σ |g_i t_i|`, and further apart but within `1e-14`
    /// of the path products (the gradient cancels).
    jvp_agreed: usize,
    jvp_cancelling: usize,
    /// Further apart, where the graph's numbers or the tangents carried forward are near
    /// the ends of the range (see [`in_range`]): not compared.
    jvp_out_of_range: Vec<String>,
    /// The largest distance seen, relative to the path products.
    jvp_worst: f64,
    jvp_only_failed: Counts,
    grad_only_failed: Counts,
    jvp_failed: Counts,
    hvp_finished: usize,
    hvp_only_failed: Counts,
    hvp_failed_alike: usize,
    hvp_constant: usize,
    checked: usize,
    checked_programs: Vec<bool>,
    /// Finished products not compared, by [`Skip`].
    skipped: [usize; Skip::ALL.len()],
    /// The failures, each reported whole.
    jvp_wrong: Vec<String>,
    hvp_wrong: Vec<String>,
    errors_differ: Vec<String>,
}

/// The inputs of a case, for a report.
fn describe(program: &Program, case: &Case, tangent: &[f64]) -> String {
    format!(
        "{name} (fn {name} in {file})\n    \
         p = {p:?} {pb}\n    xs = {xs:?} {xb}, n = {n}\n    tangent = {t:?} {tb}",
        name = program.name,
        file = generated::FILE,
        p = case.p,
        pb = Case::bits(&case.p),
        xs = case.xs,
        xb = Case::bits(&case.xs),
        n = case.n,
        t = tangent,
        tb = Case::bits(tangent),
    )
}

/// One case's inputs and what `name_grad` gave.
struct Point<'a> {
    program: &'a Program,
    slot: usize,
    case: &'a Case,
    tangent: &'a [f64],
    grad: &'a Outcome,
}

impl Point<'_> {
    fn describe(&self) -> String {
        describe(self.program, self.case, self.tangent)
    }
}

fn check_jvp(tally: &mut Tally, at: &Point<'_>, jvp: &JvpResult) {
    let name = at.program.name;
    match (at.grad, jvp) {
        (Outcome::Finished { value, gradient }, Ok((jvp_value, derivative))) => {
            let (dot, terms) = dot(gradient, at.tangent);
            let distance = (derivative - dot).abs();
            let report = |why: String| {
                format!(
                    "{}\n    {name}_grad: value {value:?}, gradient {gradient:?}, \
                     g . t = {dot:?} (sum of |g_i t_i| {terms:?})\n    \
                     {name}_jvp:  value {jvp_value:?}, derivative {derivative:?}\n    {why}",
                    at.describe()
                )
            };
            if jvp_value.to_bits() != value.to_bits() {
                tally
                    .jvp_wrong
                    .push(report("the values' bits differ".to_owned()));
                return;
            }
            if distance <= JVP_RELATIVE * terms + UNDERFLOW {
                tally.jvp_agreed += 1;
                return;
            }
            let ledger = ledger_at(at.program, &at.case.p, at.case);
            let paths = ledger
                .as_ref()
                .map_or(0.0, |ledger| path_scale(ledger, at.tangent));
            if paths.is_finite() && distance <= JVP_RELATIVE * paths + UNDERFLOW {
                tally.jvp_cancelling += 1;
                tally.jvp_worst = tally.jvp_worst.max(distance / paths);
                return;
            }
            let out_of_range = ledger.as_ref().is_some_and(|ledger| {
                !in_range(ledger) || !carried(ledger, at.tangent, true).into_iter().all(moderate)
            });
            if out_of_range {
                tally.jvp_out_of_range.push(report(
                    "not compared: numbers of the graph are near the ends of the range".to_owned(),
                ));
                return;
            }
            tally.jvp_wrong.push(report(format!(
                "|d - g . t| = {distance:?}: more than {JVP_RELATIVE:e} of the sum of |g_i t_i| \
                 and of the path products {paths:?}"
            )));
        }
        (Outcome::Finished { .. }, Err(error)) => {
            if matches!(error.kind(), "non-finite-slope" | "non-finite-tangent") {
                tally.jvp_only_failed.add(key(error));
            } else {
                tally.errors_differ.push(format!(
                    "{}\n    {name}_grad finished; {name}_jvp failed with {error:?} (only \
                     non-finite-slope or non-finite-tangent may fail where name_grad finishes)",
                    at.describe()
                ));
            }
        }
        (Outcome::Failed(grad_error), Ok(_)) => {
            if matches!(
                grad_error.kind(),
                "non-finite-leaf" | "non-finite-result" | "non-finite-derivative"
            ) {
                tally.errors_differ.push(format!(
                    "{}\n    {name}_grad failed with {grad_error:?}; {name}_jvp finished",
                    at.describe()
                ));
            } else {
                tally.grad_only_failed.add(key(grad_error));
            }
        }
        (Outcome::Failed(grad_error), Err(jvp_error)) => {
            let forward = matches!(jvp_error.kind(), "non-finite-slope" | "non-finite-tangent");
            let agree = match grad_error.kind() {
                "non-finite-leaf" | "non-finite-result" => alike(grad_error, jvp_error) || forward,
                "non-finite-derivative" => forward,
                _ => true,
            };
            if agree {
                tally
                    .jvp_failed
                    .add(format!("{} / {}", key(grad_error), key(jvp_error)));
            } else {
                tally.errors_differ.push(format!(
                    "{}\n    {name}_grad failed with {grad_error:?}\n    {name}_jvp failed \
                     with {jvp_error:?}",
                    at.describe()
                ));
            }
        }
    }
}

fn check_hvp(tally: &mut Tally, calls: &Calls, at: &Point<'_>, hvp: &HvpResult) {
    let name = at.program.name;
    let (value, gradient) = match (at.grad, hvp) {
        (Outcome::Finished { value, gradient }, _) => (*value, gradient),
        (Outcome::Failed(_), Err(hvp_error))
            if at.grad.facts() == Outcome::Failed(hvp_error.clone()).facts() =>
        {
            tally.hvp_failed_alike += 1;
            return;
        }
        (Outcome::Failed(grad_error), _) => {
            tally.errors_differ.push(format!(
                "{}\n    {name}_grad failed with {grad_error:?}\n    {name}_hvp: {hvp:?}",
                at.describe()
            ));
            return;
        }
    };
    tally.grad_finished += 1;
    let product = match hvp {
        Ok((hvp_value, hvp_gradient, product)) => {
            let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            if hvp_value.to_bits() != value.to_bits() || bits(hvp_gradient) != bits(gradient) {
                tally.hvp_wrong.push(format!(
                    "{}\n    {name}_grad: value {value:?}, gradient {gradient:?}\n    \
                     {name}_hvp:  value {hvp_value:?}, gradient {hvp_gradient:?} (not the \
                     same bits)",
                    at.describe()
                ));
                return;
            }
            product
        }
        Err(error) => {
            if matches!(
                error.kind(),
                "non-finite-second-order" | "non-finite-tangent"
            ) {
                tally.hvp_only_failed.add(key(error));
            } else {
                tally.errors_differ.push(format!(
                    "{}\n    {name}_grad finished; {name}_hvp failed with {error:?} (only the \
                     second-order pass's errors may fail where name_grad finishes)",
                    at.describe()
                ));
            }
            return;
        }
    };
    tally.hvp_finished += 1;
    match trusted_differences(at, gradient) {
        Err(skip) => tally.skipped[skip as usize] += 1,
        Ok(None) => {
            // An output that depends on no parameter: its product is exactly zero.
            tally.hvp_constant += 1;
            if product.iter().any(|&x| x != 0.0) {
                tally.hvp_wrong.push(format!(
                    "{}\n    the output depends on no parameter, and {name}_hvp's product is \
                     {product:?}",
                    at.describe()
                ));
            }
        }
        Ok(Some(differences)) => compare(tally, calls, at, gradient, &differences),
    }
}

/// Central differences of `name_grad` that the rules trust.
struct Differences {
    /// The direction `u`.
    u: Vec<f64>,
    /// Steps `h` and `h / 10`.
    wide: Vec<f64>,
    narrow: Vec<f64>,
}

/// The central differences of `name_grad` along `u` at the case, `Ok(None)` if the output
/// depends on no parameter, or why they are not trusted. Reads `name_grad` and
/// `name_graph` only.
fn trusted_differences(at: &Point<'_>, gradient: &[f64]) -> Result<Option<Differences>, Skip> {
    let case = at.case;
    let near = |x: &f64| x.is_finite() && x.abs() <= MODERATE;
    if !case.p.iter().chain(&case.xs).all(near) {
        return Err(Skip::Immoderate);
    }
    let Some(ledger) = ledger_at(at.program, &case.p, case) else {
        return Ok(None);
    };
    if !in_range(&ledger) {
        return Err(Skip::Range);
    }
    let shape = Shape::of(&ledger);
    if shape.at_convention() {
        return Err(Skip::Regime);
    }
    let u: Vec<f64> = case
        .p
        .iter()
        .zip(at.tangent)
        .map(|(p, t)| t * p.abs().max(1.0))
        .collect();
    // `name_grad` and the graph's values at `p + step u`, where its shape is `shape`'s.
    let shifted = |step: f64| -> Result<(Vec<f64>, Vec<f64>), Skip> {
        let p: Vec<f64> = case.p.iter().zip(&u).map(|(p, u)| p + step * u).collect();
        let Outcome::Finished { gradient, .. } = (at.program.grad)(&p, &case.xs, case.n) else {
            return Err(Skip::Domain);
        };
        let ledger = ledger_at(at.program, &p, case).ok_or(Skip::Structure)?;
        let there = Shape::of(&ledger);
        if there.operations != shape.operations || there.edges != shape.edges {
            return Err(Skip::Structure);
        }
        if there.held != shape.held {
            return Err(Skip::Held);
        }
        if there.regimes != shape.regimes {
            return Err(Skip::Regime);
        }
        Ok((
            gradient,
            ledger.nodes.iter().map(|node| node.value).collect(),
        ))
    };
    let h = STEP;
    let (up, values_up) = shifted(h)?;
    let (down, values_down) = shifted(-h)?;
    let (near_up, _) = shifted(h / 10.0)?;
    let (near_down, _) = shifted(-h / 10.0)?;
    // Every tracked node moves as its tangent says: by many units in its last place over
    // the small step, and linearly over the large one.
    let tangents = carried(&ledger, &u, false);
    for (at, node) in ledger.nodes.iter().enumerate() {
        if !node.tracked {
            continue;
        }
        let tangent = tangents[at];
        if tangent != 0.0 && tangent.abs() * (h / 5.0) < RESOLVED * f64::EPSILON * node.value.abs()
        {
            return Err(Skip::Unresolved);
        }
        let (up, down) = (values_up[at], values_down[at]);
        let slope = (up - down) / (2.0 * h);
        let rounding = 8.0 * f64::EPSILON * up.abs().max(down.abs()) / (2.0 * h);
        if (slope - tangent).abs() > LINEAR * tangent.abs() + rounding {
            return Err(Skip::Nonlinear);
        }
    }
    let quotient = |a: &[f64], b: &[f64], width: f64| -> Vec<f64> {
        a.iter().zip(b).map(|(a, b)| (a - b) / width).collect()
    };
    let wide = quotient(&up, &down, 2.0 * h);
    let narrow = quotient(&near_up, &near_down, h / 5.0);
    let differences = Differences { u, wide, narrow };
    if differences.spread() > STEPS_AGREE * differences.scale(gradient) {
        return Err(Skip::Steps);
    }
    Ok(Some(differences))
}

impl Differences {
    /// `max_i |D(h)_i - D(h/10)_i|`.
    fn spread(&self) -> f64 {
        self.wide
            .iter()
            .zip(&self.narrow)
            .fold(0.0_f64, |m, (a, b)| m.max((a - b).abs()))
    }

    /// `max(|D(h)|, |D(h/10)|, |g|)`, largest components.
    fn scale(&self, gradient: &[f64]) -> f64 {
        largest(&self.wide)
            .max(largest(&self.narrow))
            .max(largest(gradient))
    }
}

/// `name_hvp` along `u` against trusted central differences.
fn compare(
    tally: &mut Tally,
    calls: &Calls,
    at: &Point<'_>,
    gradient: &[f64],
    differences: &Differences,
) {
    let name = at.program.name;
    let case = at.case;
    let product = match (calls.hvp)(at.program, case, &differences.u) {
        Ok((_, _, product)) => product,
        Err(error) => {
            // Along `t` it finished: only the second-order pass's errors, as there.
            if !matches!(
                error.kind(),
                "non-finite-second-order" | "non-finite-tangent"
            ) {
                tally.errors_differ.push(format!(
                    "{}\n    {name}_hvp along u = {:?} failed with {error:?}",
                    at.describe(),
                    differences.u
                ));
            }
            tally.skipped[Skip::Domain as usize] += 1;
            return;
        }
    };
    let scale = differences.scale(gradient);
    let spread = differences.spread();
    let floor = HVP_ROUNDING * largest(gradient).max(1.0);
    let allowed = |x: f64, d: f64| {
        HVP_RELATIVE * x.abs().max(d.abs()) + HVP_SCALE * scale + floor + 3.0 * spread
    };
    let pairs = || product.iter().zip(&differences.narrow);
    if pairs().all(|(&x, &d)| (x - d).abs() <= allowed(x, d)) {
        tally.checked += 1;
        tally.checked_programs[at.slot] = true;
        return;
    }
    let worst = pairs().fold(0.0_f64, |m, (&x, &d)| m.max((x - d).abs() / allowed(x, d)));
    tally.hvp_wrong.push(format!(
        "{}\n    value {:?}, gradient {gradient:?}\n    direction u = {:?}\n    \
         {name}_hvp along u:       {product:?}\n    central differences, h:    {:?}\n    \
         central differences, h/10: {:?}\n    (worst component {worst:.3e} times its \
         tolerance; scale {scale:?}, spread of the steps {spread:?})",
        at.describe(),
        match at.grad {
            Outcome::Finished { value, .. } => *value,
            Outcome::Failed(_) => f64::NAN,
        },
        differences.u,
        differences.wide,
        differences.narrow,
    ));
}

/// Runs `call`; a panic fails the test with the case that caused it.
fn unpanicking<T>(what: &str, at: &Point<'_>, call: impl FnOnce() -> T) -> T {
    match std::panic::catch_unwind(AssertUnwindSafe(call)) {
        Ok(result) => result,
        Err(_) => panic!("{what} panicked (message above) at {}", at.describe()),
    }
}

/// `cases` cases round robin over `programs`, from `seed`, checked with `calls`.
fn sweep(programs: &[Program], cases: usize, seed: u64, calls: &Calls) -> Tally {
    let mut rng = Rng(seed);
    let mut harsh_rng = Rng(seed ^ HARSH_STREAM);
    let mut tangent_rng = Rng(seed ^ TANGENT_STREAM);
    let mut tally = Tally {
        checked_programs: vec![false; programs.len()],
        ..Tally::default()
    };
    for index in 0..cases {
        let slot = index % programs.len();
        let program = &programs[slot];
        let case = if harsh(program) {
            Case::harsh(program, &mut harsh_rng)
        } else {
            Case::random(program, &mut rng)
        };
        let tangent = tangent(program.slots, &mut tangent_rng);
        tally.cases += 1;
        let before = tape_len();
        let grad = (program.grad)(&case.p, &case.xs, case.n);
        let at = Point {
            program,
            slot,
            case: &case,
            tangent: &tangent,
            grad: &grad,
        };
        let jvp = unpanicking("name_jvp", &at, || (calls.jvp)(program, &case, &tangent));
        assert_eq!(tape_len(), before, "{}_jvp left nodes", program.name);
        unpanicking("a check", &at, || check_jvp(&mut tally, &at, &jvp));
        let hvp = unpanicking("name_hvp", &at, || (calls.hvp)(program, &case, &tangent));
        assert_eq!(tape_len(), before, "{}_hvp left nodes", program.name);
        unpanicking("a check", &at, || check_hvp(&mut tally, calls, &at, &hvp));
        assert_eq!(
            tape_len(),
            before,
            "{}: nodes left on the tape",
            program.name
        );
    }
    tally
}

impl Tally {
    fn print(&self, programs: &[Program]) {
        println!(
            "{} cases over {} functions; name_grad finished {}",
            self.cases,
            programs.len(),
            self.grad_finished
        );
        println!(
            "jvp: {} within {JVP_RELATIVE:e} of sum |g_i t_i|, {} only of the path products \
             (the gradient cancels; worst {:.2e} of them), {} further apart near the ends of \
             the range (not compared)",
            self.jvp_agreed,
            self.jvp_cancelling,
            self.jvp_worst,
            self.jvp_out_of_range.len()
        );
        if let Some(first) = self.jvp_out_of_range.first() {
            println!("  the first:\n  {first}");
        }
        for (what, counts) in [
            ("grad finished, jvp failed", &self.jvp_only_failed),
            ("grad failed, jvp finished", &self.grad_only_failed),
            ("both failed (grad / jvp)", &self.jvp_failed),
            ("grad finished, hvp failed", &self.hvp_only_failed),
        ] {
            println!("{what}: {} {:?}", counts.total(), counts.sorted());
        }
        println!(
            "hvp: {} finished with grad's bits, {} failed as grad did; products: {} checked \
             against central differences, {} of an output that depends on no parameter",
            self.hvp_finished, self.hvp_failed_alike, self.checked, self.hvp_constant
        );
        for skip in Skip::ALL {
            println!(
                "  skipped, {}: {}",
                skip.describe(),
                self.skipped[skip as usize]
            );
        }
        let never: Vec<&str> = programs
            .iter()
            .zip(&self.checked_programs)
            .filter(|(_, &checked)| !checked)
            .map(|(program, _)| program.name)
            .collect();
        println!(
            "functions never checked against central differences: {}",
            never.len()
        );
    }

    /// The failures, by kind: how many, and the first few whole.
    fn failures(&self) -> Vec<String> {
        let shown = env_number("AUTODIFF_SECOND_SHOW", 3usize);
        let mut failures = Vec::new();
        for (what, reports) in [
            ("name_jvp disagrees with name_grad", &self.jvp_wrong),
            (
                "name_hvp disagrees with name_grad or central differences",
                &self.hvp_wrong,
            ),
            ("the errors disagree", &self.errors_differ),
        ] {
            if !reports.is_empty() {
                let first: Vec<&str> = reports.iter().take(shown).map(String::as_str).collect();
                failures.push(format!(
                    "{what}: {} cases; the first:\n  {}",
                    reports.len(),
                    first.join("\n  ")
                ));
            }
        }
        failures
    }
}

#[test]
fn jvp_and_hvp_agree_with_grad_on_random_programs() {
    let programs = generated::PROGRAMS;
    let cases = share_of(env_number("AUTODIFF_SECOND_CASES", DEFAULT_CASES), programs);
    let seed: u64 = env_number("AUTODIFF_SECOND_SEED", DEFAULT_SEED ^ SECOND_STREAM);
    let started = std::time::Instant::now();
    let tally = sweep(programs, cases, seed, &GENERATED);
    println!("seed {seed:#x}, {:.1?}", started.elapsed());
    tally.print(programs);
    let failures = tally.failures();
    for failure in &failures {
        eprintln!("{failure}\n");
    }
    assert!(
        failures.is_empty(),
        "{} kinds of failure, reported above",
        failures.len()
    );
    assert!(
        tally.jvp_agreed > 0 && tally.hvp_finished > 0,
        "nothing finished"
    );
    let fraction = tally.checked as f64 / tally.hvp_finished as f64;
    println!(
        "{:.1}% of the {} finished products checked",
        100.0 * fraction,
        tally.hvp_finished
    );
    assert!(
        fraction >= MIN_CHECKED,
        "only {:.1}% of the {} finished products were checked against central differences",
        100.0 * fraction,
        tally.hvp_finished
    );
}

/// The checks find small errors: a `name_jvp` off by `1e-12` of `Σ |g_i t_i|` or of the
/// path products, whichever is larger (and `1e-290`), and a `name_hvp` whose first
/// component is off by 5% of the larger of the product and the gradient (and `1e-3`), over
/// four cases per function.
#[test]
fn planted_errors_are_found() {
    let programs = generated::PROGRAMS;
    let planted = Calls {
        jvp: |program, case, t| {
            let (value, derivative) = (GENERATED.jvp)(program, case, t)?;
            let terms = match (program.grad)(&case.p, &case.xs, case.n) {
                Outcome::Finished { gradient, .. } => dot(&gradient, t).1,
                Outcome::Failed(_) => 0.0,
            };
            let paths =
                ledger_at(program, &case.p, case).map_or(0.0, |ledger| path_scale(&ledger, t));
            Ok((value, derivative + 1e-12 * terms.max(paths) + 1e-290))
        },
        hvp: |program, case, t| {
            let (value, gradient, mut product) = (GENERATED.hvp)(program, case, t)?;
            let size = largest(&product).max(largest(&gradient));
            if let Some(first) = product.first_mut() {
                *first += 0.05 * size + 1e-3;
            }
            Ok((value, gradient, product))
        },
    };
    let tally = sweep(
        programs,
        4 * programs.len(),
        DEFAULT_SEED ^ SECOND_STREAM ^ 1,
        &planted,
    );
    tally.print(programs);
    assert!(tally.errors_differ.is_empty(), "{:?}", tally.failures());
    // Every planted jvp error is found, but where the range ends (not compared).
    let compared = tally.jvp_agreed + tally.jvp_cancelling + tally.jvp_wrong.len();
    assert!(
        compared > programs.len(),
        "{compared} compared directional derivatives"
    );
    assert_eq!(
        tally.jvp_agreed + tally.jvp_cancelling,
        0,
        "planted jvp errors passed"
    );
    // Every product compared is found wrong, and as many as the sweep must compare.
    assert_eq!(tally.checked, 0, "a planted hvp error passed");
    assert!(
        tally.hvp_wrong.len() as f64 >= MIN_CHECKED * tally.hvp_finished as f64,
        "{} planted hvp errors found in {} finished products",
        tally.hvp_wrong.len(),
        tally.hvp_finished
    );
}
