// The generated code names the runtime by absolute paths, so an annotated function works in
// any module with no `use` and no other dependency; the three functions share the
// function's visibility, the generated ones are documented (so `missing_docs` stays quiet),
// and nothing generated trips a lint even under `deny(warnings)`.
#![deny(warnings, missing_docs)]
//! A crate with a differentiable function in a nested module.

/// Physics helpers.
pub mod physics {
    /// Kinetic energy `m v² / 2`.
    #[scalar_autodiff::differentiable]
    #[inline]
    pub fn kinetic(mass: f64, speed: f64) -> f64 {
        0.5 * mass * speed.powi(2)
    }

    pub(crate) mod inner {
        #[scalar_autodiff::differentiable]
        pub(crate) fn potential(mass: f64, height: f64) -> f64 {
            const G: f64 = 9.81;
            mass * G * height
        }
    }
}

/// Checks the gradients (`pub` so that `tests/sweeps/guard.rs` can run it too).
pub fn main() {
    let (energy, [d_mass, d_speed]) = physics::kinetic_grad(2.0, 3.0).unwrap();
    assert_eq!(energy, physics::kinetic(2.0, 3.0));
    assert_eq!((energy, d_mass, d_speed), (9.0, 4.5, 6.0));

    let (potential, [_, d_height]) = physics::inner::potential_grad(2.0, 10.0).unwrap();
    assert_eq!(potential, physics::inner::potential(2.0, 10.0));
    assert_eq!(d_height, 2.0 * 9.81);
}
