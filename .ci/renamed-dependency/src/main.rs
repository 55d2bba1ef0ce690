//! The dependency is called `ad` here; generated code names `::scalar_autodiff`, so the
//! crate root gives it that name too, once.
extern crate ad as scalar_autodiff;

use ad::{differentiable, Parameters, Sgd};

#[derive(Parameters, Clone, Debug)]
struct Line {
    w: f64,
    b: f64,
}

#[differentiable]
fn loss(#[param] p: &Line, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        total += (p.w * x + p.b - y) * (p.w * x + p.b - y);
    }
    total / xs.len() as f64
}

fn main() -> Result<(), ad::ScalarAutodiffError> {
    let xs = [0.0, 1.0, 2.0, 3.0];
    let ys = [1.0, 3.0, 5.0, 7.0];
    let mut line = Line { w: 0.0, b: 0.0 };
    let mut sgd = Sgd::new(0.05).momentum(0.9);
    for _ in 0..500 {
        let (_, gradient) = loss_grad(&line, &xs, &ys)?;
        sgd.step(&mut line, &gradient)?;
    }
    assert!(
        (line.w - 2.0).abs() < 1e-6 && (line.b - 1.0).abs() < 1e-6,
        "{line:?}"
    );
    println!("renamed dependency: fitted {line:?}");
    Ok(())
}
