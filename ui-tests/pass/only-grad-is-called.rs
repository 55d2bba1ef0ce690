// A program that calls only `name_grad` (or only `name_graph`) uses the function: no
// "function is never used" warning for the plain one, with warnings denied. Methods and
// associated functions too.
#![deny(warnings)]

use scalar_autodiff::differentiable;

#[differentiable]
fn loss(w: [f64; 2], x: f64) -> f64 {
    (w[0] * x + w[1]).powi(2)
}

struct Model {
    scale: f64,
}

impl Model {
    #[differentiable]
    fn energy(&self, x: f64) -> f64 {
        self.scale * x * x
    }

    #[differentiable]
    fn penalty(w: [f64; 2]) -> f64 {
        w[0] * w[0] + w[1] * w[1]
    }
}

pub fn main() {
    let (value, gradient) = loss_grad([1.0, 2.0], 3.0).unwrap_or_default();
    assert_eq!((value, gradient), (25.0, [30.0, 10.0, 10.0]));
    let model = Model { scale: 2.0 };
    assert_eq!(model.energy_grad(3.0).map(|(_, [g])| g), Ok(12.0));
    assert_eq!(Model::penalty_grad([3.0, 4.0]).map(|(v, _)| v), Ok(25.0));
}
