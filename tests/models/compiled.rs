//! The examples' losses run on `name_grad`'s compiled sweeps: a warm call starts no trace
//! (`scalar_autodiff::__private::traces` counts the checked path's runs), so what a user copies
//! from an example gets the compiled speed, not the tape's.

use super::linear_regression::linear_regression;
use super::mlp_moons::mlp_moons;
use super::softmax_regression::softmax_regression;
use super::xor_mlp::xor_mlp;

/// How many traces `run` starts on this thread, after a first call (which may grow the
/// value stack, never a trace).
fn warm_traces(run: impl Fn() -> bool) -> u64 {
    assert!(run(), "the first call finishes");
    let before = scalar_autodiff::__private::traces();
    assert!(run(), "the warm call finishes");
    scalar_autodiff::__private::traces() - before
}

#[test]
fn the_examples_losses_run_compiled() {
    let (xs, ys) = linear_regression::points();
    assert_eq!(
        warm_traces(|| linear_regression::loss_grad(0.5, -0.25, &xs, &ys).is_ok()),
        0,
        "linear_regression"
    );

    let moons = mlp_moons::make_moons(mlp_moons::SAMPLES, mlp_moons::NOISE, 7);
    let net = mlp_moons::Mlp::new(mlp_moons::INIT_SEED);
    assert_eq!(
        warm_traces(|| {
            mlp_moons::loss_grad(&net, &moons.points, &moons.labels, mlp_moons::ALPHA).is_ok()
        }),
        0,
        "mlp_moons"
    );

    let features: Vec<[f64; softmax_regression::FEATURES]> = (0..12)
        .map(|i| [0.1 * i as f64, -0.2, 0.3 * (i % 3) as f64, 1.0])
        .collect();
    let labels: Vec<usize> = (0..12).map(|i| i % softmax_regression::CLASSES).collect();
    let w = [[0.1; softmax_regression::FEATURES]; softmax_regression::CLASSES];
    let b = [0.0; softmax_regression::CLASSES];
    assert_eq!(
        warm_traces(|| softmax_regression::loss_grad(w, b, &features, &labels, 1e-3).is_ok()),
        0,
        "softmax_regression"
    );

    let p = xor_mlp::initial(xor_mlp::SEED);
    assert_eq!(
        warm_traces(|| xor_mlp::loss_grad(p, &xor_mlp::INPUTS, &xor_mlp::TARGETS).is_ok()),
        0,
        "xor_mlp"
    );
}

#[test]
fn the_other_examples_run_compiled() {
    use super::curve_fit::curve_fit;
    use super::newton::newton;
    use super::shared_trunk::shared_trunk::{self as trunk, X, Y};

    let checks: [(&str, &dyn Fn() -> bool); 6] = [
        ("shared_trunk::both_heads", &|| {
            trunk::both_heads_grad(0.7, 1.2, -0.4, X, Y).is_ok()
        }),
        ("shared_trunk::head_a_only", &|| {
            trunk::head_a_only_grad(0.7, 1.2, X, Y[0]).is_ok()
        }),
        ("shared_trunk::tied", &|| {
            trunk::tied_grad(0.9, X, Y[0]).is_ok()
        }),
        ("shared_trunk::severed", &|| {
            trunk::severed_grad(0.9, X, Y[0]).is_ok()
        }),
        ("newton::rosenbrock", &|| {
            newton::rosenbrock_grad(-1.2, 1.0).is_ok()
        }),
        ("curve_fit::residuals (its Jacobian)", &|| {
            let (xs, ys) = curve_fit::points(0.05);
            curve_fit::residuals_jacobian([2.0, 1.0, 0.4], &xs, &ys).is_ok()
        }),
    ];
    for (name, run) in checks {
        assert_eq!(warm_traces(run), 0, "{name}");
    }
}
