//! `tests/random_programs/generated_*.rs` are exactly what `tests/random_programs/generator.rs`
//! writes, so that nobody edits the random programs of the `sweep_bits_*` tests by hand.
//!
//! After changing the generator, rewrite the files with
//!
//! ```text
//! AUTODIFF_REGENERATE=1 cargo test --test random_programs
//! ```
//!
//! (an environment variable rather than an `#[ignore]`d test, because CI runs the ignored
//! tests too and must never rewrite a checked-in file). This target compiles the generator
//! alone, not the generated files, so it can rewrite files that no longer compile.

#[path = "random_programs/generator.rs"]
mod generator;

use std::path::PathBuf;

fn generated_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/random_programs")
        .join(file)
}

#[test]
fn generated_files_are_what_the_generator_writes() {
    let files = generator::Family::ALL.map(generator::Family::file);
    let texts = generator::generate();
    let regenerate = std::env::var_os("AUTODIFF_REGENERATE").is_some_and(|value| value == "1");
    let mut stale = Vec::new();
    for (file, expected) in files.into_iter().zip(&texts) {
        let path = generated_path(file);
        if regenerate {
            std::fs::write(&path, expected).expect("the generated file is writable");
            eprintln!("rewrote {}", path.display());
            continue;
        }
        let found = std::fs::read_to_string(&path).unwrap_or_default();
        if found != *expected {
            let line = found
                .lines()
                .zip(expected.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || found.lines().count().min(expected.lines().count()) + 1,
                    |index| index + 1,
                );
            stale.push(format!("{} (first at line {line})", path.display()));
        }
    }
    assert!(
        stale.is_empty(),
        "{} differ from what the generator writes; regenerate them with \
         `AUTODIFF_REGENERATE=1 cargo test --test random_programs`",
        stale.join(" and ")
    );
}

#[test]
fn the_generator_is_deterministic() {
    assert_eq!(generator::generate(), generator::generate());
}

/// Each family's functions are listed in its own file's `PROGRAMS` only, and the count every
/// file states is the sum, so that the binaries' shares of the cases add up.
#[test]
fn the_files_split_the_programs() {
    let texts = generator::generate();
    let listed = |text: &str| text.matches("    Program { name: \"").count();
    let counts = texts.each_ref().map(|text| listed(text));
    assert!(counts.iter().all(|&count| count > 100), "{counts:?}");
    let total = format!(
        "pub const ALL_PROGRAMS: usize = {};",
        counts.iter().sum::<usize>()
    );
    assert!(texts.iter().all(|text| text.contains(&total)), "{total}");
    for (index, first) in ["f000", "s000", "c000"].into_iter().enumerate() {
        let row = format!("Program {{ name: \"{first}\"");
        for (other, text) in texts.iter().enumerate() {
            assert_eq!(
                text.contains(&row),
                other == index,
                "{first} in file {other}"
            );
        }
    }
}
