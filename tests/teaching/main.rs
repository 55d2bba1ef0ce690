//! What a learner reads: the demo's chapter lines, the graph picture, and the ledger page
//! in a headless browser.

// Each test module includes its example's source under the example's own name
// (`curve_fit::curve_fit`), as the example's users name it.
#![allow(clippy::module_inception)]

mod demo;
mod graph_picture;
mod ledger_page;
