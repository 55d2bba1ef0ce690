//! `name_grad` against `name_graph` + `backward()`, bit for bit, over random programs.
//!
//! A module of both `sweep_bits_*` binaries, each of which compiles one generated file
//! (`tests/random_programs/generated_language.rs`, `generated_sweeps.rs`, written by
//! `tests/random_programs/generator.rs`; see the command at the top of either) as its
//! `generated` module. For every function in it, and for random inputs, the two ways to a
//! gradient must agree:
//!
//! - `name_grad(..)`: the value and gradient, flattened in parameter order;
//! - fresh `Scalar::variable`s in parameter order, `name_graph(..)`, `backward()` on its
//!   output, and `gradient()` of each variable, the value from `value()`. An output that
//!   depends on no parameter is not differentiated: `name_grad` documents an all-zero
//!   gradient for it, where `backward()` would refuse an untracked output, so this path
//!   reads zeros for it too.
//!
//! Both must give the same `f64::to_bits` of the value and of every gradient component, or
//! both fail with the same [`ScalarAutodiffError::kind`], the same operation, and the same
//! values where the variant has them (the non-finite result or leaf value, the derivative,
//! the contribution's upstream adjoint and local derivative, ...; any NaN matches any NaN).
//! Node numbers (`node`, `child`, `parent`) are not compared: `name_grad`'s count only the
//! nodes that depend on a parameter. Neither path may leave nodes on the thread's tape.
//!
//! `AUTODIFF_BITS_CASES` is the number of cases over the functions of both files (default
//! [`DEFAULT_CASES`], a few seconds in a debug build); each binary runs its share, spread
//! evenly over its functions. The acceptance run is
//!
//! ```text
//! AUTODIFF_BITS_CASES=100000 cargo test --release --test 'sweep_bits_*' bits
//! ```
//!
//! and `-- --nocapture` prints how many cases finished and how many failed, by kind. The
//! inputs come from a fixed seed (`AUTODIFF_BITS_SEED` picks another), so a failure
//! reproduces; its report names the function, the inputs (with their bits) and both
//! outcomes, after shrinking the inputs toward simpler numbers that still disagree.
//!
//! The binaries' other module, `second_order` (`tests/random_programs/second_order.rs`),
//! checks the same programs' `name_jvp` and `name_hvp` against `name_grad`
//! (`AUTODIFF_SECOND_CASES`, and `cargo test --test 'sweep_bits_*' second_order` alone).

use scalar_autodiff::{tape_len, ScalarAutodiffError, ScalarOperation};

use crate::generated;
use crate::support::{
    env_number, harsh, share_of, Case, Outcome, Program, Rng, DEFAULT_SEED, HARSH_STREAM,
};

/// Cases over the functions of both files when `AUTODIFF_BITS_CASES` is not set.
const DEFAULT_CASES: usize = 20_000;

/// What must agree between the two paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Facts {
    Finished {
        value: u64,
        gradient: Vec<u64>,
    },
    Failed {
        kind: &'static str,
        operation: Option<ScalarOperation>,
        /// The variant's `f64` fields other than operands, as bits, every NaN as one NaN.
        values: Vec<u64>,
    },
}

/// Bits, with every NaN folded to one: a NaN's payload says nothing about an error.
fn error_bits(value: f64) -> u64 {
    if value.is_nan() {
        f64::NAN.to_bits()
    } else {
        value.to_bits()
    }
}

impl Outcome {
    pub(crate) fn facts(&self) -> Facts {
        match self {
            Outcome::Finished { value, gradient } => Facts::Finished {
                value: value.to_bits(),
                gradient: gradient.iter().map(|g| g.to_bits()).collect(),
            },
            Outcome::Failed(error) => {
                use ScalarAutodiffError as E;
                let (operation, values) = match error {
                    E::NonFiniteLeaf {
                        operation, value, ..
                    } => (Some(*operation), vec![*value]),
                    E::NonFiniteResult {
                        operation, value, ..
                    } => (Some(*operation), vec![*value]),
                    E::UntrackedOutput { operation } => (Some(*operation), vec![]),
                    E::NonFiniteSeed { seed } => (None, vec![*seed]),
                    E::NonFiniteDerivative {
                        operation,
                        derivative,
                        ..
                    } => (Some(*operation), vec![*derivative]),
                    E::NonFiniteContribution {
                        operation,
                        upstream,
                        local_derivative,
                        ..
                    } => (Some(*operation), vec![*upstream, *local_derivative]),
                    E::NonFinitePassAdjoint {
                        operation,
                        previous,
                        contribution,
                        ..
                    } => (Some(*operation), vec![*previous, *contribution]),
                    E::NonFiniteAccumulatedGradient {
                        operation,
                        stored,
                        pass_adjoint,
                        ..
                    } => (Some(*operation), vec![*stored, *pass_adjoint]),
                    _ => (None, vec![]),
                };
                Facts::Failed {
                    kind: error.kind(),
                    operation,
                    values: values.into_iter().map(error_bits).collect(),
                }
            }
        }
    }

    fn is_finished(&self) -> bool {
        matches!(self, Outcome::Finished { .. })
    }
}

/// Both outcomes of one case, after checking that neither left nodes on the tape.
fn run(program: &Program, case: &Case) -> (Outcome, Outcome) {
    let before = tape_len();
    let grad = (program.grad)(&case.p, &case.xs, case.n);
    assert_eq!(
        tape_len(),
        before,
        "{}_grad left nodes on the tape",
        program.name
    );
    let graph = (program.graph)(&case.p, &case.xs, case.n);
    assert_eq!(
        tape_len(),
        before,
        "{}_graph left nodes on the tape",
        program.name
    );
    (grad, graph)
}

fn disagree(program: &Program, case: &Case) -> bool {
    let (grad, graph) = run(program, case);
    grad.facts() != graph.facts()
}

/// Simpler inputs that still disagree: fewer data, a smaller count, and numbers replaced
/// by 0, 1 or a rounding of themselves, one at a time, while the disagreement lasts.
fn shrink(program: &Program, mut case: Case) -> Case {
    let mut changed = true;
    while changed {
        changed = false;
        let mut candidates: Vec<Case> = Vec::new();
        for cut in 0..case.xs.len() {
            let mut smaller = case.clone();
            smaller.xs.remove(cut);
            candidates.push(smaller);
        }
        if case.n > 0 {
            let mut smaller = case.clone();
            smaller.n -= 1;
            candidates.push(smaller);
        }
        for (in_data, len) in [(false, case.p.len()), (true, case.xs.len())] {
            for at in 0..len {
                let value = if in_data { case.xs[at] } else { case.p[at] };
                for simpler in [0.0, 1.0, value.round(), (value * 8.0).round() / 8.0] {
                    if simpler.to_bits() == value.to_bits() || simpler.abs() > value.abs() {
                        continue;
                    }
                    let mut candidate = case.clone();
                    if in_data {
                        candidate.xs[at] = simpler;
                    } else {
                        candidate.p[at] = simpler;
                    }
                    candidates.push(candidate);
                }
            }
        }
        for candidate in candidates {
            if disagree(program, &candidate) {
                case = candidate;
                changed = true;
                break;
            }
        }
    }
    case
}

#[test]
fn grad_and_graph_agree_bit_for_bit_on_random_programs() {
    let programs = generated::PROGRAMS;
    // This binary's share, at least one case per function, so that both outcomes occur.
    let cases = share_of(env_number("AUTODIFF_BITS_CASES", DEFAULT_CASES), programs);
    let seed: u64 = env_number("AUTODIFF_BITS_SEED", DEFAULT_SEED);
    let mut rng = Rng(seed);
    let mut harsh_rng = Rng(seed ^ HARSH_STREAM);
    let (mut finished, mut failed) = (0usize, 0usize);
    // The third family's cases: finished and failed (agreeing).
    let (mut harsh_finished, mut harsh_failed) = (0usize, 0usize);
    // Failures by kind and operation.
    let mut kinds: Vec<(String, usize)> = Vec::new();
    let mut zero_gradient = 0usize;
    let mut mismatches: Vec<String> = Vec::new();
    let mut mismatched_programs = 0usize;
    // Per function: cases finished, of which with a nonzero gradient, and cases failed.
    let mut per_program = vec![(0usize, 0usize, 0usize); programs.len()];
    let started = std::time::Instant::now();
    // Round robin, so every function gets `cases / programs.len()` cases or one more.
    for index in 0..cases {
        let slot = index % programs.len();
        let program = &programs[slot];
        let case = if harsh(program) {
            Case::harsh(program, &mut harsh_rng)
        } else {
            Case::random(program, &mut rng)
        };
        let (grad, graph) = run(program, &case);
        if grad.facts() == graph.facts() {
            if harsh(program) {
                match &grad {
                    Outcome::Finished { .. } => harsh_finished += 1,
                    Outcome::Failed(_) => harsh_failed += 1,
                }
            }
            match &grad {
                Outcome::Finished { gradient, .. } => {
                    finished += 1;
                    per_program[slot].0 += 1;
                    if gradient.iter().all(|g| g.to_bits() == 0) {
                        zero_gradient += 1;
                    } else {
                        per_program[slot].1 += 1;
                    }
                }
                Outcome::Failed(_) => {
                    failed += 1;
                    per_program[slot].2 += 1;
                    let key = match grad.facts() {
                        Facts::Failed {
                            kind,
                            operation: Some(operation),
                            ..
                        } => format!("{kind} {}", operation.as_str()),
                        Facts::Failed { kind, .. } => kind.to_owned(),
                        Facts::Finished { .. } => unreachable!("a failed outcome"),
                    };
                    match kinds.iter_mut().find(|(seen, _)| *seen == key) {
                        Some((_, count)) => *count += 1,
                        None => kinds.push((key, 1)),
                    }
                }
            }
            continue;
        }
        if mismatches
            .iter()
            .any(|m| m.starts_with(&format!("{}:", program.name)))
        {
            mismatches.push(format!("{}: (another case)", program.name));
            continue;
        }
        mismatched_programs += 1;
        let small = shrink(program, case.clone());
        let (small_grad, small_graph) = run(program, &small);
        let report = format!(
            "{name}: grad and graph disagree (fn {name} in {file})\n  \
             inputs: p = {p:?} {pb}, xs = {xs:?} {xb}, n = {n}\n  \
             {name}_grad:  {grad:?}\n  {name}_graph: {graph:?}\n  \
             shrunk inputs: p = {sp:?} {spb}, xs = {sxs:?} {sxb}, n = {sn}\n  \
             {name}_grad:  {sgrad:?}\n  {name}_graph: {sgraph:?}",
            name = program.name,
            file = generated::FILE,
            p = case.p,
            pb = Case::bits(&case.p),
            xs = case.xs,
            xb = Case::bits(&case.xs),
            n = case.n,
            sp = small.p,
            spb = Case::bits(&small.p),
            sxs = small.xs,
            sxb = Case::bits(&small.xs),
            sn = small.n,
            sgrad = small_grad,
            sgraph = small_graph,
        );
        eprintln!("{report}\n");
        mismatches.push(report);
    }
    kinds.sort();
    {
        let never = |test: fn(&(usize, usize, usize)) -> bool| -> Vec<&str> {
            programs
                .iter()
                .zip(&per_program)
                .filter(|(_, counts)| test(counts))
                .map(|(program, _)| program.name)
                .collect()
        };
        println!(
            "functions that never finished: {:?}; that never had a nonzero gradient: {:?}; \
             that never failed: {}",
            never(|c| c.0 == 0),
            never(|c| c.1 == 0),
            never(|c| c.2 == 0).len()
        );
    }
    println!(
        "{cases} cases over {} functions in {:.1?}: {finished} finished ({zero_gradient} with an \
         all-zero gradient), {failed} failed: {kinds:?}",
        programs.len(),
        started.elapsed()
    );
    println!(
        "of which the third family's ({} functions): {harsh_finished} finished, {harsh_failed} \
         failed",
        programs.iter().filter(|program| harsh(program)).count()
    );
    assert!(
        mismatches.is_empty(),
        "{} of {cases} cases in {mismatched_programs} functions disagree; the first of each \
         function is reported above",
        mismatches.len()
    );
    assert!(
        finished > 0,
        "no case finished: the sweep compared errors only"
    );
    assert!(
        failed > 0,
        "no case failed: the sweep never compared errors"
    );
}

/// The generated table is the file's functions with an `f64` result, each once.
#[test]
fn the_table_lists_distinct_functions() {
    let programs = generated::PROGRAMS;
    assert!(programs.len() >= 100, "{} programs", programs.len());
    for (index, program) in programs.iter().enumerate() {
        assert!(
            programs[..index].iter().all(|p| p.name != program.name),
            "{} twice",
            program.name
        );
        assert!(program.slots > 0, "{} differentiates nothing", program.name);
    }
}

/// A finished case of each path is finite, and the two paths' outcomes are deterministic.
#[test]
fn a_case_repeats_exactly() {
    let mut rng = Rng(DEFAULT_SEED ^ 1);
    for program in generated::PROGRAMS.iter().take(40) {
        let case = Case::random(program, &mut rng);
        let (first, _) = run(program, &case);
        let (second, _) = run(program, &case);
        assert_eq!(first.facts(), second.facts(), "{}", program.name);
        if let Outcome::Finished { value, gradient } = &first {
            assert!(value.is_finite() && gradient.iter().all(|g| g.is_finite()));
            assert!(first.is_finished());
        }
    }
}

/// An ordinary input.
fn ordinary(rng: &mut Rng) -> f64 {
    rng.uniform(-2.0, 2.0)
}

/// The functions whose every call in [`the_sweeps_families_run_compiled`] meets a
/// non-finite number, which the tape decides (`f163`: each element of `[f154(10.0, x1);
/// 3]` meets an infinite derivative inside `f154`, a `sqrt` at zero, which `f163`'s
/// output never reaches: the tape finishes the call).
const GRAD_DECIDED_ON_THE_TAPE: &[&str] = &["f163"];

/// Which functions' warm calls run compiled: a call that finishes and starts no trace
/// (`scalar_autodiff::__private::traces` counts the checked path's runs). Every function
/// written `#[differentiable]` must (its sweeps compiled, or the build would have failed,
/// and its callees' too), and exactly those written `#[differentiable(tape)]` (the
/// generated file's `ON_THE_TAPE`) take the checked path.
#[test]
fn the_sweeps_families_run_compiled() {
    let mut rng = Rng(DEFAULT_SEED ^ 2);
    let mut traced: Vec<&str> = Vec::new();
    let mut measured = Vec::new();
    for program in generated::PROGRAMS {
        // Cases that finish (a failed call re-runs on the checked path by design), from
        // ordinary numbers (some bodies hand over on special ones: dead code whose
        // derivative overflows, say); one warm call without a trace is enough.
        let mut finishing = 0;
        let mut compiled = false;
        for _ in 0..100 {
            let case = Case::drawn(program, &mut rng, ordinary, ordinary);
            if !run(program, &case).0.is_finished() {
                continue;
            }
            finishing += 1;
            let before = scalar_autodiff::__private::traces();
            let warm = (program.grad)(&case.p, &case.xs, case.n);
            compiled |= warm.is_finished() && scalar_autodiff::__private::traces() == before;
            if compiled || finishing == 5 {
                break;
            }
        }
        if finishing > 0 {
            measured.push(program.name);
            if !compiled {
                traced.push(program.name);
            }
        }
    }
    println!(
        "{} of {} measured functions take the checked path on a warm call: {traced:?}",
        traced.len(),
        measured.len()
    );
    let expected: Vec<&str> = measured
        .iter()
        .copied()
        .filter(|name| {
            generated::ON_THE_TAPE.contains(name) || GRAD_DECIDED_ON_THE_TAPE.contains(name)
        })
        .collect();
    assert_eq!(
        traced, expected,
        "the functions that take the checked path are not the ones written `tape`"
    );
}

/// The functions whose warm `name_hvp` calls in [`the_hvp_of_compiled_functions_runs_compiled`]
/// meet a non-finite tangent, which the tape decides (`c119`: `s3 * (x0 / 3.0) * 1e300`
/// overflows along the direction before `atan` brings the value back; `f163`, see
/// [`GRAD_DECIDED_ON_THE_TAPE`]).
const HVP_DECIDED_ON_THE_TAPE: &[&str] = &["c119", "f163"];

/// `name_hvp` the same way: a function whose `name_grad` runs compiled runs its
/// `name_hvp` compiled too (its sweeps and its helpers' halves on duals), on calls that
/// meet no non-finite number (see [`HVP_DECIDED_ON_THE_TAPE`]).
#[test]
fn the_hvp_of_compiled_functions_runs_compiled() {
    let mut rng = Rng(DEFAULT_SEED ^ 3);
    let mut traced: Vec<&str> = Vec::new();
    for program in generated::PROGRAMS {
        if generated::ON_THE_TAPE.contains(&program.name) {
            continue;
        }
        let mut finishing = 0;
        let mut compiled = false;
        for _ in 0..100 {
            let case = Case::drawn(program, &mut rng, ordinary, ordinary);
            let tangent: Vec<f64> = (0..program.slots).map(|_| ordinary(&mut rng)).collect();
            if (program.hvp)(&case.p, &case.xs, case.n, &tangent).is_err() {
                continue;
            }
            finishing += 1;
            let before = scalar_autodiff::__private::traces();
            let warm = (program.hvp)(&case.p, &case.xs, case.n, &tangent);
            compiled |= warm.is_ok() && scalar_autodiff::__private::traces() == before;
            if compiled || finishing == 5 {
                break;
            }
        }
        if finishing > 0 && !compiled {
            traced.push(program.name);
        }
    }
    println!(
        "{} take the checked path in name_hvp: {traced:?}",
        traced.len()
    );
    let expected: Vec<&str> = generated::PROGRAMS
        .iter()
        .map(|program| program.name)
        .filter(|name| HVP_DECIDED_ON_THE_TAPE.contains(name))
        .collect();
    assert_eq!(
        traced, expected,
        "the functions whose name_hvp takes the checked path changed"
    );
}
