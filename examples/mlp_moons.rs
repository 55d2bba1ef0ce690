//! micrograd's classic demo: a 2-16-16-1 ReLU network, its 337 parameters one
//! `#[derive(Parameters)]` struct, learns to separate two interleaving half moons with an
//! SVM max-margin loss plus an L2 penalty, by full-batch gradient descent with a decaying
//! step size. The data are generated in code from a seed (as scikit-learn's `make_moons`
//! makes them), so every run is the same.
//!
//! It prints the loss and the training accuracy as the loss falls, then the decision
//! boundary as an ASCII picture with the data points drawn on it.
//!
//! Run with `cargo run --release --example mlp_moons`.

use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError, Sgd};

/// The width of both hidden layers.
pub const HIDDEN: usize = 16;
/// The number of points in the data set, half per moon.
pub const SAMPLES: usize = 100;
/// The standard deviation of the Gaussian noise added to each coordinate.
pub const NOISE: f64 = 0.1;
/// The seed of the data set.
pub const DATA_SEED: u64 = 0x6d6f_6f6e_735f_0001;
/// The seed of the initial weights.
pub const INIT_SEED: u64 = 0x5eed_1234_abcd_0016;
/// The strength of the L2 penalty on every parameter (micrograd's `alpha`).
pub const ALPHA: f64 = 1e-4;
/// The number of full-batch updates.
pub const STEPS: usize = 100;
/// Report the loss every this many steps.
pub const REPORT_EVERY: usize = 10;

/// A 64-bit xorshift generator: enough randomness for a toy data set and initial weights,
/// reproducible from its seed.
#[derive(Clone, Debug)]
pub struct XorShift(pub u64);

impl XorShift {
    /// The next number, uniform in `[0, 1)`.
    pub fn next_unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        // The top 53 bits as a fraction in [0, 1).
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A number uniform in `[-1, 1)`.
    pub fn next_weight(&mut self) -> f64 {
        self.next_unit() * 2.0 - 1.0
    }

    /// A standard normal number (Box–Muller).
    pub fn next_gaussian(&mut self) -> f64 {
        // 1 - u is in (0, 1], so the logarithm is finite.
        let radius = (-2.0 * (1.0 - self.next_unit()).ln()).sqrt();
        radius * (std::f64::consts::TAU * self.next_unit()).cos()
    }
}

/// Points in the plane with a label of `-1` or `1` each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Moons {
    /// The points, `[x, y]`.
    pub points: Vec<[f64; 2]>,
    /// The label of each point: `-1` for the upper moon, `1` for the lower one.
    pub labels: Vec<f64>,
}

impl Moons {
    /// The number of points.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// Two interleaving half circles, as scikit-learn's `make_moons(n, noise=noise)` draws
/// them: `n / 2` points evenly spaced on the upper half of the unit circle (label `-1`),
/// the other `n - n / 2` on a lower half circle shifted to `(1, 0.5)` (label `1`), every
/// coordinate then moved by Gaussian noise of standard deviation `noise` drawn from `seed`.
/// The upper moon comes first; the order does not matter to full-batch training.
pub fn make_moons(n: usize, noise: f64, seed: u64) -> Moons {
    let mut rng = XorShift(seed);
    let upper = n / 2;
    let lower = n - upper;
    // The angle of point `i` of `count` evenly spaced over `[0, pi]`.
    let angle = |i: usize, count: usize| {
        if count > 1 {
            std::f64::consts::PI * i as f64 / (count - 1) as f64
        } else {
            0.0
        }
    };
    let mut moons = Moons::default();
    for i in 0..upper {
        let t = angle(i, upper);
        moons.points.push([t.cos(), t.sin()]);
        moons.labels.push(-1.0);
    }
    for i in 0..lower {
        let t = angle(i, lower);
        moons.points.push([1.0 - t.cos(), 0.5 - t.sin()]);
        moons.labels.push(1.0);
    }
    for point in &mut moons.points {
        for coordinate in point.iter_mut() {
            *coordinate += noise * rng.next_gaussian();
        }
    }
    moons
}

/// The network's parameters: two ReLU layers of [`HIDDEN`] units and a linear output.
#[derive(Parameters, Clone, Debug, PartialEq)]
pub struct Mlp {
    /// First layer weights, one row of two per unit.
    pub w1: [[f64; 2]; HIDDEN],
    /// First layer biases.
    pub b1: [f64; HIDDEN],
    /// Second layer weights, one row per unit.
    pub w2: [[f64; HIDDEN]; HIDDEN],
    /// Second layer biases.
    pub b2: [f64; HIDDEN],
    /// Output weights.
    pub w3: [f64; HIDDEN],
    /// Output bias.
    pub b3: f64,
}

impl Mlp {
    /// micrograd's initialization: every weight uniform in `[-1, 1)` drawn from `seed`
    /// (layer by layer, unit by unit), every bias 0.
    pub fn new(seed: u64) -> Self {
        let mut rng = XorShift(seed);
        let w1 = std::array::from_fn(|_| std::array::from_fn(|_| rng.next_weight()));
        let w2 = std::array::from_fn(|_| std::array::from_fn(|_| rng.next_weight()));
        let w3 = std::array::from_fn(|_| rng.next_weight());
        Mlp {
            w1,
            b1: [0.0; HIDDEN],
            w2,
            b2: [0.0; HIDDEN],
            w3,
            b3: 0.0,
        }
    }
}

/// The first layer: `relu(w[o] · x + b[o])` for every unit `o`.
#[differentiable]
pub fn dense_in(w: [[f64; 2]; HIDDEN], b: [f64; HIDDEN], x: [f64; 2]) -> [f64; HIDDEN] {
    let mut h = [0.0; HIDDEN];
    for (o, row) in w.iter().enumerate() {
        h[o] = (row.iter().zip(x.iter()).map(|(a, v)| a * v).sum::<f64>() + b[o]).max(0.0);
    }
    h
}

/// The second layer, the same on [`HIDDEN`] inputs. (A `#[differentiable]` function cannot
/// be generic over the widths, so each width gets its own helper.)
#[differentiable]
pub fn dense_hidden(
    w: [[f64; HIDDEN]; HIDDEN],
    b: [f64; HIDDEN],
    x: [f64; HIDDEN],
) -> [f64; HIDDEN] {
    let mut h = [0.0; HIDDEN];
    for (o, row) in w.iter().enumerate() {
        h[o] = (row.iter().zip(x.iter()).map(|(a, v)| a * v).sum::<f64>() + b[o]).max(0.0);
    }
    h
}

/// The network's score for one point: positive for label `1`, negative for `-1`.
#[differentiable]
pub fn score(#[param] p: &Mlp, x: &[f64; 2]) -> f64 {
    let h1 = dense_in(p.w1, p.b1, *x);
    let h2 = dense_hidden(p.w2, p.b2, h1);
    p.w3.iter().zip(h2.iter()).map(|(a, v)| a * v).sum::<f64>() + p.b3
}

/// The sum of the squares of every parameter.
#[differentiable]
pub fn squared_norm(#[param] p: &Mlp) -> f64 {
    p.w1.iter()
        .map(|row| row.iter().map(|v| v * v).sum::<f64>())
        .sum::<f64>()
        + p.b1.iter().map(|v| v * v).sum::<f64>()
        + p.w2
            .iter()
            .map(|row| row.iter().map(|v| v * v).sum::<f64>())
            .sum::<f64>()
        + p.b2.iter().map(|v| v * v).sum::<f64>()
        + p.w3.iter().map(|v| v * v).sum::<f64>()
        + p.b3 * p.b3
}

/// micrograd's loss: the mean SVM max-margin loss `max(0, 1 - y score(x))` over the points,
/// plus `alpha` times the sum of the squares of all parameters.
#[differentiable]
pub fn loss(#[param] p: &Mlp, xs: &[[f64; 2]], ys: &[f64], #[constant] alpha: f64) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        total += (1.0 - y * score(p, x)).max(0.0);
    }
    total / ys.len() as f64 + alpha * squared_norm(p)
}

/// The fraction of points whose label has the sign of the score (0 for no points).
pub fn accuracy(p: &Mlp, data: &Moons) -> f64 {
    if data.is_empty() {
        return 0.0;
    }
    let right = data
        .points
        .iter()
        .zip(&data.labels)
        .filter(|(x, y)| (score(p, x) > 0.0) == (**y > 0.0))
        .count();
    right as f64 / data.len() as f64
}

/// One report: the loss and the accuracy before the update of a step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Report {
    /// The step (0 for the initial weights).
    pub step: usize,
    /// The loss.
    pub loss: f64,
    /// The training accuracy.
    pub accuracy: f64,
}

/// The outcome of training.
#[derive(Debug)]
pub struct Training {
    /// The trained network.
    pub model: Mlp,
    /// A report every `report_every` steps, then one after the last update.
    pub history: Vec<Report>,
    /// The first step at which every training point was classified right, if any.
    pub first_perfect: Option<usize>,
}

/// micrograd's schedule: `steps` full-batch updates from [`Mlp::new`]`(seed)`, update `k`
/// of size `1 - 0.9 k / steps` along `-loss_grad`.
pub fn train(
    data: &Moons,
    seed: u64,
    alpha: f64,
    steps: usize,
    report_every: usize,
) -> Result<Training, ScalarAutodiffError> {
    let mut model = Mlp::new(seed);
    let mut sgd = Sgd::new(1.0);
    let mut history = Vec::new();
    let mut first_perfect = None;
    for step in 0..steps {
        let (value, gradient) = loss_grad(&model, &data.points, &data.labels, alpha)?;
        let right = accuracy(&model, data);
        if right == 1.0 && first_perfect.is_none() {
            first_perfect = Some(step);
        }
        if report_every > 0 && step % report_every == 0 {
            history.push(Report {
                step,
                loss: value,
                accuracy: right,
            });
        }
        sgd.set_learning_rate(1.0 - 0.9 * step as f64 / steps as f64);
        sgd.step(&mut model, &gradient)?;
    }
    let right = accuracy(&model, data);
    if right == 1.0 && first_perfect.is_none() {
        first_perfect = Some(steps);
    }
    history.push(Report {
        step: steps,
        loss: loss(&model, &data.points, &data.labels, alpha),
        accuracy: right,
    });
    Ok(Training {
        model,
        history,
        first_perfect,
    })
}

/// The region of the plane the picture shows: `(x_min, x_max, y_min, y_max)`.
pub const VIEW: (f64, f64, f64, f64) = (-1.5, 2.5, -1.0, 1.5);

/// The decision boundary as `height` lines of `width` characters over [`VIEW`]: `.` where
/// the network says `1`, a space where it says `-1`, and on top the data points, `o` for
/// label `-1` and `x` for `1` (upper case if the network gets that point wrong, `*` for a
/// cell holding points of both labels).
pub fn picture(p: &Mlp, data: &Moons, width: usize, height: usize) -> String {
    let (x_min, x_max, y_min, y_max) = VIEW;
    // The centre of cell (row, column); row 0 is the top.
    let centre = |row: usize, column: usize| {
        [
            x_min + (column as f64 + 0.5) * (x_max - x_min) / width as f64,
            y_max - (row as f64 + 0.5) * (y_max - y_min) / height as f64,
        ]
    };
    let mut grid: Vec<Vec<char>> = (0..height)
        .map(|row| {
            (0..width)
                .map(|column| {
                    if score(p, &centre(row, column)) > 0.0 {
                        '.'
                    } else {
                        ' '
                    }
                })
                .collect()
        })
        .collect();
    for (x, &y) in data.points.iter().zip(&data.labels) {
        let column = ((x[0] - x_min) / (x_max - x_min) * width as f64).floor();
        let row = ((y_max - x[1]) / (y_max - y_min) * height as f64).floor();
        if !(0.0..width as f64).contains(&column) || !(0.0..height as f64).contains(&row) {
            continue;
        }
        let cell = &mut grid[row as usize][column as usize];
        let right = (score(p, x) > 0.0) == (y > 0.0);
        let mark = match (y > 0.0, right) {
            (false, true) => 'o',
            (false, false) => 'O',
            (true, true) => 'x',
            (true, false) => 'X',
        };
        let other = if y > 0.0 { ['o', 'O'] } else { ['x', 'X'] };
        *cell = if other.contains(cell) || *cell == '*' {
            '*'
        } else if cell.is_ascii_uppercase() {
            *cell
        } else {
            mark
        };
    }
    let mut out = String::with_capacity((width + 1) * height);
    for line in grid {
        out.extend(line);
        out.push('\n');
    }
    out
}

fn main() -> Result<(), ScalarAutodiffError> {
    let data = make_moons(SAMPLES, NOISE, DATA_SEED);
    let model = Mlp::new(INIT_SEED);
    println!(
        "two moons: {} points; a 2-{HIDDEN}-{HIDDEN}-1 network with {} parameters",
        data.len(),
        model.parameter_count()
    );
    let training = train(&data, INIT_SEED, ALPHA, STEPS, REPORT_EVERY)?;
    for report in &training.history {
        println!(
            "step {:>3}: loss {:.6}, accuracy {:.0}%",
            report.step,
            report.loss,
            100.0 * report.accuracy
        );
    }
    match training.first_perfect {
        Some(step) => println!("100% training accuracy first at step {step}"),
        None => println!("100% training accuracy never reached"),
    }
    println!("\ndecision boundary ('.' scores 1, 'o' and 'x' the points labelled -1 and 1):");
    let (x_min, x_max, y_min, y_max) = VIEW;
    println!("x from {x_min} to {x_max}, y from {y_min} (bottom) to {y_max} (top)");
    print!("{}", picture(&training.model, &data, 60, 24));
    Ok(())
}
