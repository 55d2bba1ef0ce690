// `#[derive(Parameters)]` compiles without warnings on named, tuple and const-generic
// structs in any module, and the tracked copy's fields are read like the struct's.
#![deny(warnings)]

mod layers {
    use scalar_autodiff::Parameters;

    /// A dense layer with a const-generic width.
    #[derive(Parameters)]
    pub struct Dense<const N: usize> {
        pub w: [[f64; N]; 2],
        pub b: [f64; 2],
    }

    /// A model of two parts, one of them private to the crate.
    #[derive(Parameters)]
    pub struct Model {
        pub first: Dense<3>,
        pub(crate) scales: Vec<f64>,
    }

    /// A tuple struct.
    #[derive(Parameters)]
    pub(crate) struct Bias(pub f64, pub [f64; 2]);
}

use scalar_autodiff::{Parameters, Scalar};
use layers::{Bias, Dense, Model};

pub fn main() {
    let model = Model {
        first: Dense {
            w: [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
            b: [7.0, 8.0],
        },
        scales: vec![9.0],
    };
    assert_eq!(model.parameter_count(), 9);
    let tracked: <Model as Parameters>::Tracked<Scalar> = model.variables().unwrap();
    assert_eq!(tracked.first.w[1][2].value(), 6.0);
    assert_eq!(tracked.scales[0].value(), 9.0);
    let bias = Bias(1.0, [2.0, 3.0]);
    assert_eq!(bias.try_track(&mut |v| Ok(v)).unwrap().1, [2.0, 3.0]);
}
