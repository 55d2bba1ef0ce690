//! The XOR network trains below a loss of 1e-3 from its fixed seed, classifies all four
//! inputs, and its loss gradient matches central differences for every parameter.

#[allow(dead_code)]
#[path = "../../examples/xor_mlp.rs"]
pub(crate) mod xor_mlp;

use scalar_autodiff::{scalar_gradient_check, ScalarAutodiffError};
use xor_mlp::{initial, loss, loss_grad, predict, train, INPUTS, SEED, TARGETS};

#[test]
fn the_network_learns_xor_from_its_seed() -> Result<(), ScalarAutodiffError> {
    let training = train(SEED, 0.2, 1e-3, 20_000, 250)?;
    let (_, last) = training.history[training.history.len() - 1];
    assert!(last < 1e-3, "loss {last} after {} steps", training.steps);
    assert_eq!(last, loss(training.params, &INPUTS, &TARGETS));
    for (x, target) in INPUTS.iter().zip(TARGETS) {
        let output = predict(training.params, x);
        assert!(output * target > 0.9, "{x:?}: {output} vs {target}");
    }
    // The same seed gives the same run.
    assert_eq!(train(SEED, 0.2, 1e-3, 20_000, 250)?.params, training.params);
    Ok(())
}

#[test]
fn every_parameter_gradient_matches_central_differences() -> Result<(), ScalarAutodiffError> {
    for params in [
        initial(SEED),
        initial(7),
        train(SEED, 0.2, 1e-2, 20_000, 1000)?.params,
    ] {
        let (value, gradient) = loss_grad(params, &INPUTS, &TARGETS)?;
        assert_eq!(value.to_bits(), loss(params, &INPUTS, &TARGETS).to_bits());
        for (index, analytic) in gradient.into_iter().enumerate() {
            let check = scalar_gradient_check(params[index], analytic, 1e-6, 1e-7, |v| {
                let mut moved = params;
                moved[index] = v;
                loss(moved, &INPUTS, &TARGETS)
            })?;
            assert!(check.passed, "parameter {index}: {check:?}");
        }
    }
    Ok(())
}
