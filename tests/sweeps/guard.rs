//! The guard of "what the attribute accepts runs compiled", over the programs a user reads
//! first: every `ui-tests/pass` program is run twice, and its second run must start no
//! trace. (`scalar_autodiff::__private::traces` counts the checked path's runs: a finite
//! call of `name_grad` or `name_hvp` whose compiled sweeps cover the body records none,
//! and a first call may only grow the value stack.)
//!
//! [`STILL_TRACED`] lists the programs whose warm run still takes the checked path, and the
//! test holds it exact: a program that starts compiling must leave the list, and a program
//! that falls back to the tape and is not listed fails. The list only shrinks; the goal is
//! an empty one. (The examples' losses have the same guard in `tests/models/compiled.rs`.)

use scalar_autodiff::__private::traces;

/// Includes each `ui-tests/pass` program as a module (their `main` is `pub` for this) and
/// lists them with a runner that ignores what `main` returns.
macro_rules! programs {
    ($($name:ident = $file:literal),* $(,)?) => {
        $(
            // The programs are written in the forms they test (`&Vec<f64>`, `x = x * 3.0`),
            // which clippy would steer away from; trybuild compiles them with rustc's lints.
            #[allow(clippy::all)]
            #[path = $file]
            mod $name;
        )*

        /// Every `ui-tests/pass` program, by file name.
        const PROGRAMS: &[(&str, fn())] = &[$((stringify!($name), || {
            let _ = $name::main();
        })),*];
    };
}

programs! {
    any_module_and_visibility = "../../ui-tests/pass/any-module-and-visibility.rs",
    branches = "../../ui-tests/pass/branches.rs",
    composition = "../../ui-tests/pass/composition.rs",
    const_generic_helpers = "../../ui-tests/pass/const-generic-helpers.rs",
    data_parameters = "../../ui-tests/pass/data-parameters.rs",
    detached_constants = "../../ui-tests/pass/detached-constants.rs",
    early_return_and_blocks = "../../ui-tests/pass/early-return-and-blocks.rs",
    loops = "../../ui-tests/pass/loops.rs",
    only_grad_is_called = "../../ui-tests/pass/only-grad-is-called.rs",
    parameter_arrays = "../../ui-tests/pass/parameter-arrays.rs",
    parameters_derive = "../../ui-tests/pass/parameters-derive.rs",
    reused_square = "../../ui-tests/pass/reused-square.rs",
}

/// The programs whose warm run still starts a trace, and how many traces: none now. A
/// program in a form the compiled sweeps do not cover would be listed here; the list only
/// stays empty.
const STILL_TRACED: &[(&str, u64)] = &[];

#[test]
fn every_pass_program_is_listed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui-tests/pass");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("ui-tests/pass exists")
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter_map(|name| name.strip_suffix(".rs").map(|stem| stem.replace('-', "_")))
        .collect();
    files.sort();
    let listed: Vec<&str> = PROGRAMS.iter().map(|(name, _)| *name).collect();
    assert_eq!(listed, files, "include every ui-tests/pass program above");
}

#[test]
fn warm_runs_of_the_pass_programs_start_no_trace() {
    let mut traced: Vec<(&str, u64)> = Vec::new();
    for &(name, run) in PROGRAMS {
        run();
        let before = traces();
        run();
        let count = traces() - before;
        if count > 0 {
            traced.push((name, count));
        }
    }
    assert_eq!(
        traced, STILL_TRACED,
        "the pass programs whose warm run takes the checked path changed"
    );
}
