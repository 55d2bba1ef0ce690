//! The chapter's scalar graph, end to end: a shared square, repeated backward passes,
//! zero_grad, detach, exp(tanh(x)), a central-difference check and three refused requests.
//!
//! Run with `cargo run --release --example reused_square`.

use scalar_autodiff::{
    scalar_gradient_check, BackwardPass, Scalar, ScalarAutodiffError, ScalarGradientCheck,
};

/// Stored gradients of (x, square, loss): `None` for a node with no stored gradient.
pub type Stored = [Option<f64>; 3];

fn stored(x: &Scalar, square: &Scalar, loss: &Scalar) -> Stored {
    [x.gradient(), square.gradient(), loss.gradient()]
}

/// Stored gradients of (x, square, loss), formatted as the chapter prints them.
fn gradients(stored: Stored) -> String {
    let [x, square, loss] = stored.map(|g| g.map_or("none".to_owned(), |g| format!("{g:.12}")));
    format!("x_grad={x} square_grad={square} loss_grad={loss}")
}

fn bits(scalars: &[&Scalar]) -> Vec<Option<u64>> {
    scalars
        .iter()
        .map(|s| s.gradient().map(f64::to_bits))
        .collect()
}

/// `y = x*x + detach(x)*3` at `x = 2`, after one backward pass.
pub struct Detached {
    /// `y`.
    pub value: f64,
    /// `x`'s stored gradient (through `x*x` only).
    pub x_grad: f64,
    /// The detached copy's stored gradient: `None`, it is not tracked.
    pub detached_grad: Option<f64>,
}

/// `exp(tanh(x))` at `x = 0.5`.
pub struct Nonlinear {
    /// The input.
    pub input: f64,
    /// `exp(tanh(input))`.
    pub value: f64,
    /// Its derivative, from a backward pass.
    pub gradient: f64,
}

/// One request the runtime refuses, and what it answered.
pub struct Refusal {
    /// The call, as code.
    pub request: &'static str,
    /// Why it must be refused.
    pub why: &'static str,
    /// The typed error (`None` if the call was accepted after all).
    pub error: Option<ScalarAutodiffError>,
}

/// Everything the chapter shows, each number from a real call. Keeps the first pass (and
/// with it the graph) alive for its ledger.
pub struct Chapter {
    /// The leaf `x = 2`.
    pub x: Scalar,
    /// `x * x`.
    pub square: Scalar,
    /// `square + square`.
    pub loss: Scalar,
    /// The first backward pass, for its ledger.
    pub first_pass: BackwardPass,
    /// Stored gradients after one backward pass.
    pub first: Stored,
    /// ... after a second one (they accumulate).
    pub repeated: Stored,
    /// ... after `zero_grad`.
    pub zeroed: Stored,
    /// ... after one more backward pass.
    pub restored: Stored,
    /// The detached branch.
    pub detach: Detached,
    /// `exp(tanh(x))`.
    pub nonlinear: Nonlinear,
    /// `2*x*x`'s reverse-pass slope against central differences.
    pub check: ScalarGradientCheck,
    /// Three refused requests.
    pub refusals: [Refusal; 3],
    /// Whether the refusals left every stored gradient's bits as they were.
    pub unchanged: bool,
}

/// Runs the chapter's calls.
pub fn chapter() -> Result<Chapter, ScalarAutodiffError> {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    let first_pass = loss.backward()?;
    let first = stored(&x, &square, &loss);
    loss.backward()?;
    let repeated = stored(&x, &square, &loss);
    loss.zero_grad();
    let zeroed = stored(&x, &square, &loss);
    loss.backward()?;
    let restored = stored(&x, &square, &loss);

    let d = Scalar::variable(2.0)?;
    let detached = d.detach()?;
    let stopped = detached.mul(&Scalar::constant(3.0)?)?;
    let with_detach = d.mul(&d)?.add(&stopped)?;
    with_detach.backward()?;
    let detach = Detached {
        value: with_detach.value(),
        x_grad: d.gradient().unwrap_or(f64::NAN),
        detached_grad: detached.gradient(),
    };

    let t = Scalar::variable(0.5)?;
    let exp_tanh = t.tanh()?.exp()?;
    exp_tanh.backward()?;
    let nonlinear = Nonlinear {
        input: t.value(),
        value: exp_tanh.value(),
        gradient: t.gradient().unwrap_or(f64::NAN),
    };

    let g = Scalar::variable(2.0)?;
    let g_square = g.mul(&g)?;
    g_square.add(&g_square)?.backward()?;
    let check = scalar_gradient_check(
        g.value(),
        g.gradient().unwrap_or(f64::NAN),
        1e-6,
        1e-9,
        |v| 2.0 * v * v,
    )?;

    // Three refused requests; none may touch a stored gradient.
    let huge = Scalar::variable(1.0)?;
    huge.backward_with_seed(f64::MAX)?;
    let watched = [&x, &square, &loss, &huge];
    let before = bits(&watched);
    let refusals = [
        Refusal {
            request: "Scalar::constant(1.0)?.backward()",
            why: "a constant depends on no variable",
            error: Scalar::constant(1.0)?.backward().err(),
        },
        Refusal {
            request: "loss.backward_with_seed(f64::INFINITY)",
            why: "the seed is not finite",
            error: loss.backward_with_seed(f64::INFINITY).err(),
        },
        Refusal {
            request: "huge.backward_with_seed(f64::MAX)",
            why: "`huge` already stores `f64::MAX`: the sum would overflow",
            error: huge.backward_with_seed(f64::MAX).err(),
        },
    ];
    let unchanged = bits(&watched) == before;
    Ok(Chapter {
        x,
        square,
        loss,
        first_pass,
        first,
        repeated,
        zeroed,
        restored,
        detach,
        nonlinear,
        check,
        refusals,
        unchanged,
    })
}

/// Every line of the demo, computed by real calls.
pub fn report() -> Result<Vec<String>, ScalarAutodiffError> {
    let chapter = chapter()?;
    let (x, square, loss) = (&chapter.x, &chapter.square, &chapter.loss);
    let mut lines = vec![
        format!(
            "reused square: x={:.12} square={:.12} loss={:.12}",
            x.value(),
            square.value(),
            loss.value()
        ),
        format!("one backward: {}", gradients(chapter.first)),
        format!("repeated backward: {}", gradients(chapter.repeated)),
        format!("zero_grad: {}", gradients(chapter.zeroed)),
        format!("after zero: {}", gradients(chapter.restored)),
    ];
    let detach = &chapter.detach;
    lines.push(format!(
        "detach: expression=x*x+detach(x)*3 value={:.12} x_grad={:.12} detached_grad={}",
        detach.value,
        detach.x_grad,
        detach
            .detached_grad
            .map_or("none".to_owned(), |g| format!("{g:.12}"))
    ));
    let nonlinear = &chapter.nonlinear;
    lines.push(format!(
        "nonlinear: expression=exp(tanh(x)) input={:.12} value={:.12} gradient={:.12}",
        nonlinear.input, nonlinear.value, nonlinear.gradient
    ));
    let check = &chapter.check;
    lines.push(format!(
        "gradcheck: expression=2*x*x analytic={:.12} numerical={:.12} scaled_error={:.12e} pass={}",
        check.analytic, check.numerical, check.scaled_error, check.passed
    ));
    let kinds: Vec<&str> = chapter
        .refusals
        .iter()
        .map(|r| {
            r.error
                .as_ref()
                .map_or("accepted", ScalarAutodiffError::kind)
        })
        .collect();
    lines.push(format!(
        "typed errors: {}; gradients unchanged={}",
        kinds.join(" | "),
        chapter.unchanged
    ));

    lines.push(String::new());
    lines.push("ledger of the first pass:".to_owned());
    let ledger = chapter
        .first_pass
        .ledger()
        .name(x, "x")
        .name(square, "square")
        .name(loss, "loss");
    lines.extend(ledger.to_string().lines().map(str::to_owned));
    Ok(lines)
}

fn main() -> Result<(), ScalarAutodiffError> {
    for line in report()? {
        println!("{line}");
    }
    Ok(())
}
