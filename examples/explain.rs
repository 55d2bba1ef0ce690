//! Writes two backward passes as interactive pages (open them in a browser; Next /
//! Previous or the arrow keys step through a pass one edge at a time):
//!
//! - `target/explain/reused_square.html`: the chapter's graph, and below its ledger the
//!   chapter's second panel, every number from a real call (`reused_square::chapter`):
//!   the stored gradients over repeated passes, `zero_grad` and a fresh pass, a detached
//!   branch, the central-difference check and three refused requests with their typed
//!   errors;
//! - `target/explain/xor_mlp.html`: the loss graph of `examples/xor_mlp.rs`'s network at
//!   its initial weights, a few hundred nodes, with each parameter's gradient;
//! - `target/explain/microgpt_attention.html`: a slice of microgpt's graph
//!   (`examples/microgpt/`), whose whole loss over a name is tens of thousands of nodes:
//!   the attention of one position (the third of "emma") over its three cached keys and
//!   values, with the backward pass of one head's output, every leaf named.
//!
//! Run with `cargo run --example explain`; it prints the three paths.

use std::path::PathBuf;

use scalar_autodiff::{Panel, Scalar, ScalarAutodiffError};

#[allow(dead_code)]
#[path = "reused_square.rs"]
mod reused_square;

#[allow(dead_code)]
#[path = "xor_mlp.rs"]
mod xor_mlp;

#[allow(dead_code)]
#[path = "microgpt/main.rs"]
mod microgpt;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/explain");
    std::fs::create_dir_all(&folder)?;
    for (name, page) in [
        ("reused_square.html", chapter_page()?),
        ("xor_mlp.html", xor_page()?),
        ("microgpt_attention.html", attention_page()?),
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

/// One head's attention at one position of microgpt, as a graph small enough to read: the
/// query of the third position of "emma" (after BOS and `e`) and the three keys and values
/// cached so far, at the reference's initial weights, as leaves; `attend_graph` records
/// all four heads; the backward pass starts from the sum of head 0's four outputs, so
/// only head 0's nodes and leaves receive adjoints.
pub fn attention_page() -> Result<String, ScalarAutodiffError> {
    use microgpt::model::{add, attend, attend_graph, linear, rmsnorm, tokens, EMBED, HEAD};

    let (_, _, p) = microgpt::start(microgpt::NAMES);
    let name = tokens("emma").unwrap_or_default();
    let pos = 2;
    // The cache as the model builds it, positions 0..=pos, on plain numbers.
    let (mut keys, mut values, mut query) = (Vec::new(), Vec::new(), [0.0; EMBED]);
    for (at, &token) in name.iter().enumerate().take(pos + 1) {
        let xn = rmsnorm(rmsnorm(add(p.wte[token], p.wpe[at])));
        keys.push(linear(p.wk, xn));
        values.push(linear(p.wv, xn));
        query = linear(p.wq, xn);
    }
    let leaf = |v: f64| Scalar::variable(v);
    let mut q = Vec::with_capacity(EMBED);
    for &v in &query {
        q.push(leaf(v)?);
    }
    let q: [Scalar; EMBED] = std::array::from_fn(|j| q[j].clone());
    let mut tracked_keys = Vec::new();
    let mut tracked_values = Vec::new();
    for t in 0..=pos {
        let (mut k, mut v) = (Vec::new(), Vec::new());
        for j in 0..EMBED {
            k.push(leaf(keys[t][j])?);
            v.push(leaf(values[t][j])?);
        }
        tracked_keys.push(std::array::from_fn::<Scalar, EMBED, _>(|j| k[j].clone()));
        tracked_values.push(std::array::from_fn::<Scalar, EMBED, _>(|j| v[j].clone()));
    }
    let out = attend_graph(&q, &tracked_keys, &tracked_values)?;
    let mut head = out[0].clone();
    for output in &out[1..HEAD] {
        head = head.add(output)?;
    }
    let pass = head.backward()?;
    let plain = attend(query, &keys, &values);

    let mut ledger = pass.ledger().name(&head, "head 0's outputs, summed");
    for j in 0..EMBED {
        ledger = ledger.name(&q[j], &format!("q[{j}]"));
        for t in 0..=pos {
            ledger = ledger.name(&tracked_keys[t][j], &format!("k{t}[{j}]"));
            ledger = ledger.name(&tracked_values[t][j], &format!("v{t}[{j}]"));
        }
    }
    for (j, out) in out.iter().enumerate() {
        ledger = ledger.name(out, &format!("out[{j}]"));
    }
    let mut leaves = Panel::new("Head 0's leaves")
        .note(
            "The query's first four numbers and the first four of each cached key and value \
             (head 0's slice of them). Their gradients are those of head 0's outputs summed; \
             every other leaf's is 0: the other heads never meet head 0's output.",
        )
        .columns(["leaf", "value", "gradient"]);
    for (j, leaf) in q.iter().enumerate().take(HEAD) {
        leaves = leaves.row([
            format!("`q[{j}]`"),
            leaf.value().to_string(),
            shown(leaf.gradient()),
        ]);
    }
    for t in 0..=pos {
        for j in 0..HEAD {
            let (k, v) = (&tracked_keys[t][j], &tracked_values[t][j]);
            leaves = leaves.row([
                format!("`k{t}[{j}]`"),
                k.value().to_string(),
                shown(k.gradient()),
            ]);
            leaves = leaves.row([
                format!("`v{t}[{j}]`"),
                v.value().to_string(),
                shown(v.gradient()),
            ]);
        }
    }
    let mut outputs = Panel::new("The position's output")
        .note("`attend`'s sixteen outputs on the graph and as the plain function computes them.")
        .columns(["output", "graph", "plain"]);
    for j in 0..EMBED {
        outputs = outputs.row([
            format!("`out[{j}]`"),
            out[j].value().to_string(),
            plain[j].to_string(),
        ]);
    }
    let count = |tracked: bool| ledger.nodes.iter().filter(|n| n.tracked == tracked).count();
    Ok(ledger
        .page()
        .title("microgpt: one head's attention at one position")
        .intro(format!(
            "`attend_graph` of `examples/microgpt/` for the third position of \"emma\" at the \
             reference's initial weights: its query and the keys and values of positions 0 to \
             2 as leaves. All four heads are recorded; the backward pass starts from head \
             0's four outputs summed, and the ledger holds what it reaches ({} nodes that \
             depend on a leaf, {} constants): each score `q · k / 2`, the softmax (the \
             largest score subtracted as a constant), each output a weighted sum of the \
             values. The whole loss over the name records tens of thousands of nodes; this \
             is one head of one position.",
            count(true),
            count(false),
        ))
        .panel(leaves)
        .panel(outputs)
        .to_html())
}
