//! [`Ledger::to_html`]: one self-contained page (inline CSS, SVG and a little script; no
//! network, no Graphviz) that draws the graph as node cards with one arrow per operand
//! edge, the ledger table, and a stepper that walks the reverse pass one edge at a time.
//!
//! Everything is in the static page: without the script it shows every node's final
//! adjoint as the sum of the contributions it received (`2 = 1 + 1`). The script only
//! steps: Next / Previous and the arrow keys highlight one edge's row and arrow and show
//! each adjoint as the sum received so far. Numbers are formatted here, from the pass's
//! own bits, so the page never shows a sum the pass did not compute.

use std::fmt::Write as _;

use super::Ledger;

/// A card's size and the gaps between cards, in SVG units.
const CARD: (f64, f64) = (200.0, 86.0);
const GAP: (f64, f64) = (110.0, 26.0);
const MARGIN: f64 = 24.0;

impl Ledger {
    /// The pass as one self-contained HTML page: the graph (a card per node in forward
    /// order, columns by depth, one arrow per operand edge, so `x * x` draws two), the
    /// ledger table in reverse order, and a stepper (Next / Previous, or the arrow keys)
    /// that replays the pass one edge at a time, showing each adjoint as the sum of the
    /// contributions received so far (`page.html#step=3` opens at the third edge). Names
    /// given with [`Ledger::name`] label the cards.
    ///
    /// ```
    /// use autodiff_runtime::Scalar;
    ///
    /// let x = Scalar::variable(2.0)?;
    /// let square = x.mul(&x)?;
    /// let loss = square.add(&square)?;
    /// let pass = loss.backward()?;
    /// let page = pass.ledger().name(&x, "x").name(&square, "square").to_html();
    /// assert!(page.contains("8 = 4 + 4"));
    /// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
    /// ```
    pub fn to_html(&self) -> String {
        let layout = Layout::of(self);
        let mut page = String::with_capacity(4096 + 600 * (self.nodes.len() + self.edges.len()));
        page.push_str(HEAD);
        let _ = write!(
            page,
            "<h1>Backward pass</h1>\n<p class=\"summary\">seed {}, {} nodes, {} operand \
             edges. Each arrow is one use of an operand: its contribution is the upstream \
             adjoint times the local derivative, and a node's adjoint is the sum of the \
             contributions it receives.</p>\n",
            number(self.seed),
            self.nodes.len(),
            self.edges.len()
        );
        page.push_str(
            "<div class=\"stepper\"><button id=\"previous\" type=\"button\">&larr; Previous</button> \
             <button id=\"next\" type=\"button\">Next &rarr;</button> \
             <span id=\"status\">The final adjoints; step through the pass with Next or the \
             arrow keys.</span></div>\n",
        );
        self.graph(&layout, &mut page);
        self.table(&mut page);
        self.script(&mut page);
        page.push_str("</body>\n</html>\n");
        page
    }

    /// The SVG: cards in columns by depth, arrows from operand to result.
    fn graph(&self, layout: &Layout, page: &mut String) {
        let (width, height) = layout.size();
        let _ = writeln!(
            page,
            "<div class=\"graph\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" \
             height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" \
             aria-label=\"the graph of the pass\">\n<defs><marker id=\"arrow\" \
             viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" \
             markerUnits=\"userSpaceOnUse\" \
             orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>"
        );
        for edge in &self.edges {
            let (from, to) = layout.anchors(self, edge.reverse_index);
            let (x1, y1, x2, y2) = (from.0, from.1, to.0, to.1);
            let bend = (x2 - x1).abs().max(60.0) * 0.45;
            let class = if edge.parent_tracked {
                "edge"
            } else {
                "edge untracked"
            };
            let _ = writeln!(
                page,
                "<g class=\"{class}\" id=\"edge-{index}\"><path d=\"M {x1:.1} {y1:.1} C \
                 {c1:.1} {y1:.1}, {c2:.1} {y2:.1}, {x2:.1} {y2:.1}\" \
                 marker-end=\"url(#arrow)\"/><text x=\"{tx:.1}\" y=\"{ty:.1}\">{contribution}\
                 </text><title>edge {index}: {parent} into {child} (operand {slot}), \
                 contribution {contribution}</title></g>",
                index = edge.reverse_index,
                c1 = x1 + bend,
                c2 = x2 - bend,
                tx = (x1 + x2) / 2.0,
                ty = (y1 + y2) / 2.0 - 4.0,
                contribution = number(edge.contribution),
                parent = escape(&self.label(edge.parent)),
                child = escape(&self.label(edge.child)),
                slot = edge.operand,
            );
        }
        for node in &self.nodes {
            let (x, y) = layout.position(node.topology_index);
            let class = if node.tracked {
                "card"
            } else {
                "card untracked"
            };
            let _ = writeln!(
                page,
                "<g class=\"{class}\" id=\"node-{index}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" \
                 width=\"{w}\" height=\"{h}\" rx=\"8\"/><text x=\"{tx:.1}\" y=\"{t1:.1}\" \
                 class=\"name\">{label}</text><text x=\"{tx:.1}\" y=\"{t2:.1}\">#{index} \
                 {operation}, value {value}</text><text x=\"{tx:.1}\" y=\"{t3:.1}\" \
                 class=\"adjoint\" id=\"adjoint-{index}\">{adjoint}</text></g>",
                index = node.topology_index,
                w = CARD.0,
                h = CARD.1,
                tx = x + 12.0,
                t1 = y + 24.0,
                t2 = y + 48.0,
                t3 = y + 72.0,
                label = escape(&self.label(node.topology_index)),
                operation = node.operation,
                value = number(node.value),
                adjoint = escape(&self.final_adjoint(node.topology_index)),
            );
        }
        page.push_str("</svg></div>\n");
    }

    /// A node's adjoint at the end of the pass, as the sum it is: `8 = 4 + 4`, the seed
    /// for the output, `not tracked` for a node no gradient reaches.
    fn final_adjoint(&self, index: usize) -> String {
        let Some(node) = self.nodes.get(index) else {
            return String::new();
        };
        let Some(adjoint) = node.pass_adjoint else {
            return "not tracked".to_owned();
        };
        let terms: Vec<String> = self
            .edges
            .iter()
            .filter(|edge| edge.parent == index && edge.parent_tracked)
            .map(|edge| number(edge.contribution))
            .collect();
        match terms.is_empty() {
            true => format!("adjoint {} (seed)", number(adjoint)),
            false => format!("adjoint {} = {}", number(adjoint), terms.join(" + ")),
        }
    }

    /// The ledger table, reverse order.
    fn table(&self, page: &mut String) {
        page.push_str(
            "<table>\n<thead><tr><th>reverse order</th><th>consuming result</th>\
             <th>operand use</th><th>operand value</th><th>local derivative</th>\
             <th>upstream adjoint</th><th>edge contribution</th><th>operand's adjoint \
             after</th></tr></thead>\n<tbody>\n",
        );
        for edge in &self.edges {
            let value = self
                .nodes
                .get(edge.parent)
                .map_or(f64::NAN, |node| node.value);
            let after = edge
                .parent_adjoint_after
                .filter(|_| edge.parent_tracked)
                .map_or_else(|| "not tracked".to_owned(), number);
            let _ = writeln!(
                page,
                "<tr id=\"row-{index}\"><td>{index}</td><td>{child}</td><td>{parent} \
                 (operand {slot})</td><td>{value}</td><td>{derivative}</td><td>{upstream}\
                 </td><td>{contribution}</td><td>{after}</td></tr>",
                index = edge.reverse_index,
                child = escape(&self.label(edge.child)),
                parent = escape(&self.label(edge.parent)),
                slot = edge.operand,
                value = number(value),
                derivative = number(edge.local_derivative),
                upstream = number(edge.upstream),
                contribution = number(edge.contribution),
            );
        }
        page.push_str("</tbody>\n</table>\n");
    }

    /// The stepper's data (every number formatted here) and its script.
    fn script(&self, page: &mut String) {
        let output = self.nodes.len().saturating_sub(1);
        page.push_str("<script>\nconst pass = {\n  seed: \"");
        page.push_str(&number(self.seed));
        let _ = write!(page, "\",\n  output: {output},\n  tracked: [");
        for node in &self.nodes {
            let _ = write!(page, "{},", node.pass_adjoint.is_some());
        }
        page.push_str("],\n  edges: [\n");
        for edge in &self.edges {
            let _ = writeln!(
                page,
                "    {{ parent: {}, child: {}, tracked: {}, contribution: \"{}\", after: \"{}\" }},",
                edge.parent,
                edge.child,
                edge.parent_tracked,
                number(edge.contribution),
                edge.parent_adjoint_after.map_or_else(String::new, number),
            );
        }
        page.push_str("  ],\n};\n");
        page.push_str(SCRIPT);
        page.push_str("</script>\n");
    }
}

/// Where the cards go: a column per depth (the longest path from a leaf), rows in
/// forward order within a column.
struct Layout {
    positions: Vec<(f64, f64)>,
    columns: usize,
    rows: usize,
}

impl Layout {
    fn of(ledger: &Ledger) -> Layout {
        // Forward order is a topological order: a node's operands come before it, so one
        // pass in that order settles every depth (no recursion).
        let count = ledger.nodes.len();
        let mut depth = vec![0usize; count];
        let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); count];
        for edge in &ledger.edges {
            if let Some(list) = incoming.get_mut(edge.child) {
                list.push(edge.parent);
            }
        }
        for node in 0..count {
            let deepest = incoming[node]
                .iter()
                .filter_map(|&parent| depth.get(parent))
                .map(|&d| d + 1)
                .max()
                .unwrap_or(0);
            depth[node] = deepest;
        }
        let columns = depth.iter().max().map_or(0, |d| d + 1);
        let mut filled = vec![0usize; columns];
        let positions = depth
            .iter()
            .map(|&column| {
                let row = filled[column];
                filled[column] += 1;
                (
                    MARGIN + column as f64 * (CARD.0 + GAP.0),
                    MARGIN + row as f64 * (CARD.1 + GAP.1),
                )
            })
            .collect();
        Layout {
            positions,
            columns,
            rows: filled.into_iter().max().unwrap_or(0),
        }
    }

    fn size(&self) -> (f64, f64) {
        let columns = self.columns.max(1) as f64;
        let rows = self.rows.max(1) as f64;
        (
            2.0 * MARGIN + columns * CARD.0 + (columns - 1.0) * GAP.0,
            2.0 * MARGIN + rows * CARD.1 + (rows - 1.0) * GAP.1,
        )
    }

    fn position(&self, node: usize) -> (f64, f64) {
        self.positions
            .get(node)
            .copied()
            .unwrap_or((MARGIN, MARGIN))
    }

    /// Where edge `index` (a reverse index) leaves its operand's card and enters its
    /// result's: spread over the card's side by operand use, so the two uses of `x * x`
    /// are two arrows.
    fn anchors(&self, ledger: &Ledger, index: usize) -> ((f64, f64), (f64, f64)) {
        let Some(edge) = ledger.edges.iter().find(|e| e.reverse_index == index) else {
            return ((0.0, 0.0), (0.0, 0.0));
        };
        let spread = |rank: usize, of: usize| {
            let step = (CARD.1 - 20.0) / of.max(1) as f64;
            10.0 + step * (rank as f64 + 0.5)
        };
        let outgoing: Vec<usize> = ledger
            .edges
            .iter()
            .filter(|e| e.parent == edge.parent)
            .map(|e| e.reverse_index)
            .collect();
        let rank = outgoing.iter().position(|&i| i == index).unwrap_or(0);
        let incoming = ledger
            .edges
            .iter()
            .filter(|e| e.child == edge.child)
            .count();
        let (px, py) = self.position(edge.parent);
        let (cx, cy) = self.position(edge.child);
        (
            (px + CARD.0, py + spread(rank, outgoing.len())),
            (cx, cy + spread(edge.operand, incoming)),
        )
    }
}

/// A number as the page shows it: the shortest digits that read back to the same `f64`,
/// in scientific notation when very large or small.
fn number(value: f64) -> String {
    let magnitude = value.abs();
    if value == 0.0 || !value.is_finite() || (1e-4..1e9).contains(&magnitude) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

const HEAD: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Backward pass</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #1d2430; background: #fbfbf8; }
h1 { font-size: 1.4rem; margin: 0 0 .4rem; }
.summary { max-width: 52rem; margin: 0 0 1rem; }
.stepper { margin: .6rem 0; }
.stepper button { font: inherit; padding: .3rem .8rem; margin-right: .3rem; }
#status { margin-left: .6rem; color: #4a5568; }
.graph { overflow: auto; border: 1px solid #d8dce3; background: #fff; max-height: 70vh; }
svg text { font-family: ui-monospace, monospace; font-size: 12px; fill: #1d2430; }
.card rect { fill: #f3f6fb; stroke: #7186a8; stroke-width: 1.2; }
.card.untracked rect { fill: #f4f4f4; stroke: #aaa; stroke-dasharray: 4 3; }
.card .name { font-weight: bold; font-size: 13px; }
.card .adjoint { fill: #1f5fbf; }
.card.received rect { fill: #e7f0ff; }
.edge path { fill: none; stroke: #8a94a6; stroke-width: 1.4; }
.edge text { font-size: 11px; fill: #6b7280; }
.edge.untracked path { stroke-dasharray: 5 4; }
marker path { fill: #8a94a6; }
.edge.current path { stroke: #d9480f; stroke-width: 3; }
.edge.current text { fill: #d9480f; font-weight: bold; }
.edge.done path { stroke: #1f5fbf; }
table { border-collapse: collapse; margin-top: 1rem; font-size: .9rem; }
th, td { border: 1px solid #d8dce3; padding: .25rem .55rem; text-align: right; }
th { background: #eef1f6; }
td:nth-child(2), td:nth-child(3) { text-align: left; }
tr.current td { background: #ffe8d9; font-weight: bold; }
tr.done td { background: #eef4ff; }
</style>
</head>
<body>
"#;

const SCRIPT: &str = r##"(function () {
  const edges = pass.edges;
  let step = -1; // -1: the final state as the static page shows it.
  const show = (id, cls, on) => {
    const element = document.getElementById(id);
    if (element) element.classList.toggle(cls, on);
  };
  function render() {
    const terms = pass.tracked.map(() => []);
    const sums = pass.tracked.map(() => null);
    const last = step < 0 ? edges.length : step;
    edges.forEach((edge, index) => {
      const applied = index < last;
      const done = step >= 0 && applied && index !== last - 1;
      show("edge-" + index, "done", done);
      show("row-" + index, "done", done);
      show("edge-" + index, "current", step >= 0 && index === last - 1);
      show("row-" + index, "current", step >= 0 && index === last - 1);
      if (applied && edge.tracked) {
        terms[edge.parent].push(edge.contribution);
        sums[edge.parent] = edge.after;
      }
    });
    pass.tracked.forEach((tracked, node) => {
      const text = document.getElementById("adjoint-" + node);
      if (!text) return;
      let shown;
      if (!tracked) shown = "not tracked";
      else if (node === pass.output) shown = "adjoint " + pass.seed + " (seed)";
      else if (terms[node].length === 0) shown = "adjoint: nothing yet";
      else shown = "adjoint " + sums[node] + " = " + terms[node].join(" + ");
      text.textContent = shown;
      show("node-" + node, "received", step >= 0 && terms[node].length > 0);
    });
    const status = document.getElementById("status");
    if (step < 0) status.textContent = "The final adjoints; step through the pass with Next or the arrow keys.";
    else if (step === 0) status.textContent = "Step 0 of " + edges.length + ": the seed at the output.";
    else status.textContent = "Step " + step + " of " + edges.length + ": edge " + (step - 1) + ".";
  }
  function go(delta) {
    // From the final state, Next starts at the first edge and Previous at the last.
    const start = step < 0 ? (delta > 0 ? 0 : edges.length + 1) : step;
    step = Math.max(0, Math.min(edges.length, start + delta));
    history.replaceState(null, "", "#step=" + step);
    render();
  }
  // `page.html#step=3` opens at step 3: a link to one moment of the pass.
  const asked = /^#step=(\d+)$/.exec(location.hash);
  if (asked) step = Math.min(edges.length, Number(asked[1]));
  document.getElementById("next").addEventListener("click", () => go(1));
  document.getElementById("previous").addEventListener("click", () => go(-1));
  document.addEventListener("keydown", (event) => {
    if (event.key === "ArrowRight" || event.key === "ArrowDown") { go(1); event.preventDefault(); }
    if (event.key === "ArrowLeft" || event.key === "ArrowUp") { go(-1); event.preventDefault(); }
  });
  render();
})();
"##;

#[cfg(test)]
mod tests {
    use crate::Scalar;

    /// The chapter's graph: `loss = square + square`, `square = x * x` at `x = 2`.
    #[test]
    fn the_chapters_page_shows_every_contribution_and_sum() {
        let x = Scalar::variable(2.0).unwrap();
        let square = x.mul(&x).unwrap();
        let loss = square.add(&square).unwrap();
        let pass = loss.backward().unwrap();
        let page = pass
            .ledger()
            .name(&x, "x")
            .name(&square, "square")
            .name(&loss, "<loss>")
            .to_html();
        // Four arrows (two uses of square, two of x), four rows.
        assert_eq!(page.matches("<g class=\"edge\" id=\"edge-").count(), 4);
        assert_eq!(page.matches("<tr id=\"row-").count(), 4);
        // Adjoints 1 (seed), 2 = 1 + 1, 8 = 4 + 4.
        assert!(page.contains("adjoint 1 (seed)"));
        assert!(page.contains("adjoint 2 = 1 + 1"));
        assert!(page.contains("adjoint 8 = 4 + 4"));
        // Names are escaped; nothing is fetched from elsewhere.
        assert!(page.contains("&lt;loss&gt;"));
        assert!(!page.contains("<loss>"));
        assert!(!page.contains("http://") || page.matches("http://").count() == 1);
        assert!(!page.contains("https://"));
        assert!(page.contains("</html>"));
    }

    #[test]
    fn numbers_read_back_to_their_bits() {
        for value in [0.1 + 0.2, 1.0 / 3.0, 1e-12, 6.02e23, -2.0, 0.0] {
            let shown = super::number(value);
            assert_eq!(
                shown.parse::<f64>().unwrap().to_bits(),
                value.to_bits(),
                "{shown}"
            );
        }
    }

    /// A chain of a thousand nodes lays out without recursion, in a thousand columns.
    #[test]
    fn a_long_chain_lays_out() {
        let x = Scalar::variable(0.5).unwrap();
        let mut y = x.clone();
        for _ in 0..1000 {
            y = y.sin().unwrap();
        }
        let page = y.backward().unwrap().ledger().to_html();
        assert_eq!(page.matches("<tr id=\"row-").count(), 1000);
        assert!(page.contains("id=\"node-1000\""));
    }
}
