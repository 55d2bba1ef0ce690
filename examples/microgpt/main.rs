//! Karpathy's microgpt, trained with `#[differentiable]`: a one-layer GPT (16-wide
//! embeddings, 4 heads, block 16, 4,192 parameters) learns to make up names from the
//! 32,033 of `examples/data/names.txt`, one name per step, with Adam and a learning rate
//! decayed linearly to zero; then it samples 20 names at temperature 0.5.
//!
//! Everything random is CPython's `random` seeded with 42 (`pyrandom`), drawn in the
//! reference's order, so each step's loss is the Python reference's to within 6e-16
//! (relative, over all 1,000 steps) and the 20 samples are its names
//! (`tests/models/microgpt.rs`, against `tests/data/microgpt/`).
//!
//! ```text
//! cargo run --release --example microgpt                  # 1,000 steps, then 20 names
//! cargo run --release --example microgpt -- --steps 200
//! cargo run --release --example microgpt -- --every-loss  # each step's loss in full
//! cargo run --release --example microgpt -- --tie         # wte scores the logits too
//! ```

pub mod model;
pub mod pyrandom;

use std::time::Instant;

use model::{loss_grad, sample, tokens, Gpt};
use pyrandom::PyRandom;
use scalar_autodiff::Adam;

/// The names of `examples/data/names.txt`, one per line.
pub const NAMES: &str = include_str!("../data/names.txt");

/// The reference's start: `random.seed(42)`, the names shuffled, then the weights drawn.
/// Returns the generator (which sampling goes on with), the names and the model.
pub fn start(text: &str) -> (PyRandom, Vec<&str>, Gpt) {
    let mut rng = PyRandom::seed(42);
    let mut docs: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    rng.shuffle(&mut docs);
    let p = Gpt::init(&mut rng);
    (rng, docs, p)
}

/// The reference's optimizer: Adam with β = (0.85, 0.99), ε = 1e-8.
pub fn adam() -> Adam {
    Adam::new(0.01).betas(0.85, 0.99).epsilon(1e-8)
}

/// Training step `step` (from 0) of `steps` on `name`: the loss and its gradient (with
/// `tie`, the tied model's), then one Adam step at the learning rate decayed linearly from
/// 0.01 to 0. Returns the loss.
pub fn train_step(
    p: &mut Gpt,
    adam: &mut Adam,
    name: &str,
    (step, steps): (usize, usize),
    tie: bool,
) -> Result<f64, Box<dyn std::error::Error>> {
    let tokens = tokens(name).ok_or_else(|| format!("`{name}` is not all a-z"))?;
    let (loss, gradient) = loss_grad(p, &tokens, tie)?;
    adam.set_learning_rate(0.01 * (1.0 - step as f64 / steps as f64));
    adam.step(p, &gradient)?;
    Ok(loss)
}

/// What the command line asks for.
struct Options {
    steps: usize,
    /// Print every step's loss in full (`step N loss X`), as the reference's test data has it.
    every: bool,
    /// Weight tying: `wte` scores the logits too (`lm_head` unused).
    tie: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        steps: 1000,
        every: false,
        tie: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--steps" => {
                let value = args.next().ok_or("--steps needs a number")?;
                options.steps = value
                    .parse()
                    .map_err(|_| format!("--steps needs a number, not `{value}`"))?;
            }
            "--every-loss" => options.every = true,
            "--tie" => options.tie = true,
            other => {
                return Err(format!(
                    "unknown argument `{other}` (try --steps N, --every-loss, --tie)"
                ))
            }
        }
    }
    Ok(options)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = options()?;
    let (mut rng, docs, mut p) = start(NAMES);
    println!("num docs: {}", docs.len());
    let mut adam = adam();
    let started = Instant::now();
    let mut recent = Vec::new();
    for step in 0..options.steps {
        let name = docs[step % docs.len()];
        let loss = train_step(&mut p, &mut adam, name, (step, options.steps), options.tie)?;
        recent.push(loss);
        if options.every {
            println!("step {} loss {loss:?}", step + 1);
        }
        if (step + 1) % 100 == 0 || step + 1 == options.steps {
            let mean = recent.iter().sum::<f64>() / recent.len() as f64;
            println!(
                "step {:4} / {} | loss {loss:.4} | mean of the last {} {mean:.4}",
                step + 1,
                options.steps,
                recent.len()
            );
            recent.clear();
        }
    }
    let elapsed = started.elapsed();
    println!(
        "trained in {:.2} s ({:.1} us a step)",
        elapsed.as_secs_f64(),
        elapsed.as_secs_f64() * 1e6 / options.steps.max(1) as f64
    );
    println!("--- 20 names at temperature 0.5 ---");
    for k in 0..20 {
        println!(
            "sample {:2}: {}",
            k + 1,
            sample(&p, &mut rng, 0.5, options.tie)
        );
    }
    Ok(())
}
