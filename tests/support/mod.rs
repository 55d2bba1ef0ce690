//! What the test binaries share: seeded random numbers and central differences. Each
//! binary includes this module (`#[path = "../support/mod.rs"] mod support;`) and uses
//! what it needs.
#![allow(dead_code)]

/// Knuth's MMIX linear congruential generator: a fixed seed gives the same numbers on every
/// machine, so a failing case reproduces.
pub struct Lcg(u64);

impl Lcg {
    /// The generator whose first step starts from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed)
    }

    /// The next number in `[0, 1)`: the top 53 bits of the state.
    pub fn unit(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The next number in `[-1, 1)`.
    pub fn signed(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17); the seed must not be 0.
pub struct XorShift(u64);

impl XorShift {
    /// The generator whose first step starts from `seed`.
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift64 stays at 0 forever");
        XorShift(seed)
    }

    /// The next number in `[0, 1)`: the top 53 bits of the state.
    pub fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The central difference `(f(x + h) - f(x - h)) / 2h` of `f` at `x`, with the step
/// `h = 1e-6 * max(1, |x|)` scaled to `x`.
pub fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = 1e-6 * x.abs().max(1.0);
    (f(x + h) - f(x - h)) / (2.0 * h)
}

/// Asserts that `derivative` is `f`'s at `at` to central differences' own error.
#[track_caller]
pub fn near(derivative: f64, f: impl Fn(f64) -> f64, at: f64, what: &str) {
    let numeric = central(f, at);
    assert!(
        (derivative - numeric).abs() <= 1e-6 * (1.0 + numeric.abs()),
        "{what}: {derivative} against central differences' {numeric}"
    );
}

/// [`near`] along every coordinate of `at`: `gradient[k]` against central differences of
/// `f` with coordinate `k` moved.
pub fn near_each(gradient: &[f64], f: impl Fn(&[f64]) -> f64, at: &[f64], what: &str) {
    assert_eq!(
        gradient.len(),
        at.len(),
        "{what}: one derivative per coordinate"
    );
    for (k, &derivative) in gradient.iter().enumerate() {
        let moved = |t: f64| {
            let mut q = at.to_vec();
            q[k] = t;
            f(&q)
        };
        near(derivative, moved, at[k], what);
    }
}

/// Central differences of `f` along every coordinate of `at`, with the step `h`.
pub fn central_partials(f: impl Fn(&[f64]) -> f64, at: &[f64], h: f64) -> Vec<f64> {
    central_jacobian(|x| vec![f(x)], at, h)
        .into_iter()
        .map(|row| row[0])
        .collect()
}

/// Central differences of a vector function `f` along every coordinate of `at`, with the
/// step `h`: `columns[j][i]` estimates `d f_i / d x_j` (for a gradient function, the
/// Hessian's column `j`).
pub fn central_jacobian(f: impl Fn(&[f64]) -> Vec<f64>, at: &[f64], h: f64) -> Vec<Vec<f64>> {
    let mut moved = at.to_vec();
    (0..at.len())
        .map(|j| {
            moved[j] = at[j] + h;
            let up = f(&moved);
            moved[j] = at[j] - h;
            let down = f(&moved);
            moved[j] = at[j];
            up.iter()
                .zip(&down)
                .map(|(u, d)| (u - d) / (2.0 * h))
                .collect()
        })
        .collect()
}

/// Writes `$(#[attr])* fn name(x: [f64; 8]) -> f64` whose body is one expression: `0.5`
/// and five kinds of term (products, a power, a negated sine, an exponential, a
/// `mul_add`) appended once for every token in the brackets, `0.5 + 1.5 * x[0] * x[3] -
/// (x[1] - 0.5).powi(2) + ...`, as a code generator or a computer algebra system writes
/// it (`tests/macros/long_sum.rs`, `tests/sweeps/long.rs`).
#[allow(unused_macros)]
macro_rules! long_sum {
    ($(#[$attr:meta])* fn $name:ident($x:ident); [] ($($sum:tt)*)) => {
        $(#[$attr])*
        fn $name($x: [f64; 8]) -> f64 {
            $($sum)*
        }
    };
    ($(#[$attr:meta])* fn $name:ident($x:ident); [$_repeat:tt $($rest:tt)*] ($($sum:tt)*)) => {
        long_sum!($(#[$attr])* fn $name($x); [$($rest)*] (
            $($sum)*
                + 1.5 * $x[0] * $x[3]
                - ($x[1] - 0.5).powi(2)
                + -($x[2] * $x[5]).sin()
                + $x[4].exp() / 3.0
                + $x[6].mul_add($x[7], 0.25)
        ));
    };
}
#[allow(unused_imports)]
pub(crate) use long_sum;
