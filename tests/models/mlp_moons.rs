//! The two-moons example: the data set is deterministic and balanced, the network trains to
//! 100% training accuracy as the loss falls, and its loss gradient (the `Mlp` struct
//! `loss_grad` returns) matches central differences of the plain loss for every parameter
//! and, bit for bit, the graph form read back with `gradient_of`.

#[allow(dead_code)]
#[path = "../../examples/mlp_moons.rs"]
pub(crate) mod mlp_moons;

use mlp_moons::{
    accuracy, loss, loss_grad, loss_graph, make_moons, picture, score, train, Mlp, Moons, ALPHA,
    DATA_SEED, HIDDEN, INIT_SEED, NOISE, REPORT_EVERY, SAMPLES, STEPS,
};
use scalar_autodiff::{scalar_gradient_check, Parameters, ScalarAutodiffError};

type Result<T = ()> = std::result::Result<T, ScalarAutodiffError>;

fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

fn data() -> Moons {
    make_moons(SAMPLES, NOISE, DATA_SEED)
}

#[test]
fn the_moons_are_deterministic_and_balanced() {
    let moons = data();
    assert_eq!(moons.len(), SAMPLES);
    assert_eq!(moons.points.len(), SAMPLES);
    assert_eq!(moons, data());
    assert_ne!(moons, make_moons(SAMPLES, NOISE, DATA_SEED + 1));
    assert!(moons.labels.iter().all(|&y| y == -1.0 || y == 1.0));
    let upper = moons.labels.iter().filter(|&&y| y == -1.0).count();
    assert_eq!((upper, SAMPLES - upper), (50, 50));
    assert!(moons.points.iter().flatten().all(|v| v.is_finite()));
    // An odd count gives the extra point to the lower moon, as scikit-learn does.
    let odd = make_moons(7, NOISE, 1);
    assert_eq!(odd.labels, [-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 1.0]);

    // Without noise the points lie on the two half circles, evenly spaced end to end.
    let clean = make_moons(SAMPLES, 0.0, DATA_SEED);
    for (x, &y) in clean.points.iter().zip(&clean.labels) {
        let (cx, cy, side) = if y < 0.0 {
            (0.0, 0.0, 1.0)
        } else {
            (1.0, 0.5, -1.0)
        };
        let radius = ((x[0] - cx) * (x[0] - cx) + (x[1] - cy) * (x[1] - cy)).sqrt();
        assert!((radius - 1.0).abs() < 1e-12, "{x:?}");
        assert!((x[1] - cy) * side >= -1e-12, "{x:?} is on the wrong half");
    }
    assert_eq!(clean.points[0], [1.0, 0.0]);
    assert!((clean.points[49][0] + 1.0).abs() < 1e-12 && clean.points[49][1].abs() < 1e-12);
    assert_eq!(clean.points[50], [0.0, 0.5]);
    assert!((clean.points[99][0] - 2.0).abs() < 1e-12 && (clean.points[99][1] - 0.5).abs() < 1e-12);
    let spacing = std::f64::consts::PI / 49.0;
    for pair in clean.points[..50].windows(2) {
        let chord = ((pair[1][0] - pair[0][0]).powi(2) + (pair[1][1] - pair[0][1]).powi(2)).sqrt();
        assert!((chord - 2.0 * (spacing / 2.0).sin()).abs() < 1e-12);
    }

    // The noise is Gaussian-sized: its 200 draws have a standard deviation near 0.1.
    let moved: Vec<f64> = moons
        .points
        .iter()
        .flatten()
        .zip(clean.points.iter().flatten())
        .map(|(noisy, exact)| noisy - exact)
        .collect();
    let rms = (moved.iter().map(|d| d * d).sum::<f64>() / moved.len() as f64).sqrt();
    assert!((0.08..0.12).contains(&rms), "noise {rms}");
    assert!(moved.iter().all(|d| d.abs() < 5.0 * NOISE));
}

#[test]
fn the_network_separates_the_moons_as_the_loss_falls() -> Result {
    let moons = data();
    let training = train(&moons, INIT_SEED, ALPHA, STEPS, REPORT_EVERY)?;
    let history = &training.history;
    assert_eq!(history.len(), STEPS / REPORT_EVERY + 1);
    let (first, last) = (history[0], history[history.len() - 1]);
    assert_eq!(
        first.loss.to_bits(),
        loss(&Mlp::new(INIT_SEED), &moons.points, &moons.labels, ALPHA).to_bits()
    );
    assert!(
        first.accuracy < 1.0,
        "the initial network is already perfect"
    );
    // On this seed every report's loss is below the one before.
    for pair in history.windows(2) {
        assert!(pair[1].loss < pair[0].loss, "{pair:?}");
    }
    assert!(last.loss < first.loss / 20.0, "{first:?} -> {last:?}");
    assert_eq!(last.step, STEPS);
    assert_eq!(
        last.loss.to_bits(),
        loss(&training.model, &moons.points, &moons.labels, ALPHA).to_bits()
    );
    // Every training point is right at the end.
    assert_eq!(last.accuracy, 1.0);
    assert_eq!(accuracy(&training.model, &moons), 1.0);
    for (x, &y) in moons.points.iter().zip(&moons.labels) {
        assert!(score(&training.model, x) * y > 0.0, "{x:?} labelled {y}");
    }
    assert!(training.first_perfect.is_some_and(|step| step < STEPS));

    // The picture: 24 lines of 60 characters, every point drawn and none drawn wrong.
    let drawn = picture(&training.model, &moons, 60, 24);
    let lines: Vec<&str> = drawn.lines().collect();
    assert_eq!(lines.len(), 24);
    assert!(lines.iter().all(|line| line.chars().count() == 60));
    assert!(drawn.chars().all(|c| " .oxOX*\n".contains(c)));
    assert!(!drawn.contains(['O', 'X']));
    assert!(drawn.contains('o') && drawn.contains('x') && drawn.contains('.'));
    // The untrained network gets some points wrong, and the picture shows them.
    let untrained = picture(&Mlp::new(INIT_SEED), &moons, 60, 24);
    assert!(untrained.contains(['O', 'X']));
    Ok(())
}

/// The networks the gradient is checked at: the initial one, and one part-way trained.
fn networks(moons: &Moons) -> Result<Vec<Mlp>> {
    Ok(vec![
        Mlp::new(INIT_SEED),
        train(moons, INIT_SEED, ALPHA, 30, 0)?.model,
    ])
}

#[test]
fn the_struct_gradient_matches_central_differences() -> Result {
    let moons = data();
    let (xs, ys) = (&moons.points[..], &moons.labels[..]);
    for p in networks(&moons)? {
        let (value, gradient) = loss_grad(&p, xs, ys, ALPHA)?;
        assert_eq!(value.to_bits(), loss(&p, xs, ys, ALPHA).to_bits());
        let flat = p.to_flat();
        let analytic = gradient.to_flat();
        assert_eq!(
            flat.len(),
            2 * HIDDEN + HIDDEN + HIDDEN * HIDDEN + HIDDEN + HIDDEN + 1
        );
        assert_eq!(analytic.len(), flat.len());
        // Where each field's scalars sit in the flat order.
        let fields = [
            ("w1", p.w1.parameter_count()),
            ("b1", p.b1.parameter_count()),
            ("w2", p.w2.parameter_count()),
            ("b2", p.b2.parameter_count()),
            ("w3", p.w3.parameter_count()),
            ("b3", p.b3.parameter_count()),
        ];
        let mut checked_per_field = [0; 6];
        let mut nonzero_per_field = [0; 6];
        // Every parameter (337 of them: a sample would do, but all of them are cheap).
        for (index, (&at, &slope)) in flat.iter().zip(&analytic).enumerate() {
            let check = scalar_gradient_check(at, slope, 1e-6, 1e-8, |v| {
                let mut moved = flat.clone();
                moved[index] = v;
                let mut network = p.clone();
                // A failed read gives NaN, which the check reports as an error.
                match network.read_flat(&moved) {
                    Ok(()) => loss(&network, xs, ys, ALPHA),
                    Err(_) => f64::NAN,
                }
            })?;
            let mut start = 0;
            let field = fields
                .iter()
                .position(|(_, count)| {
                    start += count;
                    index < start
                })
                .unwrap_or(fields.len() - 1);
            assert!(
                check.passed,
                "{} (flat {index}): {check:?}",
                fields[field].0
            );
            checked_per_field[field] += 1;
            if slope != 0.0 {
                nonzero_per_field[field] += 1;
            }
        }
        assert_eq!(
            checked_per_field,
            fields.map(|(_, count)| count),
            "every field checked whole"
        );
        // No field's gradient is all zeros (the biases start at 0, so there only the data
        // can make it nonzero).
        assert!(
            nonzero_per_field.iter().all(|&n| n > 0),
            "{nonzero_per_field:?}"
        );
    }
    Ok(())
}

#[test]
fn the_graph_read_back_with_gradient_of_gives_the_same_bits() -> Result {
    let moons = data();
    let (xs, ys) = (&moons.points[..], &moons.labels[..]);
    for p in networks(&moons)? {
        let (value, gradient) = loss_grad(&p, xs, ys, ALPHA)?;
        let tracked = p.variables()?;
        let root = loss_graph(&tracked, xs, ys, ALPHA)?;
        assert_eq!(root.value().to_bits(), value.to_bits());
        root.backward()?;
        let stored: Mlp = p.gradient_of(&tracked);
        assert_eq!(bits(&stored.to_flat()), bits(&gradient.to_flat()));
        // One step along the gradient, as `train` takes it, lowers the loss.
        let mut stepped = p.clone();
        stepped.zip_mut(&gradient, |w, g| *w -= 0.1 * g)?;
        assert!(loss(&stepped, xs, ys, ALPHA) < value);
    }
    Ok(())
}
