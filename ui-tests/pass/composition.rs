// Composition compiles: a #[differentiable] function calls others (also through a module
// path and recursively), passing tracked values, literals, data and parameter arrays; the
// calls record into the caller's graph.
#![deny(warnings)]

use scalar_autodiff::differentiable;

mod activations {
    use scalar_autodiff::differentiable;

    /// The logistic function.
    #[differentiable]
    pub fn sigmoid(z: f64) -> f64 {
        1.0 / (1.0 + (-z).exp())
    }
}

/// `v²`.
#[differentiable]
fn square(v: f64) -> f64 {
    v * v
}

/// A neuron: `sigmoid(w · x + b)`.
#[differentiable]
fn neuron(w: [f64; 2], b: f64, x: &[f64; 2]) -> f64 {
    activations::sigmoid(w[0] * x[0] + w[1] * x[1] + b)
}

/// A squared error through two calls, one with a literal argument.
#[differentiable]
fn error(w: [f64; 2], b: f64, x: &[f64; 2], target: f64) -> f64 {
    square(neuron(w, b, x) - target) + square(0.5) * b
}

/// `x^n`, recursively.
#[differentiable]
fn power(x: f64, n: u32) -> f64 {
    if n == 0 {
        1.0
    } else {
        x * power(x, n - 1)
    }
}

pub fn main() {
    let (value, gradient) = error_grad([0.5, -0.5], 0.1, &[1.0, 2.0], 1.0).unwrap();
    assert_eq!(value, error([0.5, -0.5], 0.1, &[1.0, 2.0], 1.0));
    assert_eq!(gradient.len(), 4); // w[0], w[1], b, target
    assert_eq!(power_grad(2.0, 3).unwrap(), (8.0, [12.0]));
}
