//! A batch's gradient computed chunk by chunk on rayon's thread pool, summed in a fixed
//! order: the same bits for any number of threads (the `rayon` feature).
//!
//! [`batch_grad`] splits a slice of rows into chunks of `chunk_len` rows, calls a
//! `name_grad` on each chunk on rayon's current pool, and adds the chunks' values and
//! gradients left to right in chunk order on the calling thread. [`batch_grad_ranges`] does
//! the same over row indices, for data kept in several slices (features and labels).
//!
//! # Write the loss as a sum over the rows it is given
//!
//! The result is the sum of the chunks' results. A loss that sums over its rows (or
//! multiplies that sum by a `#[constant]` scale such as `1 / n` for the whole batch's `n`)
//! gives the whole batch's loss and gradient; a loss that divides by its own number of
//! rows does not, as the chunks' means do not add up to the batch's mean.
//!
//! # The same bits for any number of threads
//!
//! Where the chunks start depends only on `chunk_len` and the number of rows, and the sum
//! runs in chunk order whichever thread computed which chunk, so a given `chunk_len` gives
//! the same value and gradient, bit for bit, on a pool of 1, 2 or 64 threads. A different
//! `chunk_len` adds in a different order: the result equals one call over the whole batch
//! up to rounding, not bit for bit.
//!
//! # Keep the pool warm, and run the loop inside it
//!
//! The tape behind `name_grad` is per thread, and a thread's first call grows it while
//! later calls reuse it. Rayon's global pool (what `batch_grad` runs on unless it is called
//! inside [`ThreadPool::install`](rayon::ThreadPool::install)) keeps its threads for the
//! life of the process, and so does a pool built once; building a pool or spawning threads
//! on every step makes every call a first call on a fresh thread (in `benches/gradients.rs`,
//! two threads spawned per call were no faster than one warm thread over the whole batch).
//!
//! A call from outside the pool (from `main`, or from an `install` entered on every step)
//! hands the chunks to a worker, sleeps, and is woken when they are done: in the benchmark
//! that hop cost 15 to 20 µs a call, against about 3 µs for a call made on one of the
//! pool's own threads, which computes a chunk itself while the others run. So build the
//! pool once and run the whole training loop inside one `install`, as the example below
//! does (see the README's "Performance" for the numbers).
//!
//! # Chunk length
//!
//! Each chunk is one call of `f` with one gradient the size of the parameters, all held
//! until they are summed, so give each thread a few chunks of many rows rather than many
//! small ones: for the 256-row MLP batch of the benchmark, chunks of 64 or 128 rows.
//!
//! ```
//! use scalar_autodiff::{differentiable, parallel, ScalarAutodiffError};
//!
//! /// Squared error of the line `w x + b` over the rows `[x, y]` it is given, times `scale`:
//! /// a sum, so the chunks' results add up to the batch's.
//! #[differentiable]
//! fn loss(w: f64, b: f64, rows: &[[f64; 2]], #[constant] scale: f64) -> f64 {
//!     let mut total = 0.0;
//!     for row in rows {
//!         let err = w * row[0] + b - row[1];
//!         total += err * err;
//!     }
//!     total * scale
//! }
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let rows: Vec<[f64; 2]> = (0..1000)
//!         .map(|i| {
//!             let x = f64::from(i) / 500.0 - 1.0;
//!             [x, 2.5 * x - 1.0]
//!         })
//!         .collect();
//!     let scale = 1.0 / rows.len() as f64; // the mean over the whole batch
//!
//!     // Chunks of 128 rows on rayon's global pool, summed in chunk order: one call over
//!     // the whole batch up to rounding.
//!     let chunked = parallel::batch_grad(&rows, 128, |chunk| loss_grad(0.0, 0.0, chunk, scale))?;
//!     let whole = loss_grad(0.0, 0.0, &rows, scale)?;
//!     assert!((chunked.0 - whole.0).abs() <= 1e-12 * whole.0);
//!     for (a, b) in chunked.1.iter().zip(whole.1) {
//!         assert!((a - b).abs() <= 1e-12 * b.abs());
//!     }
//!
//!     // The same bits on a pool of one thread (built once, kept for every step).
//!     let pool = parallel::rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
//!     let one_thread = pool.install(|| {
//!         parallel::batch_grad(&rows, 128, |chunk| loss_grad(0.0, 0.0, chunk, scale))
//!     })?;
//!     assert_eq!(one_thread, chunked);
//!
//!     // Training: the whole loop inside one pool, built once; every step's chunks run on
//!     // the same warm threads, the loop's own thread computing one of them.
//!     let pool = parallel::rayon::ThreadPoolBuilder::new().build()?;
//!     let (w, b) = pool.install(|| -> Result<(f64, f64), ScalarAutodiffError> {
//!         let (mut w, mut b) = (0.0, 0.0);
//!         for _ in 0..80 {
//!             let (_value, [dw, db]) =
//!                 parallel::batch_grad(&rows, 128, |chunk| loss_grad(w, b, chunk, scale))?;
//!             w -= 0.5 * dw;
//!             b -= 0.5 * db;
//!         }
//!         Ok((w, b))
//!     })?;
//!     assert!((w - 2.5).abs() < 1e-6 && (b + 1.0).abs() < 1e-6);
//!     Ok(())
//! }
//! ```

use std::ops::Range;

use rayon::prelude::*;

use crate::{Parameters, ScalarAutodiffError};

/// The rayon this module runs on (version 1), for building a pool whose
/// [`install`](rayon::ThreadPool::install) makes it the one [`batch_grad`] uses, without a
/// dependency of your own.
pub use rayon;

type Result<T> = std::result::Result<T, ScalarAutodiffError>;

/// The value and gradient of a loss over `data`, computed chunk by chunk on rayon's
/// current pool and summed in chunk order: `f` is called on `data[0..chunk_len]`,
/// `data[chunk_len..2 * chunk_len]`, ..., and the last chunk holds the rows that remain.
///
/// `f` is typically a `name_grad` whose loss sums over its rows (see the
/// [module documentation](self)): `|rows| loss_grad(&params, rows)`. The chunks run on the
/// pool's threads in any order; their results are added on the calling thread, left to
/// right (the value as `f64`s, the gradient with [`Parameters::zip_mut`]), so the result
/// depends on `chunk_len` but never on the number of threads. `G` is the gradient type
/// `name_grad` returns: `[f64; N]`, `Vec<f64>` or a `#[derive(Parameters)]` struct (a
/// tuple gradient, from several differentiated parameters of different kinds, is not a
/// `Parameters`: put them in one struct).
///
/// A batch of one chunk is one call of `f` on the calling thread. An empty `data` is one
/// call of `f` on the empty slice, as a call over the whole batch would be (a sum over no
/// rows: the value 0 and a zero gradient).
///
/// # Errors
///
/// - [`ScalarAutodiffError::InvalidChunkLength`] if `chunk_len` is 0; `f` is not called;
/// - the first error in chunk order that `f` returned (every chunk is computed first);
/// - [`ScalarAutodiffError::LengthMismatch`] if a chunk's gradient does not have the first
///   chunk's number of scalars (a `Vec` gradient whose length depends on the rows);
/// - [`ScalarAutodiffError::NonFiniteChunkSum`] if adding a chunk's value or partial
///   derivative to the sum before it overflows.
pub fn batch_grad<T, G, F>(data: &[T], chunk_len: usize, f: F) -> Result<(f64, G)>
where
    T: Sync,
    G: Parameters<Gradient = G> + Send,
    F: Fn(&[T]) -> Result<(f64, G)> + Sync,
{
    batch_grad_ranges(data.len(), chunk_len, |rows| {
        // The ranges lie inside `0..data.len()`.
        f(data.get(rows).unwrap_or_default())
    })
}

/// [`batch_grad`] over the rows `0..len` by index: `f` gets each chunk's range of rows
/// (`0..chunk_len`, `chunk_len..2 * chunk_len`, ...) and slices the data itself, for data
/// kept in several slices.
///
/// ```
/// use scalar_autodiff::{differentiable, parallel};
///
/// /// Squared error over the points it is given.
/// #[differentiable]
/// fn loss(w: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
///     let mut total = 0.0;
///     for (x, y) in xs.iter().zip(ys) {
///         total += (w * x + b - y) * (w * x + b - y);
///     }
///     total
/// }
///
/// let xs: Vec<f64> = (0..300).map(f64::from).collect();
/// let ys: Vec<f64> = xs.iter().map(|x| 3.0 * x).collect();
/// let (value, [dw, db]) = parallel::batch_grad_ranges(xs.len(), 64, |rows| {
///     loss_grad(1.0, 0.0, &xs[rows.clone()], &ys[rows])
/// })?;
/// let (whole, _) = loss_grad(1.0, 0.0, &xs, &ys)?;
/// assert_eq!(value, whole); // sums of squares of integers: exact either way
/// assert!(dw < 0.0 && db < 0.0);
/// # Ok::<(), scalar_autodiff::ScalarAutodiffError>(())
/// ```
///
/// # Errors
///
/// As [`batch_grad`].
pub fn batch_grad_ranges<G, F>(len: usize, chunk_len: usize, f: F) -> Result<(f64, G)>
where
    G: Parameters<Gradient = G> + Send,
    F: Fn(Range<usize>) -> Result<(f64, G)> + Sync,
{
    if chunk_len == 0 {
        return Err(ScalarAutodiffError::InvalidChunkLength { chunk_len });
    }
    let chunks = len.div_ceil(chunk_len);
    if chunks <= 1 {
        return f(0..len);
    }
    let results: Vec<Result<(f64, G)>> = (0..chunks)
        .into_par_iter()
        .map(|chunk| {
            let start = chunk * chunk_len;
            f(start..len.min(start + chunk_len))
        })
        .collect();
    let mut results = results.into_iter();
    match results.next() {
        Some(first) => sum_in_chunk_order(first, results),
        None => f(0..len),
    }
}

/// The chunks' values and gradients added left to right, `first` then `rest`, or the first
/// error in chunk order.
fn sum_in_chunk_order<G: Parameters<Gradient = G>>(
    first: Result<(f64, G)>,
    rest: impl Iterator<Item = Result<(f64, G)>>,
) -> Result<(f64, G)> {
    let (mut value, mut gradient) = first?;
    for (chunk, result) in (1..).zip(rest) {
        let (chunk_value, chunk_gradient) = result?;
        let sum = value + chunk_value;
        if !sum.is_finite() {
            return Err(ScalarAutodiffError::NonFiniteChunkSum {
                chunk,
                parameter: None,
                previous: value,
                contribution: chunk_value,
            });
        }
        value = sum;
        let mut parameter = 0;
        let mut overflow = None;
        gradient.zip_mut(&chunk_gradient, |total, part| {
            let sum = *total + part;
            if !sum.is_finite() && overflow.is_none() {
                overflow = Some(ScalarAutodiffError::NonFiniteChunkSum {
                    chunk,
                    parameter: Some(parameter),
                    previous: *total,
                    contribution: part,
                });
            }
            *total = sum;
            parameter += 1;
        })?;
        if let Some(error) = overflow {
            return Err(error);
        }
    }
    Ok((value, gradient))
}
