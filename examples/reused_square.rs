//! The chapter's scalar graph, end to end: a shared square, repeated backward passes,
//! zero_grad, detach, exp(tanh(x)), a central-difference check and three refused requests.
//!
//! Run with `cargo run --release --example reused_square`.

use autodiff::{scalar_gradient_check, Scalar, ScalarAutodiffError};

/// Stored gradients of (x, square, loss), formatted as the chapter prints them.
fn gradients(x: &Scalar, square: &Scalar, loss: &Scalar) -> String {
    let show = |s: &Scalar| {
        s.gradient()
            .map_or("none".to_owned(), |g| format!("{g:.12}"))
    };
    format!(
        "x_grad={} square_grad={} loss_grad={}",
        show(x),
        show(square),
        show(loss)
    )
}

fn bits(scalars: &[&Scalar]) -> Vec<Option<u64>> {
    scalars
        .iter()
        .map(|s| s.gradient().map(f64::to_bits))
        .collect()
}

/// Every line of the demo, computed by real calls.
pub fn report() -> Result<Vec<String>, ScalarAutodiffError> {
    let mut lines = Vec::new();

    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    lines.push(format!(
        "reused square: x={:.12} square={:.12} loss={:.12}",
        x.value(),
        square.value(),
        loss.value()
    ));
    let first_pass = loss.backward()?;
    lines.push(format!("one backward: {}", gradients(&x, &square, &loss)));
    loss.backward()?;
    lines.push(format!(
        "repeated backward: {}",
        gradients(&x, &square, &loss)
    ));
    loss.zero_grad();
    lines.push(format!("zero_grad: {}", gradients(&x, &square, &loss)));
    loss.backward()?;
    lines.push(format!("after zero: {}", gradients(&x, &square, &loss)));

    let d = Scalar::variable(2.0)?;
    let detached = d.detach()?;
    let stopped = detached.mul(&Scalar::constant(3.0)?)?;
    let with_detach = d.mul(&d)?.add(&stopped)?;
    with_detach.backward()?;
    lines.push(format!(
        "detach: expression=x*x+detach(x)*3 value={:.12} x_grad={:.12} detached_grad={}",
        with_detach.value(),
        d.gradient().unwrap_or(f64::NAN),
        detached
            .gradient()
            .map_or("none".to_owned(), |g| format!("{g:.12}"))
    ));

    let t = Scalar::variable(0.5)?;
    let nonlinear = t.tanh()?.exp()?;
    nonlinear.backward()?;
    lines.push(format!(
        "nonlinear: expression=exp(tanh(x)) input={:.12} value={:.12} gradient={:.12}",
        t.value(),
        nonlinear.value(),
        t.gradient().unwrap_or(f64::NAN)
    ));

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
    lines.push(format!(
        "gradcheck: expression=2*x*x analytic={:.12} numerical={:.12} scaled_error={:.12e} pass={}",
        check.analytic, check.numerical, check.scaled_error, check.passed
    ));

    // Three refused requests; none may touch a stored gradient.
    let huge = Scalar::variable(1.0)?;
    huge.backward_with_seed(f64::MAX)?;
    let watched = [&x, &square, &loss, &huge];
    let before = bits(&watched);
    let refusals = [
        Scalar::constant(1.0)?.backward().err(),
        loss.backward_with_seed(f64::INFINITY).err(),
        huge.backward_with_seed(f64::MAX).err(),
    ];
    let kinds: Vec<&str> = refusals
        .iter()
        .map(|e| e.as_ref().map_or("accepted", ScalarAutodiffError::kind))
        .collect();
    lines.push(format!(
        "typed errors: {}; gradients unchanged={}",
        kinds.join(" | "),
        bits(&watched) == before
    ));

    lines.push(String::new());
    lines.push("ledger of the first pass:".to_owned());
    let ledger = first_pass
        .ledger()
        .name(&x, "x")
        .name(&square, "square")
        .name(&loss, "loss");
    lines.extend(ledger.to_string().lines().map(str::to_owned));
    Ok(lines)
}

fn main() -> Result<(), ScalarAutodiffError> {
    for line in report()? {
        println!("{line}");
    }
    Ok(())
}
