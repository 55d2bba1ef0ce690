//! Peak memory per recorded node on a million-step chain (its own test binary, so no
//! other test shares the process's peak). Release only: run with
//! `cargo test --release -p autodiff-runtime --test memory -- --ignored --nocapture`.

use autodiff_runtime::__private::{trace, Backend};
use autodiff_runtime::ScalarAutodiffError;

/// The process's peak resident set (VmHWM), in bytes.
fn peak_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The benchmark chain: multiply by a constant, add a constant, tanh, in turn.
fn chain<B: Backend>(b: &B, x: &B::Value, steps: usize) -> Result<B::Value, ScalarAutodiffError> {
    let mut v = x.clone();
    for step in 0..steps {
        v = match step % 3 {
            0 => b.mul(&v, &b.constant(4.0 / 3.0)?)?,
            1 => b.add(&v, &b.constant(-0.117_360_522_332_611_85)?)?,
            _ => b.tanh(&v)?,
        };
    }
    Ok(v)
}

#[test]
#[ignore = "release-only: measures the process's peak memory"]
fn a_million_step_chain_needs_at_most_48_bytes_per_node() -> Result<(), ScalarAutodiffError> {
    const STEPS: usize = 1_000_000;
    let Some(before) = peak_resident() else {
        eprintln!("no /proc/self/status here: nothing measured");
        return Ok(());
    };
    let (value, [gradient]) = trace(|t| {
        let x = t.variable(0.5)?;
        let out = chain(t, &x, STEPS)?;
        t.value_and_gradient(out, [x])
    })?;
    assert!(value.is_finite() && gradient.is_finite());
    let after = peak_resident().unwrap_or(before);
    // One node per step (constants are immediates in a trace) and the variable.
    let nodes = (STEPS + 1) as f64;
    let per_node = (after - before) as f64 / nodes;
    eprintln!(
        "peak growth {} bytes: {per_node:.1} bytes per recorded node",
        after - before
    );
    assert!(per_node <= 48.0, "{per_node:.1} bytes per node");
    Ok(())
}
