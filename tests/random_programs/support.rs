//! What the random-program tests share: the table's types (which the generated files fill
//! in), the outcomes of `name_grad` and
//! `name_graph` (and, on request, the ledger of the latter's reverse pass), and the
//! inputs the sweeps draw.
//!
//! Included with `#[path]` by both `sweep_bits_*` binaries, beside their `generated` module
//! (which reads `super::support`), `bits` and `second_order`.

use std::cell::RefCell;

use scalar_autodiff::{Ledger, Scalar, ScalarAutodiffError};

/// The sweep's own seed, independent of the generator's.
pub const DEFAULT_SEED: u64 = 0x00B1_750F_5EED;

/// Mixed into the seed for the third family's inputs.
pub const HARSH_STREAM: u64 = 0xC4EC_0000_0000_0003;

/// The largest `n` passed (the generator's loop costs assume it).
pub const MAX_COUNT: usize = 6;
/// The longest `xs` passed.
pub const MAX_DATA_LEN: usize = 5;

/// A generated function, called uniformly: `p` holds its differentiated scalars in
/// parameter order (`slots` of them), `xs` and `n` its data (ignored where it has none).
pub struct Program {
    pub name: &'static str,
    pub slots: usize,
    pub data: bool,
    pub count: bool,
    pub grad: fn(&[f64], &[f64], usize) -> Outcome,
    pub graph: fn(&[f64], &[f64], usize) -> Outcome,
    /// `name_jvp` with a flat `tangent` (one number per differentiated scalar, in parameter
    /// order): the value and the directional derivative.
    pub jvp: Jvp,
    /// `name_hvp` with a flat `tangent`: the value, the gradient and the Hessian-vector
    /// product, both flattened in parameter order.
    pub hvp: Hvp,
}

/// The type of [`Program::jvp`]: `(p, xs, n, tangent)`.
pub type Jvp = fn(&[f64], &[f64], usize, &[f64]) -> Result<(f64, f64), ScalarAutodiffError>;

/// The type of [`Program::hvp`]: `(p, xs, n, tangent)`.
pub type Hvp =
    fn(&[f64], &[f64], usize, &[f64]) -> Result<(f64, Vec<f64>, Vec<f64>), ScalarAutodiffError>;

/// What one path gave.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// The value and the gradient, flattened in parameter order.
    Finished { value: f64, gradient: Vec<f64> },
    /// The error, whole (its node numbers are printed, not compared).
    Failed(ScalarAutodiffError),
}

/// The `_grad` path's outcome.
pub fn grad_outcome(result: Result<(f64, Vec<f64>), ScalarAutodiffError>) -> Outcome {
    match result {
        Ok((value, gradient)) => Outcome::Finished { value, gradient },
        Err(error) => Outcome::Failed(error),
    }
}

/// The `_graph` + `backward()` path's outcome: `build` makes the variables in parameter
/// order, calls `name_graph`, and returns its output with the variables in gradient order.
pub fn graph_outcome(
    build: impl FnOnce() -> Result<(Scalar, Vec<Scalar>), ScalarAutodiffError>,
) -> Outcome {
    let (output, variables) = match build() {
        Ok(built) => built,
        Err(error) => return Outcome::Failed(error),
    };
    let value = output.value();
    if !output.tracks_gradient() {
        // `name_grad`'s rule for a result that depends on no parameter.
        return Outcome::Finished {
            value,
            gradient: vec![0.0; variables.len()],
        };
    }
    match output.backward() {
        Ok(pass) => KEPT_LEDGER.with(|kept| {
            if let Some(slot) = kept.borrow_mut().as_mut() {
                // Each variable labelled `p{slot}` (see [`slot_of`]).
                let mut ledger = pass.ledger();
                for (index, variable) in variables.iter().enumerate() {
                    ledger = ledger.name(variable, &format!("p{index}"));
                }
                *slot = Some(ledger);
            }
        }),
        Err(error) => return Outcome::Failed(error),
    }
    let gradient = variables
        .iter()
        .map(|variable| variable.gradient().expect("a variable tracks its gradient"))
        .collect();
    Outcome::Finished { value, gradient }
}

thread_local! {
    /// Where [`graph_outcome`] leaves its pass's ledger while [`with_ledger`] runs.
    static KEPT_LEDGER: RefCell<Option<Option<Ledger>>> = const { RefCell::new(None) };
}

/// Runs `call` (a `_by_graph` wrapper) and returns its outcome with the ledger of the
/// reverse pass it ran, if it ran one (an output that depends on no parameter has none).
/// The ledger labels each variable it reaches `p{slot}`, its place in parameter order.
pub fn with_ledger(call: impl FnOnce() -> Outcome) -> (Outcome, Option<Ledger>) {
    KEPT_LEDGER.with(|kept| *kept.borrow_mut() = Some(None));
    let outcome = call();
    let ledger = KEPT_LEDGER.with(|kept| kept.borrow_mut().take()).flatten();
    (outcome, ledger)
}

/// The parameter-order place of the ledger's node at `topology_index`, if it is a
/// variable (labelled by [`with_ledger`]).
pub fn slot_of(ledger: &Ledger, topology_index: usize) -> Option<usize> {
    ledger.label(topology_index).strip_prefix('p')?.parse().ok()
}

/// A `#[constant]` argument, from the count so that it varies with the case.
pub fn constant_of(n: usize) -> f64 {
    [0.5, 1.0, 2.0, -0.25, 0.0, 3.5, 1e-3][n % 7]
}

/// SplitMix64, for the inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

/// Points where derivatives are undefined, conventions decide (`abs` at 0, ties of `max`),
/// or values overflow, underflow or are not numbers.
pub const SPECIAL: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    1e-300,
    -1e-300,
    5e-324,
    1e10,
    -1e10,
    1e300,
    -1e300,
    f64::MAX,
    f64::MIN_POSITIVE,
];

/// One input: mostly in `[-3, 3]`, where most programs stay finite; sometimes on a grid
/// (ties, exact zeros), a special point, a wide value, or (rarely) not finite at all.
pub fn input(rng: &mut Rng) -> f64 {
    match rng.below(1000) {
        0..=699 => rng.uniform(-3.0, 3.0),
        700..=799 => (rng.below(17) as f64 - 8.0) * 0.25,
        800..=929 => SPECIAL[rng.below(SPECIAL.len())],
        930..=994 => rng.uniform(-1e3, 1e3),
        995..=996 => f64::NAN,
        997..=998 => f64::INFINITY,
        _ => f64::NEG_INFINITY,
    }
}

/// Numbers the third family's inputs hit more often: overflowing, underflowing, zero, and
/// (for data only) not finite.
pub const EXTREME: &[f64] = &[
    0.0,
    -0.0,
    1e308,
    -1e308,
    f64::MAX,
    5e-324,
    -5e-324,
    f64::MIN_POSITIVE,
    1e154,
    -1e154,
    1e-300,
    710.0,
];

/// A differentiated input of the third family: mostly [`input`], often an extreme finite
/// number (a non-finite parameter only fails as a leaf, which [`input`] covers).
pub fn harsh_parameter(rng: &mut Rng) -> f64 {
    match rng.below(100) {
        0..=91 => input(rng),
        _ => EXTREME[rng.below(EXTREME.len())],
    }
}

/// A data input of the third family: mostly [`input`], often extreme or not finite, which
/// the sweeps' deferred checks must still catch where the trace refuses the constant.
pub fn harsh_data(rng: &mut Rng) -> f64 {
    match rng.below(100) {
        0..=69 => input(rng),
        70..=84 => EXTREME[rng.below(EXTREME.len())],
        85..=89 => f64::NAN,
        90..=94 => f64::INFINITY,
        _ => f64::NEG_INFINITY,
    }
}

/// Whether a function is of the generator's third family (`c000`, ...), whose bodies aim at
/// the checks the forward sweep defers. Its cases draw from a stream of their own, so the
/// other functions' cases are the same as before the family was added.
pub fn harsh(program: &Program) -> bool {
    program.name.starts_with('c')
}

/// The inputs of one case.
#[derive(Clone, Debug)]
pub struct Case {
    pub p: Vec<f64>,
    pub xs: Vec<f64>,
    pub n: usize,
}

impl Case {
    pub fn random(program: &Program, rng: &mut Rng) -> Self {
        Self::drawn(program, rng, input, input)
    }

    /// A third-family case: more extreme numbers, non-finite data.
    pub fn harsh(program: &Program, rng: &mut Rng) -> Self {
        Self::drawn(program, rng, harsh_parameter, harsh_data)
    }

    pub fn drawn(
        program: &Program,
        rng: &mut Rng,
        parameter: fn(&mut Rng) -> f64,
        datum: fn(&mut Rng) -> f64,
    ) -> Self {
        let p = (0..program.slots).map(|_| parameter(rng)).collect();
        let xs = if program.data {
            let len = rng.below(MAX_DATA_LEN + 1);
            (0..len).map(|_| datum(rng)).collect()
        } else {
            Vec::new()
        };
        let n = if program.count {
            rng.below(MAX_COUNT + 1)
        } else {
            0
        };
        Case { p, xs, n }
    }

    pub fn bits(values: &[f64]) -> String {
        let bits: Vec<String> = values
            .iter()
            .map(|v| format!("{:#018x}", v.to_bits()))
            .collect();
        format!("[{}]", bits.join(", "))
    }
}

pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text:?} is not a number")),
        Err(_) => default,
    }
}

/// This binary's share of `total` cases over the functions of both generated files: in
/// proportion to its own functions, and at least one case each.
pub fn share_of(total: usize, programs: &[Program]) -> usize {
    let all = crate::generated::ALL_PROGRAMS;
    let share = total.saturating_mul(programs.len()).checked_div(all);
    share.unwrap_or(0).max(programs.len())
}
