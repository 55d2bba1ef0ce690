//! The softmax-regression example: the iris table loads as the well-known 150 rows, the
//! loss falls as it trains, the trained model classifies the held-out rows, and its loss
//! gradient matches both central differences and the closed-form softmax cross-entropy
//! gradient written by hand.

#[allow(dead_code)]
#[path = "../../examples/softmax_regression.rs"]
pub(crate) mod softmax_regression;

use std::error::Error;

use crate::support::XorShift;
use scalar_autodiff::scalar_gradient_check;
use softmax_regression::{
    data_path, load, loss, loss_grad, read, split, train, DataError, Dataset, Model, Standardizer,
    CLASSES, EPOCHS, FEATURES, L2, RATE, REPORT_EVERY,
};

type Result<T = ()> = std::result::Result<T, Box<dyn Error>>;

/// The standardized training and test splits, as the example's `main` makes them.
fn splits() -> Result<(Dataset, Dataset)> {
    let (train_raw, test_raw) = split(&load(data_path())?)?;
    let scale = Standardizer::fit(&train_raw)?;
    Ok((scale.apply(&train_raw), scale.apply(&test_raw)))
}

fn class_counts(data: &Dataset) -> [usize; CLASSES] {
    let mut counts = [0; CLASSES];
    for &label in &data.labels {
        counts[label] += 1;
    }
    counts
}

#[test]
fn the_table_is_fishers_iris() -> Result {
    let data = load(data_path())?;
    assert_eq!(data.len(), 150);
    assert_eq!(class_counts(&data), [50, 50, 50]);
    assert_eq!(data.features[0], [5.1, 3.5, 1.4, 0.2]);
    assert_eq!(data.features[149], [5.9, 3.0, 5.1, 1.8]);
    // Rows 35 and 38 as in Fisher's paper (the UCI file has two known typos there).
    assert_eq!(data.features[34], [4.9, 3.1, 1.5, 0.2]);
    assert_eq!(data.features[37], [4.9, 3.6, 1.4, 0.1]);
    // The published means: 5.843, 3.057, 3.758, 1.199 cm.
    let n = data.len() as f64;
    let means: Vec<f64> = (0..FEATURES)
        .map(|j| data.features.iter().map(|x| x[j]).sum::<f64>() / n)
        .collect();
    for (mean, published) in means.iter().zip([5.843, 3.057, 3.758, 1.199]) {
        assert!((mean - published).abs() < 5e-4, "{means:?}");
    }
    Ok(())
}

#[test]
fn bad_tables_are_errors_not_panics() -> Result {
    let header = "sepal_length,sepal_width,petal_length,petal_width,species\n";
    let bad = |body: &str| read(format!("{header}{body}").as_bytes());
    assert!(matches!(
        bad("5.1,3.5,1.4,0.2,rose\n"),
        Err(DataError::Species { row: 1, .. })
    ));
    assert!(matches!(
        bad("5.1,3.5,1.4,0.2,setosa\n5.1,x,1.4,0.2,setosa\n"),
        Err(DataError::Csv(_))
    ));
    assert!(matches!(
        bad("5.1,3.5,1.4,setosa\n"),
        Err(DataError::Csv(_))
    ));
    assert!(matches!(
        bad("5.1,NaN,1.4,0.2,setosa\n"),
        Err(DataError::NotFinite { row: 1 })
    ));
    assert!(matches!(
        read("a,b,c,d,e\n1,2,3,4,setosa\n".as_bytes()),
        Err(DataError::Header(_))
    ));
    let one = bad("5.1,3.5,1.4,0.2,setosa\n")?;
    assert!(matches!(split(&one), Err(DataError::TooFewRows(1))));
    assert!(Standardizer::fit(&Dataset::default()).is_err());
    assert!(load(std::path::Path::new("/no/such/iris.csv")).is_err());
    Ok(())
}

#[test]
fn the_split_is_stratified_and_standardized_on_training_rows() -> Result {
    let (train_raw, test_raw) = split(&load(data_path())?)?;
    assert_eq!((train_raw.len(), test_raw.len()), (120, 30));
    assert_eq!(class_counts(&train_raw), [40, 40, 40]);
    assert_eq!(class_counts(&test_raw), [10, 10, 10]);
    let (train_set, _) = splits()?;
    let n = train_set.len() as f64;
    for j in 0..FEATURES {
        let mean = train_set.features.iter().map(|x| x[j]).sum::<f64>() / n;
        let var = train_set.features.iter().map(|x| x[j] * x[j]).sum::<f64>() / n;
        assert!(mean.abs() < 1e-12, "feature {j}: mean {mean}");
        assert!((var - 1.0).abs() < 1e-12, "feature {j}: variance {var}");
    }
    Ok(())
}

#[test]
fn training_lowers_the_loss_and_classifies_held_out_flowers() -> Result {
    let (train_set, test_set) = splits()?;
    let training = train(&train_set, L2, RATE, EPOCHS, REPORT_EVERY)?;
    let losses: Vec<f64> = training.history.iter().map(|(_, value)| *value).collect();
    assert_eq!(losses.len(), EPOCHS / REPORT_EVERY + 1);
    // From ln 3 at the all-zero start, falling at every report, to about 0.133.
    assert!((losses[0] - 3f64.ln()).abs() < 1e-14, "{losses:?}");
    assert!(
        losses.windows(2).all(|pair| pair[1] < pair[0]),
        "{losses:?}"
    );
    assert!(losses[losses.len() - 1] < 0.14, "{losses:?}");
    let model = training.model;
    assert_eq!(losses[losses.len() - 1], model.loss(&train_set, L2));
    // What it reaches: 117 of 120 training rows and 28 of 30 test rows.
    let (train_accuracy, test_accuracy) = (model.accuracy(&train_set), model.accuracy(&test_set));
    assert!(
        train_accuracy >= 117.0 / 120.0,
        "train accuracy {train_accuracy}"
    );
    assert!(
        test_accuracy >= 28.0 / 30.0,
        "test accuracy {test_accuracy}"
    );
    // The same data gives the same run.
    let again = train(&train_set, L2, RATE, EPOCHS, REPORT_EVERY)?;
    assert_eq!(again.model, model);
    Ok(())
}

/// A deterministic spread of parameters in `[-scale, scale)`.
fn spread(seed: u64, scale: f64) -> Model {
    let mut rng = XorShift::new(seed);
    let mut next = || (rng.unit() * 2.0 - 1.0) * scale;
    let w = std::array::from_fn(|_| std::array::from_fn(|_| next()));
    let b = std::array::from_fn(|_| next());
    Model { w, b }
}

/// The points the gradient is checked at: the start, two spreads and the trained model.
fn checkpoints(train_set: &Dataset) -> Result<Vec<Model>> {
    Ok(vec![
        Model::default(),
        spread(0x5eed_0001, 1.0),
        spread(0x5eed_0002, 3.0),
        train(train_set, L2, RATE, 200, 100)?.model,
    ])
}

/// `model` with its `index`-th parameter (in the gradient's order) set to `value`.
fn moved(model: Model, index: usize, value: f64) -> Model {
    let mut out = model;
    if index < CLASSES * FEATURES {
        out.w[index / FEATURES][index % FEATURES] = value;
    } else {
        out.b[index - CLASSES * FEATURES] = value;
    }
    out
}

/// The `index`-th parameter of `model`, in the gradient's order.
fn entry(model: &Model, index: usize) -> f64 {
    let flat: Vec<f64> = model.w.iter().flatten().chain(&model.b).copied().collect();
    flat[index]
}

#[test]
fn every_gradient_entry_matches_central_differences() -> Result {
    let (train_set, _) = splits()?;
    let (xs, labels) = (&train_set.features, &train_set.labels);
    for model in checkpoints(&train_set)? {
        let (value, gradient) = loss_grad(model.w, model.b, xs, labels, L2)?;
        assert_eq!(
            value.to_bits(),
            loss(model.w, model.b, xs, labels, L2).to_bits()
        );
        assert_eq!(gradient.len(), CLASSES * FEATURES + CLASSES);
        for (index, analytic) in gradient.into_iter().enumerate() {
            let check = scalar_gradient_check(entry(&model, index), analytic, 1e-6, 1e-8, |v| {
                let m = moved(model, index, v);
                loss(m.w, m.b, xs, labels, L2)
            })?;
            assert!(check.passed, "parameter {index} of {model:?}: {check:?}");
        }
    }
    Ok(())
}

/// The closed form, written independently of the macro: with `p = softmax(w x + b)` and
/// `y` the one-hot label, `dL/dw = (p - y) x^T / n + 2 l2 w` and `dL/db = (p - y) / n`,
/// flattened as `loss_grad` does (`w` row by row, then `b`).
///
/// Beside each entry, the same sum over absolute terms: the scale its rounding error is
/// relative to. (Where the terms cancel, as for the biases at the all-zero start on balanced
/// classes, the entry itself is rounding noise near 0 and no relative error of it means
/// anything.)
fn hand_gradient(model: &Model, data: &Dataset, l2: f64) -> Vec<(f64, f64)> {
    let n = data.len() as f64;
    let mut dw = [[(0.0, 0.0); FEATURES]; CLASSES];
    let mut db = [(0.0, 0.0); CLASSES];
    for (x, &label) in data.features.iter().zip(&data.labels) {
        let z: [f64; CLASSES] = std::array::from_fn(|k| {
            (0..FEATURES).map(|j| model.w[k][j] * x[j]).sum::<f64>() + model.b[k]
        });
        let top = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = z.map(|zk| (zk - top).exp());
        let total: f64 = e.iter().sum();
        for k in 0..CLASSES {
            let delta = e[k] / total - if k == label { 1.0 } else { 0.0 };
            for j in 0..FEATURES {
                dw[k][j].0 += delta * x[j];
                dw[k][j].1 += (delta * x[j]).abs();
            }
            db[k].0 += delta;
            db[k].1 += delta.abs();
        }
    }
    let mut out = Vec::new();
    for (dw_row, w_row) in dw.iter().zip(&model.w) {
        for (&(sum, scale), w) in dw_row.iter().zip(w_row) {
            let penalty = 2.0 * l2 * w;
            out.push((sum / n + penalty, scale / n + penalty.abs()));
        }
    }
    out.extend(db.map(|(sum, scale)| (sum / n, scale / n)));
    out
}

#[test]
fn the_gradient_is_the_closed_form_softmax_cross_entropy_gradient() -> Result {
    let (train_set, _) = splits()?;
    for model in checkpoints(&train_set)? {
        let (_, gradient) =
            loss_grad(model.w, model.b, &train_set.features, &train_set.labels, L2)?;
        let hand = hand_gradient(&model, &train_set, L2);
        for (index, (auto, (by_hand, scale))) in gradient.iter().zip(&hand).enumerate() {
            let error = (auto - by_hand).abs();
            // 1e-12 relative to the entry, or, for an entry whose terms cancel to rounding
            // noise (|entry| below 1e-12 of its scale), 1e-12 relative to that scale.
            let agrees = if by_hand.abs() > 1e-12 * scale {
                error <= 1e-12 * auto.abs().max(by_hand.abs())
            } else {
                error <= 1e-12 * scale
            };
            assert!(
                agrees,
                "parameter {index} of {model:?}: {auto} vs {by_hand} (scale {scale})"
            );
        }
    }
    Ok(())
}

#[test]
fn the_log_sum_exp_is_stable_where_plain_exp_overflows() -> Result {
    let (train_set, _) = splits()?;
    let trained = train(&train_set, L2, RATE, 200, 100)?.model;
    // Scores of several thousand: `exp` of them is infinite, the shifted sum is not.
    let mut big = trained;
    big.w.iter_mut().flatten().for_each(|w| *w *= 1000.0);
    big.b.iter_mut().for_each(|b| *b *= 1000.0);
    let x = &train_set.features[0];
    let top = (0..CLASSES)
        .map(|k| (0..FEATURES).map(|j| big.w[k][j] * x[j]).sum::<f64>() + big.b[k])
        .fold(f64::NEG_INFINITY, f64::max);
    assert!(top.exp().is_infinite(), "largest score {top}");
    let (value, gradient) = loss_grad(big.w, big.b, &train_set.features, &train_set.labels, 0.0)?;
    assert!(value.is_finite(), "{value}");
    assert!(gradient.iter().all(|g| g.is_finite()), "{gradient:?}");
    let hand = hand_gradient(&big, &train_set, 0.0);
    for (auto, (by_hand, scale)) in gradient.iter().zip(&hand) {
        assert!(
            (auto - by_hand).abs() <= 1e-12 * scale,
            "{auto} vs {by_hand}"
        );
    }
    Ok(())
}
