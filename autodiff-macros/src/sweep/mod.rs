//! `name_grad`'s fast path: the body as a compiled forward sweep and reverse sweep; and
//! `name_hvp`'s, the same two sweeps on duals (forward over reverse).
//!
//! `lower` reads the rewritten body (the very code the trace runs) into the analysed form
//! of `ir`; `analyse` runs it once per function for the sweeps and once for the halves
//! (see `Analysis`), with `names` telling which data the reverse sweep may recompute and
//! `checks` where the forward sweep checks its numbers; `emit` writes the two sweeps from
//! it, and `emit/halves` a function's halves, which other functions' sweeps call (on
//! `f64`s for `name_grad`, on duals for `name_hvp`: one program for both). A body outside the forms `lower` knows keeps the
//! trace alone: building with `AUTODIFF_WHY_TRACED=1` set (a developer's aid) prints, as
//! the macro runs, the rewritten statement where the sweeps gave up.

mod analyse;
mod checks;
mod emit;
mod ir;
mod lower;
mod names;

pub(crate) use analyse::{stopped, Analysis, Reason};
pub(crate) use emit::{dual_sweeps, halves, sweeps, COMPILED_UP_TO};
pub(crate) use lower::{copy_type, take_reason};
