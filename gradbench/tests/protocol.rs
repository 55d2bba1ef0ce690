//! GradBench's protocol, replayed: the messages of recorded sessions with the suite's
//! hand-written C++ tool (`tests/data`) answered by this tool, its outputs compared with
//! `manual`'s; and messages no eval sends, answered with an error rather than a panic.

use scalar_autodiff_gradbench::protocol::answer;
use serde_json::Value;

/// The messages of a recorded session, each with `manual`'s response.
fn session(name: &str) -> Vec<(String, Value)> {
    let path = format!("{}/tests/data/{name}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut pairs = Vec::new();
    for line in &lines {
        if let Some(message) = line.get("message") {
            let response = lines
                .iter()
                .filter_map(|other| other.get("response"))
                .find(|response| response["id"] == message["id"])
                .unwrap()
                .clone();
            pairs.push((message.to_string(), response));
        }
    }
    pairs
}

/// Numbers of `ours` and `theirs` paired in order, the shapes checked equal on the way.
fn numbers(ours: &Value, theirs: &Value, out: &mut Vec<(f64, f64)>) {
    match (ours, theirs) {
        (Value::Number(a), Value::Number(b)) => {
            out.push((a.as_f64().unwrap(), b.as_f64().unwrap()));
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{ours} against {theirs}");
            for (a, b) in a.iter().zip(b) {
                numbers(a, b, out);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            assert_eq!(a.len(), b.len(), "{ours} against {theirs}");
            for (key, a) in a {
                numbers(a, &b[key], out);
            }
        }
        _ => panic!("{ours} is not shaped as {theirs}"),
    }
}

/// Replays `name`'s session; `tolerance` is the relative difference allowed from
/// `manual`'s outputs, per function.
fn replay(name: &str, tolerance: impl Fn(&str) -> f64) {
    for (message, theirs) in session(name) {
        let ours: Value = serde_json::from_str(&answer(&message)).unwrap();
        let message: Value = serde_json::from_str(&message).unwrap();
        assert_eq!(ours["id"], message["id"]);
        match message["kind"].as_str().unwrap() {
            "start" => assert_eq!(ours["tool"], "scalar-autodiff"),
            "define" => assert_eq!(ours["success"], theirs["success"]),
            "evaluate" => {
                assert_eq!(ours["success"], true, "{ours}");
                let function = message["function"].as_str().unwrap();
                let mut pairs = Vec::new();
                numbers(&ours["output"], &theirs["output"], &mut pairs);
                for (a, b) in pairs {
                    let scale = (a.abs() + b.abs()).max(f64::MIN_POSITIVE);
                    assert!(
                        (a - b).abs() <= tolerance(function) * scale,
                        "{name} {function}: {a} against manual's {b}"
                    );
                }
                // One `evaluate` timing a run, at least `min_runs` of them.
                let timings = ours["timings"].as_array().unwrap();
                let runs = message["input"]["min_runs"].as_u64().unwrap_or(1);
                assert!(timings.len() as u64 >= runs);
                assert!(timings.iter().all(|t| t["name"] == "evaluate"));
            }
            _ => assert_eq!(ours, serde_json::json!({ "id": message["id"] })),
        }
    }
}

#[test]
fn hello_answers_as_manual_does() {
    replay("hello", |_| 0.0);
}

#[test]
fn llsq_lse_det_and_kmeans_agree_with_manual() {
    // (`manual` sums in OpenMP's order for llsq and lse, and may contract into fused
    // multiply-adds: the same formulas, rounded apart.)
    replay("llsq", |_| 1e-13);
    replay("lse", |_| 1e-13);
    replay("det", |_| 1e-13);
    // (kmeans's `dir` divides an exact gradient by an exact diagonal: its only rounding
    // is the gradient's sums, in another order than `manual`'s.)
    replay("kmeans", |_| 1e-12);
}

#[test]
fn gmm_agrees_with_manual() {
    // (Its prior's constant takes `lgamma` from the libm crate, `manual` from glibc.)
    replay("gmm", |_| 1e-12);
}

#[test]
fn lstm_agrees_with_manual() {
    replay("lstm", |_| 1e-12);
}

#[test]
fn ba_agrees_with_manual() {
    // (Its first observation's block and the last weight's, of 31,843 computed. The
    // residual is a projection minus a feature it nearly equals: the cancellation makes
    // their rounding apart, 3e-12 relative here, larger than elsewhere.)
    replay("ba", |_| 1e-10);
}

#[test]
fn ht_agrees_with_manual() {
    // The complicated variant on the small model (544 vertices, 100 points). `manual`
    // differentiates by hand (its rotations' derivatives written out, summed in its own
    // order), ours by forward mode on lanes: the same derivatives, rounded apart; entries
    // of 1e-5 made of larger terms that cancel differ by 4e-12 relative.
    replay("ht", |function| match function {
        "objective" => 1e-13,
        _ => 1e-10,
    });
}

#[test]
fn ode_solves_as_manual_does() {
    // The primal is the same Runge-Kutta steps. `manual`'s gradient is that of the ODE's
    // exact solution, `x_0 ⋯ x_{n-1} t^n / n!`, not of the steps: the two agree where the
    // steps are exact, a solution of degree at most 4 in `t` (n ≤ 4, recorded here), and
    // at the eval's default sizes (n ≥ 1,000) both are below its tolerance of 1e-4;
    // between, they differ (n = 6, s = 2: 0.00121 against 0.00155). `tests/derivatives.rs`
    // checks ours against the steps' differences.
    replay("ode", |function| match function {
        "primal" => 1e-13,
        _ => 1e-12,
    });
}

fn error_of(line: &str) -> String {
    let answer: Value = serde_json::from_str(&answer(line)).unwrap();
    assert_eq!(answer["success"], false, "{answer}");
    answer["error"].as_str().unwrap().to_owned()
}

#[test]
fn malformed_messages_are_answered_with_errors() {
    assert!(error_of("{not json").contains("does not read"));
    let define = r#"{"id": 1, "kind": "define", "module": "saddle"}"#;
    assert_eq!(error_of(define), "no module `saddle` in this tool");
    let evaluate = |module: &str, function: &str, input: &str| {
        format!(
            r#"{{"id": 2, "kind": "evaluate", "module": "{module}", "function": "{function}", "input": {input}}}"#
        )
    };
    assert!(error_of(&evaluate("llsq", "hessian", "{}")).contains("no function `hessian`"));
    assert!(error_of(&evaluate("llsq", "primal", r#"{"x": "no"}"#)).contains("does not read"));
    assert!(error_of(&evaluate("lse", "gradient", r#"{"x": []}"#)).contains("no numbers"));
    let det = evaluate("det", "primal", r#"{"A": [1.0, 2.0, 3.0], "ell": 2}"#);
    assert!(error_of(&det).contains("2 by 2"));
    let ode = evaluate("ode", "gradient", r#"{"x": [1.0], "s": 0}"#);
    assert!(error_of(&ode).contains("one step"));
    // A value the gradient cannot be finite at: the library's typed error, as text.
    let lse = evaluate("lse", "gradient", r#"{"x": [1e308, 1e308, -1e308]}"#);
    assert!(error_of(&lse).contains("non-finite value -inf in `lse`"));
}
