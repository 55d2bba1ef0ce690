//! A deterministic generator of random `#[differentiable]` functions for the
//! `sweep_bits_*` tests.
//!
//! [`generate`] returns the texts of `tests/random_programs/generated_language.rs`,
//! `generated_sweeps.rs` and `generated_checks.rs`: the same texts on every machine and every run (fixed seeds, the
//! tiny SplitMix64 below, no hash maps, no formatting of computed floats).
//! `tests/random_programs.rs` checks that the checked-in files are exactly these texts and
//! rewrites them when `AUTODIFF_REGENERATE=1` is set.
//!
//! Every function the generator writes must be accepted by `#[differentiable]` and compile
//! as plain Rust too (the generated modules allow the lints that random code trips). The
//! generator tracks, per function, the names in scope and what each one is (a tracked or
//! data `f64`, an `&f64` from an iterator, a parameter array, a local array, a loop index
//! and what it may index), so that what it writes type-checks; an estimate of the
//! operations a call runs (loops counted at their largest trip count) keeps every function
//! cheap enough to run thousands of times in a debug build.
//!
//! There are three families, each from its own seed and in a file of its own: the first
//! (`f`, `arr`, `m`) spans what `#[differentiable]` accepts, the second (`s`) the forms the
//! compiled sweeps of `name_grad` cover, the third (`c`) those forms aimed at the
//! finiteness checks the forward sweep defers (see [`CheckGen`]). Each file is a test
//! binary of its own, `tests/sweep_bits_*.rs`, so that they compile at once (see
//! [`Family`]).

use std::fmt::Write as _;

/// The seed of the first family. Changing it changes every one of its functions.
pub const SEED: u64 = 0x5EED_0B17_D1FF_0001;

/// How many functions the first family holds, of which a few are array-valued helpers (which
/// have no `_grad` and appear only as callees) and a few are methods of `Holder`.
pub const FUNCTIONS: usize = 180;

/// The largest `n` and the longest `xs` the sweep passes; loop costs assume them.
pub const MAX_COUNT: u64 = 6;
/// See [`MAX_COUNT`].
pub const MAX_DATA_LEN: u64 = 5;

/// The texts of the families' files, in the order of [`Family::ALL`].
pub fn generate() -> [String; 3] {
    Generator::new(SEED).run()
}

/// SplitMix64: small, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent / 100`.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// An index into `weights`, chosen with probability proportional to its weight
    /// (at least one weight must be positive).
    fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u32 = weights.iter().sum();
        let mut at = (self.next() % u64::from(total)) as u32;
        for (index, &weight) in weights.iter().enumerate() {
            if at < weight {
                return index;
            }
            at -= weight;
        }
        unreachable!("the weights sum to {total}")
    }
}

/// Float literals, written as they appear in the generated code.
const LITERALS: &[&str] = &[
    "0.5", "1.0", "2.0", "0.25", "1.5", "3.0", "0.1", "0.75", "-0.5", "-1.25", "0.0", "1e-3",
    "4.0", "0.3", "-2.0", "10.0", "0.125", "-0.0",
];

/// What a parameter of a generated function is.
#[derive(Clone, Debug, PartialEq)]
enum ParamKind {
    /// `x: f64` (or `mut x: f64`): one differentiated scalar.
    Scalar { mutable: bool },
    /// `w: [f64; K]`: K differentiated scalars.
    Array(usize),
    /// `m: [[f64; K]; M]` as `Matrix(M, K)`: M * K differentiated scalars, row-major
    /// (the second family only).
    Matrix(usize, usize),
    /// `#[param] ps: &[f64]`, always given `len` scalars by the sweep.
    Slice(usize),
    /// `#[param] p: &Layer` (`w: [f64; 2]`, `b: f64`): three differentiated scalars.
    Layer,
    /// `xs: &[f64]`: data, 0 to `MAX_DATA_LEN` values.
    Data,
    /// `n: usize`: data, 0 to `MAX_COUNT`.
    Count,
    /// `#[constant] c: f64`: data.
    Constant,
}

#[derive(Clone, Debug)]
struct Param {
    name: String,
    kind: ParamKind,
}

impl Param {
    /// How many differentiated scalars the sweep passes for it.
    fn slots(&self) -> usize {
        match self.kind {
            ParamKind::Scalar { .. } => 1,
            ParamKind::Array(k) | ParamKind::Slice(k) => k,
            ParamKind::Matrix(m, k) => m * k,
            ParamKind::Layer => 3,
            ParamKind::Data | ParamKind::Count | ParamKind::Constant => 0,
        }
    }

    fn differentiated(&self) -> bool {
        self.slots() > 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    /// A free function returning `f64`: in the sweep's table.
    Free,
    /// A free function returning `[f64; M]`: only a callee.
    ArrayHelper(usize),
    /// A method of `Holder` with `&self` (data): in the table.
    Method,
    /// An associated function of `Holder` without a receiver.
    Associated,
}

/// A generated function, as its callers and the table see it.
#[derive(Clone, Debug)]
struct Info {
    name: String,
    params: Vec<Param>,
    shape: Shape,
    /// Estimated operations of one call at the largest data sizes.
    cost: u64,
    /// Written with unguarded domains: callers pick it only now and then.
    risky: bool,
}

impl Info {
    fn slots(&self) -> usize {
        self.params.iter().map(Param::slots).sum()
    }

    /// Const-generic (the `g` helpers, listed at the sizes their wrappers pass).
    fn generic(&self) -> bool {
        self.name.starts_with('g')
    }

    /// In a file's `PROGRAMS` (array-valued helpers are callees only).
    fn listed(&self) -> bool {
        !matches!(self.shape, Shape::ArrayHelper(_))
    }

    fn family(&self) -> Family {
        match self.name.as_bytes()[0] {
            b's' | b'g' | b'k' => Family::Sweeps,
            b'c' => Family::Checks,
            _ => Family::Language,
        }
    }
}

/// What a name in scope is.
#[derive(Clone, Debug, PartialEq)]
enum VarKind {
    /// An `f64`: a parameter, a local or a pattern-bound element.
    F64 { mutable: bool },
    /// An `&f64` from an iterator: usable as an operand of `+ - * /` and as a receiver.
    Ref,
    /// A parameter array `[f64; K]`.
    ParamArray(usize),
    /// A local array of `K` values; `mutable` if declared `let mut`.
    LocalArray { len: usize, mutable: bool },
    /// `#[param] ps: &[f64]` of this length.
    Slice(usize),
    /// `#[param] p: &Layer`.
    Layer,
    /// `xs: &[f64]`.
    Data,
    /// A `usize` loop index, below `bound` where one is known.
    Index(Bound),
    /// `n: usize`.
    Count,
}

/// What a loop index is known to be below.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bound {
    /// Nothing useful (a range to `n`, a counter).
    None,
    /// Below this constant.
    Below(usize),
    /// Below `xs.len()`.
    DataLen,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    kind: VarKind,
    /// Computed from a differentiated parameter (as far as the generator can tell).
    tracked: bool,
}

/// A generated expression and what the type checker will make of it.
#[derive(Clone, Debug)]
struct Expr {
    code: String,
    /// Its type is known to be `f64` (or `&f64`): literals alone are `{float}`, on which
    /// rustc refuses method calls.
    typed: bool,
    /// It is an `&f64` (a bare iterator element).
    reference: bool,
}

impl Expr {
    fn value(code: String, typed: bool) -> Self {
        Expr {
            code,
            typed,
            reference: false,
        }
    }
}

/// The whole file.
struct Generator {
    rng: Rng,
    infos: Vec<Info>,
}

impl Generator {
    fn new(seed: u64) -> Self {
        Generator {
            rng: Rng(seed),
            infos: Vec::new(),
        }
    }

    fn run(mut self) -> [String; 3] {
        let mut language = String::new();
        let mut methods = String::new();
        for index in 0..FUNCTIONS {
            let shape = match self.rng.weighted(&[84, 5, 6, 3]) {
                _ if index < 4 => Shape::Free,
                0 => Shape::Free,
                1 => Shape::ArrayHelper(self.rng.range(2, 3)),
                2 => Shape::Method,
                _ => Shape::Associated,
            };
            // A few long bodies, which the macro records out of line.
            let long = shape == Shape::Free && index % 57 == 40;
            let prefix = match shape {
                Shape::Free => "f",
                Shape::ArrayHelper(_) => "arr",
                Shape::Method | Shape::Associated => "m",
            };
            let name = format!("{prefix}{index:03}");
            let params = self.signature(shape, long);
            let mut function = FnGen::new(&mut self.rng, &self.infos, shape, &params, long);
            let body = function.body();
            let (cost, risky) = (function.cost, function.unguarded);
            let info = Info {
                name,
                params,
                shape,
                cost,
                risky,
            };
            let text = source(&info, &body);
            match shape {
                Shape::Method | Shape::Associated => methods.push_str(&text),
                _ => language.push_str(&text),
            }
            self.infos.push(info);
        }
        // The second family, from its own seed, in a file of its own: bodies in the forms
        // the compiled sweeps cover.
        let mut sweeps = String::new();
        let mut rng = Rng(SWEEP_SEED);
        for index in 0..SWEEP_FUNCTIONS {
            let params = sweep_signature(&mut rng);
            let mut function = SweepGen::new(&mut rng, &params);
            let body = function.body();
            let info = Info {
                name: format!("s{index:03}"),
                params,
                shape: Shape::Free,
                cost: function.cost,
                risky: function.unguarded,
            };
            sweeps.push_str(&source(&info, &body));
            self.infos.push(info);
        }
        // Then, in the same file, const-generic helpers and their callers.
        let (generic, infos) = generic_family();
        sweeps.push_str(&generic);
        self.infos.extend(infos);
        // The third family, from its own seed, in a file of its own: bodies aimed at the
        // checks the forward sweep defers (see `CheckGen`).
        let mut checks = String::new();
        let mut rng = Rng(CHECK_SEED);
        for index in 0..CHECK_FUNCTIONS {
            let params = check_signature(&mut rng);
            let mut function = CheckGen::new(&mut rng, &params);
            let body = function.body();
            let info = Info {
                name: format!("c{index:03}"),
                params,
                shape: Shape::Free,
                cost: function.cost,
                risky: true,
            };
            checks.push_str(&source(&info, &body));
            self.infos.push(info);
        }
        let total = self.infos.iter().filter(|info| info.listed()).count();
        let file = |family: Family, items: &str, functions: &str, methods: Option<&str>| {
            let mut out = header(family);
            out.push_str(items);
            out.push_str(functions);
            if let Some(methods) = methods {
                out.push_str("impl Holder {\n");
                out.push_str(methods);
                out.push_str("}\n");
            }
            out.push_str(&self.table(family, total));
            out
        };
        [
            file(Family::Language, LANGUAGE_ITEMS, &language, Some(&methods)),
            file(Family::Sweeps, SWEPT_ITEMS, &sweeps, None),
            file(Family::Checks, SWEPT_ITEMS, &checks, None),
        ]
    }

    /// A random signature with at least one differentiated parameter, in a random order.
    fn signature(&mut self, shape: Shape, long: bool) -> Vec<Param> {
        let rng = &mut self.rng;
        let mut params = Vec::new();
        let scalars = *rng.pick(&[1, 1, 2, 2, 2, 3]);
        for index in 0..scalars {
            let mutable = matches!(shape, Shape::Free) && rng.chance(15);
            params.push(Param {
                name: format!("x{index}"),
                kind: ParamKind::Scalar { mutable },
            });
        }
        if rng.chance(40) {
            params.push(Param {
                name: "w".into(),
                kind: ParamKind::Array(rng.range(2, 4)),
            });
        }
        if rng.chance(10) {
            params.push(Param {
                name: "v".into(),
                kind: ParamKind::Array(rng.range(2, 3)),
            });
        }
        let plain = matches!(shape, Shape::ArrayHelper(_)) || long;
        if !plain && rng.chance(8) {
            params.push(Param {
                name: "ps".into(),
                kind: ParamKind::Slice(rng.range(1, 4)),
            });
        }
        if !plain && rng.chance(8) {
            params.push(Param {
                name: "p".into(),
                kind: ParamKind::Layer,
            });
        }
        if !long && rng.chance(50) {
            params.push(Param {
                name: "xs".into(),
                kind: ParamKind::Data,
            });
        }
        if !long && rng.chance(45) {
            params.push(Param {
                name: "n".into(),
                kind: ParamKind::Count,
            });
        }
        if !plain && rng.chance(10) {
            params.push(Param {
                name: "c".into(),
                kind: ParamKind::Constant,
            });
        }
        // A few signatures without any scalar: only arrays, a slice or a layer.
        let others = params
            .iter()
            .any(|p| p.differentiated() && !matches!(p.kind, ParamKind::Scalar { .. }));
        if others && rng.chance(8) {
            params.retain(|p| !matches!(p.kind, ParamKind::Scalar { .. }));
        }
        // Fisher-Yates, so the gradient's order is not always scalars first.
        if rng.chance(40) {
            for i in (1..params.len()).rev() {
                let j = rng.below(i + 1);
                params.swap(i, j);
            }
        }
        params
    }

    /// The table the sweeps iterate over (the family's functions), and the wrappers of each
    /// function in it.
    fn table(&self, family: Family, total: usize) -> String {
        let mut out = String::new();
        let mut rows = String::new();
        for info in self.infos.iter().filter(|info| info.family() == family) {
            if !info.listed() {
                continue;
            }
            out.push_str(&wrappers(info));
            let _ = writeln!(
                rows,
                "    Program {{ name: \"{0}\", slots: {1}, data: {2}, count: {3}, grad: {0}_by_grad, graph: {0}_by_graph, jvp: {0}_by_jvp, hvp: {0}_by_hvp }},",
                info.name,
                info.slots(),
                info.params.iter().any(|p| p.kind == ParamKind::Data),
                info.params.iter().any(|p| p.kind == ParamKind::Count),
            );
        }
        out.push_str(
            "/// Every generated function of this file with an `f64` result, in file order.\n",
        );
        out.push_str("pub const PROGRAMS: &[Program] = &[\n");
        out.push_str(&rows);
        out.push_str("];\n\n");
        out.push_str("/// How many functions both files' `PROGRAMS` list: a binary runs its share of the cases.\n");
        let _ = writeln!(out, "pub const ALL_PROGRAMS: usize = {total};\n");
        let taped: Vec<String> = self
            .infos
            .iter()
            .filter(|info| info.family() == family && info.listed())
            .filter(|info| ON_THE_TAPE.contains(&info.name.as_str()))
            .map(|info| format!("\"{}\"", info.name))
            .collect();
        out.push_str("/// The functions of `PROGRAMS` written `#[differentiable(tape)]`.\n");
        let _ = writeln!(
            out,
            "pub const ON_THE_TAPE: &[&str] = &[{}];\n",
            taped.join(", ")
        );
        out.push_str("/// This file, for reports.\n");
        let _ = writeln!(
            out,
            "pub const FILE: &str = \"tests/random_programs/{}\";",
            family.file()
        );
        out
    }
}

/// The three families, a file and a test binary each, so that they compile at once (one
/// binary of all three took seven minutes of one core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `f`, `arr`, `m`: what `#[differentiable]` accepts.
    Language,
    /// `s`: the forms the compiled sweeps cover.
    Sweeps,
    /// `c`: those forms, aimed at the checks the forward sweep defers.
    Checks,
}

impl Family {
    /// Every family, in the order [`generate`] returns their files.
    pub const ALL: [Family; 3] = [Family::Language, Family::Sweeps, Family::Checks];

    /// Its file, in `tests/random_programs/`.
    pub fn file(self) -> &'static str {
        match self {
            Family::Language => "generated_language.rs",
            Family::Sweeps => "generated_sweeps.rs",
            Family::Checks => "generated_checks.rs",
        }
    }

    /// The test binary that compiles it.
    fn binary(self) -> &'static str {
        match self {
            Family::Language => "tests/sweep_bits_language.rs",
            Family::Sweeps => "tests/sweep_bits_sweeps.rs",
            Family::Checks => "tests/sweep_bits_checks.rs",
        }
    }

    /// What its functions are, for the file's opening comment.
    fn about(self) -> &'static str {
        match self {
            Family::Language => "functions spanning what `#[differentiable]` accepts",
            Family::Sweeps => "functions in the forms the compiled sweeps cover",
            Family::Checks => {
                "functions in the sweeps' forms, aimed at the checks the forward sweep defers"
            }
        }
    }
}

/// The opening of a generated file: where it comes from, what it holds, its lints.
fn header(family: Family) -> String {
    format!(
        "\
// @generated by tests/random_programs/generator.rs; do not edit by hand.
//
// Regenerate with
//
//     AUTODIFF_REGENERATE=1 cargo test --test random_programs
//
// and check it is current with `cargo test --test random_programs`.
//
// {family:?}: {about}.
// The test binary {binary} compares each function's `_grad` with
// its `_graph` plus `backward()`, bit for bit (tests/random_programs/bits.rs), and its
// `_jvp` and `_hvp` with `_grad` (tests/random_programs/second_order.rs).

{LINTS}",
        about = family.about(),
        binary = family.binary(),
    )
}

/// The lints a generated file allows.
const LINTS: &str = "\
// Random code computes values it never uses, assigns what it never reads, returns early
// and writes `x * 1.0`: the lints that catch that in real code have nothing to say here.
// (`unused_braces` fires on what the macro writes for an array `[z; N]` of a tracked `z`.)
#![allow(
    dead_code,
    unreachable_code,
    unused_assignments,
    unused_braces,
    unused_labels,
    unused_mut,
    unused_parens,
    unused_variables,
    clippy::all
)]
";

/// What the first family's bodies, signatures and wrappers name.
const LANGUAGE_ITEMS: &str = "
use scalar_autodiff::{differentiable, Parameters, Scalar, ScalarAutodiffError};

use super::support::{constant_of, grad_outcome, graph_outcome, Outcome, Program};

/// A constant the bodies read as data.
const SCALE: f64 = 0.75;

/// A small parameter struct.
#[derive(Parameters, Clone, Debug)]
pub struct Layer {
    pub w: [f64; 2],
    pub b: f64,
}

/// The receiver of the generated methods: data.
pub struct Holder {
    pub scale: f64,
}

/// The receiver the wrappers call the methods on.
pub const HOLDER: Holder = Holder { scale: 0.75 };

";

/// What the second and third families' bodies and wrappers name.
const SWEPT_ITEMS: &str = "
use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError};

use super::support::{grad_outcome, graph_outcome, Outcome, Program};

";

/// The generated functions written `#[differentiable(tape)]`: those whose bodies hold a
/// form the compiled sweeps do not follow yet (an array literal lending one tracked value
/// twice, `[y; N]` of a tracked value, a copy in a helper's halves read again, a body of
/// more than 512 operations, ...), which is a compile error without `tape`, and those that call one of these or a helper whose halves give up (a
/// `tape` function has none): a compiled sweep calling it is a compile error too. Every other function is written `#[differentiable]`, so
/// the build fails if its sweeps stop covering it, and `bits.rs` checks that exactly
/// these take the checked path on a warm call. The list only shrinks. After changing the
/// generator, find the functions that need it by writing every function without `tape`
/// and building (`cargo check --tests`): the errors name them.
pub const ON_THE_TAPE: &[&str] = &["f063"];

/// The function's text: attribute, signature, body.
fn source(info: &Info, body: &str) -> String {
    let indent = match info.shape {
        Shape::Method | Shape::Associated => "    ",
        _ => "",
    };
    let mut params: Vec<String> = Vec::new();
    if info.shape == Shape::Method {
        params.push("&self".into());
    }
    for param in &info.params {
        let name = &param.name;
        params.push(match &param.kind {
            ParamKind::Scalar { mutable: true } => format!("mut {name}: f64"),
            ParamKind::Scalar { mutable: false } => format!("{name}: f64"),
            ParamKind::Array(k) => format!("{name}: [f64; {k}]"),
            ParamKind::Matrix(m, k) => format!("{name}: [[f64; {k}]; {m}]"),
            ParamKind::Slice(_) => format!("#[param] {name}: &[f64]"),
            ParamKind::Layer => format!("#[param] {name}: &Layer"),
            ParamKind::Data => format!("{name}: &[f64]"),
            ParamKind::Count => format!("{name}: usize"),
            ParamKind::Constant => format!("#[constant] {name}: f64"),
        });
    }
    let output = match info.shape {
        Shape::ArrayHelper(m) => format!("[f64; {m}]"),
        _ => "f64".into(),
    };
    let visibility = match info.shape {
        Shape::Method | Shape::Associated => "pub ",
        _ => "",
    };
    let mut out = String::new();
    // `tape` where the compiled sweeps do not cover a random body yet (see
    // `ON_THE_TAPE`); every other function must compile its sweeps or fail to build.
    let attribute = match ON_THE_TAPE.contains(&info.name.as_str()) {
        true => "#[differentiable(tape)]",
        false => "#[differentiable]",
    };
    let _ = writeln!(out, "{indent}{attribute}");
    let _ = writeln!(
        out,
        "{indent}{visibility}fn {}({}) -> {output} {{",
        info.name,
        params.join(", ")
    );
    for line in body.lines() {
        let _ = writeln!(out, "{indent}{line}");
    }
    let _ = writeln!(out, "{indent}}}");
    out.push('\n');
    out
}

/// How a wrapper names the function it calls.
fn callee_path(info: &Info, suffix: &str) -> String {
    match info.shape {
        Shape::Method => format!("HOLDER.{}{suffix}", info.name),
        Shape::Associated => format!("Holder::{}{suffix}", info.name),
        _ => format!("{}{suffix}", info.name),
    }
}

/// `name_by_grad` and `name_by_graph`: the uniform `fn(&[f64], &[f64], usize) -> Outcome`
/// of the table, then `name_by_jvp` and `name_by_hvp` (see [`second_order_wrappers`]).
/// `p` holds the differentiated scalars in parameter order.
fn wrappers(info: &Info) -> String {
    let mut out = String::new();
    // `_grad`: arguments from `p`, the gradient flattened in parameter order.
    let mut args = Vec::new();
    let mut slot = 0;
    for param in &info.params {
        args.push(match &param.kind {
            ParamKind::Scalar { .. } => format!("p[{slot}]"),
            ParamKind::Array(k) => {
                let items: Vec<String> = (slot..slot + k).map(|s| format!("p[{s}]")).collect();
                format!("[{}]", items.join(", "))
            }
            ParamKind::Matrix(m, k) => {
                let rows: Vec<String> = (0..*m)
                    .map(|row| {
                        let items: Vec<String> = (0..*k)
                            .map(|col| format!("p[{}]", slot + row * k + col))
                            .collect();
                        format!("[{}]", items.join(", "))
                    })
                    .collect();
                format!("[{}]", rows.join(", "))
            }
            ParamKind::Slice(k) => format!("&p[{slot}..{}]", slot + k),
            ParamKind::Layer => format!(
                "&Layer {{ w: [p[{}], p[{}]], b: p[{}] }}",
                slot,
                slot + 1,
                slot + 2
            ),
            ParamKind::Data => "xs".into(),
            ParamKind::Count => "n".into(),
            ParamKind::Constant => "constant_of(n)".into(),
        });
        slot += param.slots();
    }
    let differentiated: Vec<&Param> = info.params.iter().filter(|p| p.differentiated()).collect();
    // (A const-generic function's gradient is a tuple: its sizes are not known to flatten.)
    let nested = info.generic()
        || differentiated
            .iter()
            .any(|p| matches!(p.kind, ParamKind::Slice(_) | ParamKind::Layer));
    let flatten = if !nested {
        "(value, gradient.to_vec())".to_owned()
    } else if differentiated.len() == 1 {
        match differentiated[0].kind {
            ParamKind::Layer => "(value, gradient.to_flat())".to_owned(),
            _ => "(value, gradient)".to_owned(),
        }
    } else {
        let mut pushes = String::new();
        for (index, param) in differentiated.iter().enumerate() {
            let _ = write!(
                pushes,
                " {}",
                match param.kind {
                    ParamKind::Scalar { .. } => format!("flat.push(gradient.{index});"),
                    ParamKind::Array(_) => format!("flat.extend(gradient.{index});"),
                    ParamKind::Matrix(..) => unreachable!("only with f64s and arrays"),
                    ParamKind::Slice(_) => format!("flat.extend(gradient.{index});"),
                    _ => format!("flat.extend(gradient.{index}.to_flat());"),
                }
            );
        }
        format!("{{ let mut flat = Vec::new();{pushes} (value, flat) }}")
    };
    // Half the const-generic functions are called with their size turbofished.
    let grad = match info.generic() && info.name.ends_with(['1', '3', '5', '7', '9']) {
        true => "_grad::<3>",
        false => "_grad",
    };
    let _ = writeln!(
        out,
        "fn {}_by_grad(p: &[f64], xs: &[f64], n: usize) -> Outcome {{",
        info.name
    );
    let _ = writeln!(
        out,
        "    grad_outcome({}({}).map(|(value, gradient)| {flatten}))",
        callee_path(info, grad),
        args.join(", ")
    );
    out.push_str("}\n\n");
    let call_args = args.join(", ");

    // `_graph`: fresh `Scalar::variable`s in parameter order, then `backward()`.
    let _ = writeln!(
        out,
        "fn {}_by_graph(p: &[f64], xs: &[f64], n: usize) -> Outcome {{",
        info.name
    );
    out.push_str("    graph_outcome(|| {\n");
    let mut args = Vec::new();
    let mut variables = Vec::new();
    let mut slot = 0;
    for (index, param) in info.params.iter().enumerate() {
        let local = format!("a{index}");
        match &param.kind {
            ParamKind::Scalar { .. } => {
                let _ = writeln!(out, "        let {local} = Scalar::variable(p[{slot}])?;");
                args.push(format!("&{local}"));
                variables.push(format!("{local}.clone()"));
            }
            ParamKind::Array(k) => {
                let items: Vec<String> = (slot..slot + k)
                    .map(|s| format!("Scalar::variable(p[{s}])?"))
                    .collect();
                let _ = writeln!(out, "        let {local} = [{}];", items.join(", "));
                args.push(format!("&{local}"));
                for item in 0..*k {
                    variables.push(format!("{local}[{item}].clone()"));
                }
            }
            ParamKind::Matrix(m, k) => {
                let rows: Vec<String> = (0..*m)
                    .map(|row| {
                        let items: Vec<String> = (0..*k)
                            .map(|col| format!("Scalar::variable(p[{}])?", slot + row * k + col))
                            .collect();
                        format!("[{}]", items.join(", "))
                    })
                    .collect();
                let _ = writeln!(out, "        let {local} = [{}];", rows.join(", "));
                args.push(format!("&{local}"));
                for row in 0..*m {
                    for col in 0..*k {
                        variables.push(format!("{local}[{row}][{col}].clone()"));
                    }
                }
            }
            ParamKind::Slice(k) => {
                let _ = writeln!(
                    out,
                    "        let {local} = p[{slot}..{}].iter().map(|&value| Scalar::variable(value)).collect::<Result<Vec<_>, _>>()?;",
                    slot + k
                );
                args.push(format!("&{local}"));
                for item in 0..*k {
                    variables.push(format!("{local}[{item}].clone()"));
                }
            }
            ParamKind::Layer => {
                let _ = writeln!(
                    out,
                    "        let {local} = Layer {{ w: [p[{}], p[{}]], b: p[{}] }}.variables()?;",
                    slot,
                    slot + 1,
                    slot + 2
                );
                args.push(format!("&{local}"));
                variables.push(format!("{local}.w[0].clone()"));
                variables.push(format!("{local}.w[1].clone()"));
                variables.push(format!("{local}.b.clone()"));
            }
            ParamKind::Data => args.push("xs".into()),
            ParamKind::Count => args.push("n".into()),
            ParamKind::Constant => args.push("constant_of(n)".into()),
        }
        slot += param.slots();
    }
    let _ = writeln!(
        out,
        "        let output = {}({})?;",
        callee_path(info, "_graph"),
        args.join(", ")
    );
    let _ = writeln!(out, "        Ok((output, vec![{}]))", variables.join(", "));
    out.push_str("    })\n}\n\n");
    out.push_str(&second_order_wrappers(info, &call_args));
    out
}

/// `name_by_jvp` and `name_by_hvp`, called like `name_by_grad` plus a flat `tangent` (one
/// number per differentiated scalar, in parameter order): the tangent is built in the
/// gradient's shape, and `name_hvp`'s gradient and product come back flattened in
/// parameter order. `args` are `name_grad`'s arguments, as `name_by_grad` writes them.
fn second_order_wrappers(info: &Info, args: &str) -> String {
    let differentiated: Vec<&Param> = info.params.iter().filter(|p| p.differentiated()).collect();
    let nested = differentiated
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Slice(_) | ParamKind::Layer));
    // One parameter's tangent, in its gradient's shape, from `tangent[slot..]`.
    let shaped = |param: &Param, slot: usize| -> String {
        let at = |s: usize| format!("tangent[{s}]");
        let row = |from: usize, k: usize| -> String {
            let items: Vec<String> = (from..from + k).map(at).collect();
            format!("[{}]", items.join(", "))
        };
        match &param.kind {
            ParamKind::Scalar { .. } => at(slot),
            ParamKind::Array(k) => row(slot, *k),
            ParamKind::Matrix(m, k) => {
                let rows: Vec<String> = (0..*m).map(|r| row(slot + r * k, *k)).collect();
                format!("[{}]", rows.join(", "))
            }
            ParamKind::Slice(k) => format!("tangent[{slot}..{}].to_vec()", slot + k),
            ParamKind::Layer => format!(
                "Layer {{ w: [{}, {}], b: {} }}",
                at(slot),
                at(slot + 1),
                at(slot + 2)
            ),
            ParamKind::Data | ParamKind::Count | ParamKind::Constant => {
                unreachable!("not differentiated")
            }
        }
    };
    let mut parts = Vec::new();
    let mut slot = 0;
    for param in &differentiated {
        parts.push(shaped(param, slot));
        slot += param.slots();
    }
    let tangent = if !nested {
        // A flat `[f64; N]` over every differentiated scalar.
        let items: Vec<String> = (0..slot).map(|s| format!("tangent[{s}]")).collect();
        format!("[{}]", items.join(", "))
    } else if differentiated.len() == 1 {
        parts.remove(0)
    } else {
        format!("({})", parts.join(", "))
    };
    // A gradient-shaped value `name` as a `Vec<f64>` in parameter order.
    let flatten = |name: &str| -> String {
        if !nested {
            format!("{name}.to_vec()")
        } else if differentiated.len() == 1 {
            match differentiated[0].kind {
                ParamKind::Layer => format!("{name}.to_flat()"),
                _ => name.to_owned(),
            }
        } else {
            let mut pushes = String::new();
            for (index, param) in differentiated.iter().enumerate() {
                let _ = write!(
                    pushes,
                    " {}",
                    match param.kind {
                        ParamKind::Scalar { .. } => format!("flat.push({name}.{index});"),
                        ParamKind::Array(_) | ParamKind::Slice(_) => {
                            format!("flat.extend({name}.{index});")
                        }
                        ParamKind::Matrix(..) => {
                            format!("flat.extend({name}.{index}.as_flattened());")
                        }
                        _ => format!("flat.extend({name}.{index}.to_flat());"),
                    }
                );
            }
            format!("{{ let mut flat = Vec::new();{pushes} flat }}")
        }
    };
    let separator = if args.is_empty() { "" } else { ", " };
    // A const-generic function has no `name_jvp` or `name_hvp` (their flat types would
    // count its sizes): its twin at the wrapper's sizes has (see `generic_family`).
    let (jvp, hvp) = match info.generic() {
        true => ("_at3_jvp", "_at3_hvp"),
        false => ("_jvp", "_hvp"),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "fn {}_by_jvp(p: &[f64], xs: &[f64], n: usize, tangent: &[f64]) -> Result<(f64, f64), ScalarAutodiffError> {{",
        info.name
    );
    let _ = writeln!(
        out,
        "    {}({args}{separator}{tangent})",
        callee_path(info, jvp)
    );
    out.push_str("}\n\n");
    let _ = writeln!(
        out,
        "fn {}_by_hvp(p: &[f64], xs: &[f64], n: usize, tangent: &[f64]) -> Result<(f64, Vec<f64>, Vec<f64>), ScalarAutodiffError> {{",
        info.name
    );
    let _ = writeln!(
        out,
        "    {}({args}{separator}{tangent}).map(|(value, gradient, product)| (value, {}, {}))",
        callee_path(info, hvp),
        flatten("gradient"),
        flatten("product")
    );
    out.push_str("}\n\n");
    out
}

/// What a loop or block may do, for `break`/`continue` and costs.
#[derive(Clone, Debug)]
struct LoopFrame {
    label: Option<String>,
}

/// The generator of one function body.
struct FnGen<'a> {
    rng: &'a mut Rng,
    callees: &'a [Info],
    shape: Shape,
    /// Deliberately unguarded domains: `ln` of anything, `sqrt` at 0, overflowing `exp`.
    unguarded: bool,
    /// How many more operations may be written unguarded (a few per unguarded function,
    /// so that it fails on some inputs, not on all).
    raw_left: u32,
    /// The accumulator declared first, which the result reads more often than not.
    accumulator: Option<String>,
    long: bool,
    scopes: Vec<Vec<Var>>,
    loops: Vec<LoopFrame>,
    /// Local arrays an enclosing `for` iterates over, which the body must not assign.
    borrowed: Vec<String>,
    /// What a later expression must read (aliases whose point is being read later), with
    /// the name it needs in scope.
    pending: Vec<(String, String)>,
    fresh: usize,
    /// Estimated operations so far, loops counted at their largest trip count.
    cost: u64,
    /// The product of the trip counts of the enclosing loops.
    multiplier: u64,
    budget: u64,
    /// Inside a closure of a fold: no calls, folds, blocks or branches.
    in_closure: bool,
    /// Inside a condition or a detached value, which the macro evaluates on primal values:
    /// it refuses (parameter arrays) or miscompiles (local arrays, a layer's array) a fold
    /// over an array or a call that passes a whole array there, so neither is written.
    primal: usize,
    out: String,
    indent: usize,
}

impl<'a> FnGen<'a> {
    fn new(
        rng: &'a mut Rng,
        callees: &'a [Info],
        shape: Shape,
        params: &[Param],
        long: bool,
    ) -> Self {
        let unguarded = rng.chance(20);
        let raw_left = if unguarded { rng.range(1, 3) as u32 } else { 0 };
        let mut scope = Vec::new();
        for param in params {
            let kind = match &param.kind {
                ParamKind::Scalar { mutable } => VarKind::F64 { mutable: *mutable },
                ParamKind::Array(k) => VarKind::ParamArray(*k),
                ParamKind::Matrix(..) => unreachable!("only in the second family"),
                ParamKind::Slice(k) => VarKind::Slice(*k),
                ParamKind::Layer => VarKind::Layer,
                ParamKind::Data => VarKind::Data,
                ParamKind::Count => VarKind::Count,
                ParamKind::Constant => VarKind::F64 { mutable: false },
            };
            scope.push(Var {
                name: param.name.clone(),
                kind,
                tracked: param.differentiated(),
            });
        }
        let budget = if long { 2000 } else { 1500 };
        FnGen {
            rng,
            callees,
            shape,
            unguarded,
            raw_left,
            accumulator: None,
            long,
            scopes: vec![scope],
            loops: Vec::new(),
            borrowed: Vec::new(),
            pending: Vec::new(),
            fresh: 0,
            cost: 0,
            multiplier: 1,
            budget,
            in_closure: false,
            primal: 0,
            out: String::new(),
            indent: 1,
        }
    }

    /// Whether to write the next operation unguarded, with probability `percent` while
    /// this function has unguarded operations left.
    fn raw(&mut self, percent: u64) -> bool {
        if self.raw_left > 0 && self.rng.chance(percent) {
            self.raw_left -= 1;
            true
        } else {
            false
        }
    }

    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// Declares `name`, tracked if `source` (the code it is computed from) reads a
    /// tracked name.
    fn declare(&mut self, name: &str, kind: VarKind, source: &str) {
        let tracked = self.is_tracked(source);
        self.scopes.last_mut().expect("a scope").push(Var {
            name: name.to_owned(),
            kind,
            tracked,
        });
    }

    /// Whether `code` reads a tracked name (roughly: only a detached value as a whole
    /// counts as untracked, not a detached part of it).
    fn is_tracked(&self, code: &str) -> bool {
        let detached = [
            "()", ".floor()", ".ceil()", ".round()", ".trunc()", ".fract()",
        ]
        .iter()
        .any(|rounding| code.ends_with(&format!(".detach(){rounding}").replace("()()", "()")))
            || (code.starts_with("f64::signum(") && code.ends_with(".detach())"));
        if detached {
            return false;
        }
        let tracked: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| v.tracked)
            .map(|v| v.name)
            .collect();
        code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|word| tracked.iter().any(|name| name == word))
    }

    /// Marks the visible `name` tracked, after a tracked value was assigned to it.
    fn mark_tracked(&mut self, name: &str) {
        for scope in self.scopes.iter_mut().rev() {
            if let Some(var) = scope.iter_mut().rev().find(|v| v.name == name) {
                var.tracked = true;
                return;
            }
        }
    }

    /// Every visible name, innermost last, shadowed ones left out.
    fn visible(&self) -> Vec<Var> {
        let mut seen: Vec<Var> = Vec::new();
        for scope in self.scopes.iter().rev() {
            for var in scope.iter().rev() {
                if !seen.iter().any(|v| v.name == var.name) {
                    seen.push(var.clone());
                }
            }
        }
        seen.reverse();
        seen
    }

    fn visible_where(&self, keep: impl Fn(&VarKind) -> bool) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| keep(&v.kind))
            .collect()
    }

    fn has(&self, keep: impl Fn(&VarKind) -> bool) -> bool {
        self.visible().iter().any(|v| keep(&v.kind))
    }

    fn charge(&mut self, operations: u64) {
        self.cost += operations * self.multiplier;
    }

    fn over_budget(&self) -> bool {
        self.cost >= self.budget
    }

    fn literal(&mut self) -> Expr {
        Expr::value((*self.rng.pick(LITERALS)).to_owned(), false)
    }

    // ----- expressions -----

    /// An `f64` value (never a bare `&f64`).
    fn expr(&mut self, depth: u32) -> Expr {
        let e = self.operand(depth);
        self.as_value(e)
    }

    /// A typed `f64` value, fit to be a receiver or a `let` without annotation.
    fn typed(&mut self, depth: u32) -> Expr {
        for _ in 0..8 {
            let e = self.expr(depth);
            if e.typed {
                return e;
            }
        }
        self.typed_leaf()
    }

    fn as_value(&mut self, e: Expr) -> Expr {
        if e.reference {
            self.charge(1);
            Expr::value(format!("({} * 1.0)", e.code), true)
        } else {
            e
        }
    }

    /// A receiver: typed, possibly a bare `&f64`.
    fn receiver(&mut self, depth: u32) -> Expr {
        for _ in 0..8 {
            let e = self.operand(depth);
            if e.typed {
                return e;
            }
        }
        self.typed_leaf()
    }

    /// A typed leaf: a variable or an element (there is always a differentiated one).
    fn typed_leaf(&mut self) -> Expr {
        for _ in 0..32 {
            let e = self.leaf(true);
            if e.typed {
                return e;
            }
        }
        // Every function has a differentiated parameter, and each kind has an element.
        let first = self.scopes[0]
            .iter()
            .find_map(|v| match &v.kind {
                VarKind::F64 { .. } => Some(v.name.clone()),
                VarKind::ParamArray(_) | VarKind::Slice(_) => Some(format!("{}[0]", v.name)),
                VarKind::Layer => Some(format!("{}.b", v.name)),
                _ => None,
            })
            .expect("a differentiated parameter");
        Expr::value(first, true)
    }

    /// An operand of `+ - * /`: possibly an `&f64`.
    fn operand(&mut self, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(30) {
            return self.leaf(true);
        }
        let choice = if self.in_closure {
            self.rng.weighted(&[30, 6, 30, 0, 0, 0, 0, 0])
        } else {
            self.rng.weighted(&[30, 6, 34, 5, 4, 5, 6, 4])
        };
        match choice {
            0 => self.binary(depth),
            1 => {
                let a = self.operand(depth - 1);
                self.charge(1);
                Expr::value(format!("(-({}))", a.code), a.typed)
            }
            2 => self.method(depth),
            3 => self.if_value(depth),
            4 => self.block_value(depth),
            5 => self.call_value(depth),
            6 => self.fold(depth),
            _ => self.detached(depth),
        }
    }

    fn leaf(&mut self, allow_reference: bool) -> Expr {
        let vars = self.visible();
        let mut options: Vec<Expr> = Vec::new();
        for var in &vars {
            let name = &var.name;
            match &var.kind {
                VarKind::F64 { .. } => {
                    for _ in 0..3 {
                        options.push(Expr::value(name.clone(), true));
                    }
                }
                VarKind::Ref if allow_reference => {
                    for _ in 0..3 {
                        options.push(Expr {
                            code: name.clone(),
                            typed: true,
                            reference: true,
                        });
                    }
                }
                VarKind::ParamArray(k) | VarKind::LocalArray { len: k, .. } => {
                    let k = *k;
                    let at = self.rng.below(k);
                    options.push(Expr::value(format!("{name}[{at}]"), true));
                    if let Some(index) = self.index_for(k) {
                        options.push(Expr::value(format!("{name}[{index}]"), true));
                    }
                }
                VarKind::Slice(k) => {
                    let at = self.rng.below(*k);
                    options.push(Expr::value(format!("{name}[{at}]"), true));
                    if let Some(index) = self.index_for(*k) {
                        options.push(Expr::value(format!("{name}[{index}]"), true));
                    } else if let Some(index) = self.any_index() {
                        options.push(Expr::value(format!("{name}[{index} % {name}.len()]"), true));
                    }
                }
                VarKind::Layer => {
                    let at = self.rng.below(2);
                    options.push(Expr::value(format!("{name}.w[{at}]"), true));
                    options.push(Expr::value(format!("{name}.b"), true));
                }
                VarKind::Data => {
                    if let Some(index) = self.data_index() {
                        options.push(Expr::value(format!("{name}[{index}]"), true));
                    }
                    if self.rng.chance(20) {
                        options.push(Expr::value(format!("({name}.len() as f64)"), true));
                    }
                    if self.rng.chance(10) {
                        options.push(Expr::value(
                            format!("{name}.first().copied().unwrap_or(0.5)"),
                            true,
                        ));
                    }
                }
                VarKind::Index(_) => {
                    if self.rng.chance(40) {
                        options.push(Expr::value(format!("({name} as f64)"), true));
                    }
                }
                VarKind::Count => {
                    if self.rng.chance(30) {
                        options.push(Expr::value(format!("({name} as f64)"), true));
                    }
                }
                VarKind::Ref => {}
            }
        }
        if self.rng.chance(8) {
            options.push(Expr::value("SCALE".into(), true));
        }
        if self.shape == Shape::Method && self.rng.chance(15) {
            options.push(Expr::value("self.scale".into(), true));
        }
        // Prefer what pending aliases need read.
        if let Some((code, needs)) = self.pending.last().cloned() {
            if vars.iter().any(|v| v.name == needs) {
                self.pending.pop();
                return Expr::value(code, true);
            }
        }
        let literal_weight = if options.is_empty() { 1 } else { 4 };
        if options.is_empty() || self.rng.below(options.len() + literal_weight) < literal_weight {
            return self.literal();
        }
        let at = self.rng.below(options.len());
        options.swap_remove(at)
    }

    /// A loop index known to be below `k`, if one is in scope.
    fn index_for(&mut self, k: usize) -> Option<String> {
        let candidates: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| matches!(v.kind, VarKind::Index(Bound::Below(b)) if b <= k))
            .map(|v| v.name)
            .collect();
        if candidates.is_empty() {
            return self.any_index().map(|index| format!("{index} % {k}"));
        }
        Some(self.rng.pick(&candidates).clone())
    }

    /// Any loop index in scope.
    fn any_index(&mut self) -> Option<String> {
        let candidates: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| matches!(v.kind, VarKind::Index(_)))
            .map(|v| v.name)
            .collect();
        if candidates.is_empty() {
            None
        } else {
            Some(self.rng.pick(&candidates).clone())
        }
    }

    /// An index known to be below `xs.len()`.
    fn data_index(&mut self) -> Option<String> {
        let candidates: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| matches!(v.kind, VarKind::Index(Bound::DataLen)))
            .map(|v| v.name)
            .collect();
        if candidates.is_empty() {
            None
        } else {
            Some(self.rng.pick(&candidates).clone())
        }
    }

    fn binary(&mut self, depth: u32) -> Expr {
        let a = self.operand(depth - 1);
        let op = *self.rng.pick(&["+", "+", "-", "*", "*", "/"]);
        self.charge(1);
        if op == "/" {
            if self.raw(50) {
                let b = self.operand(depth - 1);
                return Expr::value(format!("({} / {})", a.code, b.code), a.typed || b.typed);
            }
            // A denominator at least 0.5 away from 0.
            let b = self.leaf(true);
            self.charge(2);
            return Expr::value(
                format!("({} / ({} * {} + 0.5))", a.code, b.code, b.code),
                a.typed || b.typed,
            );
        }
        let b = self.operand(depth - 1);
        Expr::value(format!("({} {op} {})", a.code, b.code), a.typed || b.typed)
    }

    /// A method (or `f64::` function) of the runtime, guarded to its domain unless this
    /// function is unguarded.
    fn method(&mut self, depth: u32) -> Expr {
        const GUARDED: &[&str] = &[
            "sin", "cos", "tanh", "atan", "asinh", "abs", "exp", "exp2", "exp_m1", "ln", "ln_1p",
            "log", "log2", "log10", "sqrt", "cbrt", "powi", "powf", "recip", "tan", "asin", "acos",
            "atanh", "sinh", "cosh", "acosh", "max", "min", "hypot", "atan2", "mul_add",
        ];
        let m = *self.rng.pick(GUARDED);
        let raw = self.raw(50);
        let a = self.receiver(depth - 1);
        let r = &a.code;
        self.charge(1);
        let function_form = self.rng.chance(15);
        let call = |m: &str, receiver: &str, args: &[&str]| -> String {
            if function_form {
                let mut all = vec![receiver.to_owned()];
                all.extend(args.iter().map(|s| (*s).to_owned()));
                // The function form takes values: a bare `&f64` must be a value first.
                format!("f64::{m}({})", all.join(", "))
            } else {
                format!("{receiver}.{m}({})", args.join(", "))
            }
        };
        // The function form needs a value receiver.
        let r_value = if a.reference {
            format!("({r} * 1.0)")
        } else {
            r.clone()
        };
        let rv = if function_form {
            r_value.as_str()
        } else {
            r.as_str()
        };
        let code = match (m, raw) {
            ("sin" | "cos" | "tanh" | "atan" | "asinh" | "abs", _) => call(m, rv, &[]),
            ("exp", false) => {
                self.charge(1);
                call(m, &format!("({r} * 0.1)"), &[])
            }
            ("exp", true) => call(m, rv, &[]),
            ("exp2" | "exp_m1", false) => {
                self.charge(1);
                call(m, &format!("{r}.sin()"), &[])
            }
            ("exp2" | "exp_m1", true) => {
                self.charge(1);
                call(m, &format!("({r} * 300.0)"), &[])
            }
            ("ln" | "sqrt" | "cbrt" | "recip", false) => {
                self.charge(2);
                call(m, &format!("({r} * {r} + 0.5)"), &[])
            }
            ("ln" | "sqrt" | "cbrt" | "recip" | "log2" | "log10" | "ln_1p", true) => {
                call(m, rv, &[])
            }
            ("ln_1p", false) => {
                self.charge(1);
                call(m, &format!("({r} * {r})"), &[])
            }
            ("log2" | "log10", false) => {
                self.charge(2);
                call(m, &format!("({r}.abs() + 1.0)"), &[])
            }
            ("log", false) => {
                self.charge(2);
                let base = *self.rng.pick(&["2.0", "10.0", "0.5", "SCALE"]);
                call(m, &format!("({r} * {r} + 2.0)"), &[base])
            }
            ("log", true) => {
                let base = self.expr(depth - 1);
                call(m, rv, &[&base.code])
            }
            ("powi", _) => {
                let exponent = *self.rng.pick(&["0", "1", "2", "3", "4", "-1", "-2", "-3"]);
                if raw || !exponent.starts_with('-') {
                    call(m, rv, &[exponent])
                } else {
                    self.charge(2);
                    call(m, &format!("({r} * {r} + 1.0)"), &[exponent])
                }
            }
            ("powf", false) => {
                self.charge(3);
                let exponent = if self.rng.chance(50) {
                    (*self.rng.pick(&["1.5", "0.5", "-0.5", "2.0", "3.0"])).to_owned()
                } else {
                    let b = self.receiver(depth - 1);
                    self.charge(1);
                    format!("{}.sin()", b.code)
                };
                call(m, &format!("({r} * {r} + 1.0)"), &[&exponent])
            }
            ("powf", true) => {
                let b = self.expr(depth - 1);
                call(m, rv, &[&b.code])
            }
            ("tan", false) => {
                self.charge(1);
                call(m, &format!("{r}.tanh()"), &[])
            }
            ("asin" | "acos" | "atanh", false) => {
                self.charge(2);
                call(m, &format!("({r}.tanh() * 0.9)"), &[])
            }
            ("tan" | "asin" | "acos" | "atanh" | "acosh", true) => call(m, rv, &[]),
            ("sinh" | "cosh", false) => {
                self.charge(1);
                call(m, &format!("({r} * 0.5)"), &[])
            }
            ("sinh" | "cosh", true) => {
                self.charge(1);
                call(m, &format!("({r} * 300.0)"), &[])
            }
            ("acosh", false) => {
                self.charge(2);
                call(m, &format!("({r} * {r} + 1.5)"), &[])
            }
            ("max" | "min" | "hypot" | "atan2", _) => {
                let b = self.expr(depth - 1);
                call(m, rv, &[&b.code])
            }
            ("mul_add", _) => {
                let b = self.expr(depth - 1);
                let c = self.expr(depth - 1);
                call(m, rv, &[&b.code, &c.code])
            }
            _ => unreachable!("every method has a form: {m}"),
        };
        Expr::value(code, true)
    }

    fn detached(&mut self, depth: u32) -> Expr {
        self.primal += 1;
        let a = self.typed(depth - 1);
        self.primal -= 1;
        self.charge(1);
        let code = match self.rng.below(8) {
            0 => format!("{}.detach().floor()", a.code),
            1 => format!("{}.detach().ceil()", a.code),
            2 => format!("{}.detach().round()", a.code),
            3 => format!("{}.detach().trunc()", a.code),
            4 => format!("{}.detach().fract()", a.code),
            5 => format!("f64::signum({}.detach())", a.code),
            _ => format!("{}.detach()", a.code),
        };
        Expr::value(code, true)
    }

    fn if_value(&mut self, depth: u32) -> Expr {
        let condition = self.condition(1);
        let a = self.expr(depth - 1);
        let b = self.expr(depth - 1);
        Expr::value(
            format!("(if {condition} {{ {} }} else {{ {} }})", a.code, b.code),
            a.typed || b.typed,
        )
    }

    fn block_value(&mut self, depth: u32) -> Expr {
        let t = self.name("b");
        let init = self.typed(depth - 1);
        self.scopes.push(Vec::new());
        self.declare(&t, VarKind::F64 { mutable: false }, &init.code);
        let a = self.operand(depth - 1);
        let tail = self.operand(0);
        self.scopes.pop();
        self.charge(2);
        Expr::value(
            format!(
                "({{ let {t} = {}; {t} * {} + {} }})",
                init.code, a.code, tail.code
            ),
            true,
        )
    }

    /// A fold over a tracked array, a slice parameter, a layer's weights or data.
    fn fold(&mut self, depth: u32) -> Expr {
        let sources: Vec<(String, usize)> = self
            .visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                VarKind::ParamArray(k) | VarKind::LocalArray { len: k, .. } => {
                    Some((format!("{}.iter()", v.name), k))
                }
                VarKind::Slice(k) => Some((format!("{}.iter()", v.name), k)),
                VarKind::Layer => Some((format!("{}.w.iter()", v.name), 2)),
                VarKind::Data => Some((format!("{}.iter()", v.name), MAX_DATA_LEN as usize)),
                _ => None,
            })
            .filter(|(source, _)| self.primal == 0 || source == "xs.iter()")
            .collect();
        if sources.is_empty() {
            return self.method(depth);
        }
        let (source, len) = self.rng.pick(&sources).clone();
        let has_data = self.has(|k| *k == VarKind::Data);
        let q = self.name("q");
        let saved = (self.in_closure, self.multiplier);
        self.in_closure = true;
        self.multiplier *= len as u64;
        self.scopes.push(Vec::new());
        let code = match self.rng.below(6) {
            0 => {
                self.charge(1);
                format!("{source}.sum::<f64>()")
            }
            1 => {
                self.charge(1);
                format!("{source}.product::<f64>()")
            }
            2 => {
                self.declare(&q, VarKind::Ref, &source);
                let body = self.operand(1);
                self.charge(2);
                let body = self.as_value(body);
                format!("{source}.map(|{q}| {q} * {}).sum::<f64>()", body.code)
            }
            3 if has_data => {
                let d = self.name("q");
                self.declare(&q, VarKind::Ref, &source);
                self.declare(&d, VarKind::Ref, "xs");
                self.charge(2);
                format!("{source}.zip(xs).map(|({q}, {d})| {q} * {d}).sum::<f64>()")
            }
            4 => {
                let j = self.name("j");
                self.declare(&q, VarKind::Ref, &source);
                self.declare(&j, VarKind::Index(Bound::Below(len)), "");
                let body = self.operand(1);
                self.charge(3);
                format!(
                    "{source}.enumerate().map(|({j}, {q})| {q} * {}).sum::<f64>()",
                    self.as_value(body).code
                )
            }
            _ => {
                let acc = self.name("acc");
                self.in_closure = saved.0;
                self.multiplier = saved.1;
                let init = self.expr(depth - 1);
                self.in_closure = true;
                self.multiplier *= len as u64;
                self.declare(&acc, VarKind::F64 { mutable: false }, &init.code);
                self.declare(&q, VarKind::Ref, &source);
                let scale = self.leaf(false);
                self.charge(2);
                format!(
                    "{source}.fold({}, |{acc}, {q}| {acc} * {} + {q})",
                    init.code, scale.code
                )
            }
        };
        self.scopes.pop();
        self.in_closure = saved.0;
        self.multiplier = saved.1;
        Expr::value(code, true)
    }

    /// A call of an earlier function returning `f64`, if one fits here.
    fn call_value(&mut self, depth: u32) -> Expr {
        match self.call(depth, false) {
            Some((code, _)) => Expr::value(code, true),
            None => self.method(depth),
        }
    }

    /// A call of an earlier function (returning an array when `array` is set) whose
    /// arguments can be made here: `(code, output length)`.
    fn call(&mut self, depth: u32, array: bool) -> Option<(String, usize)> {
        if self.in_closure || self.long {
            return None;
        }
        let room = self.budget.saturating_sub(self.cost);
        let allow_risky = self.rng.chance(15);
        let in_impl = matches!(self.shape, Shape::Method | Shape::Associated);
        let candidates: Vec<usize> = self
            .callees
            .iter()
            .enumerate()
            .filter(|(_, info)| {
                let fits_shape = match info.shape {
                    Shape::Free => !array,
                    Shape::ArrayHelper(_) => array,
                    Shape::Method => !array && self.shape == Shape::Method,
                    Shape::Associated => !array && in_impl,
                };
                let whole = info.params.iter().any(|p| {
                    matches!(
                        p.kind,
                        ParamKind::Array(_) | ParamKind::Slice(_) | ParamKind::Layer
                    )
                });
                fits_shape
                    && (allow_risky || !info.risky)
                    && !(whole && self.primal > 0)
                    && info.cost <= 400
                    && info.cost.max(1) * self.multiplier <= room
                    && info.params.iter().all(|p| self.can_pass(p))
            })
            .map(|(index, _)| index)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        // Recent functions more often than old ones, so calls nest.
        let at = if self.rng.chance(50) {
            candidates[candidates.len() - 1 - self.rng.below(candidates.len().min(10))]
        } else {
            *self.rng.pick(&candidates)
        };
        let info = self.callees[at].clone();
        let mut args = Vec::new();
        for param in &info.params {
            args.push(self.argument(param, depth));
        }
        self.charge(info.cost.max(1));
        let path = match info.shape {
            Shape::Method => format!("self.{}", info.name),
            Shape::Associated => format!("Self::{}", info.name),
            _ => info.name.clone(),
        };
        let len = match info.shape {
            Shape::ArrayHelper(m) => m,
            _ => 1,
        };
        Some((format!("{path}({})", args.join(", ")), len))
    }

    fn can_pass(&self, param: &Param) -> bool {
        match param.kind {
            ParamKind::Slice(k) => self.has(|v| matches!(v, VarKind::Slice(l) if *l >= k)),
            ParamKind::Layer => self.has(|v| *v == VarKind::Layer),
            _ => true,
        }
    }

    fn argument(&mut self, param: &Param, depth: u32) -> String {
        match &param.kind {
            ParamKind::Scalar { .. } => self.expr(depth.saturating_sub(1)).code,
            ParamKind::Array(k) => {
                let k = *k;
                let whole: Vec<String> = self
                    .visible_where(|v| {
                        matches!(v, VarKind::ParamArray(l) | VarKind::LocalArray { len: l, .. } if *l == k)
                    })
                    .into_iter()
                    .map(|v| v.name)
                    .collect();
                if !whole.is_empty() && self.rng.chance(60) {
                    return self.rng.pick(&whole).clone();
                }
                let items: Vec<String> = (0..k).map(|_| self.expr(0).code).collect();
                format!("[{}]", items.join(", "))
            }
            ParamKind::Matrix(..) => unreachable!("the second family is called by nobody"),
            ParamKind::Slice(k) => {
                let k = *k;
                let names = self.visible_where(|v| matches!(v, VarKind::Slice(l) if *l >= k));
                names[0].name.clone()
            }
            ParamKind::Layer => self.visible_where(|v| *v == VarKind::Layer)[0].name.clone(),
            ParamKind::Data => {
                if self.has(|v| *v == VarKind::Data) && self.rng.chance(80) {
                    "xs".into()
                } else {
                    (*self.rng.pick(&["&[0.5, -1.5, 2.0]", "&[]", "&[1.0]"])).to_owned()
                }
            }
            ParamKind::Count => {
                let mut options = vec!["2".to_owned(), "0".to_owned()];
                if self.has(|v| *v == VarKind::Count) {
                    options.push("n".into());
                    options.push("n".into());
                }
                if let Some(index) = self.any_index() {
                    options.push(index);
                }
                self.rng.pick(&options).clone()
            }
            ParamKind::Constant => (*self.rng.pick(&["0.5", "2.0", "-1.0"])).to_owned(),
        }
    }

    /// A primal condition: comparisons of values, tests on indices and data.
    fn condition(&mut self, depth: u32) -> String {
        self.primal += 1;
        let condition = self.condition_inner(depth);
        self.primal -= 1;
        condition
    }

    fn condition_inner(&mut self, depth: u32) -> String {
        if depth > 0 && self.rng.chance(25) {
            let a = self.condition_inner(depth - 1);
            let b = self.condition_inner(depth - 1);
            return match self.rng.below(3) {
                0 => format!("({a} && {b})"),
                1 => format!("({a} || {b})"),
                _ => format!("!({a})"),
            };
        }
        let mut options = vec![0, 0, 0, 1];
        if self.any_index().is_some() {
            options.push(2);
            options.push(2);
        }
        if self.has(|v| *v == VarKind::Count) {
            options.push(3);
        }
        if self.has(|v| *v == VarKind::Data) {
            options.push(4);
        }
        match *self.rng.pick(&options) {
            0 => {
                let a = self.typed(1);
                let op = *self.rng.pick(&[">", "<", ">=", "<="]);
                let threshold = *self.rng.pick(&["0.5", "0.0", "1.0", "-0.5", "2.0", "-1.0"]);
                format!("{} {op} {threshold}", a.code)
            }
            1 => {
                let a = self.typed(1);
                let b = self.expr(1);
                let op = *self.rng.pick(&[">", "<"]);
                format!("{} {op} {}", a.code, b.code)
            }
            2 => {
                let index = self.any_index().expect("an index");
                match self.rng.below(3) {
                    0 => format!("{index} % 2 == 0"),
                    1 => format!("{index} % 3 == 1"),
                    _ => format!("{index} > 1"),
                }
            }
            3 => (*self.rng.pick(&["n > 2", "n % 2 == 1", "n == 0"])).to_owned(),
            _ => (*self.rng.pick(&["xs.len() > 2", "xs.is_empty()"])).to_owned(),
        }
    }

    // ----- statements -----

    fn body(&mut self) -> String {
        if self.rng.chance(75) {
            let acc = self.name("acc");
            let mut init = self.expr(1);
            for _ in 0..4 {
                if self.is_tracked(&init.code) {
                    break;
                }
                init = self.expr(1);
            }
            let annotation = if init.typed { "" } else { ": f64" };
            self.line(&format!("let mut {acc}{annotation} = {};", init.code));
            self.accumulator = Some(acc.clone());
            self.declare(&acc, VarKind::F64 { mutable: true }, &init.code);
        }
        let count = if self.long { 110 } else { self.rng.range(3, 7) };
        for _ in 0..count {
            if self.over_budget() {
                break;
            }
            self.statement(0);
        }
        match self.shape {
            Shape::ArrayHelper(m) => {
                let items: Vec<String> = (0..m).map(|_| self.tail_value().code).collect();
                self.line(&format!("[{}]", items.join(", ")));
            }
            _ => {
                let tail = self.tail_value();
                match self.rng.below(10) {
                    0 => self.line(&format!("return {};", tail.code)),
                    1 => {
                        let condition = self.condition(1);
                        let other = self.tail_value();
                        self.line(&format!("if {condition} {{"));
                        self.line(&format!("    {}", tail.code));
                        self.line("} else {");
                        self.line(&format!("    {}", other.code));
                        self.line("}");
                    }
                    _ => self.line(&tail.code),
                }
            }
        }
        std::mem::take(&mut self.out)
    }

    /// The result: a few of the top-level locals combined, and whatever alias must be read.
    fn tail_value(&mut self) -> Expr {
        let all: Vec<Var> = self.visible_where(|k| matches!(k, VarKind::F64 { .. }));
        let tracked: Vec<String> = all
            .iter()
            .filter(|v| v.tracked)
            .map(|v| v.name.clone())
            .collect();
        // Mostly what carries a gradient; now and then anything, data and constants too.
        let locals: Vec<String> = if !tracked.is_empty() && self.rng.chance(85) {
            tracked
        } else {
            all.into_iter().map(|v| v.name).collect()
        };
        let visible = self.visible();
        let mut parts: Vec<String> = std::mem::take(&mut self.pending)
            .into_iter()
            .filter(|(_, needs)| visible.iter().any(|v| v.name == *needs))
            .map(|(code, _)| code)
            .collect();
        if let Some(acc) = self.accumulator.clone() {
            if self.rng.chance(80) && !parts.contains(&acc) {
                parts.push(acc);
            }
        }
        let wanted = self.rng.range(1, 3);
        for _ in 0..wanted {
            if !locals.is_empty() && self.rng.chance(80) {
                parts.push(self.rng.pick(&locals).clone());
            } else {
                let mut part = self.typed(2);
                for _ in 0..4 {
                    if self.is_tracked(&part.code) {
                        break;
                    }
                    part = self.typed(2);
                }
                parts.push(part.code);
            }
        }
        let mut code = parts[0].clone();
        for part in &parts[1..] {
            let op = *self.rng.pick(&["+", "+", "-", "*"]);
            code = format!("{code} {op} {part}");
        }
        self.charge(parts.len() as u64);
        if self.rng.chance(20) {
            self.charge(1);
            code = format!("({code}).tanh()");
        }
        Expr::value(code, true)
    }

    fn statement(&mut self, nesting: usize) {
        let in_loop = !self.loops.is_empty();
        let can_nest = nesting < 2 && !self.long;
        let weights = [
            14,                                      // let
            10,                                      // let mut
            if self.has_mutable() { 22 } else { 0 }, // assignment
            5,                                       // alias
            if can_nest { 14 } else { 0 },           // for
            if can_nest { 3 } else { 0 },            // while / loop
            if can_nest { 9 } else { 0 },            // if
            if nesting > 0 || self.rng.chance(30) {
                3
            } else {
                0
            }, // early return
            if in_loop { 6 } else { 0 },             // break / continue
            if can_nest { 5 } else { 0 },            // local array
            if self.has_mutable_array() { 8 } else { 0 }, // array element write
            3,                                       // dead code
            if self.has(|k| *k == VarKind::Count) || self.any_index().is_some() {
                2
            } else {
                0
            }, // match
            2,                                       // block
            2,                                       // shadowing
            if can_nest { 2 } else { 0 },            // running max
            if can_nest { 2 } else { 0 },            // array helper call
            if self.unguarded { 5 } else { 2 }, // a point without a derivative, an overflowing adjoint
        ];
        match self.rng.weighted(&weights) {
            0 => self.let_statement(false),
            1 => self.let_statement(true),
            2 => self.assignment(),
            3 => self.alias(nesting),
            4 => self.for_loop(nesting),
            5 => self.while_loop(nesting),
            6 => self.if_statement(nesting),
            7 => self.early_return(),
            8 => self.break_or_continue(),
            9 => self.local_array(nesting),
            10 => self.array_write(),
            11 => self.dead_code(),
            12 => self.match_statement(),
            13 => self.block_statement(nesting),
            14 => self.shadow(),
            15 => self.running_max(nesting),
            16 => self.array_call(),
            _ => self.slope_edge(),
        }
    }

    fn has_mutable(&self) -> bool {
        self.has(|k| matches!(k, VarKind::F64 { mutable: true }))
    }

    fn has_mutable_array(&self) -> bool {
        !self.mutable_arrays().is_empty()
    }

    fn mutable_arrays(&self) -> Vec<(String, usize)> {
        self.visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                VarKind::LocalArray { len, mutable: true } if !self.borrowed.contains(&v.name) => {
                    Some((v.name, len))
                }
                _ => None,
            })
            .collect()
    }

    fn let_statement(&mut self, mutable: bool) {
        let name = self.name("t");
        let init = self.expr(2);
        let annotation = if init.typed { "" } else { ": f64" };
        let keyword = if mutable { "let mut" } else { "let" };
        self.line(&format!("{keyword} {name}{annotation} = {};", init.code));
        self.declare(&name, VarKind::F64 { mutable }, &init.code);
    }

    fn assignment(&mut self) {
        let targets = self.visible_where(|k| matches!(k, VarKind::F64 { mutable: true }));
        let target = self.rng.pick(&targets).name.clone();
        let value = self.expr(2);
        if self.is_tracked(&value.code) {
            self.mark_tracked(&target);
        }
        self.charge(1);
        match self.rng.below(7) {
            0 | 1 => self.line(&format!("{target} = {};", value.code)),
            2 => self.line(&format!("{target} += {};", value.code)),
            3 => self.line(&format!("{target} -= {};", value.code)),
            4 => self.line(&format!("{target} *= {};", value.code)),
            5 => {
                if self.raw(50) {
                    self.line(&format!("{target} /= {};", value.code));
                } else {
                    self.charge(2);
                    self.line(&format!(
                        "{target} /= ({} * {} + 1.0);",
                        value.code, value.code
                    ));
                }
            }
            _ => {
                // A reassignment that reads the old value: the accumulator pattern.
                let other = self.expr(1);
                self.charge(2);
                self.line(&format!(
                    "{target} = {target} * {} + {};",
                    value.code, other.code
                ));
            }
        }
    }

    /// `let y = x;` and `let mut v = x;` reassigned in a loop, with `x` read later or not.
    fn alias(&mut self, nesting: usize) {
        let sources = self.visible_where(|k| matches!(k, VarKind::F64 { .. }));
        if sources.is_empty() {
            return self.let_statement(false);
        }
        let source = self.rng.pick(&sources).name.clone();
        let source_mutable = sources
            .iter()
            .any(|v| v.name == source && v.kind == (VarKind::F64 { mutable: true }));
        let read_later = self.rng.chance(60);
        match self.rng.below(3) {
            0 => {
                // A copy, then the original changes (when it can): the copy keeps the old
                // value.
                let copy = self.name("y");
                self.line(&format!("let {copy} = {source};"));
                self.declare(&copy, VarKind::F64 { mutable: false }, &source);
                if source_mutable {
                    let value = self.expr(2);
                    self.charge(2);
                    self.line(&format!("{source} = {source} * {} + 1.0;", value.code));
                }
                self.pending.push((copy.clone(), copy));
            }
            _ if nesting < 3 && !self.long => {
                let copy = self.name("v");
                self.line(&format!("let mut {copy} = {source};"));
                self.declare(&copy, VarKind::F64 { mutable: true }, &source);
                let (header, trip, index) = self.range_header();
                let saved = self.multiplier;
                self.multiplier *= trip;
                self.line(&header);
                self.indent += 1;
                self.scopes.push(Vec::new());
                if let Some((name, bound)) = index {
                    self.declare(&name, VarKind::Index(bound), "");
                }
                let step = self.expr(1);
                self.charge(3);
                match self.rng.below(3) {
                    0 => self.line(&format!("{copy} = {copy} * {} + {source};", step.code)),
                    1 => self.line(&format!("{copy} *= {};", step.code)),
                    _ => self.line(&format!(
                        "{copy} = ({copy} + {}).sin() * {source};",
                        step.code
                    )),
                }
                self.scopes.pop();
                self.indent -= 1;
                self.multiplier = saved;
                self.line("}");
                self.pending.push((copy.clone(), copy));
            }
            _ => {
                let copy = self.name("y");
                self.line(&format!("let {copy} = {source};"));
                self.declare(&copy, VarKind::F64 { mutable: false }, &source);
                self.pending.push((copy.clone(), copy));
            }
        }
        if read_later {
            self.pending.push((source.clone(), source));
        }
    }

    /// A range loop header: `(text, largest trip count, index name and bound)`.
    fn range_header(&mut self) -> (String, u64, Option<(String, Bound)>) {
        let index = self.name("i");
        let has_count = self.has(|k| *k == VarKind::Count);
        let has_data = self.has(|k| *k == VarKind::Data);
        let arrays: Vec<(String, usize)> = self
            .visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                VarKind::ParamArray(k) => Some((v.name, k)),
                _ => None,
            })
            .collect();
        let mut options = vec![0, 1];
        if has_count {
            options.extend([2, 2, 2, 3]);
        }
        if has_data {
            options.push(4);
        }
        if !arrays.is_empty() {
            options.push(5);
        }
        match *self.rng.pick(&options) {
            0 => {
                let k = self.rng.range(1, 4);
                (
                    format!("for {index} in 0..{k} {{"),
                    k as u64,
                    Some((index, Bound::Below(k))),
                )
            }
            1 => {
                let k = self.rng.range(0, 3);
                (
                    format!("for {index} in 0..={k} {{"),
                    k as u64 + 1,
                    Some((index, Bound::Below(k + 1))),
                )
            }
            2 => {
                if self.rng.chance(20) {
                    ("for _ in 0..n {".into(), MAX_COUNT, None)
                } else {
                    (
                        format!("for {index} in 0..n {{"),
                        MAX_COUNT,
                        Some((index, Bound::None)),
                    )
                }
            }
            3 => (
                format!("for {index} in (0..n).rev() {{"),
                MAX_COUNT,
                Some((index, Bound::None)),
            ),
            4 => (
                format!("for {index} in 0..xs.len() {{"),
                MAX_DATA_LEN,
                Some((index, Bound::DataLen)),
            ),
            _ => {
                let (name, k) = self.rng.pick(&arrays).clone();
                (
                    format!("for {index} in 0..{name}.len() {{"),
                    k as u64,
                    Some((index, Bound::Below(k))),
                )
            }
        }
    }

    fn for_loop(&mut self, nesting: usize) {
        let label = if self.rng.chance(15) {
            Some(self.name("'l"))
        } else {
            None
        };
        let prefix = label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
        let mut bindings: Vec<(String, VarKind, String)> = Vec::new();
        let mut borrowed: Vec<String> = Vec::new();
        let has_data = self.has(|k| *k == VarKind::Data);
        let arrays: Vec<(String, usize, bool)> = self
            .visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                VarKind::ParamArray(k) => Some((v.name, k, false)),
                VarKind::LocalArray { len, .. } => Some((v.name, len, true)),
                VarKind::Slice(k) => Some((v.name, k, false)),
                VarKind::Layer => Some((format!("{}.w", v.name), 2, false)),
                _ => None,
            })
            .collect();
        let mut kinds = vec![0, 0, 0];
        if has_data {
            kinds.extend([1, 1, 2]);
        }
        if !arrays.is_empty() {
            kinds.extend([3, 3, 4]);
        }
        let (header, trip) = match *self.rng.pick(&kinds) {
            0 => {
                let (header, trip, index) = self.range_header();
                if let Some((name, bound)) = index {
                    bindings.push((name, VarKind::Index(bound), String::new()));
                }
                (header, trip)
            }
            1 => {
                let d = self.name("d");
                let (header, kind) = match self.rng.below(4) {
                    0 => (
                        format!("for &{d} in xs {{"),
                        VarKind::F64 { mutable: false },
                    ),
                    1 => (
                        format!("for &{d} in xs.iter() {{"),
                        VarKind::F64 { mutable: false },
                    ),
                    2 => (format!("for {d} in xs.iter() {{"), VarKind::Ref),
                    _ => {
                        let i = self.name("i");
                        bindings.push((i.clone(), VarKind::Index(Bound::DataLen), String::new()));
                        (
                            format!("for ({i}, &{d}) in xs.iter().enumerate() {{"),
                            VarKind::F64 { mutable: false },
                        )
                    }
                };
                bindings.push((d, kind, "xs".into()));
                (header, MAX_DATA_LEN)
            }
            2 => {
                // Data zipped with a parameter array or data alone.
                let d = self.name("d");
                let e = self.name("d");
                let tracked: Vec<(String, usize, bool)> =
                    arrays.iter().filter(|a| !a.2).cloned().collect();
                if let Some((name, k, _)) = tracked.first().cloned() {
                    bindings.push((d.clone(), VarKind::F64 { mutable: false }, "xs".into()));
                    bindings.push((e.clone(), VarKind::Ref, name.clone()));
                    (
                        format!("for (&{d}, {e}) in xs.iter().zip({name}.iter()) {{"),
                        (k as u64).min(MAX_DATA_LEN),
                    )
                } else {
                    bindings.push((d.clone(), VarKind::F64 { mutable: false }, "xs".into()));
                    bindings.push((e.clone(), VarKind::Ref, "xs".into()));
                    (
                        format!("for (&{d}, {e}) in xs.iter().zip(xs.iter().skip(1)) {{"),
                        MAX_DATA_LEN,
                    )
                }
            }
            3 => {
                let (name, k, local) = self.rng.pick(&arrays).clone();
                if local {
                    borrowed.push(name.clone());
                }
                let u = self.name("u");
                let header = match self.rng.below(4) {
                    0 => {
                        bindings.push((u.clone(), VarKind::F64 { mutable: false }, name.clone()));
                        format!("for &{u} in {name}.iter() {{")
                    }
                    1 => {
                        bindings.push((u.clone(), VarKind::Ref, name.clone()));
                        format!("for {u} in {name}.iter() {{")
                    }
                    2 => {
                        let j = self.name("j");
                        bindings.push((j.clone(), VarKind::Index(Bound::Below(k)), String::new()));
                        bindings.push((u.clone(), VarKind::Ref, name.clone()));
                        format!("for ({j}, {u}) in {name}.iter().enumerate() {{")
                    }
                    _ => {
                        let j = self.name("j");
                        bindings.push((j.clone(), VarKind::Index(Bound::Below(k)), String::new()));
                        bindings.push((u.clone(), VarKind::F64 { mutable: false }, name.clone()));
                        format!("for ({j}, &{u}) in {name}.iter().enumerate() {{")
                    }
                };
                (header, k as u64)
            }
            _ => {
                let (name, k, local) = self.rng.pick(&arrays).clone();
                if local {
                    borrowed.push(name.clone());
                }
                let u = self.name("u");
                if has_data && self.rng.chance(60) {
                    let d = self.name("d");
                    bindings.push((u.clone(), VarKind::Ref, name.clone()));
                    bindings.push((d.clone(), VarKind::F64 { mutable: false }, "xs".into()));
                    (
                        format!("for ({u}, &{d}) in {name}.iter().zip(xs) {{"),
                        (k as u64).min(MAX_DATA_LEN),
                    )
                } else {
                    let (other, other_k, other_local) = self.rng.pick(&arrays).clone();
                    if other_local {
                        borrowed.push(other.clone());
                    }
                    let u2 = self.name("u");
                    bindings.push((u.clone(), VarKind::Ref, name.clone()));
                    bindings.push((u2.clone(), VarKind::F64 { mutable: false }, other.clone()));
                    (
                        format!("for ({u}, &{u2}) in {name}.iter().zip({other}.iter()) {{"),
                        k.min(other_k) as u64,
                    )
                }
            }
        };
        self.emit_loop(&prefix, &header, trip, bindings, borrowed, label, nesting);
    }

    #[allow(clippy::too_many_arguments)]
    fn emit_loop(
        &mut self,
        prefix: &str,
        header: &str,
        trip: u64,
        bindings: Vec<(String, VarKind, String)>,
        borrowed: Vec<String>,
        label: Option<String>,
        nesting: usize,
    ) {
        self.line(&format!("{prefix}{header}"));
        let saved = self.multiplier;
        self.multiplier *= trip.max(1);
        self.indent += 1;
        self.scopes.push(Vec::new());
        for (name, kind, source) in bindings {
            self.declare(&name, kind, &source);
        }
        let pushed = borrowed.len();
        self.borrowed.extend(borrowed);
        self.loops.push(LoopFrame { label });
        let count = self.rng.range(1, 3);
        for _ in 0..count {
            self.statement(nesting + 1);
        }
        self.loops.pop();
        self.borrowed.truncate(self.borrowed.len() - pushed);
        self.scopes.pop();
        self.indent -= 1;
        self.multiplier = saved;
        self.line("}");
    }

    fn while_loop(&mut self, nesting: usize) {
        let k = self.name("k");
        let has_count = self.has(|v| *v == VarKind::Count);
        let bound = if has_count && self.rng.chance(50) {
            "n".to_owned()
        } else {
            self.rng.range(1, 4).to_string()
        };
        let trip = bound.parse::<u64>().unwrap_or(MAX_COUNT);
        self.line(&format!("let mut {k} = 0;"));
        let is_loop = self.rng.chance(40);
        if is_loop {
            self.line("loop {");
        } else {
            let condition = self.condition(0);
            self.line(&format!("while {k} < {bound} && {condition} {{"));
        }
        self.indent += 1;
        self.line(&format!("{k} += 1;"));
        if is_loop {
            self.line(&format!("if {k} > {bound} {{"));
            self.line("    break;");
            self.line("}");
        }
        let saved = self.multiplier;
        self.multiplier *= trip + 1;
        self.scopes.push(Vec::new());
        self.declare(&k, VarKind::Index(Bound::None), "");
        self.loops.push(LoopFrame { label: None });
        let count = self.rng.range(1, 3);
        for _ in 0..count {
            self.statement(nesting + 1);
        }
        self.loops.pop();
        self.scopes.pop();
        self.multiplier = saved;
        self.indent -= 1;
        self.line("}");
    }

    fn if_statement(&mut self, nesting: usize) {
        let arms = self.rng.range(1, 3);
        for arm in 0..arms {
            let condition = self.condition(1);
            if arm == 0 {
                self.line(&format!("if {condition} {{"));
            } else {
                self.line(&format!("}} else if {condition} {{"));
            }
            self.branch(nesting);
        }
        if self.rng.chance(60) {
            self.line("} else {");
            self.branch(nesting);
        }
        self.line("}");
    }

    fn branch(&mut self, nesting: usize) {
        self.indent += 1;
        self.scopes.push(Vec::new());
        let count = self.rng.range(1, 2);
        for _ in 0..count {
            self.statement(nesting + 1);
        }
        self.scopes.pop();
        self.indent -= 1;
    }

    fn early_return(&mut self) {
        let condition = self.condition(1);
        let value = match self.shape {
            Shape::ArrayHelper(m) => {
                let items: Vec<String> = (0..m).map(|_| self.expr(1).code).collect();
                format!("[{}]", items.join(", "))
            }
            _ => self.expr(2).code,
        };
        self.line(&format!("if {condition} {{"));
        self.line(&format!("    return {value};"));
        self.line("}");
    }

    fn break_or_continue(&mut self) {
        let condition = self.condition(1);
        let labels: Vec<String> = self.loops.iter().filter_map(|l| l.label.clone()).collect();
        let word = if self.rng.chance(50) {
            "break"
        } else {
            "continue"
        };
        let target = if !labels.is_empty() && self.rng.chance(50) {
            format!(" {}", self.rng.pick(&labels))
        } else {
            String::new()
        };
        self.line(&format!("if {condition} {{"));
        self.line(&format!("    {word}{target};"));
        self.line("}");
    }

    fn local_array(&mut self, nesting: usize) {
        let name = self.name("a");
        let len = self.rng.range(2, 4);
        match self.rng.below(4) {
            0 | 1 => {
                self.line(&format!("let mut {name} = [0.0f64; {len}];"));
                self.declare(&name, VarKind::LocalArray { len, mutable: true }, "");
                let index = self.name("i");
                self.line(&format!("for {index} in 0..{len} {{"));
                self.indent += 1;
                self.scopes.push(Vec::new());
                self.declare(&index, VarKind::Index(Bound::Below(len)), "");
                let saved = self.multiplier;
                self.multiplier *= len as u64;
                self.loops.push(LoopFrame { label: None });
                let value = self.expr(2);
                if self.is_tracked(&value.code) {
                    self.mark_tracked(&name);
                }
                self.charge(1);
                if self.rng.chance(50) {
                    self.line(&format!("{name}[{index}] = {};", value.code));
                } else {
                    self.line(&format!("{name}[{index}] += {};", value.code));
                }
                if nesting < 2 && self.rng.chance(30) {
                    self.statement(nesting + 1);
                }
                self.loops.pop();
                self.multiplier = saved;
                self.scopes.pop();
                self.indent -= 1;
                self.line("}");
            }
            2 => {
                let items: Vec<String> = (0..len).map(|_| self.expr(1).code).collect();
                let keyword = if self.rng.chance(50) {
                    "let mut"
                } else {
                    "let"
                };
                self.line(&format!(
                    "{keyword} {name}: [f64; {len}] = [{}];",
                    items.join(", ")
                ));
                self.declare(
                    &name,
                    VarKind::LocalArray {
                        len,
                        mutable: keyword == "let mut",
                    },
                    &items.join(" "),
                );
            }
            _ => {
                // A copy of a local array, then the original changes.
                let sources: Vec<(String, usize)> = self
                    .visible()
                    .into_iter()
                    .filter_map(|v| match v.kind {
                        VarKind::LocalArray { len, .. } => Some((v.name, len)),
                        _ => None,
                    })
                    .collect();
                if let Some((source, len)) = sources.first().cloned() {
                    self.line(&format!("let {name} = {source};"));
                    self.declare(
                        &name,
                        VarKind::LocalArray {
                            len,
                            mutable: false,
                        },
                        &source,
                    );
                    if self.mutable_arrays().iter().any(|(n, _)| *n == source) {
                        let value = self.expr(1);
                        if self.is_tracked(&value.code) {
                            self.mark_tracked(&source);
                        }
                        self.line(&format!("{source}[0] = {};", value.code));
                    }
                    self.pending.push((format!("{name}[0]"), name.clone()));
                } else {
                    let value = self.typed(1);
                    self.line(&format!("let {name} = [{}; {len}];", value.code));
                    self.declare(
                        &name,
                        VarKind::LocalArray {
                            len,
                            mutable: false,
                        },
                        &value.code,
                    );
                }
            }
        }
    }

    fn array_write(&mut self) {
        let arrays = self.mutable_arrays();
        let (name, len) = self.rng.pick(&arrays).clone();
        let index = match self.index_for(len) {
            Some(index) if self.rng.chance(60) => index,
            _ => self.rng.below(len).to_string(),
        };
        let value = self.expr(2);
        if self.is_tracked(&value.code) {
            self.mark_tracked(&name);
        }
        self.charge(1);
        let op = *self.rng.pick(&["=", "+=", "-=", "*="]);
        self.line(&format!("{name}[{index}] {op} {};", value.code));
    }

    fn dead_code(&mut self) {
        let name = self.name("_dead");
        let scalars = self.visible_where(|k| matches!(k, VarKind::F64 { .. }));
        if !scalars.is_empty() && self.rng.chance(60) {
            // A value with a huge (or, at 0, infinite) derivative that nothing reads; the
            // second form is NaN for negative `x`, an error in both paths.
            let x = self.rng.pick(&scalars).name.clone();
            self.charge(3);
            if self.rng.chance(88) {
                self.line(&format!("let {name} = ({x} * {x} * 1e-200).sqrt();"));
            } else {
                self.line(&format!("let {name} = ({x} * 1e-200).sqrt();"));
            }
        } else {
            let value = self.expr(2);
            let annotation = if value.typed { "" } else { ": f64" };
            self.line(&format!("let {name}{annotation} = {};", value.code));
        }
    }

    fn match_statement(&mut self) {
        let scrutinee = if self.has(|k| *k == VarKind::Count) && self.rng.chance(60) {
            "n % 3".to_owned()
        } else if let Some(index) = self.any_index() {
            format!("{index} % 3")
        } else {
            "n % 3".to_owned()
        };
        let name = self.name("t");
        let a = self.expr(2);
        let b = self.expr(2);
        let c = self.expr(2);
        let annotation = if a.typed || b.typed || c.typed {
            ""
        } else {
            ": f64"
        };
        self.line(&format!("let {name}{annotation} = match {scrutinee} {{"));
        self.line(&format!("    0 => {},", a.code));
        self.line(&format!("    1 => {},", b.code));
        self.line(&format!("    _ => {},", c.code));
        self.line("};");
        let sources = format!("{} {} {}", a.code, b.code, c.code);
        self.declare(&name, VarKind::F64 { mutable: false }, &sources);
    }

    fn block_statement(&mut self, nesting: usize) {
        self.line("{");
        self.indent += 1;
        self.scopes.push(Vec::new());
        let count = self.rng.range(1, 3);
        for _ in 0..count {
            if nesting < 3 {
                self.statement(nesting + 1);
            } else {
                self.let_statement(false);
            }
        }
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    fn shadow(&mut self) {
        let scalars = self.visible_where(|k| matches!(k, VarKind::F64 { .. }));
        if scalars.is_empty() {
            return self.let_statement(false);
        }
        let name = self.rng.pick(&scalars).name.clone();
        let value = self.expr(2);
        self.charge(1);
        self.line(&format!("let {name} = {name} * {} + {name};", value.code));
        let source = format!("{name} {}", value.code);
        self.declare(&name, VarKind::F64 { mutable: false }, &source);
    }

    /// The stable running maximum: data from detached values.
    fn running_max(&mut self, nesting: usize) {
        let arrays: Vec<(String, usize)> = self
            .visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                VarKind::ParamArray(k) => Some((v.name, k)),
                VarKind::LocalArray { len, .. } => Some((v.name, len)),
                _ => None,
            })
            .collect();
        if arrays.is_empty() {
            return self.let_statement(nesting > 0);
        }
        let (name, len) = self.rng.pick(&arrays).clone();
        let m = self.name("m");
        let u = self.name("u");
        self.line(&format!("let mut {m} = f64::NEG_INFINITY;"));
        self.line(&format!("for &{u} in {name}.iter() {{"));
        self.scopes.push(Vec::new());
        self.declare(&u, VarKind::F64 { mutable: false }, &name);
        let saved = self.multiplier;
        self.multiplier *= len as u64;
        let scale = self.leaf(false);
        self.charge(2);
        self.line(&format!(
            "    {m} = {m}.max(({u} * {}).detach());",
            scale.code
        ));
        self.multiplier = saved;
        self.scopes.pop();
        self.line("}");
        self.declare(&m, VarKind::F64 { mutable: false }, "");
        // Use it as a shift, as a stable log-sum-exp would.
        let sum = self.name("t");
        let q = self.name("q");
        self.line(&format!(
            "let {sum} = {name}.iter().map(|{q}| ({q} - {m}).exp()).sum::<f64>().ln() + {m};"
        ));
        self.charge(3 * len as u64);
        self.declare(&sum, VarKind::F64 { mutable: false }, &name);
        self.pending.push((sum.clone(), sum));
    }

    /// Where the reverse pass fails and the forward one does not: an infinite local
    /// derivative (`sqrt` and `acosh` at their domain's edge, reached at exact inputs or
    /// clamped to it by `max`), a contribution that overflows (`(x * 1e-300 * 1e300) *
    /// 1e300`: upstream 1e300 times local 1e300) and an adjoint that overflows as two
    /// finite contributions of 1e300 add up.
    fn slope_edge(&mut self) {
        let scalars: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| v.tracked && matches!(v.kind, VarKind::F64 { .. }))
            .map(|v| v.name)
            .collect();
        let targets: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| matches!(v.kind, VarKind::F64 { mutable: true }))
            .map(|v| v.name)
            .collect();
        if scalars.is_empty() {
            return self.let_statement(false);
        }
        let x = self.rng.pick(&scalars).clone();
        let t = self.name("e");
        self.charge(4);
        // Callers pick a function that can fail like this only now and then.
        self.unguarded = true;
        let threshold = *self.rng.pick(&["0.5", "0.0", "1.0", "-0.5", "-1.0"]);
        let op = *self.rng.pick(&[">", "<"]);
        let half = format!("{x} {op} {threshold}");
        let form = self.rng.below(5);
        if form < 2 || targets.is_empty() {
            let code = match form {
                0 => format!("{x}.abs().sqrt()"),
                1 => format!("({x} * {x} + 1.0).acosh()"),
                2 => format!("{x}.max(0.0).sqrt()"),
                3 => format!("({x} * 1e-300 * 1e300) * 1e300"),
                _ => format!("({x} * 1e-300) * 1e300 + ({x} * 1e-300) * 1e300"),
            };
            // The last three fail for about half the inputs: only on a branch.
            let code = if form < 2 {
                code
            } else {
                format!("if {half} {{ {code} }} else {{ {x} }}")
            };
            self.line(&format!("let {t} = {code};"));
            self.declare(&t, VarKind::F64 { mutable: false }, &x);
            self.pending.push((t.clone(), t));
            return;
        }
        let acc = match &self.accumulator {
            Some(acc) if targets.contains(acc) && self.rng.chance(70) => acc.clone(),
            _ => self.rng.pick(&targets).clone(),
        };
        self.line(&format!("if {half} {{"));
        match form {
            2 => self.line(&format!("    {acc} += {x}.max(0.0).sqrt();")),
            3 => self.line(&format!("    {acc} += ({x} * 1e-300 * 1e300) * 1e300;")),
            _ => {
                self.line(&format!("    let {t} = {x} * 1e-300;"));
                self.line(&format!("    {acc} += {t} * 1e300 + {t} * 1e300;"));
            }
        }
        self.line("}");
        self.mark_tracked(&acc);
    }

    fn array_call(&mut self) {
        match self.call(2, true) {
            Some((code, len)) => {
                let name = self.name("h");
                self.line(&format!("let {name} = {code};"));
                self.declare(
                    &name,
                    VarKind::LocalArray {
                        len,
                        mutable: false,
                    },
                    &code,
                );
            }
            None => self.let_statement(false),
        }
    }
}

// The second family: bodies in the forms the compiled sweeps of `name_grad` cover (no
// block or `if` expressions, no `match`, `while`, `loop`, `break`, `continue` or `return`,
// no closures, folds, calls or `#[param]`s), so that the bit-identity test reaches the
// sweeps and not only the checked path.

/// The second family's seed, independent of [`SEED`].
pub const SWEEP_SEED: u64 = 0x5EED_5EE9_0000_0002;

/// How many functions the second family (`s000`, `s001`, ...) has.
pub const SWEEP_FUNCTIONS: usize = 170;

/// The parameters of a second-family function: `f64`s and arrays by value (at least one),
/// and maybe `xs: &[f64]` and `n: usize`.
fn sweep_signature(rng: &mut Rng) -> Vec<Param> {
    let mut params = Vec::new();
    let scalars = *rng.pick(&[0, 1, 1, 2, 2, 3]);
    for index in 0..scalars {
        params.push(Param {
            name: format!("x{index}"),
            kind: ParamKind::Scalar { mutable: false },
        });
    }
    if scalars == 0 || rng.chance(40) {
        params.push(Param {
            name: "w".into(),
            kind: ParamKind::Array(rng.range(2, 4)),
        });
    }
    if rng.chance(20) {
        params.push(Param {
            name: "m".into(),
            kind: ParamKind::Matrix(rng.range(2, 3), rng.range(2, 3)),
        });
    }
    if rng.chance(55) {
        params.push(Param {
            name: "xs".into(),
            kind: ParamKind::Data,
        });
    }
    if rng.chance(50) {
        params.push(Param {
            name: "n".into(),
            kind: ParamKind::Count,
        });
    }
    if rng.chance(40) {
        for i in (1..params.len()).rev() {
            let j = rng.below(i + 1);
            params.swap(i, j);
        }
    }
    params
}

/// What a name in a second-family body is.
#[derive(Clone, Debug, PartialEq)]
enum SKind {
    /// A differentiated `f64`: a parameter (never mutable) or a local.
    Tracked { mutable: bool },
    /// An immutable data `f64`: a data `let` or a loop's `&f64` pattern.
    Data,
    /// An `&f64` loop element: an operand of `+ - * /` only.
    Ref,
    /// A parameter array `[f64; K]`.
    Array(usize),
    /// A parameter array `[[f64; K]; M]`, as `(M, K)`.
    Matrix(usize, usize),
    /// A local `let mut a = [0.0; K];`.
    Local(usize),
    /// A `usize`: a loop index or an immutable data `let`, below what is known.
    Index(Bound),
    /// `n: usize`.
    Count,
    /// `xs: &[f64]`.
    Slice,
}

#[derive(Clone, Debug)]
struct SVar {
    name: String,
    kind: SKind,
    /// Known to depend on a differentiated parameter (so `.detach()` applies to it).
    tracked: bool,
}

/// An expression of a second-family body.
struct SExpr {
    code: String,
    /// Its type is known to be `f64` (a literal alone is `{float}`).
    typed: bool,
    /// Known to depend on a differentiated parameter.
    tracked: bool,
}

/// The generator of one second-family body.
struct SweepGen<'a> {
    rng: &'a mut Rng,
    scopes: Vec<Vec<SVar>>,
    /// Names no longer read (`x` after `let mut v = x;`, so that the sweeps can move it).
    retired: Vec<String>,
    lines: Vec<String>,
    indent: usize,
    counter: usize,
    /// How many loops enclose the statement being written.
    loops: usize,
    /// Operations per call at the largest data, estimated; and the current trip product.
    cost: u64,
    multiplier: u64,
    /// Some domains are left unguarded in this function.
    unguarded: bool,
    raw_left: u32,
    /// Values that the result should read (dead code is the exception).
    pending: Vec<String>,
}

impl<'a> SweepGen<'a> {
    fn new(rng: &'a mut Rng, params: &[Param]) -> Self {
        let unguarded = rng.chance(25);
        let raw_left = if unguarded { rng.range(1, 2) as u32 } else { 0 };
        let scope = params
            .iter()
            .map(|param| SVar {
                tracked: param.differentiated(),
                name: param.name.clone(),
                kind: match param.kind {
                    ParamKind::Scalar { .. } => SKind::Tracked { mutable: false },
                    ParamKind::Array(k) => SKind::Array(k),
                    ParamKind::Matrix(m, k) => SKind::Matrix(m, k),
                    ParamKind::Data => SKind::Slice,
                    ParamKind::Count => SKind::Count,
                    _ => unreachable!("not in the second family"),
                },
            })
            .collect();
        SweepGen {
            rng,
            scopes: vec![scope],
            retired: Vec::new(),
            lines: Vec::new(),
            indent: 1,
            counter: 0,
            loops: 0,
            cost: 0,
            multiplier: 1,
            unguarded,
            raw_left,
            pending: Vec::new(),
        }
    }

    fn body(&mut self) -> String {
        let acc = self.fresh("acc");
        let init = self.fresh_value();
        let annotation = if init.typed { "" } else { ": f64" };
        self.line(&format!("let mut {acc}{annotation} = {};", init.code));
        self.declare(&acc, SKind::Tracked { mutable: true }, init.tracked);
        let count = self.rng.range(2, 6);
        for _ in 0..count {
            self.statement(0);
        }
        let mut tail = if self.retired.contains(&acc) {
            self.tracked_leaf()
        } else {
            acc.clone()
        };
        let pending = std::mem::take(&mut self.pending);
        for name in pending {
            let base = name.split('[').next().unwrap_or_default();
            if self.visible().iter().any(|v| v.name == base) && self.rng.chance(70) {
                tail = format!("{tail} + {name}");
            }
        }
        if self.rng.chance(40) {
            let extra = self.expr(1);
            tail = format!("{tail} * {}", paren(&extra.code));
        }
        self.line(&tail);
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn line(&mut self, text: &str) {
        self.lines
            .push(format!("{}{text}", "    ".repeat(self.indent)));
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn declare(&mut self, name: &str, kind: SKind, tracked: bool) {
        let scope = self.scopes.last_mut().expect("a scope");
        scope.retain(|v| v.name != name);
        scope.push(SVar {
            name: name.to_owned(),
            kind,
            tracked,
        });
    }

    /// The names in scope, innermost binding of each, without retired ones.
    fn visible(&self) -> Vec<SVar> {
        let mut out: Vec<SVar> = Vec::new();
        for scope in self.scopes.iter().rev() {
            for var in scope.iter().rev() {
                if !out.iter().any(|v| v.name == var.name) && !self.retired.contains(&var.name) {
                    out.push(var.clone());
                }
            }
        }
        out.reverse();
        out
    }

    fn visible_where(&self, test: impl Fn(&SKind) -> bool) -> Vec<SVar> {
        self.visible()
            .into_iter()
            .filter(|v| test(&v.kind))
            .collect()
    }

    fn charge(&mut self, ops: u64) {
        self.cost += ops * self.multiplier;
    }

    /// An index below `len`: a literal, a loop index or a data `let` known to be below it.
    fn index(&mut self, len: usize) -> String {
        let names = self.visible_where(|k| matches!(k, SKind::Index(Bound::Below(b)) if *b <= len));
        if !names.is_empty() && self.rng.chance(70) {
            return self.rng.pick(&names).name.clone();
        }
        self.rng.below(len).to_string()
    }

    /// A tracked `f64` operand: a name, a parameter's or a local array's element.
    fn tracked_leaf(&mut self) -> String {
        self.tracked_operand().0
    }

    /// A tracked operand, and whether it is known to depend on a parameter.
    fn tracked_operand(&mut self) -> (String, bool) {
        let mut options: Vec<(String, bool)> = Vec::new();
        for var in self.visible() {
            match var.kind {
                SKind::Tracked { .. } => options.push((var.name.clone(), var.tracked)),
                SKind::Array(k) | SKind::Local(k) => {
                    let index = self.index(k);
                    options.push((format!("{}[{index}]", var.name), var.tracked));
                }
                SKind::Matrix(m, k) => {
                    let (row, col) = (self.index(m), self.index(k));
                    options.push((format!("{}[{row}][{col}]", var.name), true));
                }
                _ => {}
            }
        }
        if options.is_empty() {
            return ("SCALE".into(), false);
        }
        self.rng.pick(&options).clone()
    }

    /// A data operand, or `None` if there is none in scope.
    fn data_leaf(&mut self, allow_ref: bool) -> Option<String> {
        let mut options: Vec<String> = Vec::new();
        for var in self.visible() {
            match var.kind {
                SKind::Data => options.push(var.name.clone()),
                SKind::Ref if allow_ref => options.push(var.name.clone()),
                SKind::Index(_) => options.push(format!("({} as f64)", var.name)),
                SKind::Count => options.push("(n as f64)".into()),
                _ => {}
            }
        }
        let slice = self.visible().iter().any(|v| v.kind == SKind::Slice);
        for var in self.visible_where(|k| *k == SKind::Index(Bound::DataLen)) {
            if slice {
                options.push(format!("xs[{}]", var.name));
            }
        }
        if options.is_empty() {
            None
        } else {
            Some(self.rng.pick(&options).clone())
        }
    }

    fn leaf(&mut self, allow_ref: bool) -> SExpr {
        match self.rng.weighted(&[55, 20, 25]) {
            0 => {
                let (code, tracked) = self.tracked_operand();
                SExpr {
                    code,
                    typed: true,
                    tracked,
                }
            }
            1 => match self.data_leaf(allow_ref) {
                Some(code) => SExpr {
                    code,
                    typed: true,
                    tracked: false,
                },
                None => self.literal(),
            },
            _ => self.literal(),
        }
    }

    fn literal(&mut self) -> SExpr {
        SExpr {
            code: (*self.rng.pick(LITERALS)).to_owned(),
            typed: false,
            tracked: false,
        }
    }

    /// An expression known to be `f64`, for receivers.
    fn typed(&mut self, depth: u32) -> SExpr {
        let e = self.expr(depth);
        if e.typed {
            e
        } else {
            let (leaf, tracked) = self.tracked_operand();
            SExpr {
                code: format!("{leaf} * {}", paren(&e.code)),
                typed: true,
                tracked,
            }
        }
    }

    fn expr(&mut self, depth: u32) -> SExpr {
        self.expr_with(depth, false)
    }

    fn expr_with(&mut self, depth: u32, allow_ref: bool) -> SExpr {
        if depth == 0 {
            return self.leaf(allow_ref);
        }
        match self.rng.weighted(&[25, 35, 5, 30, 3]) {
            0 => self.leaf(allow_ref),
            1 => {
                let a = self.expr_with(depth - 1, true);
                let b = self.expr_with(depth - 1, true);
                let (b_typed, b_tracked) = (b.typed, b.tracked);
                let op = *self.rng.pick(&["+", "-", "*", "+", "*", "/"]);
                self.charge(1);
                let b = if op == "/" && !self.raw() {
                    // A guarded divisor.
                    format!("({} * {} + 1.0)", paren(&b.code), paren(&b.code))
                } else {
                    paren(&b.code)
                };
                SExpr {
                    code: format!("{} {op} {b}", paren(&a.code)),
                    typed: a.typed || b_typed,
                    tracked: a.tracked || b_tracked,
                }
            }
            2 => {
                let a = self.expr_with(depth - 1, true);
                self.charge(1);
                SExpr {
                    code: format!("-{}", paren(&a.code)),
                    typed: a.typed,
                    tracked: a.tracked,
                }
            }
            3 => self.method(depth),
            _ => {
                let a = self.typed(depth - 1);
                if !a.tracked {
                    // Plain `f64`s have no `detach`.
                    return a;
                }
                SExpr {
                    code: format!("{}.detach()", paren(&a.code)),
                    typed: true,
                    tracked: false,
                }
            }
        }
    }

    /// Whether to write this operation without its domain guard.
    fn raw(&mut self) -> bool {
        if self.raw_left > 0 && self.rng.chance(35) {
            self.raw_left -= 1;
            true
        } else {
            false
        }
    }

    fn method(&mut self, depth: u32) -> SExpr {
        let r = self.typed(depth - 1);
        let tracked = r.tracked;
        let r = paren(&r.code);
        self.charge(2);
        let code = match self.rng.below(16) {
            0 => {
                if self.raw() {
                    format!("{r}.exp()")
                } else {
                    format!("{r}.tanh().exp()")
                }
            }
            1 => {
                if self.raw() {
                    format!("{r}.ln()")
                } else {
                    format!("({r} * {r} + 1.0).ln()")
                }
            }
            2 => {
                if self.raw() {
                    format!("{r}.sqrt()")
                } else {
                    format!("({r} * {r} + 0.25).sqrt()")
                }
            }
            3 => {
                let b = self.expr(depth - 1);
                if self.raw() {
                    format!("{r}.powf({})", b.code)
                } else {
                    format!("({r}.abs() + 0.5).powf({}.sin())", self.as_typed(b))
                }
            }
            4 => {
                let k = *self.rng.pick(&["2", "3", "2", "4", "-1", "0"]);
                format!("{r}.powi({k})")
            }
            5 => {
                if self.raw() {
                    format!("{r}.recip()")
                } else {
                    format!("({r} * {r} + 1.0).recip()")
                }
            }
            6 => format!("{r}.tanh()"),
            7 => format!("{r}.sin()"),
            8 => format!("{r}.cos()"),
            9 => format!("{r}.abs()"),
            10 | 11 => {
                let b = self.expr(depth - 1);
                let method = if self.rng.chance(50) { "max" } else { "min" };
                format!("{r}.{method}({})", b.code)
            }
            12 => {
                let b = self.expr(depth - 1);
                format!("{r}.hypot({})", b.code)
            }
            13 => {
                let b = self.expr(depth - 1);
                format!("{r}.atan2({})", b.code)
            }
            14 => {
                let b = self.expr(depth - 1);
                let c = self.expr(depth - 1);
                format!("{r}.mul_add({}, {})", b.code, c.code)
            }
            _ => {
                let method = *self.rng.pick(&["atan", "sinh", "exp_m1", "ln_1p", "cbrt"]);
                match method {
                    "sinh" | "exp_m1" if !self.raw() => format!("{r}.tanh().{method}()"),
                    "ln_1p" if !self.raw() => format!("{r}.abs().{method}()"),
                    _ => format!("{r}.{method}()"),
                }
            }
        };
        // Arguments may be tracked too: conservatively, only the receiver counts.
        SExpr {
            code,
            typed: true,
            tracked,
        }
    }

    /// `e` as a receiver: parenthesized, and made `f64` if it is a bare literal.
    fn as_typed(&mut self, e: SExpr) -> String {
        if e.typed {
            paren(&e.code)
        } else {
            format!("({} as f64)", paren(&e.code))
        }
    }

    fn condition(&mut self) -> String {
        let op = *self.rng.pick(&[">", "<", ">=", "<="]);
        let threshold = *self.rng.pick(&["0.5", "0.0", "1.0", "-0.5", "2.0"]);
        let indices = self.visible_where(|k| matches!(k, SKind::Index(_)));
        match self.rng.below(4) {
            0 if !indices.is_empty() => {
                let i = self.rng.pick(&indices).name.clone();
                let m = self.rng.range(2, 3);
                format!("{i} % {m} == {}", self.rng.below(m))
            }
            1 => match self.data_leaf(false) {
                Some(d) => format!("{d} {op} {threshold}"),
                None => format!("{} {op} {threshold}", self.tracked_leaf()),
            },
            _ => format!("{} {op} {threshold}", self.tracked_leaf()),
        }
    }

    fn statement(&mut self, nesting: usize) {
        let can_loop = nesting < 2;
        let weights = [
            20,                            // let
            22,                            // assignment
            if can_loop { 14 } else { 0 }, // for
            10,                            // if
            8,                             // local array
            8,                             // data let
            6,                             // copy
            5,                             // dead code
        ];
        match self.rng.weighted(&weights) {
            0 => self.let_statement(),
            1 => self.assignment(),
            2 => self.for_loop(nesting),
            3 => self.if_statement(nesting),
            4 => self.local_array(nesting),
            5 => self.data_let(),
            6 => self.copy(),
            _ => self.dead_code(),
        }
    }

    /// The initial value of a `let mut`: not a bare name or element, which would make it
    /// a copy (see [`SweepGen::copy`]).
    fn fresh_value(&mut self) -> SExpr {
        for _ in 0..6 {
            let value = self.expr(2);
            if paren(&value.code) != value.code || !value.typed {
                return value;
            }
        }
        let (code, tracked) = self.tracked_operand();
        SExpr {
            code: format!("{code} * 0.5"),
            typed: true,
            tracked,
        }
    }

    /// `let y = e;` of a bare name or element that may change later: a copy the sweeps
    /// leave to the checked path when the source changes afterwards.
    fn bare_mutable(&self, value: &SExpr) -> bool {
        let base = value.code.split('[').next().unwrap_or_default();
        paren(&value.code) == value.code
            && self.visible().iter().any(|v| {
                v.name == base
                    && matches!(v.kind, SKind::Tracked { mutable: true } | SKind::Local(_))
            })
    }

    /// A value for an immutable `let`: anything but a copy of what may change.
    fn let_value(&mut self) -> SExpr {
        let value = self.expr(2);
        if self.bare_mutable(&value) {
            self.fresh_value()
        } else {
            value
        }
    }

    fn let_statement(&mut self) {
        let name = self.fresh("t");
        let mutable = self.rng.chance(40);
        let value = if mutable {
            self.fresh_value()
        } else {
            self.let_value()
        };
        let annotation = if value.typed { "" } else { ": f64" };
        let keyword = if mutable { "let mut" } else { "let" };
        self.line(&format!("{keyword} {name}{annotation} = {};", value.code));
        let kind = if mutable || value.tracked {
            SKind::Tracked { mutable }
        } else {
            SKind::Data
        };
        self.declare(&name, kind, value.tracked);
        if self.loops == 0 {
            self.pending.push(name);
        }
    }

    /// `t = e;`, `t op= e;` or `a[i] op= e;`.
    fn assignment(&mut self) {
        let mut targets: Vec<String> = self
            .visible_where(|k| *k == SKind::Tracked { mutable: true })
            .into_iter()
            .map(|v| v.name)
            .collect();
        for var in self.visible() {
            if let SKind::Local(k) = var.kind {
                let index = self.index(k);
                targets.push(format!("{}[{index}]", var.name));
            }
        }
        if targets.is_empty() {
            return self.let_statement();
        }
        let target = self.rng.pick(&targets).clone();
        let value = self.expr(2);
        self.charge(1);
        let op = *self.rng.pick(&["=", "+=", "+=", "-=", "*=", "/="]);
        let value = match op {
            "/=" => format!("({} * {} + 1.0)", paren(&value.code), paren(&value.code)),
            // A self-read keeps plain assignments from discarding what came before.
            "=" if self.rng.chance(60) => format!("{target} * 0.5 + {}", paren(&value.code)),
            _ => value.code,
        };
        self.line(&format!("{target} {op} {value};"));
    }

    fn for_loop(&mut self, nesting: usize) {
        let slice = self.visible().iter().any(|v| v.kind == SKind::Slice);
        let count = self.visible().iter().any(|v| v.kind == SKind::Count);
        // Loop variables come from a small pool: sibling loops reuse them.
        let used: Vec<String> = self.visible().into_iter().map(|v| v.name).collect();
        let index = ["i", "j", "k"]
            .iter()
            .find(|name| !used.iter().any(|u| u == *name))
            .map(|name| (*name).to_owned());
        let element = ["u", "z", "y"]
            .iter()
            .find(|name| !used.iter().any(|u| u == *name))
            .map(|name| (*name).to_owned());
        let (Some(i), Some(u)) = (index, element) else {
            return self.let_statement();
        };
        let take = if count && self.rng.chance(30) {
            ".take(n)"
        } else {
            ""
        };
        let rev = if self.rng.chance(25) { ".rev()" } else { "" };
        let mut bound: Vec<(String, SKind)> = Vec::new();
        let (header, trip) = match self.rng.below(6) {
            0 if count => {
                bound.push((i.clone(), SKind::Index(Bound::None)));
                (format!("for {i} in 0..n {{"), MAX_COUNT)
            }
            1 if slice => {
                let (pattern, kind) = if self.rng.chance(60) {
                    (format!("&{u}"), SKind::Data)
                } else {
                    (u.clone(), SKind::Ref)
                };
                bound.push((u.clone(), kind));
                (
                    format!("for {pattern} in xs.iter(){take}{rev} {{"),
                    MAX_DATA_LEN,
                )
            }
            2 if slice => {
                let (pattern, kind) = if self.rng.chance(60) {
                    (format!("&{u}"), SKind::Data)
                } else {
                    (u.clone(), SKind::Ref)
                };
                bound.push((i.clone(), SKind::Index(Bound::DataLen)));
                bound.push((u.clone(), kind));
                (
                    format!("for ({i}, {pattern}) in xs.iter().enumerate(){take}{rev} {{"),
                    MAX_DATA_LEN,
                )
            }
            3 if slice => {
                let v = self.fresh("v");
                bound.push((u.clone(), SKind::Data));
                bound.push((v.clone(), SKind::Data));
                (
                    format!("for (&{u}, &{v}) in xs.iter().zip(xs.iter().skip(1)) {{"),
                    MAX_DATA_LEN,
                )
            }
            _ => {
                let k = self.rng.range(2, 4);
                bound.push((i.clone(), SKind::Index(Bound::Below(k))));
                (format!("for {i} in 0..{k} {{"), k as u64)
            }
        };
        self.line(&header);
        self.indent += 1;
        self.scopes.push(Vec::new());
        for (name, kind) in bound {
            self.declare(&name, kind, false);
        }
        let saved = self.multiplier;
        self.multiplier *= trip;
        self.loops += 1;
        let count = self.rng.range(1, 3);
        for _ in 0..count {
            self.statement(nesting + 1);
        }
        self.loops -= 1;
        self.multiplier = saved;
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    fn if_statement(&mut self, nesting: usize) {
        let arms = self.rng.range(1, 3);
        for arm in 0..arms {
            let condition = self.condition();
            if arm == 0 {
                self.line(&format!("if {condition} {{"));
            } else {
                self.line(&format!("}} else if {condition} {{"));
            }
            self.branch(nesting);
        }
        if self.rng.chance(50) {
            self.line("} else {");
            self.branch(nesting);
        }
        self.line("}");
    }

    fn branch(&mut self, nesting: usize) {
        self.indent += 1;
        self.scopes.push(Vec::new());
        let saved = self.pending.len();
        let count = self.rng.range(1, 2);
        for _ in 0..count {
            if nesting < 2 {
                self.statement(nesting + 1);
            } else {
                self.assignment();
            }
        }
        self.pending.truncate(saved);
        self.scopes.pop();
        self.indent -= 1;
    }

    fn local_array(&mut self, nesting: usize) {
        let name = self.fresh("a");
        let len = self.rng.range(2, 4);
        self.line(&format!("let mut {name} = [0.0f64; {len}];"));
        self.declare(&name, SKind::Local(len), false);
        if self.rng.chance(60) {
            let used: Vec<String> = self.visible().into_iter().map(|v| v.name).collect();
            let Some(i) = ["i", "j", "k"]
                .iter()
                .find(|n| !used.iter().any(|u| u == *n))
                .map(|n| (*n).to_owned())
            else {
                return;
            };
            self.line(&format!("for {i} in 0..{len} {{"));
            self.indent += 1;
            self.scopes.push(Vec::new());
            self.declare(&i, SKind::Index(Bound::Below(len)), false);
            let saved = self.multiplier;
            self.multiplier *= len as u64;
            self.loops += 1;
            let value = self.expr(2);
            let op = if self.rng.chance(50) { "=" } else { "+=" };
            self.charge(1);
            self.line(&format!("{name}[{i}] {op} {};", value.code));
            if nesting < 1 && self.rng.chance(30) {
                self.statement(nesting + 2);
            }
            self.loops -= 1;
            self.multiplier = saved;
            self.scopes.pop();
            self.indent -= 1;
            self.line("}");
        } else {
            for _ in 0..self.rng.range(1, 2) {
                let index = self.rng.below(len);
                let value = self.expr(2);
                self.line(&format!("{name}[{index}] = {};", value.code));
            }
        }
        if self.loops == 0 {
            let index = self.rng.below(len);
            self.pending.push(format!("{name}[{index}]"));
        }
    }

    fn data_let(&mut self) {
        let name = self.fresh("c");
        let indices = self.visible_where(|k| matches!(k, SKind::Index(_)));
        if !indices.is_empty() && self.rng.chance(40) {
            let i = self.rng.pick(&indices).name.clone();
            let m = self.rng.range(2, 3);
            self.line(&format!("let {name} = {i} % {m};"));
            self.declare(&name, SKind::Index(Bound::Below(m)), false);
            return;
        }
        let Some(d) = self.data_leaf(false) else {
            return self.let_statement();
        };
        let scale = *self.rng.pick(LITERALS);
        let op = *self.rng.pick(&["*", "+", "-"]);
        self.line(&format!("let {name} = {d} {op} {scale};"));
        self.declare(&name, SKind::Data, false);
    }

    /// `let y = x;` of an immutable value, or `let mut v = x;` then reassigned (with `x`
    /// retired afterwards about half the time).
    fn copy(&mut self) {
        let sources: Vec<String> = self
            .visible_where(|k| matches!(k, SKind::Tracked { .. }))
            .into_iter()
            .map(|v| v.name)
            .collect();
        if sources.is_empty() {
            return self.let_statement();
        }
        let source = self.rng.pick(&sources).clone();
        let name = self.fresh("v");
        let (immutable_source, tracked) = self
            .visible()
            .iter()
            .find(|v| v.name == source)
            .map(|v| (v.kind == SKind::Tracked { mutable: false }, v.tracked))
            .unwrap_or_default();
        // In a loop, where the copy runs again, only `let y = x;` of an immutable `x`,
        // and now and then a `let mut` (which the sweeps leave to the checked path).
        if self.loops > 0 && !immutable_source && self.rng.chance(75) {
            return self.let_statement();
        }
        if immutable_source && (self.loops > 0 || self.rng.chance(40)) {
            self.line(&format!("let {name} = {source};"));
            self.declare(&name, SKind::Tracked { mutable: false }, tracked);
        } else {
            self.line(&format!("let mut {name} = {source};"));
            self.declare(&name, SKind::Tracked { mutable: true }, tracked);
            // Retired only outside loops, where the copy runs once.
            if self.loops == 0 && self.rng.chance(80) {
                self.retired.push(source);
            }
            let value = self.expr(1);
            let op = *self.rng.pick(&["=", "+=", "*="]);
            let value = if op == "=" {
                format!("{name} * {}", paren(&value.code))
            } else {
                value.code
            };
            self.charge(1);
            self.line(&format!("{name} {op} {value};"));
        }
        if self.loops == 0 {
            self.pending.push(name);
        }
    }

    fn dead_code(&mut self) {
        let name = self.fresh("_dead");
        let x = self.tracked_leaf();
        self.charge(3);
        match self.rng.below(3) {
            0 => self.line(&format!("let {name} = ({x} * {x} * 1e-200).sqrt();")),
            1 => self.line(&format!("let {name} = ({x} * 1e-200).sqrt();")),
            _ => {
                let value = self.let_value();
                let annotation = if value.typed { "" } else { ": f64" };
                self.line(&format!("let {name}{annotation} = {};", value.code));
            }
        }
    }
}

/// `code` in parentheses unless it is a name, an element or a literal.
fn paren(code: &str) -> String {
    let simple = code
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '.' | '[' | ']'))
        && !code.contains("..");
    if simple && !code.starts_with('-') {
        code.to_owned()
    } else {
        format!("({code})")
    }
}

// The third family: bodies aimed at the checks the forward sweep leaves out (see the
// rustdoc of `autodiff-macros/src/sweep/checks.rs`). An operation read by one other in a
// slot that carries a non-finite value, a data constant in such a slot, a `let` read that
// way by a later statement of its block, and a running sum of a loop are checked later, or
// once after the loop; every absorbing read (`exp`, `tanh`, `max`, `x / inf`, `powi(0)`,
// ...), a condition, a `detach` or an overwrite must bring the check back. So the bodies
// are running sums updated by `+= -= *= /=`, `s = s * t + u`, `s = t - s` and friends, in
// branch arms and nested loops, declared at different loop depths, several per loop, read
// by an absorbing operation inside the loop, overwritten without reading themselves, read
// after the loop by absorbing operations only, used in conditions, detached; products and
// exponentials that overflow after a few iterations; `let`s read later only by absorbing
// operations, only inside a branch or a nested loop, shadowed, dead, overwritten before
// any read; divisions by data that may be 0 or infinite, and data tables holding
// infinities, NaN, `1e308` and `5e-324`. `tests/random_programs/bits.rs` gives this family
// inputs from a stream of its own, with more extreme values. The forms are those the compiled
// sweeps cover, as in the second family.

/// The third family's seed, independent of [`SEED`] and [`SWEEP_SEED`].
pub const CHECK_SEED: u64 = 0x5EED_C4EC_0000_0003;

/// How many functions the third family (`c000`, `c001`, ...) has.
pub const CHECK_FUNCTIONS: usize = 120;

/// Literals of the third family: ordinary ones...
const CHECK_LITERALS: &[&str] = &[
    "0.5", "2.0", "1.5", "-1.0", "3.0", "0.0", "-0.0", "1e-3", "10.0", "0.25", "100.0",
];

/// ... and, now and then, scales that overflow or underflow.
const CHECK_SCALES: &[&str] = &["1e300", "1e154", "1e308", "5e-324", "1e-300"];

/// What the data tables of the third family hold besides ordinary numbers.
const EXTREME: &[&str] = &[
    "f64::INFINITY",
    "f64::NEG_INFINITY",
    "f64::NAN",
    "1e308",
    "-1e308",
    "5e-324",
    "f64::MAX",
    "f64::MIN_POSITIVE",
    "0.0",
    "-0.0",
    "1e154",
    "1e-300",
];

/// The ordinary numbers of the data tables.
const ORDINARY: &[&str] = &["0.5", "2.0", "-1.5", "3.0", "1.0", "-0.25", "0.75"];

/// The parameters of a third-family function: one to three `f64`s, maybe an array, and
/// mostly data `xs: &[f64]` and `n: usize`.
fn check_signature(rng: &mut Rng) -> Vec<Param> {
    let mut params = Vec::new();
    let scalars = *rng.pick(&[1, 2, 2, 3]);
    for index in 0..scalars {
        params.push(Param {
            name: format!("x{index}"),
            kind: ParamKind::Scalar { mutable: false },
        });
    }
    if rng.chance(30) {
        params.push(Param {
            name: "w".into(),
            kind: ParamKind::Array(rng.range(2, 3)),
        });
    }
    if rng.chance(80) {
        params.push(Param {
            name: "xs".into(),
            kind: ParamKind::Data,
        });
    }
    if rng.chance(60) {
        params.push(Param {
            name: "n".into(),
            kind: ParamKind::Count,
        });
    }
    if rng.chance(30) {
        for i in (1..params.len()).rev() {
            let j = rng.below(i + 1);
            params.swap(i, j);
        }
    }
    params
}

/// What a name (or element) in a third-family body is.
#[derive(Clone, Debug)]
enum CLeaf {
    /// A tracked `f64` any expression may read: a parameter, an element, a `let`.
    Tracked(String),
    /// A data `f64`: a loop's element, `xs[i]`.
    Data(String),
    /// A `usize` loop index, below a constant where one is known.
    Index(String, Option<usize>),
    /// A local data table `[f64; len]`.
    Table(String, usize),
}

/// The generator of one third-family body.
struct CheckGen<'a> {
    rng: &'a mut Rng,
    scopes: Vec<Vec<CLeaf>>,
    lines: Vec<String>,
    indent: usize,
    counter: usize,
    /// How many loops enclose the statement being written.
    loops: usize,
    /// Operations per call at the largest data, estimated; and the current trip product.
    cost: u64,
    multiplier: u64,
    /// Operations written (the sweeps take bodies of at most 256).
    ops: u64,
    /// How many more operations may be written without their domain guard.
    raw_left: u32,
    /// What the result reads besides `acc`.
    terms: Vec<String>,
    data: bool,
    count: bool,
}

impl<'a> CheckGen<'a> {
    fn new(rng: &'a mut Rng, params: &[Param]) -> Self {
        let raw_left = rng.range(0, 2) as u32;
        let mut scope = Vec::new();
        let (mut data, mut count) = (false, false);
        for param in params {
            match param.kind {
                ParamKind::Scalar { .. } => scope.push(CLeaf::Tracked(param.name.clone())),
                ParamKind::Array(k) => {
                    for index in 0..k {
                        scope.push(CLeaf::Tracked(format!("{}[{index}]", param.name)));
                    }
                }
                ParamKind::Data => data = true,
                ParamKind::Count => count = true,
                _ => unreachable!("not in the third family"),
            }
        }
        CheckGen {
            rng,
            scopes: vec![scope],
            lines: Vec::new(),
            indent: 1,
            counter: 0,
            loops: 0,
            cost: 0,
            multiplier: 1,
            ops: 0,
            raw_left,
            terms: Vec::new(),
            data,
            count,
        }
    }

    fn body(&mut self) -> String {
        let init = self.fresh_tx(1);
        self.line(&format!("let mut acc: f64 = {init};"));
        let motifs = self.rng.range(2, 4);
        for _ in 0..motifs {
            if self.ops > 110 {
                break;
            }
            self.motif();
        }
        let mut tail = "acc".to_owned();
        for term in std::mem::take(&mut self.terms) {
            let op = *self.rng.pick(&["+", "+", "-", "*"]);
            tail = format!("{tail} {op} {}", paren(&term));
        }
        if self.rng.chance(15) {
            tail = format!("({tail}).tanh()");
        }
        self.line(&tail);
        let mut out = String::new();
        for line in &self.lines {
            out.push_str(line);
            out.push('\n');
        }
        out
    }

    fn line(&mut self, text: &str) {
        self.lines
            .push(format!("{}{text}", "    ".repeat(self.indent)));
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn charge(&mut self, ops: u64) {
        self.ops += ops;
        self.cost += ops * self.multiplier;
    }

    fn declare(&mut self, leaf: CLeaf) {
        self.scopes.last_mut().expect("a scope").push(leaf);
    }

    fn visible(&self) -> Vec<CLeaf> {
        self.scopes.iter().flatten().cloned().collect()
    }

    /// Whether to write this operation without its domain guard.
    fn raw(&mut self) -> bool {
        if self.raw_left > 0 && self.rng.chance(30) {
            self.raw_left -= 1;
            true
        } else {
            false
        }
    }

    fn tracked_leaf(&mut self) -> String {
        let options: Vec<String> = self
            .visible()
            .into_iter()
            .filter_map(|leaf| match leaf {
                CLeaf::Tracked(code) => Some(code),
                _ => None,
            })
            .collect();
        self.rng.pick(&options).clone()
    }

    /// An index into a data table of `len`, which reaches its later (extreme) entries only
    /// for some inputs: a loop index over `n` or the data, `n` itself, or a constant range's
    /// index offset by `n`; else its first entry, which is ordinary.
    fn index_for(&mut self, len: usize) -> String {
        let mut options = Vec::new();
        for leaf in self.visible() {
            match leaf {
                CLeaf::Index(name, None) => options.push(format!("{name} % {len}")),
                CLeaf::Index(name, Some(_)) if self.count => {
                    options.push(format!("({name} + n) % {len}"));
                }
                _ => {}
            }
        }
        if self.count {
            options.push(format!("n % {len}"));
        }
        if options.is_empty() || self.rng.chance(10) {
            return "0".into();
        }
        self.rng.pick(&options).clone()
    }

    fn data_leaf(&mut self) -> Option<String> {
        let mut options = Vec::new();
        for leaf in self.visible() {
            match leaf {
                CLeaf::Data(code) => {
                    options.push(code.clone());
                    options.push(code);
                }
                CLeaf::Index(name, _) => {
                    if self.rng.chance(25) {
                        options.push(format!("({name} as f64)"));
                    } else {
                        options.push(format!("(({name} + 1) as f64)"));
                    }
                }
                CLeaf::Table(name, len) => {
                    let index = self.index_for(len);
                    options.push(format!("{name}[{index}]"));
                    options.push(format!("{name}[{index}]"));
                }
                CLeaf::Tracked(_) => {}
            }
        }
        if self.count {
            options.push("(n as f64)".into());
        }
        if options.is_empty() {
            None
        } else {
            Some(self.rng.pick(&options).clone())
        }
    }

    fn literal(&mut self) -> String {
        if self.rng.chance(12) {
            (*self.rng.pick(CHECK_SCALES)).to_owned()
        } else {
            (*self.rng.pick(CHECK_LITERALS)).to_owned()
        }
    }

    /// Any operand: a tracked expression, data or a literal.
    fn operand(&mut self, depth: u32) -> String {
        match self.rng.weighted(&[50, 32, 18]) {
            0 => self.tx(depth),
            1 => match self.data_leaf() {
                Some(code) => code,
                None => self.literal(),
            },
            _ => self.literal(),
        }
    }

    /// A tracked expression (so of type `f64`).
    fn tx(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.chance(20) {
            return self.tracked_leaf();
        }
        let a = self.tx(depth - 1);
        let a = paren(&a);
        self.charge(1);
        match self.rng.weighted(&[34, 5, 22, 19, 20]) {
            0 => {
                let b = self.operand(depth - 1);
                let mut op = *self.rng.pick(&["+", "-", "*", "/", "*", "+"]);
                if paren(&b) == a && (op == "-" || op == "/") {
                    // Not `x - x` or `x / x`, which are 0 or NaN (or 1) everywhere.
                    op = "+";
                }
                let tracked_divisor = !b.is_empty() && self.rng.chance(35);
                if tracked_divisor {
                    // `b op a`: the tracked expression on the right.
                    let a = if op == "/" && !self.raw() {
                        self.charge(2);
                        format!("({a} * {a} + 1.0)")
                    } else {
                        a
                    };
                    format!("{} {op} {a}", paren(&b))
                } else {
                    format!("{a} {op} {}", paren(&b))
                }
            }
            1 => format!("-{a}"),
            2 => {
                let method = *self.rng.pick(&[
                    "abs", "sqrt", "cbrt", "ln", "ln_1p", "log2", "log10", "sin", "cos", "tan",
                    "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh",
                ]);
                if self.raw() {
                    return format!("{a}.{method}()");
                }
                match method {
                    "sqrt" | "ln" | "log2" | "log10" => {
                        self.charge(2);
                        format!("({a}.abs() + 0.5).{method}()")
                    }
                    "ln_1p" => {
                        self.charge(1);
                        format!("{a}.abs().ln_1p()")
                    }
                    "asin" | "acos" | "atanh" => {
                        self.charge(2);
                        format!("({a}.tanh() * 0.5).{method}()")
                    }
                    "acosh" => {
                        self.charge(2);
                        format!("({a}.abs() + 1.5).acosh()")
                    }
                    "sinh" | "cosh" | "tan" if self.rng.chance(50) => {
                        self.charge(1);
                        format!("{a}.tanh().{method}()")
                    }
                    _ => format!("{a}.{method}()"),
                }
            }
            3 => {
                let method = *self
                    .rng
                    .pick(&["exp", "exp2", "exp_m1", "tanh", "atan", "recip", "powi"]);
                match method {
                    "exp" | "exp2" | "exp_m1" if !self.raw() && self.rng.chance(60) => {
                        self.charge(1);
                        format!("{a}.tanh().{method}()")
                    }
                    "recip" if !self.raw() => {
                        self.charge(2);
                        format!("({a} * {a} + 1.0).recip()")
                    }
                    "powi" => {
                        let k = if self.raw() {
                            *self.rng.pick(&["-1", "-2", "0", "3"])
                        } else {
                            *self.rng.pick(&["0", "2", "3", "0", "1"])
                        };
                        format!("{a}.powi({k})")
                    }
                    _ => format!("{a}.{method}()"),
                }
            }
            _ => {
                let method = *self.rng.pick(&[
                    "max", "min", "hypot", "atan2", "powf", "log", "mul_add", "max",
                ]);
                let b = self.operand(depth - 1);
                match method {
                    "powf" | "log" if !self.raw() => {
                        self.charge(2);
                        let exponent = *self.rng.pick(&["0.5", "2.0", "-1.0", "3.0", "10.0"]);
                        format!("({a}.abs() + 0.5).{method}({exponent})")
                    }
                    "mul_add" => {
                        let c = self.operand(depth - 1);
                        format!("{a}.mul_add({b}, {c})")
                    }
                    _ => format!("{a}.{method}({b})"),
                }
            }
        }
    }

    /// A tracked expression that is not a bare name or element: assigned to a mutable
    /// local, a bare one would be a copy, which the sweeps leave to the checked path
    /// when its source is read again.
    fn fresh_tx(&mut self, depth: u32) -> String {
        let value = self.tx(depth);
        if paren(&value) == value {
            self.charge(1);
            let scale = *self.rng.pick(&["0.5", "2.0", "1e300", "-1.0"]);
            format!("{value} * {scale}")
        } else {
            value
        }
    }

    /// A tracked value that is not finite for some inputs only: a sum with data, an
    /// overflow, a product with or a quotient by data, an unguarded `ln`, an exponential.
    /// Not a bare name. Mostly one whose local derivatives stay finite where it is not
    /// (`t + inf`, `t * 1e308`), so that no `0 * inf` of the reverse sweep gives the
    /// forward sweep's missed check away.
    fn risky(&mut self) -> String {
        let t = self.tx(1);
        let t = paren(&t);
        let data = self.data_leaf();
        self.charge(2);
        match (self.rng.below(9), data) {
            (0 | 1, Some(data)) => format!("{t} + {data}"),
            (2, Some(data)) => format!("{data} - {t}"),
            (3, Some(data)) => format!("{t} * {data}"),
            (4, Some(data)) => format!("{t} / {data}"),
            (5, _) => format!("({t} * 300.0).exp()"),
            (6, _) => format!("{t}.ln()"),
            (7, _) => format!("{t} * 1e308"),
            _ => format!("({t} - 1.0) * 1e308"),
        }
    }

    /// A value for an update: mostly tracked, sometimes data or a literal.
    fn update_value(&mut self) -> String {
        match self.rng.weighted(&[60, 30, 10]) {
            0 => {
                let depth = self.rng.range(0, 2) as u32;
                self.tx(depth)
            }
            1 => match self.data_leaf() {
                Some(code) => code,
                None => self.tx(1),
            },
            _ => self.literal(),
        }
    }

    fn condition(&mut self) -> String {
        let threshold = *self.rng.pick(&["0.5", "0.0", "1.0", "-0.5", "2.0"]);
        let op = *self.rng.pick(&[">", "<", ">=", "<="]);
        let indices: Vec<String> = self
            .visible()
            .into_iter()
            .filter_map(|leaf| match leaf {
                CLeaf::Index(name, _) => Some(name),
                _ => None,
            })
            .collect();
        match self.rng.below(5) {
            0 if !indices.is_empty() => {
                let i = self.rng.pick(&indices).clone();
                format!("{i} % 2 == {}", self.rng.below(2))
            }
            1 if self.count => format!("n > {}", self.rng.range(1, 4)),
            2 | 3 => match self.data_leaf() {
                Some(d) => format!("{d} {op} {threshold}"),
                None => format!("{} {op} {threshold}", self.tracked_leaf()),
            },
            _ => format!("{} {op} {threshold}", self.tracked_leaf()),
        }
    }

    /// Opens a `for` loop; returns the multiplier to restore.
    fn open_loop(&mut self) -> u64 {
        self.open_loop_over(false)
    }

    /// Opens a `for` loop, over `0..n` or the data if `variable` and there are such (so
    /// that how often it runs depends on the input); returns the multiplier to restore.
    fn open_loop_over(&mut self, variable: bool) -> u64 {
        let depth = self.loops.min(2);
        let i = ["i", "j", "k"][depth].to_owned();
        let u = ["u", "z", "y"][depth].to_owned();
        let v = ["v", "q", "r"][depth].to_owned();
        let tables: Vec<(String, usize)> = self
            .visible()
            .into_iter()
            .filter_map(|leaf| match leaf {
                CLeaf::Table(name, len) => Some((name, len)),
                _ => None,
            })
            .collect();
        let weights = [
            if self.count { 3 } else { 0 },
            if variable && (self.count || self.data) {
                0
            } else {
                2
            },
            if self.data { 4 } else { 0 },
            if self.data { 2 } else { 0 },
            if self.data { 1 } else { 0 },
            if tables.is_empty() || !self.count {
                0
            } else {
                2
            },
        ];
        let mut leaves = Vec::new();
        let (header, trip) = match self.rng.weighted(&weights) {
            0 => {
                leaves.push(CLeaf::Index(i.clone(), None));
                (format!("for {i} in 0..n {{"), MAX_COUNT)
            }
            1 => {
                let k = self.rng.range(2, 4);
                leaves.push(CLeaf::Index(i.clone(), Some(k)));
                (format!("for {i} in 0..{k} {{"), k as u64)
            }
            2 => {
                let adapter = match self.rng.below(5) {
                    0 => ".rev()",
                    1 if self.count => ".take(n)",
                    2 => ".skip(1)",
                    _ => "",
                };
                leaves.push(CLeaf::Data(u.clone()));
                (format!("for &{u} in xs.iter(){adapter} {{"), MAX_DATA_LEN)
            }
            3 => {
                leaves.push(CLeaf::Index(i.clone(), None));
                leaves.push(CLeaf::Data(u.clone()));
                leaves.push(CLeaf::Data(format!("xs[{i}]")));
                (
                    format!("for ({i}, &{u}) in xs.iter().enumerate() {{"),
                    MAX_DATA_LEN,
                )
            }
            4 => {
                leaves.push(CLeaf::Data(u.clone()));
                leaves.push(CLeaf::Data(v.clone()));
                (
                    format!("for (&{u}, &{v}) in xs.iter().zip(xs.iter().skip(1)) {{"),
                    MAX_DATA_LEN,
                )
            }
            _ => {
                let (table, len) = self.rng.pick(&tables).clone();
                leaves.push(CLeaf::Data(u.clone()));
                (format!("for &{u} in {table}.iter().take(n) {{"), len as u64)
            }
        };
        self.line(&header);
        self.indent += 1;
        self.scopes.push(leaves);
        self.loops += 1;
        let saved = self.multiplier;
        self.multiplier *= trip;
        saved
    }

    fn close_loop(&mut self, saved: u64) {
        self.multiplier = saved;
        self.loops -= 1;
        self.scopes.pop();
        self.indent -= 1;
        self.line("}");
    }

    fn open_block(&mut self, header: &str) {
        self.line(header);
        self.indent += 1;
        self.scopes.push(Vec::new());
    }

    fn close_block(&mut self, closer: &str) {
        self.scopes.pop();
        self.indent -= 1;
        self.line(closer);
    }

    fn motif(&mut self) {
        match self.rng.weighted(&[24, 12, 20, 10, 9, 9, 5, 14]) {
            0 => self.sum_loop(),
            1 => self.nested_sums(),
            2 => self.lets(),
            3 => self.table(),
            4 => self.overflow(),
            5 => self.several_sums(),
            6 => self.division(),
            _ => self.blow_up_and_absorb(),
        }
    }

    /// A running sum's initial value (`true` if tracked).
    fn sum_init(&mut self) -> (String, bool) {
        match self.rng.below(4) {
            0 => ("0.0".into(), false),
            1 => ("1.0".into(), false),
            _ => (self.fresh_tx(1), true),
        }
    }

    /// One update of `s` that reads it and carries it on (`s += t`, `s = t - s`, ...),
    /// reads it only through an absorbing operation (`s = s.tanh() + t`), or overwrites
    /// it (`s = t`). Returns whether the value written is tracked.
    fn sum_update(&mut self, s: &str) -> bool {
        let tracked = self.rng.chance(70);
        let x = if tracked {
            let depth = self.rng.range(0, 2) as u32;
            self.tx(depth)
        } else {
            self.update_value()
        };
        let x = paren(&x);
        self.charge(2);
        let text = match self.rng.weighted(&[40, 30, 8]) {
            0 => {
                let op = *self.rng.pick(&["+=", "-=", "*=", "/=", "+=", "*="]);
                format!("{s} {op} {x};")
            }
            1 => {
                let y = self.update_value();
                let y = paren(&y);
                match self.rng.below(10) {
                    0 => format!("{s} = {s} * {x} + {y};"),
                    1 => format!("{s} = {x} - {s};"),
                    2 => format!("{s} = -{s} + {x};"),
                    3 => format!("{s} = {s}.mul_add({x}, {y});"),
                    4 if tracked => format!("{s} = {x}.mul_add({y}, {s});"),
                    5 => format!("{s} = {s}.hypot({x});"),
                    6 => format!("{s} = ({s} + {x}).sin() + {y};"),
                    7 => format!("{s} = {s} / {x} + {s} * {y};"),
                    8 => format!("{s} = ({s} * {x}).abs().sqrt() - {y};"),
                    _ => format!("{s} = {s}.cosh() + {s} * {x};"),
                }
            }
            _ => {
                // Absorbing reads: the sum must be checked every iteration.
                let y = self.update_value();
                let y = paren(&y);
                match self.rng.below(10) {
                    0 => format!("{s} = {s}.tanh() + {x};"),
                    1 => format!("{s} = {s}.max({x});"),
                    2 => format!("{s} = {x} / {s};"),
                    3 => format!("{s} = {s}.atan() * {x};"),
                    4 => format!("{s} = {s}.exp() * {x};"),
                    5 => format!("{s} = {s}.powi(0) + {x};"),
                    6 if tracked => format!("{s} = {x}.atan2({s});"),
                    7 => format!("{s} = {s}.min({x}) - {y};"),
                    8 => format!("{s} = {s}.recip() + {x};"),
                    _ => format!("{s} = {x} * {y};"),
                }
            }
        };
        self.line(&text);
        tracked
    }

    /// Updates of `s` inside a loop body: plain, in branch arms, in a nested loop, and
    /// now and then a read that is not an update (the sum is then checked in the loop).
    fn sum_body(&mut self, s: &str, tracked: &mut bool) {
        let updates = self.rng.range(1, 2);
        for _ in 0..updates {
            match self
                .rng
                .weighted(&[50, 25, if self.loops < 2 { 10 } else { 0 }, 15])
            {
                0 => *tracked |= self.sum_update(s),
                1 => {
                    let condition = self.condition();
                    self.open_block(&format!("if {condition} {{"));
                    *tracked |= self.sum_update(s);
                    if self.rng.chance(60) {
                        self.close_block("} else {");
                        self.scopes.push(Vec::new());
                        self.indent += 1;
                        *tracked |= self.sum_update(s);
                    }
                    self.close_block("}");
                }
                2 => {
                    let saved = self.open_loop();
                    *tracked |= self.sum_update(s);
                    self.close_loop(saved);
                }
                _ => {
                    self.charge(2);
                    let x = self.tx(0);
                    match self.rng.below(6) {
                        0 => self.line(&format!("acc += {s}.tanh();")),
                        1 => self.line(&format!("acc = acc.max({s});")),
                        2 => {
                            let g = self.fresh("g");
                            self.line(&format!("let {g} = {s}.exp();"));
                            self.line(&format!("acc += {g} * {x};"));
                        }
                        3 => {
                            self.line(&format!("if {s} > 1.0 {{"));
                            self.line(&format!("    acc += {x};"));
                            self.line("}");
                        }
                        4 if *tracked => self.line(&format!("acc += {s}.detach() * {x};")),
                        _ => self.line(&format!("acc += {x} / ({s} + 0.5);")),
                    }
                }
            }
        }
    }

    /// How a sum is read after its loop (or not at all).
    fn sum_after(&mut self, s: &str, tracked: bool) {
        self.charge(2);
        match self.rng.weighted(&[25, 35, 10, 10, 8, 6, 6]) {
            0 => self.terms.push(s.to_owned()),
            1 => {
                let read = match self.rng.below(9) {
                    0 => format!("{s}.tanh()"),
                    1 => format!("{s}.exp()"),
                    2 => format!("{s}.max(1.0)"),
                    3 => format!("{s}.atan()"),
                    4 => format!("{s}.powi(0)"),
                    5 => format!("{s}.recip()"),
                    6 => format!("{s}.min({})", self.tracked_leaf()),
                    7 => format!("{} / {s}", self.tracked_leaf()),
                    _ => format!("{s}.exp2().tanh()"),
                };
                self.terms.push(read);
            }
            2 => self.line(&format!("acc += {s};")),
            3 => {
                let x = self.tx(1);
                let y = self.tx(0);
                self.line(&format!("if {s} > 0.5 {{"));
                self.line(&format!("    acc += {x};"));
                self.line("} else {");
                self.line(&format!("    acc -= {y};"));
                self.line("}");
            }
            4 if tracked => {
                let x = self.tracked_leaf();
                self.line(&format!("acc += {s}.detach() * {x};"));
            }
            5 => {
                let x = self.tracked_leaf();
                self.line(&format!("acc = acc.max({s}) + {x};"));
            }
            _ => {} // never read
        }
    }

    fn sum_loop(&mut self) {
        let s = self.fresh("s");
        let (init, mut tracked) = self.sum_init();
        self.line(&format!("let mut {s}: f64 = {init};"));
        let saved = self.open_loop();
        if self.rng.chance(40) {
            self.loop_let();
        }
        self.sum_body(&s, &mut tracked);
        self.close_loop(saved);
        self.sum_after(&s, tracked);
    }

    /// A `let` in a loop body, readable by the updates after it.
    fn loop_let(&mut self) {
        let e = self.fresh("e");
        let value = if self.rng.chance(40) {
            self.risky()
        } else {
            self.tx(2)
        };
        self.line(&format!("let {e} = {value};"));
        self.declare(CLeaf::Tracked(e));
    }

    /// Sums declared at different loop depths: one outside two loops, updated in the
    /// inner one, and one declared in the outer body, updated in the inner loop and read
    /// after it.
    fn nested_sums(&mut self) {
        let (outer, mut outer_tracked) = if self.rng.chance(60) {
            let s = self.fresh("s");
            let (init, tracked) = self.sum_init();
            self.line(&format!("let mut {s}: f64 = {init};"));
            (s, tracked)
        } else {
            ("acc".to_owned(), true)
        };
        let saved = self.open_loop();
        let inner = self.fresh("s");
        let (init, mut inner_tracked) = self.sum_init();
        self.line(&format!("let mut {inner}: f64 = {init};"));
        let inner_saved = self.open_loop();
        self.sum_body(&inner, &mut inner_tracked);
        if self.rng.chance(50) {
            outer_tracked |= self.sum_update(&outer);
        }
        self.close_loop(inner_saved);
        self.charge(2);
        let x = self.update_value();
        let x = paren(&x);
        match self.rng.below(7) {
            0 => self.line(&format!("{outer} += {inner};")),
            1 => self.line(&format!("{outer} += {inner}.tanh();")),
            2 => self.line(&format!("{outer} = {outer}.max({inner});")),
            3 => self.line(&format!("{outer} = {outer} * {x} + {inner};")),
            4 => {
                self.line(&format!("if {inner} > 1.0 {{"));
                self.line(&format!("    {outer} += {x};"));
                self.line("}");
            }
            5 => self.line(&format!("{outer} -= {inner} * {x};")),
            _ => self.line(&format!("{outer} += {inner}.exp() * {x};")),
        }
        self.close_loop(saved);
        if outer != "acc" {
            self.sum_after(&outer, outer_tracked);
        }
    }

    /// A `let` and how the statements after it read it.
    fn lets(&mut self) {
        let in_loop = self.rng.chance(40);
        let saved = in_loop.then(|| self.open_loop());
        let e = self.fresh("e");
        let pattern = self.rng.below(15);
        let mutable = pattern == 6 || self.rng.chance(15);
        let keyword = if mutable { "let mut" } else { "let" };
        let value = if self.rng.chance(10) {
            // An `if` value: each arm assigns the local.
            let condition = self.condition();
            let a = self.fresh_tx(1);
            let b = self.fresh_tx(1);
            format!("if {condition} {{ {a} }} else {{ {b} }}")
        } else if self.rng.chance(60) {
            self.risky()
        } else if mutable {
            self.fresh_tx(2)
        } else {
            self.tx(2)
        };
        self.line(&format!("{keyword} {e}: f64 = {value};"));
        let x = self.update_value();
        let x = paren(&x);
        self.charge(2);
        match pattern {
            // Read where a non-finite value carries on.
            0 => match self.rng.below(3) {
                0 => self.line(&format!("acc += {e} * {x};")),
                1 => self.line(&format!("acc = acc - {e};")),
                _ => {
                    let f = self.fresh("f");
                    self.line(&format!("let {f} = {e} + {x};"));
                    self.line(&format!("acc += {f};"));
                }
            },
            // Read only by absorbing operations.
            1 => {
                let read = match self.rng.below(7) {
                    0 => format!("acc += {e}.tanh();"),
                    1 => format!("acc = acc.max({e});"),
                    2 => format!("acc += {x} / {e};"),
                    3 => format!("acc += {e}.powi(0);"),
                    4 => format!("acc += {e}.exp();"),
                    5 => format!("acc += {e}.atan2({x});"),
                    _ => format!("acc += {e}.min(1.0) * {x};"),
                };
                self.line(&read);
            }
            // Read by a later statement inside a branch only.
            2 => {
                let condition = self.condition();
                self.line(&format!("if {condition} {{"));
                self.line(&format!("    acc += {e};"));
                if self.rng.chance(50) {
                    self.line("} else {");
                    self.line(&format!("    acc -= {x};"));
                }
                self.line("}");
            }
            // Read in a nested loop only.
            3 if self.loops < 2 => {
                let saved = self.open_loop();
                let y = self.update_value();
                self.line(&format!("acc += {e} * {};", paren(&y)));
                self.close_loop(saved);
            }
            // Shadowed.
            4 => {
                match self.rng.below(3) {
                    0 => self.line(&format!("let {e} = {e}.tanh();")),
                    1 => self.line(&format!("let {e} = {e} + {x};")),
                    _ => {
                        let y = self.tx(1);
                        self.line(&format!("let {e} = {y};"));
                    }
                }
                self.line(&format!("acc += {e};"));
            }
            // Dead: never read.
            5 => {}
            // Overwritten before any read.
            6 => {
                let y = self.fresh_tx(1);
                if self.rng.chance(50) {
                    self.line(&format!("{e} = {y};"));
                } else {
                    let condition = self.condition();
                    self.line(&format!("if {condition} {{"));
                    self.line(&format!("    {e} = {y};"));
                    self.line("}");
                }
                self.line(&format!("acc += {e} * {x};"));
            }
            // Read by a condition.
            7 => {
                self.line(&format!("if {e} > 0.5 {{"));
                self.line(&format!("    acc += {x};"));
                self.line("}");
            }
            // Detached.
            8 => self.line(&format!("acc += {e}.detach() * {x};")),
            // Read twice in one statement.
            9 => match self.rng.below(3) {
                0 => self.line(&format!("acc += {e} * {e};")),
                1 => self.line(&format!("acc += {e}.tanh() + {e};")),
                _ => self.line(&format!("acc += {e}.max({x}) * {e};")),
            },
            // First read absorbing, a carrying one after it.
            10 => {
                self.line(&format!("acc += {e}.exp();"));
                self.line(&format!("acc += {e} * {x};"));
            }
            // A chain of lets.
            11 => {
                let f = self.fresh("f");
                self.line(&format!("let {f} = {e} * {x};"));
                self.line(&format!("let {f} = {f}.tanh() + {f};"));
                self.line(&format!("acc += {f};"));
            }
            // Detached into plain code (which must never see what the trace refused), then
            // read where a non-finite value carries on.
            13 => {
                let k = self.fresh("k");
                let y = self.tx(0);
                self.line(&format!("let {k} = (1.0 / {e}).detach();"));
                self.line(&format!("if {k} == 0.0 {{"));
                self.line(&format!("    acc += {y};"));
                self.line("}");
                self.line(&format!("acc += {e} * {x};"));
            }
            // Read by later expressions of the body, or the result.
            _ => {
                self.declare(CLeaf::Tracked(e.clone()));
                if self.loops == 0 && self.rng.chance(50) {
                    self.terms.push(e.clone());
                }
            }
        }
        if let Some(saved) = saved {
            self.close_loop(saved);
        }
    }

    /// A data table with extreme values, read through loop indices, `n` or its own loop.
    fn table(&mut self) {
        let d = self.fresh("d");
        let len = self.rng.range(3, 5);
        let mut values = Vec::new();
        for position in 0..len {
            // Extreme values mostly at later positions, which only longer loops reach.
            let extreme = position > 0 && self.rng.chance(45);
            values.push(if extreme {
                *self.rng.pick(EXTREME)
            } else {
                *self.rng.pick(ORDINARY)
            });
        }
        if !values.iter().any(|v| EXTREME.contains(v)) {
            values[len - 1] = *self.rng.pick(EXTREME);
        }
        self.line(&format!("let {d}: [f64; {len}] = [{}];", values.join(", ")));
        self.declare(CLeaf::Table(d.clone(), len));
        let (s, mut tracked) = if self.rng.chance(50) {
            let s = self.fresh("s");
            let (init, tracked) = self.sum_init();
            self.line(&format!("let mut {s}: f64 = {init};"));
            (s, tracked)
        } else {
            ("acc".to_owned(), true)
        };
        let saved = self.open_loop();
        let index = self.index_for(len);
        let x = self.tx(1);
        self.charge(3);
        let form = self.rng.below(6);
        tracked |= form != 2;
        let text = match form {
            0 => format!("{s} += {} * {d}[{index}];", paren(&x)),
            1 => format!("{s} += {} / {d}[{index}];", paren(&x)),
            2 => format!("{s} *= {d}[{index}];"),
            3 => format!("{s} = {s} * {d}[{index}] + {};", paren(&x)),
            4 => format!("{s} += ({} * {d}[{index}]).tanh();", paren(&x)),
            _ => format!("{s} = {d}[{index}] - {s} * {};", paren(&x)),
        };
        self.line(&text);
        if self.rng.chance(40) {
            self.sum_body(&s, &mut tracked);
        }
        self.close_loop(saved);
        if s != "acc" {
            self.sum_after(&s, tracked);
        }
    }

    /// Products and exponentials that overflow after a few iterations.
    fn overflow(&mut self) {
        let p = self.fresh("p");
        let x = self.tracked_leaf();
        let (init, mut tracked) = match self.rng.below(3) {
            0 => (format!("{x} * 2.0"), true),
            1 => (format!("{x} + 1.5"), true),
            _ => ("1.0".to_owned(), false),
        };
        self.line(&format!("let mut {p}: f64 = {init};"));
        let saved = self.open_loop_over(true);
        let t = self.tx(1);
        let t = paren(&t);
        let data = self.data_leaf().unwrap_or_else(|| "10.0".into());
        self.charge(3);
        let form = self.rng.below(9);
        tracked |= form != 2;
        let text = match form {
            0 => format!("{p} *= {t} * 1e100;"),
            1 => format!("{p} = {p} * {p} + {t};"),
            2 => format!("{p} *= 1e154;"),
            3 => format!("{p} += ({t} * {data} * 100.0).exp();"),
            4 => format!("{p} = {p}.exp() + {t};"),
            5 => format!("{p} *= {t}.exp();"),
            6 => format!("{p} = {p} * {data} + {t};"),
            7 => format!("{p} = {p}.hypot({p} * 1e200) + {t};"),
            _ => format!("{p} = {p} * {t} * {t} * 1e50;"),
        };
        self.line(&text);
        if self.rng.chance(30) {
            self.sum_body(&p, &mut tracked);
        }
        self.close_loop(saved);
        self.sum_after(&p, tracked);
    }

    /// A sum (or a `let`) that data or an overflow may make non-finite, then an absorbing
    /// read that would make it finite again (`tanh(inf) = 1`, `max(NaN, x) = x`,
    /// `x / inf = 0`, `powi(NaN, 0) = 1`, `exp(-inf) = 0`): where the trace fails, the
    /// sweep must have checked before the absorbing read.
    fn blow_up_and_absorb(&mut self) {
        let (blow_form, absorb_form) = (self.rng.below(7), self.rng.below(9));
        let sum = if self.rng.chance(70) {
            let s = self.fresh("s");
            let init = self.fresh_tx(0);
            self.line(&format!("let mut {s}: f64 = {init};"));
            Some(s)
        } else {
            None
        };
        let saved = self.open_loop_over(true);
        let data = self.data_leaf().unwrap_or_else(|| "1e300".into());
        let t = self.tx(1);
        let t = paren(&t);
        let y = self.tracked_leaf();
        self.charge(6);
        let absorb = |s: &str| match absorb_form {
            0 => format!("{s}.tanh() + {y}"),
            1 => format!("{s}.max({y})"),
            2 => format!("{y} / {s}"),
            3 => format!("{s}.powi(0) * {y}"),
            4 => format!("({s} * -1.0).exp() * {y}"),
            5 => format!("{s}.atan() + {y}"),
            6 => format!("{y}.atan2({s})"),
            7 => format!("{s}.min({y}) + {y}"),
            _ => format!("({s} * {s}).recip() + {y}"),
        };
        match sum {
            Some(s) => {
                let blow = match blow_form {
                    0 => format!("{s} *= {data};"),
                    1 => format!("{s} += {data};"),
                    2 => format!("{s} = {s} * {t} * 1e300;"),
                    3 => format!("{s} /= {data};"),
                    4 => format!("{s} -= {t} / {data};"),
                    5 => format!("{s} *= ({t} * 300.0).exp();"),
                    _ => format!("{s} = {data} - {s} * {t};"),
                };
                self.line(&blow);
                let read = absorb(&s);
                if self.rng.chance(30) {
                    let condition = self.condition();
                    self.line(&format!("if {condition} {{"));
                    self.line(&format!("    {s} = {read};"));
                    self.line("}");
                } else {
                    self.line(&format!("{s} = {read};"));
                }
                self.close_loop(saved);
                self.sum_after(&s, true);
            }
            None => {
                // A `let` in the loop: blown up, read by an absorbing operation, then
                // (mostly) carried on.
                let e = self.fresh("e");
                let value = match blow_form % 4 {
                    0 => format!("{t} * {data}"),
                    1 => format!("{t} / {data}"),
                    2 => format!("{t} * {t} * 1e300"),
                    _ => format!("({t} * 300.0).exp() * {y}"),
                };
                self.line(&format!("let {e}: f64 = {value};"));
                let read = absorb(&e);
                self.line(&format!("acc += {read};"));
                if self.rng.chance(70) {
                    self.line(&format!("acc += {e} * {y};"));
                }
                self.close_loop(saved);
            }
        }
    }

    /// Several sums in one loop, some read by the others' updates.
    fn several_sums(&mut self) {
        let count = self.rng.range(2, 3);
        let mut sums = Vec::new();
        for _ in 0..count {
            let s = self.fresh("s");
            let (init, tracked) = self.sum_init();
            self.line(&format!("let mut {s}: f64 = {init};"));
            sums.push((s, tracked));
        }
        let saved = self.open_loop();
        if self.rng.chance(30) {
            self.loop_let();
        }
        let updates = self.rng.range(2, 4);
        for _ in 0..updates {
            let at = self.rng.below(sums.len());
            let s = sums[at].0.clone();
            if self.rng.chance(35) {
                // Read by another sum's update.
                let other = sums[self.rng.below(sums.len())].0.clone();
                let x = self.tx(0);
                self.charge(2);
                let text = match self.rng.below(4) {
                    0 => format!("{s} += {other} * {x};"),
                    1 => format!("{s} = {s} * {other} + {x};"),
                    2 => format!("{s} += {other}.tanh() * {x};"),
                    _ => format!("{s} -= {x} / {other};"),
                };
                self.line(&text);
                sums[at].1 = true;
            } else {
                let mut tracked = sums[at].1;
                self.sum_body(&s, &mut tracked);
                sums[at].1 = tracked;
            }
        }
        self.close_loop(saved);
        for (s, tracked) in sums {
            self.sum_after(&s, tracked);
        }
    }

    /// Division by data that may be 0 or infinite.
    fn division(&mut self) {
        let saved = self.open_loop();
        let divisor = self.data_leaf().unwrap_or_else(|| "(n as f64)".into());
        let divisor = if self.count || divisor != "(n as f64)" {
            divisor
        } else {
            "0.0".into()
        };
        let x = self.tx(1);
        let x = paren(&x);
        self.charge(3);
        match self.rng.below(6) {
            0 => self.line(&format!("acc += {x} / {divisor};")),
            1 => self.line(&format!("acc /= {divisor};")),
            2 => {
                let q = self.fresh("q");
                self.line(&format!("let {q} = {divisor} / {x};"));
                self.line(&format!("acc += {q};"));
            }
            3 => self.line(&format!("acc += {x} / ({divisor} - 1.0);")),
            4 => self.line(&format!("acc = acc / {divisor} + {x};")),
            _ => self.line(&format!("acc += ({x} / {divisor}).tanh();")),
        }
        self.close_loop(saved);
    }
}

// ---------------------------------------------------------------------------------------
// Const-generic helpers and their callers, from their own seed, after the second family's
// functions in its file: `g` helpers over `[f64; N]` (and `[[f64; I]; O]`) written once,
// and `k` callers that use them at several sizes, with the sizes inferred or turbofished,
// in expressions, loops and branches, lent rows, literals and other helpers' results.
// ---------------------------------------------------------------------------------------

/// The seed of the const-generic helpers and their callers.
pub const GENERIC_SEED: u64 = 0x5EED_6E6E_0000_0004;

/// How many const-generic helpers, and how many callers of them.
pub const GENERIC_HELPERS: usize = 16;
pub const GENERIC_CALLERS: usize = 28;

/// What a const-generic helper computes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Generic {
    /// `fn g<const N: usize>(w: [f64; N], x: f64) -> f64`.
    Reduce,
    /// `fn g<const N: usize>(w: [f64; N], x: f64) -> [f64; N]`.
    Map,
    /// `fn g<const I: usize, const O: usize>(m: [[f64; I]; O], v: [f64; I]) -> [f64; O]`.
    Linear,
}

/// A step `acc -> acc'` over one element `e` and the scalar `x`.
const GENERIC_STEPS: &[&str] = &[
    "{a} + {e} * {x}",
    "({a} + {e}).sin()",
    "{a} * 0.5 + ({e} * {x}).tanh()",
    "{e}.mul_add({x}, {a})",
    "{a} + ({e} - {x}) * ({e} - {x})",
    "{a} * {e}.cos() + {x}",
    "({a} * {a} + {e} * {e} + 0.5).sqrt()",
    "{a}.max({e} * {x})",
    "{a} + ({e} * 0.5).exp() * 0.25",
    "{a} + ({e} * {x}).atan()",
];

/// A value from one element `e` and the scalar `x`.
const GENERIC_MAPS: &[&str] = &[
    "({e} * {x}).tanh()",
    "{e} * {x} + {e}",
    "({e} - {x}).sin()",
    "{e}.max(0.0) * {x}",
    "{e} / ({x} * {x} + 1.0)",
    "({e} * 0.5 + {x} * 0.25).exp()",
    "({e} * {e} + 0.25).sqrt() - {x}",
];

/// An activation of a sum `s`.
const GENERIC_ACTIVATIONS: &[&str] = &[
    "{s}.tanh()",
    "{s}.max(0.0)",
    "{s}.sin()",
    "{s} * 0.5",
    "{s}",
    "{s} / (1.0 + {s}.abs())",
];

fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = template.to_owned();
    for (key, value) in pairs {
        out = out.replace(key, value);
    }
    out
}

/// The const-generic helpers and their callers: the text (for the second family's file)
/// and, for the table, each listed function at the sizes its wrappers call it with (a
/// `Reduce` helper at `N = 3`).
fn generic_family() -> (String, Vec<Info>) {
    let mut rng = Rng(GENERIC_SEED);
    let mut text = String::new();
    let mut infos = Vec::new();
    let mut helpers: Vec<(String, Generic)> = Vec::new();
    for index in 0..GENERIC_HELPERS {
        let name = format!("g{index:03}");
        let kind = match index {
            0 | 1 => Generic::Map,
            2 | 3 => Generic::Reduce,
            4 => Generic::Linear,
            _ => *rng.pick(&[
                Generic::Reduce,
                Generic::Reduce,
                Generic::Map,
                Generic::Linear,
            ]),
        };
        let (signature, body) = generic_helper(&mut rng, kind, &helpers);
        let attribute = match ON_THE_TAPE.contains(&name.as_str()) {
            true => "#[differentiable(tape)]",
            false => "#[differentiable]",
        };
        let _ = writeln!(text, "{attribute}\nfn {name}{signature} {{");
        for line in body {
            let _ = writeln!(text, "    {line}");
        }
        text.push_str("}\n\n");
        if kind == Generic::Reduce {
            // The twin the table's `name_jvp` and `name_hvp` wrappers call.
            let _ = writeln!(
                text,
                "/// `{name}` at `N = 3`: a const-generic function has no `name_jvp` or \
                 `name_hvp` of its own.\n#[differentiable]\nfn {name}_at3(w: [f64; 3], x: f64) -> f64 {{\n    {name}(w, x)\n}}\n"
            );
            infos.push(Info {
                name: name.clone(),
                params: vec![
                    Param {
                        name: "w".into(),
                        kind: ParamKind::Array(3),
                    },
                    Param {
                        name: "x".into(),
                        kind: ParamKind::Scalar { mutable: false },
                    },
                ],
                shape: Shape::Free,
                cost: 0,
                risky: false,
            });
        }
        helpers.push((name, kind));
    }
    for index in 0..GENERIC_CALLERS {
        let name = format!("k{index:03}");
        let matrix = rng.chance(60);
        let mut params = vec![
            Param {
                name: "x0".into(),
                kind: ParamKind::Scalar { mutable: false },
            },
            Param {
                name: "x1".into(),
                kind: ParamKind::Scalar { mutable: false },
            },
            Param {
                name: "w".into(),
                kind: ParamKind::Array(3),
            },
        ];
        if matrix {
            params.push(Param {
                name: "m".into(),
                kind: ParamKind::Matrix(2, 3),
            });
        }
        let body = generic_caller(&mut rng, &helpers, matrix);
        let info = Info {
            name,
            params,
            shape: Shape::Free,
            cost: 0,
            risky: false,
        };
        text.push_str(&source(&info, &body));
        infos.push(info);
    }
    (text, infos)
}

/// A helper's signature (after its name) and body lines.
fn generic_helper(
    rng: &mut Rng,
    kind: Generic,
    earlier: &[(String, Generic)],
) -> (String, Vec<String>) {
    let step = |rng: &mut Rng, a: &str, e: &str| {
        fill(
            rng.pick::<&str>(GENERIC_STEPS),
            &[("{a}", a), ("{e}", e), ("{x}", "x")],
        )
    };
    let map =
        |rng: &mut Rng, e: &str| fill(rng.pick::<&str>(GENERIC_MAPS), &[("{e}", e), ("{x}", "x")]);
    let maps: Vec<&String> = earlier
        .iter()
        .filter(|(_, kind)| *kind == Generic::Map)
        .map(|(name, _)| name)
        .collect();
    let reduces: Vec<&String> = earlier
        .iter()
        .filter(|(_, kind)| *kind == Generic::Reduce)
        .map(|(name, _)| name)
        .collect();
    let mut lines = Vec::new();
    match kind {
        Generic::Reduce => {
            let signature = "<const N: usize>(w: [f64; N], x: f64) -> f64".to_owned();
            match rng.below(5) {
                // A loop over the elements.
                0 | 1 => {
                    let init = rng.pick(&["0.0", "x", "w[0] * x", "w[N - 1]"]);
                    lines.push(format!("let mut acc = {init};"));
                    lines.push("for i in 0..N {".into());
                    let next = step(rng, "acc", "w[i]");
                    lines.push(format!("    acc = {next};"));
                    lines.push("}".into());
                    let tail = rng.pick(&[
                        "acc",
                        "acc * x",
                        "acc.tanh() + w[0]",
                        "acc + w[N - 1] * 0.5",
                    ]);
                    lines.push((*tail).into());
                }
                // A fold, with or without `.map`.
                2 => {
                    let next = step(rng, "acc", "*v");
                    if rng.chance(50) {
                        let mapped = map(rng, "*v");
                        lines.push(format!(
                            "w.iter().map(|v| {mapped}).fold(0.5, |acc, v| acc + v * x)"
                        ));
                    } else {
                        lines.push(format!("w.iter().fold(x, |acc, v| {next})"));
                    }
                }
                // `.map(..).sum()`.
                3 => {
                    let mapped = map(rng, "*v");
                    lines.push(format!("w.iter().map(|v| {mapped}).sum::<f64>() * x"));
                }
                // Other helpers at this helper's size: a map's result reduced.
                _ => match (maps.is_empty(), reduces.is_empty()) {
                    (false, false) => {
                        let m = rng.pick(&maps);
                        let r = rng.pick(&reduces);
                        let call = match rng.chance(50) {
                            true => format!("{m}::<N>(w, x)"),
                            false => format!("{m}(w, x)"),
                        };
                        lines.push(format!("let h = {call};"));
                        lines.push(format!("{r}(h, x * 0.5) + h[N - 1]"));
                    }
                    _ => {
                        let mapped = map(rng, "w[i]");
                        lines.push("let mut total = 0.0;".into());
                        lines.push("for i in 0..N {".into());
                        lines.push(format!("    total += {mapped};"));
                        lines.push("}".into());
                        lines.push("total".into());
                    }
                },
            }
            (signature, lines)
        }
        Generic::Map => {
            let signature = "<const N: usize>(w: [f64; N], x: f64) -> [f64; N]".to_owned();
            if !maps.is_empty() && rng.chance(30) {
                // A map of another map's result.
                let m = rng.pick(&maps);
                let mapped = map(rng, "h[i]");
                lines.push(format!("let mut h = {m}(w, x);"));
                lines.push("for i in 0..N {".into());
                lines.push(format!("    h[i] = {mapped};"));
                lines.push("}".into());
                lines.push("h".into());
            } else {
                let mapped = map(rng, "w[i]");
                lines.push("let mut out = [0.0; N];".into());
                lines.push("for i in 0..N {".into());
                lines.push(format!("    out[i] = {mapped};"));
                lines.push("}".into());
                lines.push("out".into());
            }
            (signature, lines)
        }
        Generic::Linear => {
            let signature =
                "<const I: usize, const O: usize>(m: [[f64; I]; O], v: [f64; I]) -> [f64; O]"
                    .to_owned();
            let activation = fill(rng.pick::<&str>(GENERIC_ACTIVATIONS), &[("{s}", "s")]);
            lines.push("let mut out = [0.0; O];".into());
            lines.push("for o in 0..O {".into());
            if rng.chance(50) {
                lines.push("    let mut s = 0.0;".into());
                lines.push("    for i in 0..I {".into());
                lines.push("        s += m[o][i] * v[i];".into());
                lines.push("    }".into());
            } else {
                lines.push(
                    "    let s: f64 = m[o].iter().zip(v.iter()).map(|(a, b)| a * b).sum();".into(),
                );
            }
            lines.push(format!("    out[o] = {activation};"));
            lines.push("}".into());
            lines.push("out".into());
            (signature, lines)
        }
    }
}

/// A caller's body: calls of the helpers at several sizes.
fn generic_caller(rng: &mut Rng, helpers: &[(String, Generic)], matrix: bool) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut scalars: Vec<String> = vec!["x0".into(), "x1".into(), "w[0]".into(), "w[2]".into()];
    // Arrays by length.
    let mut arrays: Vec<(String, usize)> = vec![("w".into(), 3)];
    if matrix {
        arrays.push(("m[0]".into(), 3));
        arrays.push(("m[1]".into(), 3));
    }
    let mut fresh = 0;
    let mut name = |prefix: &str| {
        fresh += 1;
        format!("{prefix}{fresh}")
    };
    let scalar = |rng: &mut Rng, scalars: &[String]| -> String {
        let s = rng.pick(scalars).clone();
        match rng.below(4) {
            0 => format!("{s} * 0.5"),
            1 => format!("({s} - 0.25)"),
            _ => s,
        }
    };
    // An argument of `len` numbers: a whole array, a literal, or another helper's result.
    let array = |rng: &mut Rng, scalars: &[String], arrays: &[(String, usize)], len: usize| {
        let fitting: Vec<&String> = arrays
            .iter()
            .filter(|(_, l)| *l == len)
            .map(|(name, _)| name)
            .collect();
        if !fitting.is_empty() && rng.chance(55) {
            return rng.pick(&fitting).to_string();
        }
        let items: Vec<String> = (0..len).map(|_| scalar(rng, scalars)).collect();
        format!("[{}]", items.join(", "))
    };
    let statements = rng.range(2, 5);
    let mut acc = false;
    for _ in 0..statements {
        let (helper, kind) = rng.pick(helpers).clone();
        let len = rng.range(1, 4);
        let turbofish = rng.chance(25);
        let call = match kind {
            Generic::Reduce | Generic::Map => {
                let arg = array(rng, &scalars, &arrays, len);
                let x = scalar(rng, &scalars);
                let sizes = if turbofish {
                    format!("::<{len}>")
                } else {
                    String::new()
                };
                format!("{helper}{sizes}({arg}, {x})")
            }
            Generic::Linear => {
                let (rows, m) = match (matrix, rng.below(3)) {
                    (true, 0) => (2, "m".to_owned()),
                    (_, 1) => {
                        let a = array(rng, &scalars, &arrays, len);
                        let b = array(rng, &scalars, &arrays, len);
                        (2, format!("[{a}, {b}]"))
                    }
                    _ => {
                        let a = array(rng, &scalars, &arrays, len);
                        (1, format!("[{a}]"))
                    }
                };
                let len = if m == "m" { 3 } else { len };
                let v = array(rng, &scalars, &arrays, len);
                let sizes = if turbofish {
                    format!("::<{len}, {rows}>")
                } else {
                    String::new()
                };
                let call = format!("{helper}{sizes}({m}, {v})");
                let t = name("h");
                lines.push(format!("let {t} = {call};"));
                arrays.push((t.clone(), rows));
                let j = rng.below(rows);
                scalars.push(format!("{t}[{j}]"));
                continue;
            }
        };
        match (kind, rng.below(4)) {
            (Generic::Reduce, 0) => {
                // In a loop, accumulated.
                if !acc {
                    lines.push("let mut acc = 0.0;".into());
                    acc = true;
                }
                lines.push("for k in 0..2 {".into());
                lines.push(format!("    acc += {call} * (k as f64 + 0.5);"));
                lines.push("}".into());
            }
            (Generic::Reduce, 1) => {
                // In a branch on a value.
                if !acc {
                    lines.push("let mut acc = 0.0;".into());
                    acc = true;
                }
                let test = scalar(rng, &scalars);
                lines.push(format!("if {test} > 0.0 {{"));
                lines.push(format!("    acc += {call};"));
                lines.push("} else {".into());
                lines.push(format!("    acc -= {call} * 0.5;"));
                lines.push("}".into());
            }
            (Generic::Reduce, _) => {
                let t = name("t");
                lines.push(format!("let {t} = {call};"));
                scalars.push(t);
            }
            (_, choice) => {
                let t = name("h");
                if choice == 0 {
                    // Summed where it is called.
                    lines.push(format!("let {t} = {call}.iter().sum::<f64>();"));
                    scalars.push(t);
                } else {
                    lines.push(format!("let {t} = {call};"));
                    let j = rng.below(len);
                    scalars.push(format!("{t}[{j}]"));
                    arrays.push((t, len));
                }
            }
        }
    }
    // The result: the last few values, and the accumulator.
    let mut terms: Vec<String> = scalars.iter().rev().take(3).cloned().collect();
    if acc {
        terms.push("acc".into());
    }
    lines.push(terms.join(" + "));
    let mut body = String::new();
    for line in lines {
        let _ = writeln!(body, "    {line}");
    }
    body
}
