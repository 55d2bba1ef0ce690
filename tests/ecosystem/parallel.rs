//! `parallel::batch_grad` (the `rayon` feature): the same bits on pools of 1, 2 and 4
//! threads, the whole batch's gradient up to rounding (and the analytic one), the chunks
//! summed left to right, and typed errors for a chunk length of 0, a failing chunk, chunks
//! of different shapes and an overflowing sum.
#![cfg(feature = "rayon")]

use std::sync::atomic::{AtomicUsize, Ordering};

use approx::assert_relative_eq;
use scalar_autodiff::parallel::{self, rayon};
use scalar_autodiff::{differentiable, Parameters, ScalarAutodiffError};

use crate::support::Lcg;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// `n` rows `[x0, x1, y]` with features in [-1, 1) and a noisy target.
fn rows(n: usize) -> Vec<[f64; 3]> {
    let mut rng = Lcg::new(0x5eed);
    (0..n)
        .map(|_| {
            let x0 = rng.signed();
            let x1 = rng.signed();
            let y = (0.7 * x0 - 0.4 * x1 + 0.1).tanh() + 0.1 * (rng.unit() - 0.5);
            [x0, x1, y]
        })
        .collect()
}

/// Squared error of a tanh unit over the rows it is given, times `scale`: a sum.
#[differentiable]
fn unit(w: [f64; 3], rows: &[[f64; 3]], #[constant] scale: f64) -> f64 {
    let mut total = 0.0;
    for row in rows {
        let t = (w[0] * row[0] + w[1] * row[1] + w[2]).tanh();
        total += (t - row[2]) * (t - row[2]);
    }
    total * scale
}

/// `unit` and its gradient by hand: `2 (t - y) (1 - t^2)` times each input (1 for the bias).
fn unit_by_hand(w: [f64; 3], rows: &[[f64; 3]], scale: f64) -> (f64, [f64; 3]) {
    let (mut total, mut gradient) = (0.0, [0.0; 3]);
    for row in rows {
        let t = (w[0] * row[0] + w[1] * row[1] + w[2]).tanh();
        total += (t - row[2]) * (t - row[2]);
        let slope = 2.0 * (t - row[2]) * (1.0 - t * t);
        for (g, x) in gradient.iter_mut().zip([row[0], row[1], 1.0]) {
            *g += slope * x;
        }
    }
    (total * scale, gradient.map(|g| g * scale))
}

/// A 2-4-1 tanh network; the output weights in a `Vec` (a gradient `zip_mut` walks by
/// length).
#[derive(Parameters, Clone, Debug, PartialEq)]
struct Net {
    w1: [[f64; 2]; 4],
    b1: [f64; 4],
    w2: Vec<f64>,
    b2: f64,
}

fn net() -> Net {
    Net {
        w1: [[0.5, -0.4], [0.3, 0.8], [-0.6, 0.2], [0.7, -0.9]],
        b1: [0.1, -0.1, 0.2, 0.0],
        w2: vec![0.5, -0.5, 0.4, 0.3],
        b2: 0.05,
    }
}

/// The network's squared error over the rows it is given, times `scale`.
#[differentiable]
fn net_loss(#[param] p: &Net, rows: &[[f64; 3]], #[constant] scale: f64) -> f64 {
    let mut total = 0.0;
    for row in rows {
        let mut out = p.b2;
        for j in 0..4 {
            let h = (p.w1[j][0] * row[0] + p.w1[j][1] * row[1] + p.b1[j]).tanh();
            out += p.w2[j] * h;
        }
        total += (out - row[2]) * (out - row[2]);
    }
    total * scale
}

/// `(value, gradient)` as bits, for comparing results bit for bit (`-0.0` is not `0.0`).
fn bits<G: Parameters>(result: &(f64, G)) -> Vec<u64> {
    std::iter::once(result.0)
        .chain(result.1.to_flat())
        .map(f64::to_bits)
        .collect()
}

/// The pools a result must not depend on: 1, 2 and 4 threads.
fn pools() -> Vec<rayon::ThreadPool> {
    [1, 2, 4]
        .map(|threads| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a thread pool")
        })
        .into()
}

/// `f` on each chunk in turn on this thread, added left to right: the order `batch_grad`
/// promises.
fn chunk_by_chunk<T, G: Parameters<Gradient = G>>(
    data: &[T],
    chunk_len: usize,
    f: impl Fn(&[T]) -> Result<(f64, G)>,
) -> Result<(f64, G)> {
    let mut chunks = data.chunks(chunk_len);
    let (mut value, mut gradient) = f(chunks.next().unwrap_or_default())?;
    for chunk in chunks {
        let (v, g) = f(chunk)?;
        value += v;
        gradient.zip_mut(&g, |sum, part| *sum += part)?;
    }
    Ok((value, gradient))
}

#[test]
fn an_array_gradient_has_the_same_bits_on_1_2_and_4_threads() -> Result<()> {
    let data = rows(1000);
    let w = [0.3, -0.2, 0.05];
    let scale = 1.0 / data.len() as f64;
    let f = |chunk: &[[f64; 3]]| unit_grad(w, chunk, scale);
    // The data is sensitive to the order of the sum: chunks of 7 rows do not give the
    // whole batch's bits, so equal bits below are not a coincidence of exact sums.
    let whole = unit_grad(w, &data, scale)?;
    assert_ne!(bits(&parallel::batch_grad(&data, 7, f)?), bits(&whole));
    let pools = pools();
    // 64 and 7 leave a shorter last chunk; 250 divides the 1,000 rows.
    for chunk_len in [1, 7, 64, 250] {
        let global = parallel::batch_grad(&data, chunk_len, f)?;
        assert_eq!(bits(&global), bits(&chunk_by_chunk(&data, chunk_len, f)?));
        for pool in &pools {
            for _ in 0..3 {
                let got = pool.install(|| parallel::batch_grad(&data, chunk_len, f))?;
                assert_eq!(
                    bits(&got),
                    bits(&global),
                    "chunks of {chunk_len} on {} threads",
                    pool.current_num_threads()
                );
            }
        }
    }
    Ok(())
}

#[test]
fn a_struct_gradient_has_the_same_bits_on_1_2_and_4_threads() -> Result<()> {
    let data = rows(777);
    let p = net();
    let scale = 1.0 / data.len() as f64;
    let f = |chunk: &[[f64; 3]]| net_loss_grad(&p, chunk, scale);
    let pools = pools();
    for chunk_len in [5, 100, 128] {
        let global = parallel::batch_grad(&data, chunk_len, f)?;
        assert_eq!(bits(&global), bits(&chunk_by_chunk(&data, chunk_len, f)?));
        for pool in &pools {
            let got: (f64, Net) = pool.install(|| parallel::batch_grad(&data, chunk_len, f))?;
            assert_eq!(got.1.w2.len(), 4);
            assert_eq!(bits(&got), bits(&global), "chunks of {chunk_len}");
        }
    }
    Ok(())
}

#[test]
fn chunks_sum_to_the_whole_batch_and_the_analytic_gradient() -> Result<()> {
    let data = rows(1000);
    let w = [0.3, -0.2, 0.05];
    let scale = 1.0 / data.len() as f64;
    let whole = unit_grad(w, &data, scale)?;
    let by_hand = unit_by_hand(w, &data, scale);
    for chunk_len in [1, 7, 64, 250] {
        let got = parallel::batch_grad(&data, chunk_len, |chunk| unit_grad(w, chunk, scale))?;
        for want in [(whole.0, whole.1), by_hand] {
            assert_relative_eq!(got.0, want.0, max_relative = 1e-12);
            for (g, h) in got.1.iter().zip(want.1) {
                assert_relative_eq!(*g, h, max_relative = 1e-12);
            }
        }
    }

    let p = net();
    let whole = net_loss_grad(&p, &data, scale)?;
    for chunk_len in [5, 128] {
        let got = parallel::batch_grad(&data, chunk_len, |chunk| net_loss_grad(&p, chunk, scale))?;
        assert_relative_eq!(got.0, whole.0, max_relative = 1e-12);
        for (g, h) in got.1.to_flat().into_iter().zip(whole.1.to_flat()) {
            assert_relative_eq!(g, h, max_relative = 1e-12);
        }
    }
    Ok(())
}

#[test]
fn one_chunk_is_the_whole_batch_bit_for_bit() -> Result<()> {
    let w = [0.3, -0.2, 0.05];
    // Data shorter than a chunk, and exactly one chunk.
    for (n, chunk_len) in [(10, 64), (64, 64), (1, 1)] {
        let data = rows(n);
        let whole = unit_grad(w, &data, 0.5)?;
        let got = parallel::batch_grad(&data, chunk_len, |chunk| unit_grad(w, chunk, 0.5))?;
        assert_eq!(
            bits(&got),
            bits(&whole),
            "{n} rows in chunks of {chunk_len}"
        );
    }
    Ok(())
}

#[test]
fn an_empty_batch_is_one_call_on_no_rows() -> Result<()> {
    let w = [0.3, -0.2, 0.05];
    let calls = AtomicUsize::new(0);
    let got = parallel::batch_grad(&[], 8, |chunk: &[[f64; 3]]| {
        calls.fetch_add(1, Ordering::Relaxed);
        assert!(chunk.is_empty());
        unit_grad(w, chunk, 1.0)
    })?;
    assert_eq!(got, (0.0, [0.0; 3]));
    assert_eq!(calls.load(Ordering::Relaxed), 1);
    let ranged = parallel::batch_grad_ranges(0, 8, |range| {
        assert_eq!(range, 0..0);
        unit_grad(w, &[], 1.0)
    })?;
    assert_eq!(ranged, got);
    Ok(())
}

#[test]
fn ranges_cover_the_rows_in_order_for_data_in_several_slices() -> Result<()> {
    let data = rows(300);
    let xs: Vec<[f64; 3]> = data.iter().map(|r| [r[0], r[1], 0.0]).collect();
    let ys: Vec<f64> = data.iter().map(|r| r[2]).collect();
    let seen = std::sync::Mutex::new(Vec::new());
    let w = [0.3, -0.2, 0.05];
    let got = parallel::batch_grad_ranges(data.len(), 64, |range| {
        seen.lock().expect("no panic").push(range.clone());
        // Rebuild the rows of this range from the two slices.
        let chunk: Vec<[f64; 3]> = xs[range.clone()]
            .iter()
            .zip(&ys[range])
            .map(|(x, &y)| [x[0], x[1], y])
            .collect();
        unit_grad(w, &chunk, 1.0)
    })?;
    let mut seen = seen.into_inner().expect("no panic");
    seen.sort_by_key(|range| range.start);
    assert_eq!(seen, [0..64, 64..128, 128..192, 192..256, 256..300]);
    let sliced = parallel::batch_grad(&data, 64, |chunk| unit_grad(w, chunk, 1.0))?;
    assert_eq!(bits(&got), bits(&sliced));
    Ok(())
}

#[test]
fn a_chunk_length_of_zero_is_a_typed_error() {
    let data = rows(10);
    let calls = AtomicUsize::new(0);
    let got = parallel::batch_grad(&data, 0, |chunk| {
        calls.fetch_add(1, Ordering::Relaxed);
        unit_grad([0.0; 3], chunk, 1.0)
    });
    assert_eq!(
        got,
        Err(ScalarAutodiffError::InvalidChunkLength { chunk_len: 0 })
    );
    assert_eq!(calls.load(Ordering::Relaxed), 0);
    let error = got.unwrap_err();
    assert_eq!(error.kind(), "invalid-chunk-length");
    assert_eq!(
        error.to_string(),
        "a batch cannot be split into chunks of 0 rows; give a chunk length of at least 1"
    );
    let ranged = parallel::batch_grad_ranges(10, 0, |_| Ok((0.0, [0.0; 3])));
    assert_eq!(ranged.unwrap_err().kind(), "invalid-chunk-length");
}

/// The log-likelihood of an exponential rate over the rows: `ln` of `w x` for each row.
#[differentiable]
fn log_rate(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += (w * x).ln() - w * x;
    }
    total
}

#[test]
fn a_failing_chunk_returns_the_first_error_in_chunk_order() {
    let mut xs: Vec<f64> = (1..=1000).map(|i| f64::from(i) / 100.0).collect();
    xs[37] = -1.0;
    xs[900] = -2.0;
    // The whole batch fails at row 37, with the same error.
    let want = log_rate_grad(0.5, &xs).unwrap_err();
    assert_eq!(want.kind(), "non-finite-result");
    assert!(want.to_string().contains("ln(-0.5)"), "{want}");
    for pool in pools() {
        for chunk_len in [10, 64, 500] {
            let got =
                pool.install(|| parallel::batch_grad(&xs, chunk_len, |c| log_rate_grad(0.5, c)));
            // The error holds the NaN `ln` produced, which no `==` matches: compare messages.
            let got = got.map(|_| ()).unwrap_err();
            assert_eq!(got.to_string(), want.to_string(), "chunks of {chunk_len}");
        }
    }
}

#[test]
fn chunks_of_different_shapes_are_a_length_mismatch() {
    let data = [1.0; 7];
    // A `Vec` gradient whose length follows the rows: 3, 3 and then 1.
    let got = parallel::batch_grad(&data, 3, |chunk| Ok((1.0, chunk.to_vec())));
    assert_eq!(
        got,
        Err(ScalarAutodiffError::LengthMismatch {
            expected: 3,
            found: 1
        })
    );
}

#[test]
fn an_overflowing_sum_is_a_typed_error() {
    let data = [0.0; 4];
    let value = parallel::batch_grad(&data, 1, |_| Ok((f64::MAX, [1.0, 2.0])));
    let error = value.unwrap_err();
    assert_eq!(
        error,
        ScalarAutodiffError::NonFiniteChunkSum {
            chunk: 1,
            parameter: None,
            previous: f64::MAX,
            contribution: f64::MAX,
        }
    );
    assert_eq!(error.kind(), "non-finite-chunk-sum");
    assert_eq!(
        error.to_string(),
        format!(
            "adding chunk 1's value {:?} to the sum {:?} of the chunks before it overflowed",
            f64::MAX,
            f64::MAX
        )
    );

    // The third chunk pushes the second partial derivative over.
    let gradient = parallel::batch_grad(&data, 1, |_| Ok((1.0, [1.0, f64::MAX / 2.5])));
    let error = gradient.unwrap_err();
    assert_eq!(
        error,
        ScalarAutodiffError::NonFiniteChunkSum {
            chunk: 2,
            parameter: Some(1),
            previous: 2.0 * (f64::MAX / 2.5),
            contribution: f64::MAX / 2.5,
        }
    );
    assert!(error
        .to_string()
        .starts_with("adding chunk 2's gradient[1] "));
}
