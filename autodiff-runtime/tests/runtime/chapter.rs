//! Every number of the chapter's scalar graph, and its ledger.

use approx::assert_abs_diff_eq;
use autodiff_runtime::{Scalar, ScalarAutodiffError, ScalarOperation};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

fn stored(scalars: [&Scalar; 3]) -> [Option<f64>; 3] {
    scalars.map(Scalar::gradient)
}

#[test]
fn reused_square_accumulates_repeats_zeroes_and_restores() -> Result {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    assert_eq!((x.value(), square.value(), loss.value()), (2.0, 4.0, 8.0));

    loss.backward()?;
    assert_eq!(
        stored([&loss, &square, &x]),
        [Some(1.0), Some(2.0), Some(8.0)]
    );
    loss.backward()?;
    assert_eq!(
        stored([&loss, &square, &x]),
        [Some(2.0), Some(4.0), Some(16.0)]
    );
    loss.zero_grad();
    assert_eq!(
        stored([&loss, &square, &x]),
        [Some(0.0), Some(0.0), Some(0.0)]
    );
    loss.backward()?;
    assert_eq!(
        stored([&loss, &square, &x]),
        [Some(1.0), Some(2.0), Some(8.0)]
    );
    Ok(())
}

#[test]
fn first_pass_ledger_has_three_nodes_and_four_edges() -> Result {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    let first = loss.backward()?;
    loss.backward()?; // a later pass must not change what the first one recorded
    let ledger = first.ledger();
    assert_eq!(ledger.seed, 1.0);
    assert_eq!(ledger.nodes.len(), 3);
    assert_eq!(ledger.edges.len(), 4);

    let nodes: Vec<_> = ledger
        .nodes
        .iter()
        .map(|n| {
            (
                n.topology_index,
                n.operation,
                n.value,
                n.tracked,
                n.pass_adjoint,
                n.accumulated_gradient,
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            (
                0,
                ScalarOperation::Variable,
                2.0,
                true,
                Some(8.0),
                Some(8.0)
            ),
            (
                1,
                ScalarOperation::Multiply,
                4.0,
                true,
                Some(2.0),
                Some(2.0)
            ),
            (2, ScalarOperation::Add, 8.0, true, Some(1.0), Some(1.0)),
        ]
    );
    // (reverse index, child, parent, slot, local derivative, upstream, contribution, before, after)
    let edges: Vec<_> = ledger
        .edges
        .iter()
        .map(|e| {
            (
                e.reverse_index,
                e.child,
                e.parent,
                e.operand,
                e.local_derivative,
                e.upstream,
                e.contribution,
                e.parent_adjoint_before,
                e.parent_adjoint_after,
            )
        })
        .collect();
    assert_eq!(
        edges,
        [
            (0, 2, 1, 0, 1.0, 1.0, 1.0, Some(0.0), Some(1.0)),
            (1, 2, 1, 1, 1.0, 1.0, 1.0, Some(1.0), Some(2.0)),
            (2, 1, 0, 0, 2.0, 2.0, 4.0, Some(0.0), Some(4.0)),
            (3, 1, 0, 1, 2.0, 2.0, 4.0, Some(4.0), Some(8.0)),
        ]
    );
    assert!(ledger.edges.iter().all(|e| e.parent_tracked));
    Ok(())
}

#[test]
fn ledger_table_and_dot_show_every_edge() -> Result {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    let ledger = loss
        .backward()?
        .ledger()
        .name(&x, "x")
        .name(&square, "square")
        .name(&loss, "loss");
    let table = ledger.to_string();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip(2)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4);
    assert_eq!(
        rows[0],
        [
            "0",
            "loss",
            "0",
            "square",
            "1.000000000000",
            "1.000000000000",
            "1.000000000000"
        ]
    );
    assert_eq!(
        rows[3],
        [
            "3",
            "square",
            "1",
            "x",
            "2.000000000000",
            "2.000000000000",
            "4.000000000000"
        ]
    );
    // Columns are aligned: each row's second cell starts under the header's second cell.
    let lines: Vec<&str> = table.lines().skip(1).collect();
    let column = lines[0].find("consuming result");
    assert!(column.is_some());
    for (line, name) in lines[1..].iter().zip(["loss", "loss", "square", "square"]) {
        assert_eq!(line.find(name), column, "{table}");
    }

    let dot = ledger.to_dot();
    assert!(dot.starts_with("digraph"));
    assert_eq!(dot.matches(" -> ").count(), 4);
    assert_eq!(
        dot.matches("n0 -> n1").count(),
        2,
        "x*x draws two arrows:\n{dot}"
    );
    assert_eq!(
        dot.matches("n1 -> n2").count(),
        2,
        "square+square draws two arrows:\n{dot}"
    );
    assert!(dot.contains("contribution 4.000000000000"));
    assert!(dot.contains("adjoint 8.000000000000"));
    Ok(())
}

#[test]
fn detach_stops_the_gradient_but_keeps_the_value() -> Result {
    let x = Scalar::variable(2.0)?;
    let detached = x.detach()?;
    assert!(!detached.tracks_gradient());
    assert_eq!(detached.operation(), ScalarOperation::Detached);
    assert!(!detached.is_same_node(&x));
    let loss = x.mul(&x)?.add(&detached.mul(&Scalar::constant(3.0)?)?)?;
    let pass = loss.backward()?;
    assert_eq!(loss.value(), 10.0);
    assert_eq!(x.gradient(), Some(4.0));
    assert_eq!(detached.gradient(), None);
    // The ledger still shows the detached branch, untracked, with no adjoint.
    let ledger = pass.ledger();
    let untracked: Vec<_> = ledger.nodes.iter().filter(|n| !n.tracked).collect();
    assert_eq!(untracked.len(), 3, "detached, 3.0 and their product");
    assert!(untracked
        .iter()
        .all(|n| n.pass_adjoint.is_none() && n.accumulated_gradient.is_none()));
    Ok(())
}

#[test]
fn exp_of_tanh_matches_the_chapter() -> Result {
    let x = Scalar::variable(0.5)?;
    let y = x.tanh()?.exp()?;
    y.backward()?;
    assert_abs_diff_eq!(y.value(), 1.587431271430, epsilon = 5e-13);
    let gradient = x.gradient().unwrap_or(f64::NAN);
    assert_abs_diff_eq!(gradient, 1.248431724655, epsilon = 5e-13);
    let t = 0.5f64.tanh();
    assert_eq!(gradient, t.exp() * (1.0 - t * t));
    Ok(())
}

#[test]
fn seed_scales_every_adjoint_and_identity_is_not_value_equality() -> Result {
    let x = Scalar::variable(3.0)?;
    let twin = Scalar::variable(3.0)?;
    let copy = x.clone();
    assert!(x.is_same_node(&copy));
    assert!(!x.is_same_node(&twin));
    let y = x.mul(&twin)?;
    y.backward_with_seed(-2.5)?;
    assert_eq!(x.gradient(), Some(-7.5));
    assert_eq!(copy.gradient(), Some(-7.5));
    assert_eq!(twin.gradient(), Some(-7.5));
    assert_eq!(y.gradient(), Some(-2.5));
    Ok(())
}

#[test]
fn a_pass_reaches_only_what_the_output_depends_on() -> Result {
    let x = Scalar::variable(1.5)?;
    let used = x.exp()?;
    let unrelated = x.sin()?;
    // `unrelated` has a stored gradient from its own pass; `used`'s pass must not touch it.
    unrelated.backward()?;
    assert_eq!(x.gradient(), Some(1.5f64.cos()));
    used.backward()?;
    assert_eq!(unrelated.gradient(), Some(1.0));
    assert_eq!(x.gradient(), Some(1.5f64.cos() + 1.5f64.exp()));
    // zero_grad from `used` clears x and used, not unrelated.
    used.zero_grad();
    assert_eq!(
        (x.gradient(), used.gradient(), unrelated.gradient()),
        (Some(0.0), Some(0.0), Some(1.0))
    );
    Ok(())
}

#[test]
fn a_node_outside_the_pass_with_an_undefined_slope_does_not_fail_it() -> Result {
    let x = Scalar::variable(0.0)?;
    let _kink = x.sqrt()?; // slope undefined at 0, but not on the path below
    let y = x.mul(&Scalar::constant(3.0)?)?;
    y.backward()?;
    assert_eq!(x.gradient(), Some(3.0));
    Ok(())
}
