//! The runtime on its own: the chapter's graph, every operation's value and derivative,
//! fan-out, typed errors, traces, random properties and scale. One test binary for all
//! of them; `tests/memory.rs` is apart because it reads the process's peak memory.

mod chapter;
mod errors;
mod fanout;
mod operations;
mod properties;
mod scale;
mod trace;
