//! The main demo prints the chapter's nine lines byte for byte.

// examples/explain.rs (in `ledger_page`) includes this source too: each example runs alone.
#[allow(dead_code, clippy::duplicate_mod)]
#[path = "../../examples/reused_square.rs"]
mod reused_square;

const EXPECTED: [&str; 9] = [
    "reused square: x=2.000000000000 square=4.000000000000 loss=8.000000000000",
    "one backward: x_grad=8.000000000000 square_grad=2.000000000000 loss_grad=1.000000000000",
    "repeated backward: x_grad=16.000000000000 square_grad=4.000000000000 loss_grad=2.000000000000",
    "zero_grad: x_grad=0.000000000000 square_grad=0.000000000000 loss_grad=0.000000000000",
    "after zero: x_grad=8.000000000000 square_grad=2.000000000000 loss_grad=1.000000000000",
    "detach: expression=x*x+detach(x)*3 value=10.000000000000 x_grad=4.000000000000 detached_grad=none",
    "nonlinear: expression=exp(tanh(x)) input=0.500000000000 value=1.587431271430 gradient=1.248431724655",
    "gradcheck: expression=2*x*x analytic=8.000000000000 numerical=8.000000000000 scaled_error=0.000000000000e0 pass=true",
    "typed errors: constant-output | non-finite-seed | non-finite-accumulated-gradient; gradients unchanged=true",
];

#[test]
fn the_demo_prints_the_chapter_lines() -> Result<(), scalar_autodiff::ScalarAutodiffError> {
    let lines = reused_square::report()?;
    assert!(
        lines.len() > EXPECTED.len(),
        "the ledger follows the nine lines"
    );
    for (index, (line, expected)) in lines.iter().zip(EXPECTED).enumerate() {
        assert_eq!(line, expected, "line {}", index + 1);
    }
    // Then the first pass's ledger: a header, the column names and four edge rows.
    let ledger: Vec<&String> = lines
        .iter()
        .skip(EXPECTED.len())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(ledger.len(), 1 + 2 + 4);
    assert!(ledger[1].starts_with("backward pass: seed 1.000000000000, 3 nodes, 4 edges"));
    Ok(())
}

#[test]
fn the_demo_binary_prints_the_same_lines() {
    // The example binary itself, as a newcomer runs it.
    let exe = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // With the features this test was built with, so that cargo finds the library and the
    // example already built by `cargo test` instead of building them again.
    let features: Vec<&str> = [
        ("libm", cfg!(feature = "libm")),
        ("argmin", cfg!(feature = "argmin")),
        ("rayon", cfg!(feature = "rayon")),
    ]
    .into_iter()
    .filter_map(|(name, on)| on.then_some(name))
    .collect();
    let output = std::process::Command::new(exe)
        .args(["run", "--quiet", "--example", "reused_square"])
        .args(["--no-default-features", "--features", &features.join(",")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    let Ok(output) = output else {
        panic!("could not run cargo: {output:?}");
    };
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed: Vec<&str> = stdout.lines().take(EXPECTED.len()).collect();
    assert_eq!(printed, EXPECTED);
}
