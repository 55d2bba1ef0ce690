//! The microgpt example's claims: its random numbers are CPython's; its training steps'
//! losses are the Python reference's (the first 100 steps here; all 1,000 and the 20
//! samples with `MICROGPT_REFERENCE_STEPS=1000`); and `loss_grad` is the exact gradient:
//! bit for bit `loss_graph` + `backward`, and central differences on entries of every
//! matrix.

#[allow(dead_code)]
#[path = "../../examples/microgpt/main.rs"]
pub(crate) mod microgpt;

use microgpt::model::{loss, loss_grad, loss_graph, sample, tokens, Gpt};
use microgpt::pyrandom::PyRandom;
use microgpt::{adam, start, train_step, NAMES};
use scalar_autodiff::Parameters;

use crate::support::central;

/// What CPython 3.11 printed for `random.seed(42)` then three `random()`, three
/// `gauss(0, 0.08)`, `shuffle(list(range(10)))` and
/// `choices(range(5), weights=[0.1, 0.2, 0.3, 0.25, 0.15], k=8)`.
#[test]
fn python_random_is_cpythons() {
    let mut rng = PyRandom::seed(42);
    let uniform: Vec<f64> = (0..3).map(|_| rng.random()).collect();
    assert_eq!(
        uniform,
        [
            0.6394267984578837,
            0.025010755222666936,
            0.27502931836911926
        ]
    );
    let gauss: Vec<f64> = (0..3).map(|_| rng.gauss(0.0, 0.08)).collect();
    assert_eq!(
        gauss,
        [
            0.02188792052467065,
            0.12880568755706856,
            -0.07504409771465873
        ]
    );
    let mut items: Vec<usize> = (0..10).collect();
    rng.shuffle(&mut items);
    assert_eq!(items, [3, 5, 2, 4, 9, 8, 7, 0, 6, 1]);
    let weights = [0.1, 0.2, 0.3, 0.25, 0.15];
    let drawn: Vec<usize> = (0..8).map(|_| rng.choice(&weights)).collect();
    assert_eq!(drawn, [2, 3, 3, 2, 2, 1, 4, 3]);
}

/// The reference's output (`tests/data/microgpt/reference.py`, whose docstring has the
/// command): every step's loss, then the samples.
fn reference() -> (Vec<f64>, Vec<String>) {
    let text = include_str!("../data/microgpt/reference-1000.txt");
    let mut losses = Vec::new();
    let mut samples = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("step ") {
            let (step, loss) = rest.split_once(" loss ").expect("`step N loss X`");
            assert_eq!(step.parse::<usize>(), Ok(losses.len() + 1));
            losses.push(loss.parse().expect("a number"));
        } else if let Some(rest) = line.strip_prefix("sample ") {
            let (_, name) = rest.split_once(": ").expect("`sample N: name`");
            samples.push(name.to_string());
        }
    }
    assert_eq!((losses.len(), samples.len()), (1000, 20));
    (losses, samples)
}

#[test]
fn training_follows_the_python_reference() {
    let (want, want_samples) = reference();
    let steps: usize = std::env::var("MICROGPT_REFERENCE_STEPS")
        .ok()
        .and_then(|steps| steps.parse().ok())
        .unwrap_or(100)
        .min(1000);
    let (mut rng, docs, mut p) = start(NAMES);
    assert_eq!(docs.len(), 32_033);
    assert_eq!(p.parameter_count(), 4192);
    let mut adam = adam();
    let mut worst: f64 = 0.0;
    for step in 0..steps {
        let loss = train_step(
            &mut p,
            &mut adam,
            docs[step % docs.len()],
            (step, 1000),
            false,
        )
        .expect("a finite step");
        let relative = (loss - want[step]).abs() / want[step].abs();
        assert!(
            relative <= 1e-9,
            "step {}: {loss} against the reference's {}",
            step + 1,
            want[step]
        );
        worst = worst.max(relative);
    }
    println!("largest relative difference over {steps} steps: {worst:e}");
    if steps == 1000 {
        let samples: Vec<String> = (0..20).map(|_| sample(&p, &mut rng, 0.5, false)).collect();
        assert_eq!(samples, want_samples);
    }
}

/// The model the reference starts from, and one name as tokens.
fn emma() -> (Gpt, Vec<usize>) {
    let (_, _, p) = start(NAMES);
    (p, tokens("emma").expect("letters"))
}

#[test]
fn loss_grad_is_the_graphs_gradient_bit_for_bit() {
    let (p, tokens) = emma();
    let (value, gradient) = loss_grad(&p, &tokens, false).expect("a finite loss");
    let vars = p.variables().expect("finite weights");
    let out = loss_graph(&vars, &tokens, false).expect("a finite loss");
    out.backward().expect("a finite gradient");
    assert_eq!(value.to_bits(), out.value().to_bits());
    assert_eq!(value.to_bits(), loss(&p, &tokens, false).to_bits());
    let (fast, checked) = (gradient.to_flat(), p.gradient_of(&vars).to_flat());
    assert_eq!(fast.len(), 4192);
    for (k, (a, b)) in fast.iter().zip(&checked).enumerate() {
        assert_eq!(a.to_bits(), b.to_bits(), "entry {k}: {a} against {b}");
    }
}

#[test]
fn loss_grad_matches_central_differences_in_every_matrix() {
    let (p, tokens) = emma();
    let (_, gradient) = loss_grad(&p, &tokens, false).expect("a finite loss");
    let (flat, at) = (gradient.to_flat(), p.to_flat());
    // The nine matrices in the struct's flat order, as (rows, columns, the rows "emma"
    // reaches): the embeddings of its tokens and positions only, every row of the others.
    let all: Vec<usize> = (0..64).collect();
    let matrices: [(usize, usize, &[usize]); 9] = [
        (27, 16, &[26, 4, 12, 0]),
        (16, 16, &[0, 1, 2, 3, 4]),
        (27, 16, &all[..27]),
        (16, 16, &all[..16]),
        (16, 16, &all[..16]),
        (16, 16, &all[..16]),
        (16, 16, &all[..16]),
        (64, 16, &all[..64]),
        (16, 64, &all[..16]),
    ];
    let (mut checked, mut nonzero) = (0, 0);
    let mut offset = 0;
    for (rows, columns, reached) in matrices {
        // Seven entries of each, spread over the rows reached and the columns.
        for i in 0..7 {
            let row = reached[(i * 5) % reached.len()];
            let k = offset + row * columns + (i * 7 + row) % columns;
            let moved = |t: f64| {
                let mut q = at.clone();
                q[k] = t;
                let mut moved = p.clone();
                moved.read_flat(&q).expect("the same shape");
                loss(&moved, &tokens, false)
            };
            let numeric = central(moved, at[k]);
            // (An MLP weight of a unit its ReLU keeps off at every position has none.)
            nonzero += usize::from(flat[k] != 0.0);
            assert!(
                (flat[k] - numeric).abs() <= 1e-6 * (1e-3 + numeric.abs()),
                "entry {k}: {} against {numeric}",
                flat[k]
            );
            checked += 1;
        }
        offset += rows * columns;
    }
    assert_eq!((offset, checked), (4192, 63));
    assert!(
        nonzero >= 55,
        "only {nonzero} of the entries have a derivative"
    );
}

/// Weight tying (`--tie`): `wte` both looks tokens up and scores the logits. Its gradient
/// is the sum of the two paths' gradients, each with the other path held constant (the
/// companion note's warning is a path dropped silently): the untied model whose
/// `lm_head` holds the same numbers gives the lookup path as its `wte` gradient and the
/// projection path as its `lm_head` gradient.
#[test]
fn a_tied_embedding_gets_both_paths_gradients() {
    let (mut p, tokens) = emma();
    p.lm_head = p.wte;
    let (tied_value, tied) = loss_grad(&p, &tokens, true).expect("a finite loss");
    let (untied_value, untied) = loss_grad(&p, &tokens, false).expect("a finite loss");
    assert_eq!(tied_value.to_bits(), untied_value.to_bits());
    let mut both_paths = 0;
    for (row, (lookup, projection)) in untied.wte.iter().zip(&untied.lm_head).enumerate() {
        for j in 0..16 {
            let sum = lookup[j] + projection[j];
            let got = tied.wte[row][j];
            assert!(
                (got - sum).abs() <= 1e-14 + 1e-12 * sum.abs(),
                "wte[{row}][{j}]: {got} against {} + {}",
                lookup[j],
                projection[j]
            );
            both_paths += usize::from(lookup[j] != 0.0 && projection[j] != 0.0);
        }
        // `lm_head` is not used when tied.
        assert_eq!(tied.lm_head[row], [0.0; 16]);
    }
    // "emma"'s four tokens' rows are reached by both paths.
    assert_eq!(both_paths, 4 * 16);
    // Central differences of the tied loss on entries of both kinds of rows.
    for (row, j) in [(26, 0), (4, 5), (12, 9), (0, 15), (7, 3), (25, 11)] {
        let moved = |t: f64| {
            let mut moved = p.clone();
            moved.wte[row][j] = t;
            loss(&moved, &tokens, true)
        };
        let numeric = central(moved, p.wte[row][j]);
        let got = tied.wte[row][j];
        assert!(
            (got - numeric).abs() <= 1e-6 * (1e-3 + numeric.abs()),
            "wte[{row}][{j}]: {got} against {numeric}"
        );
    }
}
