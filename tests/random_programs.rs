//! `tests/random_programs/generated.rs` is exactly what `tests/random_programs/generator.rs`
//! writes, so that nobody edits the random programs of `tests/sweep_bits.rs` by hand.
//!
//! After changing the generator, rewrite the file with
//!
//! ```text
//! AUTODIFF_REGENERATE=1 cargo test --test random_programs
//! ```
//!
//! (an environment variable rather than an `#[ignore]`d test, because CI runs the ignored
//! tests too and must never rewrite a checked-in file). This target compiles the generator
//! alone, not the generated file, so it can rewrite a file that no longer compiles.

#[path = "random_programs/generator.rs"]
mod generator;

use std::path::PathBuf;

fn generated_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/random_programs/generated.rs")
}

#[test]
fn generated_rs_is_what_the_generator_writes() {
    let expected = generator::generate();
    let path = generated_path();
    if std::env::var_os("AUTODIFF_REGENERATE").is_some_and(|value| value == "1") {
        std::fs::write(&path, &expected).expect("generated.rs is writable");
        eprintln!("rewrote {}", path.display());
        return;
    }
    let found = std::fs::read_to_string(&path).expect("generated.rs exists");
    if found != expected {
        let line = found
            .lines()
            .zip(expected.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || found.lines().count().min(expected.lines().count()) + 1,
                |index| index + 1,
            );
        panic!(
            "{} differs from what the generator writes (first at line {line}); regenerate it \
             with `AUTODIFF_REGENERATE=1 cargo test --test random_programs`",
            path.display()
        );
    }
}

#[test]
fn the_generator_is_deterministic() {
    assert_eq!(generator::generate(), generator::generate());
}
