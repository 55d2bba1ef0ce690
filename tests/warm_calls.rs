//! What a `name_grad` call costs in memory. Its compiled sweeps keep values on one
//! thread-local stack whose capacity stays between calls, so a warm call allocates
//! nothing, and what a call keeps is a few bytes per operation. Measured with `dhat`'s
//! heap statistics (one profiler per process, hence one test here).

// The models index their arrays as the formulas do.
#![allow(clippy::needless_range_loop)]

use scalar_autodiff::differentiable;

#[global_allocator]
static ALLOCATOR: dhat::Alloc = dhat::Alloc;

#[differentiable]
fn mse(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let error = w * x + b - y;
        total += error * error;
    }
    total / xs.len() as f64
}

const SCALE: f64 = 4.0 / 3.0;
const SHIFT: f64 = -0.117_360_522_332_611_85;

/// The bench's chain: multiply, shift, tanh in turn.
#[differentiable]
fn chain(x: f64, steps: usize) -> f64 {
    let mut v = x;
    for step in 0..steps {
        if step % 3 == 0 {
            v *= SCALE;
        } else if step % 3 == 1 {
            v += SHIFT;
        } else {
            v = v.tanh();
        }
    }
    v
}

/// A 64-16-10 tanh network with softmax cross-entropy, summed over rows.
#[differentiable]
fn network(
    w1: [[f64; 64]; 16],
    b1: [f64; 16],
    w2: [[f64; 16]; 10],
    b2: [f64; 10],
    rows: &[[f64; 64]],
    labels: &[usize],
) -> f64 {
    let mut total = 0.0;
    for (row, &label) in rows.iter().zip(labels) {
        let mut hidden = [0.0; 16];
        for j in 0..16 {
            let mut sum = b1[j];
            for k in 0..64 {
                sum += w1[j][k] * row[k];
            }
            hidden[j] = sum.tanh();
        }
        let mut logits = [0.0; 10];
        for c in 0..10 {
            let mut sum = b2[c];
            for j in 0..16 {
                sum += w2[c][j] * hidden[j];
            }
            logits[c] = sum;
        }
        let mut norm = 0.0;
        for c in 0..10 {
            norm += logits[c].exp();
        }
        total += norm.ln() - logits[label];
    }
    total
}

/// A recurrence keeping its previous state (`let prev = h;`): its scalars share nodes,
/// whose adjoint cells the thread's stack lends.
#[differentiable]
fn recurrence(w: [f64; 2], xs: &[f64]) -> f64 {
    let mut h = 0.0;
    let mut out = 0.0;
    for x in xs {
        let prev = h;
        h = (w[0] * h + w[1] * x).tanh();
        out += prev * h;
    }
    out
}

/// Operations the network's forward sweep records per row.
const NETWORK_OPS_PER_ROW: usize = 16 * (2 * 64 + 1) + 10 * 2 * 16 + 10 * 2 + 3;

fn heap() -> dhat::HeapStats {
    dhat::HeapStats::get()
}

#[test]
fn warm_calls_allocate_nothing_and_keep_little() {
    let _profiler = dhat::Profiler::builder().testing().build();

    // The network over 1,437 rows (the digits training set's size).
    let rows: Vec<[f64; 64]> = (0..1437)
        .map(|r| std::array::from_fn(|k| ((r * 31 + k * 17) % 16) as f64 / 16.0))
        .collect();
    let labels: Vec<usize> = (0..1437).map(|r| (r * 7) % 10).collect();
    let w1 =
        std::array::from_fn(|j| std::array::from_fn(|k| ((j * 64 + k) % 13) as f64 / 60.0 - 0.1));
    let b1 = std::array::from_fn(|j| j as f64 / 100.0);
    let w2 =
        std::array::from_fn(|c| std::array::from_fn(|j| ((c * 16 + j) % 7) as f64 / 20.0 - 0.15));
    let b2 = std::array::from_fn(|c| c as f64 / 50.0 - 0.1);
    // Each measured on a fresh thread, whose stack starts empty.
    let (first, peak) = std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let before = heap();
                let first = network_grad(w1, b1, w2, b2, &rows, &labels);
                (first, heap().max_bytes.saturating_sub(before.curr_bytes))
            })
            .join()
            .expect("the network's thread")
    });
    let first = first.expect("the network's gradient");
    let operations = NETWORK_OPS_PER_ROW * rows.len();
    let per_op = peak as f64 / operations as f64;
    println!(
        "network: {peak} bytes at peak over {operations} operations, {per_op:.2} per operation"
    );
    assert!(per_op <= 16.0, "{per_op} bytes per operation");

    // The million-step chain.
    let (chained, peak) = std::thread::spawn(|| {
        let before = heap();
        let chained = chain_grad(0.5, 1_000_000);
        (chained, heap().max_bytes.saturating_sub(before.curr_bytes))
    })
    .join()
    .expect("the chain's thread");
    let (value, [slope]) = chained.expect("the chain's gradient");
    assert!(value.is_finite() && slope.is_finite());
    let per_step = peak as f64 / 1e6;
    println!("chain: {peak} bytes at peak, {per_step:.2} per step");
    assert!(per_step <= 16.0, "{per_step} bytes per step");

    // Warm calls: not one allocation.
    let xs: Vec<f64> = (0..500).map(|i| f64::from(i) / 100.0).collect();
    let ys: Vec<f64> = xs.iter().map(|x| 3.0 * x - 1.0).collect();
    let line = mse_grad(2.0, 0.5, &xs, &ys);
    let batch = network_grad(w1, b1, w2, b2, &rows[..32], &labels[..32]);
    let short = chain_grad(0.5, 1_000);
    let kept = recurrence_grad([0.6, 0.9], &xs);
    let before = heap();
    for _ in 0..50 {
        assert_eq!(recurrence_grad([0.6, 0.9], &xs), kept);
        assert_eq!(mse_grad(2.0, 0.5, &xs, &ys), line);
        assert_eq!(
            network_grad(w1, b1, w2, b2, &rows[..32], &labels[..32]),
            batch
        );
        assert_eq!(chain_grad(0.5, 1_000), short);
    }
    let after = heap();
    assert_eq!(
        after.total_blocks - before.total_blocks,
        0,
        "allocations in warm calls"
    );
    assert!(first.0.is_finite());
}
