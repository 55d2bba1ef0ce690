//! The `#[differentiable]` teaching errors, pinned with trybuild.
//!
//! `ui-tests/*.rs` must each fail to compile with exactly the `.stderr` beside them;
//! `ui-tests/pass/*.rs` must compile and run. trybuild passes silently on a glob that
//! matches nothing, so the driver first counts the files it expects.
//!
//! This package depends on `scalar-autodiff` with its default features and on nothing else
//! a user would not have, so the messages are the ones a user's crate sees, whatever
//! features the rest of the workspace is built with (rustc lists the implementations of an
//! operator from every crate the test crate links).

use std::path::Path;

/// The `.rs` files directly in `dir`, relative to this package's root.
fn cases(dir: &str) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display()))
        .filter_map(Result::ok)
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "rs"))
        .count()
}

#[test]
fn ui() {
    let failing = cases(".");
    let passing = cases("pass");
    assert!(
        failing >= 15,
        "expected at least 15 compile-fail cases, found {failing}"
    );
    assert!(
        passing >= 3,
        "expected at least 3 passing cases, found {passing}"
    );

    let t = trybuild::TestCases::new();
    t.compile_fail("*.rs");
    t.pass("pass/*.rs");
}
