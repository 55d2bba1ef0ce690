//! Writes two backward passes as interactive pages (open them in a browser; Next /
//! Previous or the arrow keys step through a pass one edge at a time):
//!
//! - `target/explain/reused_square.html`: the chapter's graph, and below its ledger the
//!   chapter's second panel, every number from a real call (`reused_square::chapter`):
//!   the stored gradients over repeated passes, `zero_grad` and a fresh pass, a detached
//!   branch, the central-difference check and three refused requests with their typed
//!   errors;
//! - `target/explain/xor_mlp.html`: the loss graph of `examples/xor_mlp.rs`'s network at
//!   its initial weights, a few hundred nodes, with each parameter's gradient.
//!
//! Run with `cargo run --example explain`; it prints the two paths.

use std::path::PathBuf;

use scalar_autodiff::{Panel, Scalar, ScalarAutodiffError};

#[allow(dead_code)]
#[path = "reused_square.rs"]
mod reused_square;

#[allow(dead_code)]
#[path = "xor_mlp.rs"]
mod xor_mlp;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/explain");
    std::fs::create_dir_all(&folder)?;
    for (name, page) in [
        ("reused_square.html", chapter_page()?),
        ("xor_mlp.html", xor_page()?),
    ] {
        let path = folder.join(name);
        std::fs::write(&path, page)?;
        println!("{}", path.display());
    }
    Ok(())
}

/// A stored gradient as the page shows it (`none` for a node that keeps none).
fn shown(gradient: Option<f64>) -> String {
    gradient.map_or_else(|| "none".to_owned(), |g| g.to_string())
}

/// `1e-9` rather than `0.000000001`, and `0` rather than `0e0`.
fn scientific(value: f64) -> String {
    match value == 0.0 {
        true => "0".to_owned(),
        false => format!("{value:e}"),
    }
}

/// The chapter's page: `square = x * x`, `loss = square + square` at `x = 2`, its first
/// backward pass, and the second panel from [`reused_square::chapter`]'s calls.
pub fn chapter_page() -> Result<String, ScalarAutodiffError> {
    let chapter = reused_square::chapter()?;
    let ledger = chapter
        .first_pass
        .ledger()
        .name(&chapter.x, "x")
        .name(&chapter.square, "square")
        .name(&chapter.loss, "loss");

    let state = |label: &str, stored: [Option<f64>; 3]| {
        let [x, square, loss] = stored.map(shown);
        [label.to_owned(), x, square, loss]
    };
    let stored = Panel::new("Stored gradients")
        .note(
            "Each `backward()` adds its pass's adjoints to the gradients the nodes store; \
             `zero_grad()` clears them, and the next pass starts again from zero.",
        )
        .columns(["after", "x", "square", "loss"])
        .row(state("`loss.backward()`", chapter.first))
        .row(state("`loss.backward()` again", chapter.repeated))
        .row(state("`loss.zero_grad()`", chapter.zeroed))
        .row(state("`loss.backward()`", chapter.restored));

    let detach = &chapter.detach;
    let detached = Panel::new("A detached branch")
        .note(
            "`y = x * x + x.detach() * 3` at `x = 2`. The detached copy is an untracked \
             leaf with the same value: it carries no gradient back, so `x` receives only \
             the `x * x` path's `2x = 4`, not `4 + 3`.",
        )
        .row(["`y`", &detach.value.to_string()])
        .row(["`x.gradient()`", &detach.x_grad.to_string()])
        .row(["`x.detach().gradient()`", &shown(detach.detached_grad)]);

    let check = &chapter.check;
    let gradcheck = Panel::new("Central-difference check")
        .note(format!(
            "The reverse pass's derivative of `2 x²` at `x = {}` against the central \
             difference `(f(x + h) − f(x − h)) / 2h` of the plain function, `h = {:e}`: \
             independent evidence, since the check never looks at the graph.",
            check.input, check.step
        ))
        .row(["analytic (reverse pass)", &check.analytic.to_string()])
        .row([
            "numerical (central difference)",
            &check.numerical.to_string(),
        ])
        .row(["scaled error", &scientific(check.scaled_error)])
        .row(["tolerance", &scientific(check.tolerance)])
        .row([
            "verdict",
            match check.passed {
                true => "pass",
                false => "FAIL",
            },
        ]);

    let mut refused = Panel::new("Refused requests")
        .note(format!(
            "Each request is refused with a typed error before anything is stored: \
             every stored gradient keeps its bits (checked: {}).",
            match chapter.unchanged {
                true => "unchanged",
                false => "CHANGED",
            }
        ))
        .columns(["request", "why", "error", "message"])
        .wide();
    for refusal in &chapter.refusals {
        let (kind, message) = refusal.error.as_ref().map_or_else(
            || ("accepted".to_owned(), String::new()),
            |error| (format!("`{}`", error.kind()), error.to_string()),
        );
        refused = refused.row([
            format!("`{}`", refusal.request),
            refusal.why.to_owned(),
            kind,
            message,
        ]);
    }

    Ok(ledger
        .page()
        .title("The reused square")
        .intro(
            "`square = x * x` and `loss = square + square` at `x = 2`: the node `x` is used \
             twice by `square`, and `square` twice by `loss`, so each receives two \
             contributions, and its adjoint is their sum.",
        )
        .panel(stored)
        .panel(detached)
        .panel(gradcheck)
        .panel(refused)
        .to_html())
}

/// The XOR network's loss graph at its initial weights: `xor_mlp::loss_graph` on nine
/// parameter leaves and the four XOR points, one backward pass.
pub fn xor_page() -> Result<String, ScalarAutodiffError> {
    use xor_mlp::{initial, loss_grad, loss_graph, INPUTS, SEED, TARGETS};

    let weights = initial(SEED);
    let mut parameters = Vec::with_capacity(weights.len());
    for w in weights {
        parameters.push(Scalar::variable(w)?);
    }
    let p: [Scalar; 9] = std::array::from_fn(|i| parameters[i].clone());
    let loss = loss_graph(&p, &INPUTS, &TARGETS)?;
    let pass = loss.backward()?;
    let (_, by_loss_grad) = loss_grad(weights, &INPUTS, &TARGETS)?;

    // What each of the nine numbers is (see `xor_mlp::predict`).
    const ROLES: [&str; 9] = [
        "hidden w[0][0]",
        "hidden w[0][1]",
        "hidden w[1][0]",
        "hidden w[1][1]",
        "hidden b[0]",
        "hidden b[1]",
        "output w[0]",
        "output w[1]",
        "output b",
    ];
    let mut ledger = pass.ledger().name(&loss, "loss");
    let mut gradients = Panel::new("Parameters")
        .note(
            "The nine leaves on the left of the graph. Their stored gradients after this \
             one pass, and what `loss_grad` (compiled sweeps, no tape) returns for the same \
             weights.",
        )
        .columns(["parameter", "role", "value", "gradient", "`loss_grad`"]);
    for (index, ((leaf, role), expected)) in p.iter().zip(ROLES).zip(by_loss_grad).enumerate() {
        let name = format!("p[{index}]");
        ledger = ledger.name(leaf, &format!("{name} {role}"));
        gradients = gradients.row([
            format!("`{name}`"),
            role.to_owned(),
            leaf.value().to_string(),
            shown(leaf.gradient()),
            expected.to_string(),
        ]);
    }
    let count = |tracked: bool| ledger.nodes.iter().filter(|n| n.tracked == tracked).count();
    let page = ledger
        .page()
        .title("The XOR network's loss")
        .intro(format!(
            "`xor_mlp::loss_graph`: the mean squared error of a 2-2-1 tanh network over the \
             four XOR points, at the initial weights drawn from seed `{SEED:#x}`. {} nodes \
             depend on a parameter; {} are constants (the data, and numbers in the code), \
             drawn dashed. Scroll the graph; step through all {} edges with Next.",
            count(true),
            count(false),
            ledger.edges.len()
        ))
        .panel(gradients.wide())
        .to_html();
    Ok(page)
}
