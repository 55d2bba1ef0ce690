//! CPython's `random` module, as far as microgpt uses it: `seed` with a small integer,
//! `random`, `gauss`, `shuffle` and `choices`. The generator is the Mersenne Twister of
//! the `mt19937` crate (RustPython's port of CPython's `_random`); the functions on top
//! follow `Lib/random.py` of CPython 3.11 step by step, so that the same seed gives the
//! same numbers, bit for bit (checked against numbers CPython printed, in
//! `tests/models/microgpt.rs`).

use mt19937::MT19937;
use rand_core::Rng;

/// `random.Random` of CPython, seeded the way `random.seed(n)` seeds it.
pub struct PyRandom {
    twister: MT19937,
    /// The second normal deviate of the last pair `gauss` made (`gauss_next`).
    gauss_next: Option<f64>,
}

impl PyRandom {
    /// `random.seed(seed)`: CPython splits a non-negative integer into 32-bit words, least
    /// significant first, and initialises the twister by array from them.
    pub fn seed(seed: u64) -> Self {
        let low = seed as u32;
        let high = (seed >> 32) as u32;
        let key: &[u32] = if high == 0 { &[low] } else { &[low, high] };
        Self {
            twister: MT19937::new_with_slice_seed(key),
            gauss_next: None,
        }
    }

    /// `random.random()`: 53 random bits in [0, 1), from two 32-bit outputs.
    pub fn random(&mut self) -> f64 {
        let a = self.twister.next_u32() >> 5;
        let b = self.twister.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// `random.getrandbits(k)` for `1 <= k <= 32`.
    fn bits(&mut self, k: u32) -> u32 {
        self.twister.next_u32() >> (32 - k)
    }

    /// `random._randbelow(n)` for `1 <= n < 2^32`: rejection sampling on `k` bits, where `k`
    /// is the bit length of `n`.
    fn below(&mut self, n: usize) -> usize {
        let k = usize::BITS - n.leading_zeros();
        loop {
            let r = self.bits(k) as usize;
            if r < n {
                return r;
            }
        }
    }

    /// `random.gauss(mu, sigma)`: the Box-Muller pair, the second kept for the next call.
    pub fn gauss(&mut self, mu: f64, sigma: f64) -> f64 {
        let z = match self.gauss_next.take() {
            Some(z) => z,
            None => {
                let x2pi = self.random() * std::f64::consts::TAU;
                let g2rad = (-2.0 * (1.0 - self.random()).ln()).sqrt();
                self.gauss_next = Some(x2pi.sin() * g2rad);
                x2pi.cos() * g2rad
            }
        };
        mu + z * sigma
    }

    /// `random.shuffle(items)`: Fisher-Yates from the end.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }

    /// `random.choices(range(len(weights)), weights)[0]`: an index drawn with these
    /// weights (cumulative sums, then `bisect_right` of `random() * total`).
    pub fn choice(&mut self, weights: &[f64]) -> usize {
        let mut cumulative = Vec::with_capacity(weights.len());
        let mut sum = 0.0;
        for &w in weights {
            sum += w;
            cumulative.push(sum);
        }
        let total = sum + 0.0;
        let x = self.random() * total;
        // `bisect_right(cumulative, x, 0, n - 1)`: the first index whose sum exceeds `x`.
        let hi = weights.len().saturating_sub(1);
        cumulative[..hi].partition_point(|&c| c <= x)
    }
}
