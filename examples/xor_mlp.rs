//! A 2-2-1 tanh network learns XOR: the whole network is one `#[differentiable]` function
//! of a `[f64; 9]` parameter array and the data, trained by plain gradient descent from
//! weights drawn with a tiny deterministic generator.
//!
//! Run with `cargo run --release --example xor_mlp`.

use scalar_autodiff::{differentiable, ScalarAutodiffError, Sgd};

/// The four XOR inputs, with `-1` for false and `1` for true.
pub const INPUTS: [[f64; 2]; 4] = [[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]];
/// The XOR of each input, in the same encoding.
pub const TARGETS: [f64; 4] = [-1.0, 1.0, 1.0, -1.0];

/// The network's output for one input. `p` holds, in order, the hidden weights
/// `p[0..4]` (two per hidden unit), the hidden biases `p[4..6]`, the output weights
/// `p[6..8]` and the output bias `p[8]`.
#[differentiable]
pub fn predict(p: [f64; 9], x: &[f64; 2]) -> f64 {
    let h0 = (p[0] * x[0] + p[1] * x[1] + p[4]).tanh();
    let h1 = (p[2] * x[0] + p[3] * x[1] + p[5]).tanh();
    (p[6] * h0 + p[7] * h1 + p[8]).tanh()
}

/// Mean squared error of the network over the data: the function that is trained.
#[differentiable]
pub fn loss(p: [f64; 9], inputs: &[[f64; 2]], targets: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, t) in inputs.iter().zip(targets) {
        let err = predict(p, x) - t;
        total += err * err;
    }
    total / targets.len() as f64
}

/// A 64-bit xorshift generator: enough randomness for initial weights, reproducible
/// from its seed.
pub struct XorShift(pub u64);

impl XorShift {
    /// A number uniform in `[-1, 1)`.
    pub fn next_weight(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // The top 53 bits as a fraction in [0, 1), then scaled.
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// The seed of the initial weights.
pub const SEED: u64 = 0x5eed_1234_abcd_0001;

/// Initial parameters drawn from `seed`.
pub fn initial(seed: u64) -> [f64; 9] {
    let mut rng = XorShift(seed);
    std::array::from_fn(|_| rng.next_weight())
}

/// The outcome of training.
#[derive(Debug)]
pub struct Training {
    /// The trained parameters.
    pub params: [f64; 9],
    /// The number of updates made.
    pub steps: usize,
    /// `(step, loss)` every `report_every` steps, then the final loss.
    pub history: Vec<(usize, f64)>,
}

/// Gradient descent with step size `rate` until the loss is below `target` (or
/// `max_steps` updates).
pub fn train(
    seed: u64,
    rate: f64,
    target: f64,
    max_steps: usize,
    report_every: usize,
) -> Result<Training, ScalarAutodiffError> {
    let mut params = initial(seed);
    let mut sgd = Sgd::new(rate);
    let mut history = Vec::new();
    let mut steps = 0;
    loop {
        let (value, gradient) = loss_grad(params, &INPUTS, &TARGETS)?;
        if steps % report_every == 0 || value < target || steps == max_steps {
            history.push((steps, value));
        }
        if value < target || steps == max_steps {
            break;
        }
        sgd.step(&mut params, &gradient)?;
        steps += 1;
    }
    Ok(Training {
        params,
        steps,
        history,
    })
}

fn main() -> Result<(), ScalarAutodiffError> {
    let training = train(SEED, 0.2, 1e-3, 20_000, 250)?;
    for (step, value) in &training.history {
        println!("step {step:>5}: loss {value:.3e}");
    }
    for (x, t) in INPUTS.iter().zip(TARGETS) {
        println!(
            "xor({:>2}, {:>2}) = {:>+.4} (target {t:+})",
            x[0],
            x[1],
            predict(training.params, x)
        );
    }
    Ok(())
}
