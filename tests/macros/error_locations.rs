//! An error names the function, file, line and column of the operation behind it: an
//! operation deep in a loop, one in a helper another function calls, one in a method, and
//! the operation whose edge a reverse or second-order pass failed on, in every form.

use scalar_autodiff::{differentiable, Scalar, ScalarAutodiffError, SourceLocation};

/// The function, line and column of `error`'s location, after checking its file.
fn at(error: &ScalarAutodiffError) -> (Option<&'static str>, u32, u32) {
    let location = error.location().copied();
    let Some(location) = location else {
        panic!("no location in {error:?}");
    };
    assert_eq!(location.file(), file!(), "{error}");
    (location.function(), location.line(), location.column())
}

/// The error of a result that should have been refused.
fn refused<T: std::fmt::Debug>(result: Result<T, ScalarAutodiffError>) -> ScalarAutodiffError {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error,
    }
}

// Line numbers below are read by the tests: keep these functions where they are, or
// update `LOOP_LINE` and friends.
#[differentiable]
fn deep_loop(x: f64, ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (i, y) in ys.iter().enumerate() {
        if i % 2 == 0 {
            total += (x - y).ln() * 0.5;
        } else {
            total += x * y;
        }
    }
    total
}
const LOOP_LINE: u32 = 32;

#[differentiable]
fn log_of(x: f64) -> f64 {
    x.ln() + 1.0
}
const HELPER_LINE: u32 = 43;

#[differentiable]
fn composed(x: f64, y: f64) -> f64 {
    let scaled = x * y;
    log_of(scaled) * y
}

struct Model {
    scale: f64,
}

impl Model {
    #[differentiable]
    fn energy(&self, w: [f64; 2]) -> f64 {
        let z = self.scale * w[0];
        z / w[1]
    }
}
const METHOD_LINE: u32 = 61;

#[differentiable]
fn kink(x: f64, y: f64) -> f64 {
    let base = x * y;
    base + x.sqrt() * 3.0
}
const KINK_LINE: u32 = 69;

#[differentiable]
fn root_of(x: f64) -> f64 {
    x.sqrt()
}

#[differentiable]
fn uses_root(x: f64, y: f64) -> f64 {
    let before = x * y;
    before + root_of(x) * root_of(y) + x * 2.0
}

#[test]
fn a_pass_error_in_a_helper_names_the_helper() {
    // The pass meets root_of(x)'s edge at x = 0 (the second call's sqrt at y = 4 is fine).
    let error = refused(uses_root_grad(0.0, 4.0));
    assert_eq!(error.kind(), "non-finite-derivative");
    let (function, line, column) = at(&error);
    assert_eq!(function, Some("root_of"), "{error}");
    let expected_line = line!() - 16;
    assert_eq!((line, column), (expected_line, 7));
    let x = Scalar::variable(0.0).expect("a finite leaf");
    let y = Scalar::variable(4.0).expect("a finite leaf");
    let output = uses_root_graph(&x, &y).expect("the forward pass is finite");
    let graph = refused(output.backward());
    assert_eq!(at(&graph), (Some("root_of"), expected_line, 7));
    // In a pass that succeeds, each node's function is the body it was written in.
    let (x, y) = (Scalar::variable(1.0), Scalar::variable(4.0));
    let (Ok(x), Ok(y)) = (x, y) else {
        panic!("finite leaves")
    };
    let pass = uses_root_graph(&x, &y).and_then(|output| output.backward());
    let Ok(pass) = pass else {
        panic!("a finite pass: {pass:?}")
    };
    let functions: Vec<(String, Option<&str>)> = pass
        .ledger()
        .nodes
        .iter()
        .filter_map(|node| Some((node.operation.to_string(), node.location?.function())))
        .collect();
    let caller = Some("uses_root");
    let helper = Some("root_of");
    let expected = [
        ("mul", caller),
        ("sqrt", helper),
        ("sqrt", helper),
        ("mul", caller),
        ("add", caller),
        ("constant", caller),
        ("mul", caller),
        ("add", caller),
    ];
    let expected: Vec<(String, Option<&str>)> = expected
        .iter()
        .map(|&(op, function)| (op.to_owned(), function))
        .collect();
    assert_eq!(functions, expected);
}

#[test]
fn an_error_deep_in_a_loop_names_its_iteration_s_operation() {
    // The third element (i = 2) is the one whose log is of 0.
    let error = refused(deep_loop_grad(1.5, &[0.0, 2.0, 1.5, 4.0]));
    assert_eq!(error.kind(), "non-finite-result");
    assert_eq!(at(&error), (Some("deep_loop"), LOOP_LINE, 30));
    let message = error.to_string();
    let expected = format!(" in `deep_loop` at {}:{LOOP_LINE}:30", file!());
    assert!(message.ends_with(&expected), "{message}");
    // The graph form and forward mode say the same.
    let x = Scalar::variable(1.5).expect("a finite leaf");
    assert_eq!(refused(deep_loop_graph(&x, &[0.0, 2.0, 1.5])), error);
    let forward = refused(deep_loop_jvp(1.5, &[1.5], [1.0]));
    assert_eq!(at(&forward), (Some("deep_loop"), LOOP_LINE, 30));
}

#[test]
fn an_error_in_a_helper_names_the_helper_not_its_caller() {
    let error = refused(composed_grad(0.0, 2.0));
    assert_eq!(at(&error), (Some("log_of"), HELPER_LINE, 7));
    assert!(
        error.to_string().ends_with(&format!(
            "produced non-finite value -inf in `log_of` at {}:{HELPER_LINE}:7",
            file!()
        )),
        "{error}"
    );
    // The caller's own operations keep the caller's name.
    let error = refused(composed_grad(1e300, 1e300));
    assert_eq!(at(&error), (Some("composed"), HELPER_LINE + 6, 20));
}

#[test]
fn an_error_in_a_method_names_the_method() {
    let model = Model { scale: 2.0 };
    let error = refused(model.energy_grad([1.0, 0.0]));
    assert_eq!(error.kind(), "non-finite-result");
    assert_eq!(at(&error), (Some("energy"), METHOD_LINE, 11));
}

#[test]
fn a_reverse_pass_error_names_the_operation_whose_edge_failed() {
    // sqrt(0) is finite, its derivative is not: the pass, not the operation, refuses.
    let error = refused(kink_grad(0.0, 1.0));
    assert_eq!(error.kind(), "non-finite-derivative");
    assert_eq!(at(&error), (Some("kink"), KINK_LINE, 14));
    // The graph form's own backward pass, the second-order passes: the same operation.
    let (x, y) = (Scalar::variable(0.0), Scalar::variable(1.0));
    let (Ok(x), Ok(y)) = (x, y) else {
        panic!("finite leaves")
    };
    let output = kink_graph(&x, &y).expect("the forward pass is finite");
    let graph = refused(output.backward());
    assert_eq!(at(&graph), (Some("kink"), KINK_LINE, 14));
    let hvp = refused(kink_hvp(0.0, 1.0, [1.0, 0.0]));
    assert_eq!(at(&hvp), (Some("kink"), KINK_LINE, 14));
    let hessian = refused(kink_hessian(0.0, 1.0));
    assert_eq!(at(&hessian), (Some("kink"), KINK_LINE, 14));
    assert!(
        graph.to_string().ends_with(&format!(
            "derivative exists in `kink` at {}:{KINK_LINE}:14",
            file!()
        )),
        "{graph}"
    );
}

#[test]
fn the_ledger_shows_where_each_consuming_operation_was_written() -> Result<(), ScalarAutodiffError>
{
    let (x, y) = (Scalar::variable(4.0)?, Scalar::variable(1.0)?);
    let output = kink_graph(&x, &y)?;
    let pass = output.backward()?;
    let ledger = pass.ledger().name(&x, "x").name(&y, "y");
    let located: Vec<SourceLocation> = ledger.nodes.iter().filter_map(|n| n.location).collect();
    // x * y, sqrt, the constant 3, * 3 and the sum: every node the body made.
    let lines: Vec<u32> = located.iter().map(SourceLocation::line).collect();
    assert_eq!(
        lines,
        [KINK_LINE - 1, KINK_LINE, KINK_LINE, KINK_LINE, KINK_LINE]
    );
    assert!(located.iter().all(|at| at.function() == Some("kink")));
    let table = ledger.with_locations().to_string();
    let header = table.lines().nth(1).unwrap_or_default();
    assert!(header.ends_with("written at"), "{table}");
    // The edge from sqrt to x: its row ends with sqrt's location.
    let sqrt_row = table
        .lines()
        .find(|row| row.split_whitespace().nth(1) == Some("sqrt#3"))
        .unwrap_or_default();
    let expected = format!("`kink` at {}:{KINK_LINE}:14", file!());
    assert!(sqrt_row.ends_with(&expected), "{table}");
    // Without the request, no column.
    assert!(!pass.ledger().to_string().contains("written at"));
    Ok(())
}

#[test]
fn the_plain_api_locates_its_calls_without_a_function() {
    let x = Scalar::variable(-1.0).expect("a finite leaf");
    let (error, line) = (refused(x.sqrt()), line!());
    assert_eq!(at(&error), (None, line, 36));
    assert!(error
        .to_string()
        .ends_with(&format!(" at {}:{line}:36", file!())));
}
