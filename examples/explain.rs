//! Writes the chapter's backward pass as an interactive page:
//! `target/explain/reused_square.html` (open it in a browser; Next / Previous or the arrow
//! keys step through the pass one edge at a time).
//!
//! Run with `cargo run --example explain`.

use std::path::PathBuf;

use autodiff::{Scalar, ScalarAutodiffError};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let page = reused_square()?;
    let folder = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/explain");
    std::fs::create_dir_all(&folder)?;
    let path = folder.join("reused_square.html");
    std::fs::write(&path, page)?;
    println!("{}", path.display());
    Ok(())
}

/// The chapter's graph: `square = x * x`, `loss = square + square`, at `x = 2`.
fn reused_square() -> Result<String, ScalarAutodiffError> {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    let pass = loss.backward()?;
    Ok(pass
        .ledger()
        .name(&x, "x")
        .name(&square, "square")
        .name(&loss, "loss")
        .to_html())
}
