//! What a learner reads: the demo's chapter lines, the graph picture, and the ledger page
//! in a headless browser.

mod demo;
mod graph_picture;
mod ledger_page;
