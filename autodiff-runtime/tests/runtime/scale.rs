//! Graph walks never recurse, and training loops hold bounded memory.

use autodiff_runtime::{tape_len, Scalar, ScalarAutodiffError};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

/// Builds a chain of `steps` operations (x*0.999, +0.001, tanh, ...), runs backward,
/// zero_grad, backward again, and drops it, all on a thread with a 2 MiB stack.
fn chain_on_small_stack(steps: usize) {
    let outcome = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || -> Result<(f64, f64, usize, usize)> {
            let x = Scalar::variable(0.3)?;
            let scale = Scalar::constant(0.999)?;
            let shift = Scalar::constant(0.001)?;
            let mut y = x.clone();
            let mut expected = 1.0;
            let mut plain = 0.3f64;
            for step in 0..steps {
                y = match step % 3 {
                    0 => {
                        expected *= 0.999;
                        plain *= 0.999;
                        y.mul(&scale)?
                    }
                    1 => {
                        plain += 0.001;
                        y.add(&shift)?
                    }
                    _ => {
                        plain = plain.tanh();
                        expected *= 1.0 - plain * plain;
                        y.tanh()?
                    }
                };
            }
            assert_eq!(y.value(), plain);
            y.backward()?;
            let first = x.gradient().unwrap_or(f64::NAN);
            assert!((first - expected).abs() <= 1e-12 * expected.abs().max(1e-300));
            y.zero_grad();
            assert_eq!(x.gradient(), Some(0.0));
            y.backward()?;
            let built = tape_len();
            drop(y);
            Ok((first, x.gradient().unwrap_or(f64::NAN), built, tape_len()))
        })
        .map(|handle| handle.join());
    match outcome {
        Ok(Ok(Ok((first, again, built, after)))) => {
            assert_eq!(first, again);
            assert_eq!(built, steps + 3, "x, two constants and one node per step");
            assert_eq!(after, 3, "the chain is freed; x and the constants remain");
        }
        other => panic!("chain of {steps} failed: {other:?}"),
    }
}

#[test]
fn a_long_chain_runs_on_a_small_stack() {
    chain_on_small_stack(100_000);
}

#[test]
#[ignore = "release-only: run with cargo test --release -- --ignored"]
fn a_million_node_chain_runs_on_a_small_stack() {
    chain_on_small_stack(1_000_000);
}

#[test]
fn a_training_loop_frees_every_step() -> Result {
    // y = 3x - 2 on a few points; parameters stay Scalars for all 10,000 steps.
    let w = Scalar::variable(0.0)?;
    let b = Scalar::variable(0.0)?;
    let data: Vec<(f64, f64)> = (0..8)
        .map(|i| (i as f64 / 8.0, 3.0 * i as f64 / 8.0 - 2.0))
        .collect();
    let baseline = tape_len();
    let mut peak = 0;
    for _ in 0..10_000 {
        let mut loss = Scalar::constant(0.0)?;
        for &(x, y) in &data {
            let prediction = w.mul(&Scalar::constant(x)?)?.add(&b)?;
            let error = prediction.sub(&Scalar::constant(y)?)?;
            loss = loss.add(&error.mul(&error)?)?;
        }
        w.zero_grad();
        b.zero_grad();
        loss.backward()?;
        peak = peak.max(tape_len());
        drop(loss);
        assert_eq!(tape_len(), baseline, "the step's graph is gone");
        let (gw, gb) = (w.gradient().unwrap_or(0.0), b.gradient().unwrap_or(0.0));
        w.set_value(w.value() - 0.1 * gw)?;
        b.set_value(b.value() - 0.1 * gb)?;
    }
    assert!(
        peak < baseline + 100,
        "one step's graph, not 10,000: {peak}"
    );
    assert!((w.value() - 3.0).abs() < 1e-9 && (b.value() + 2.0).abs() < 1e-9);
    Ok(())
}
