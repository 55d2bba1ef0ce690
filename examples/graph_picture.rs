//! Draws the chapter's reused square, `loss = x² + x²` through one shared node, with its
//! reverse pass: one box per node (value and adjoint), one arrow per operand edge (so
//! `x * x` draws two). Writes Graphviz DOT, and an SVG beside it where the `dot` program is
//! installed.
//!
//! Run with `cargo run --example graph_picture [path.dot]` (default
//! `target/reused_square.dot`), then open the `.svg`, or paste the `.dot` file into any
//! Graphviz viewer.

use std::error::Error;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Command;

use scalar_autodiff::Scalar;

/// The reverse pass of the reused square at `x = 2`, as Graphviz DOT, with the nodes named
/// `x`, `square` and `loss`. (`#[differentiable] fn loss(x: f64) -> f64 { let s = x * x; s + s }`
/// records the same three nodes and four edges through `loss_graph`; it is written out here
/// so that the shared square can be named too.)
pub fn dot() -> Result<String, Box<dyn Error>> {
    let x = Scalar::variable(2.0)?;
    let square = x.mul(&x)?;
    let loss = square.add(&square)?;
    let pass = loss.backward()?;
    Ok(pass
        .ledger()
        .name(&x, "x")
        .name(&square, "square")
        .name(&loss, "loss")
        .to_dot())
}

/// What became of the drawing.
#[derive(Debug, PartialEq, Eq)]
pub enum Rendered {
    /// `dot` wrote this SVG file.
    Svg(PathBuf),
    /// `dot` is not installed; only the DOT file was written.
    NoGraphviz,
}

/// Writes the DOT file at `path` (creating its directory), then renders `path` with its
/// extension replaced by `.svg` if `dot` is installed.
pub fn write_picture(path: &Path) -> Result<Rendered, Box<dyn Error>> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    fs::write(path, dot()?)?;
    let svg = path.with_extension("svg");
    let status = Command::new("dot")
        .arg("-Tsvg")
        .arg(path)
        .arg("-o")
        .arg(&svg)
        .status();
    match status {
        Ok(status) if status.success() => Ok(Rendered::Svg(svg)),
        Ok(status) => Err(format!("dot failed on {}: {status}", path.display()).into()),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(Rendered::NoGraphviz),
        Err(error) => Err(error.into()),
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("target/reused_square.dot"), PathBuf::from);
    let rendered = write_picture(&path)?;
    println!("wrote {}", path.display());
    match rendered {
        Rendered::Svg(svg) => println!("rendered {} (open it in a browser)", svg.display()),
        Rendered::NoGraphviz => println!(
            "the `dot` program (Graphviz) is not installed, so no SVG was rendered; install \
             Graphviz and run `dot -Tsvg {} -o {}`, or paste the file into any Graphviz viewer",
            path.display(),
            path.with_extension("svg").display()
        ),
    }
    Ok(())
}
