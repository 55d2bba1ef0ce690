//! Multinomial logistic (softmax) regression on Fisher's iris data: three classes, four
//! standardized features, a mean cross-entropy through a stable log-sum-exp, trained by
//! full-batch gradient descent on the gradient `#[differentiable]` writes.
//!
//! The 150-row table is `examples/data/iris.csv` (see `examples/data/README.md` for its
//! source and licence), read with the `csv` crate. Every fifth row is held out for testing.
//!
//! Run with `cargo run --release --example softmax_regression`.

use std::error::Error;
use std::fmt;
use std::path::Path;

use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError, Sgd};

/// The number of features per flower.
pub const FEATURES: usize = 4;
/// The number of species.
pub const CLASSES: usize = 3;
/// The species, in label order.
pub const SPECIES: [&str; CLASSES] = ["setosa", "versicolor", "virginica"];
/// The CSV header the loader expects.
pub const HEADER: [&str; FEATURES + 1] = [
    "sepal_length",
    "sepal_width",
    "petal_length",
    "petal_width",
    "species",
];

/// The strength of the L2 penalty on the weights (not on the biases).
pub const L2: f64 = 1e-3;
/// The gradient-descent step size.
pub const RATE: f64 = 0.5;
/// The number of full-batch updates.
pub const EPOCHS: usize = 1000;
/// Report the loss every this many epochs.
pub const REPORT_EVERY: usize = 100;

/// The iris table's path in this repository.
pub fn data_path() -> &'static Path {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/data/iris.csv"
    ))
}

/// Feature rows and their species labels (`0..CLASSES`, indices into [`SPECIES`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    /// One row of features per flower.
    pub features: Vec<[f64; FEATURES]>,
    /// The species of each row.
    pub labels: Vec<usize>,
}

impl Dataset {
    /// The number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// What can go wrong reading the table, beyond the CSV reader's own errors.
#[derive(Debug)]
pub enum DataError {
    /// The CSV reader failed (I/O, a malformed record, a field that is not a number).
    Csv(csv::Error),
    /// The header is not [`HEADER`].
    Header(Vec<String>),
    /// A species name that is not one of [`SPECIES`], on a 1-based data row.
    Species { row: usize, name: String },
    /// A feature that is NaN or infinite, on a 1-based data row.
    NotFinite { row: usize },
    /// Too few rows to split, or a split with an empty side.
    TooFewRows(usize),
}

impl fmt::Display for DataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataError::Csv(error) => write!(f, "reading the iris table: {error}"),
            DataError::Header(found) => {
                write!(f, "expected the header {HEADER:?}, found {found:?}")
            }
            DataError::Species { row, name } => {
                write!(
                    f,
                    "row {row}: unknown species {name:?} (expected one of {SPECIES:?})"
                )
            }
            DataError::NotFinite { row } => write!(f, "row {row}: a feature is not finite"),
            DataError::TooFewRows(rows) => write!(f, "{rows} rows are too few to split"),
        }
    }
}

impl Error for DataError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        match self {
            DataError::Csv(error) => Some(error),
            _ => None,
        }
    }
}

impl From<csv::Error> for DataError {
    fn from(error: csv::Error) -> Self {
        DataError::Csv(error)
    }
}

/// Reads the table from any CSV source: the header [`HEADER`], then four numbers and a
/// species name per row.
pub fn read(source: impl std::io::Read) -> Result<Dataset, DataError> {
    let mut reader = csv::Reader::from_reader(source);
    let header = reader.headers()?;
    if header.iter().ne(HEADER) {
        return Err(DataError::Header(header.iter().map(String::from).collect()));
    }
    let mut data = Dataset::default();
    for (index, record) in reader.deserialize().enumerate() {
        let (a, b, c, d, name): (f64, f64, f64, f64, String) = record?;
        let row = index + 1;
        let features = [a, b, c, d];
        if !features.iter().all(|v| v.is_finite()) {
            return Err(DataError::NotFinite { row });
        }
        let Some(label) = SPECIES.iter().position(|s| *s == name) else {
            return Err(DataError::Species { row, name });
        };
        data.features.push(features);
        data.labels.push(label);
    }
    Ok(data)
}

/// Reads the table from a file.
pub fn load(path: &Path) -> Result<Dataset, DataError> {
    let file = std::fs::File::open(path).map_err(csv::Error::from)?;
    read(file)
}

/// A fixed split: every fifth row (rows 5, 10, ...) to the test set, the rest to training.
/// The file lists the species in blocks of 50, so each gets 40 training and 10 test rows.
pub fn split(data: &Dataset) -> Result<(Dataset, Dataset), DataError> {
    let (mut train, mut test) = (Dataset::default(), Dataset::default());
    for (index, (x, &label)) in data.features.iter().zip(&data.labels).enumerate() {
        let side = if index % 5 == 4 {
            &mut test
        } else {
            &mut train
        };
        side.features.push(*x);
        side.labels.push(label);
    }
    if train.is_empty() || test.is_empty() {
        return Err(DataError::TooFewRows(data.len()));
    }
    Ok((train, test))
}

/// Per-feature mean and standard deviation (population, over the rows given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standardizer {
    /// The mean of each feature.
    pub mean: [f64; FEATURES],
    /// The standard deviation of each feature (1 where a feature is constant).
    pub std: [f64; FEATURES],
}

impl Standardizer {
    /// The statistics of `data` (the training split: the test rows stay unseen).
    pub fn fit(data: &Dataset) -> Result<Self, DataError> {
        if data.is_empty() {
            return Err(DataError::TooFewRows(0));
        }
        let n = data.len() as f64;
        let mut mean = [0.0; FEATURES];
        for x in &data.features {
            for (m, v) in mean.iter_mut().zip(x) {
                *m += v / n;
            }
        }
        let mut std = [0.0; FEATURES];
        for x in &data.features {
            for ((s, v), m) in std.iter_mut().zip(x).zip(&mean) {
                *s += (v - m) * (v - m) / n;
            }
        }
        let std = std.map(
            |variance| {
                if variance > 0.0 {
                    variance.sqrt()
                } else {
                    1.0
                }
            },
        );
        Ok(Standardizer { mean, std })
    }

    /// `data` with every feature shifted by its mean and scaled by its deviation.
    pub fn apply(&self, data: &Dataset) -> Dataset {
        let features = data
            .features
            .iter()
            .map(|x| std::array::from_fn(|j| (x[j] - self.mean[j]) / self.std[j]))
            .collect();
        Dataset {
            features,
            labels: data.labels.clone(),
        }
    }
}

/// The three class scores of one row: `w[k] · x + b[k]`.
#[differentiable]
pub fn logits(
    w: [[f64; FEATURES]; CLASSES],
    b: [f64; CLASSES],
    x: &[f64; FEATURES],
) -> [f64; CLASSES] {
    let mut z = [0.0; CLASSES];
    for k in 0..CLASSES {
        z[k] = w[k].iter().zip(x).map(|(wj, xj)| wj * xj).sum::<f64>() + b[k];
    }
    z
}

/// Mean cross-entropy of the softmax of [`logits`] over the rows, plus `l2` times the sum of
/// the squared weights.
///
/// Each row's `-log softmax(z)[label]` is `logsumexp(z) - z[label]`, with the log-sum-exp
/// shifted by the largest score `m` so that no `exp` overflows. `m` is detached: the
/// log-sum-exp is the same function of `z` whatever the shift, so its gradient does not
/// flow through `m`, and keeping `m` as plain data records no `max` node.
///
/// Every label must be below [`CLASSES`] (the loader makes sure), and an empty `xs` gives
/// NaN.
#[differentiable]
pub fn loss(
    w: [[f64; FEATURES]; CLASSES],
    b: [f64; CLASSES],
    xs: &[[f64; FEATURES]],
    labels: &[usize],
    #[constant] l2: f64,
) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let z = logits(w, b, x);
        let mut m = f64::NEG_INFINITY;
        for &zk in z.iter() {
            m = m.max(zk.detach());
        }
        let log_sum_exp = m + z.iter().map(|zk| (zk - m).exp()).sum::<f64>().ln();
        total += log_sum_exp - z[label];
    }
    let mut penalty = 0.0;
    for row in w.iter() {
        for &wj in row.iter() {
            penalty += wj * wj;
        }
    }
    total / xs.len() as f64 + l2 * penalty
}

/// The model's parameters.
#[derive(Parameters, Clone, Copy, Debug, Default, PartialEq)]
pub struct Model {
    /// One row of feature weights per class.
    pub w: [[f64; FEATURES]; CLASSES],
    /// One bias per class.
    pub b: [f64; CLASSES],
}

impl Model {
    /// The most probable species of a (standardized) row: the largest score, the first
    /// on a tie.
    pub fn predict(&self, x: &[f64; FEATURES]) -> usize {
        let z = logits(self.w, self.b, x);
        let mut best = 0;
        for k in 1..CLASSES {
            if z[k] > z[best] {
                best = k;
            }
        }
        best
    }

    /// The fraction of rows whose species [`Model::predict`] gets right (0 for no rows).
    pub fn accuracy(&self, data: &Dataset) -> f64 {
        if data.is_empty() {
            return 0.0;
        }
        let right = data
            .features
            .iter()
            .zip(&data.labels)
            .filter(|(x, &label)| self.predict(x) == label)
            .count();
        right as f64 / data.len() as f64
    }

    /// [`loss`] of this model on `data`.
    pub fn loss(&self, data: &Dataset, l2: f64) -> f64 {
        loss(self.w, self.b, &data.features, &data.labels, l2)
    }
}

/// The outcome of training.
#[derive(Debug)]
pub struct Training {
    /// The trained model.
    pub model: Model,
    /// `(epoch, loss)` before the update of every `report_every`-th epoch, and after the last.
    pub history: Vec<(usize, f64)>,
}

/// Full-batch gradient descent from all-zero parameters (the loss is convex, so no random
/// start is needed): `epochs` updates of size `rate` along `-loss_grad`.
pub fn train(
    data: &Dataset,
    l2: f64,
    rate: f64,
    epochs: usize,
    report_every: usize,
) -> Result<Training, ScalarAutodiffError> {
    let mut model = Model::default();
    let mut sgd = Sgd::new(rate);
    let mut history = Vec::new();
    for epoch in 0..epochs {
        let (value, gradient) = loss_grad(model.w, model.b, &data.features, &data.labels, l2)?;
        if report_every > 0 && epoch % report_every == 0 {
            history.push((epoch, value));
        }
        // The gradient is flattened in parameter order, `w` row by row, then `b`: the
        // order of `Model`'s fields, so it steps the model as it is.
        sgd.step(&mut model, &gradient)?;
    }
    history.push((epochs, model.loss(data, l2)));
    Ok(Training { model, history })
}

fn main() -> Result<(), Box<dyn Error>> {
    let data = load(data_path())?;
    let (train_raw, test_raw) = split(&data)?;
    let scale = Standardizer::fit(&train_raw)?;
    let (train_set, test_set) = (scale.apply(&train_raw), scale.apply(&test_raw));
    println!(
        "iris: {} rows, {} to train, {} to test",
        data.len(),
        train_set.len(),
        test_set.len()
    );
    let training = train(&train_set, L2, RATE, EPOCHS, REPORT_EVERY)?;
    for (epoch, value) in &training.history {
        println!("epoch {epoch:>4}: loss {value:.6}");
    }
    let model = training.model;
    println!("train accuracy: {:.4}", model.accuracy(&train_set));
    println!("test accuracy:  {:.4}", model.accuracy(&test_set));
    Ok(())
}
