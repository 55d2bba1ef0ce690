//! [`Ledger::to_html`] and [`Page::to_html`]: one self-contained page (inline CSS, SVG and
//! a little script; no network, no Graphviz) that draws the graph as node cards with one
//! arrow per operand edge, the ledger table, a stepper that walks the reverse pass one
//! edge at a time, and below them the page's [`Panel`](crate::Panel)s.
//!
//! Everything is in the static page: without the script it shows every node's final
//! adjoint as the sum of the contributions it received (`2 = 1 + 1`). The script only
//! steps: Next / Previous and the arrow keys highlight one edge's row and arrow and show
//! each adjoint as the sum received so far. Numbers are formatted here, from the pass's
//! own bits, so the page never shows a sum the pass did not compute; cards and arrows
//! round long numbers to four significant digits, and the table and tooltips have every
//! digit. Large graphs keep their size and scroll: a column per depth, a row per card.

use std::fmt::Write as _;

use super::page::{escape, inline, Page};
use super::Ledger;

/// A card's size and the gaps between cards, in SVG units.
const CARD: (f64, f64) = (232.0, 86.0);
const GAP: (f64, f64) = (110.0, 26.0);
const MARGIN: f64 = 24.0;
/// The characters a card's adjoint line holds (12px monospace, padding aside).
const CARD_CHARS: usize = 28;
/// Above this many edges, only the current edge shows its contribution on the arrow.
const BUSY_EDGES: usize = 40;

impl Ledger {
    /// The pass as one self-contained HTML page: the graph (a card per node in forward
    /// order, columns by depth, one arrow per operand edge, so `x * x` draws two), the
    /// ledger table in reverse order, and a stepper (Next / Previous, or the arrow keys)
    /// that replays the pass one edge at a time, showing each adjoint as the sum of the
    /// contributions received so far (`page.html#step=3` opens at the third edge). Names
    /// given with [`Ledger::name`] label the cards.
    ///
    /// The same as `self.page().to_html()`; use [`Ledger::page`] to give the page a title,
    /// an introduction and panels of your own.
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
        self.page().to_html()
    }

    /// A [`Page`] for this pass, to give it a title, an introduction and panels of your
    /// own ([`Panel`](crate::Panel)) before writing it with [`Page::to_html`].
    ///
    /// ```
    /// use autodiff_runtime::{Panel, Scalar};
    ///
    /// let x = Scalar::variable(2.0)?;
    /// let loss = x.mul(&x)?;
    /// let pass = loss.backward()?;
    /// let ledger = pass.ledger().name(&x, "x").name(&loss, "loss");
    /// let gradient = x.gradient().unwrap_or(f64::NAN);
    /// let html = ledger
    ///     .page()
    ///     .title("The square")
    ///     .intro("`loss = x * x` at `x = 2`: one node, two uses.")
    ///     .panel(
    ///         Panel::new("Stored gradient")
    ///             .columns(["after", "x"])
    ///             .row(["`loss.backward()`".to_owned(), gradient.to_string()]),
    ///     )
    ///     .to_html();
    /// assert!(html.contains("<h1>The square</h1>"));
    /// assert!(html.contains("<code>loss.backward()</code>"));
    /// assert!(html.contains("<td class=\"number\">4</td>"));
    /// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
    /// ```
    pub fn page(&self) -> Page<'_> {
        Page::new(self)
    }

    /// The SVG: cards in columns by depth, arrows from operand to result. Cards and
    /// arrows show numbers to four significant digits; each card's and
    /// arrow's tooltip, like the table, has every digit.
    fn graph(&self, layout: &Layout, page: &mut String) {
        let (width, height) = layout.size();
        // Many arrows' labels would pile up: then only the current edge shows its label.
        let busy = if self.edges.len() > BUSY_EDGES {
            " busy"
        } else {
            ""
        };
        let _ = writeln!(
            page,
            "<div class=\"graph{busy}\" id=\"graph\"><svg xmlns=\"http://www.w3.org/2000/svg\" \
             width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" \
             aria-label=\"the graph of the pass\">\n<defs><marker id=\"arrow\" \
             viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"9\" markerHeight=\"9\" \
             markerUnits=\"userSpaceOnUse\" \
             orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\"/></marker></defs>"
        );
        // The contributions each node received, in the order the pass added them.
        let mut received: Vec<Vec<f64>> = vec![Vec::new(); self.nodes.len()];
        for (at, edge) in self.edges.iter().enumerate() {
            if let Some(terms) = received
                .get_mut(edge.parent)
                .filter(|_| edge.parent_tracked)
            {
                terms.push(edge.contribution);
            }
            let ((x1, y1), (x2, y2)) = layout.anchors(at);
            let bend = (x2 - x1).abs().max(60.0) * 0.45;
            let class = if edge.parent_tracked {
                "edge"
            } else {
                "edge untracked"
            };
            // The label sits on the curve past its middle, where arrows into one card
            // have spread apart.
            let (tx, ty) = bezier([(x1, y1), (x1 + bend, y1), (x2 - bend, y2), (x2, y2)], 0.6);
            let _ = writeln!(
                page,
                "<g class=\"{class}\" id=\"edge-{index}\"><path d=\"M {x1:.1} {y1:.1} C \
                 {c1:.1} {y1:.1}, {c2:.1} {y2:.1}, {x2:.1} {y2:.1}\" \
                 marker-end=\"url(#arrow)\"/><text x=\"{tx:.1}\" y=\"{ty:.1}\">{short}\
                 </text><title>edge {index}: {parent} into {child} (operand {slot}), \
                 contribution {contribution}</title></g>",
                index = edge.reverse_index,
                c1 = x1 + bend,
                c2 = x2 - bend,
                ty = ty - 4.0,
                short = short(edge.contribution),
                contribution = number(edge.contribution),
                parent = escape(&self.label(edge.parent)),
                child = escape(&self.label(edge.child)),
                slot = edge.operand,
            );
        }
        for node in &self.nodes {
            let terms = received
                .get(node.topology_index)
                .map_or(&[][..], Vec::as_slice);
            let (x, y) = layout.position(node.topology_index);
            let class = if node.tracked {
                "card"
            } else {
                "card untracked"
            };
            let label = escape(&self.label(node.topology_index));
            let _ = writeln!(
                page,
                "<g class=\"{class}\" id=\"node-{index}\"><rect x=\"{x:.1}\" y=\"{y:.1}\" \
                 width=\"{w}\" height=\"{h}\" rx=\"8\"/><text x=\"{tx:.1}\" y=\"{t1:.1}\" \
                 class=\"name\">{label}</text><text x=\"{tx:.1}\" y=\"{t2:.1}\">#{index} \
                 {operation}, value {value}</text><text x=\"{tx:.1}\" y=\"{t3:.1}\" \
                 class=\"adjoint\" id=\"adjoint-{index}\">{adjoint}</text><title>{label}: \
                 #{index} {operation}, value {full_value}; {full_adjoint}</title></g>",
                index = node.topology_index,
                w = CARD.0,
                h = CARD.1,
                tx = x + 12.0,
                t1 = y + 24.0,
                t2 = y + 48.0,
                t3 = y + 72.0,
                operation = node.operation,
                value = short(node.value),
                full_value = number(node.value),
                adjoint = escape(&final_adjoint(node.pass_adjoint, terms, short, CARD_CHARS)),
                full_adjoint = escape(&final_adjoint(node.pass_adjoint, terms, number, usize::MAX)),
            );
        }
        page.push_str("</svg></div>\n");
    }

    /// Whether a card or an arrow shows a number rounded.
    fn rounds(&self) -> bool {
        let values = self
            .nodes
            .iter()
            .flat_map(|n| [Some(n.value), n.pass_adjoint]);
        let edges = self
            .edges
            .iter()
            .flat_map(|e| [Some(e.contribution), e.parent_adjoint_after]);
        values
            .chain(edges)
            .flatten()
            .any(|value| short(value) != number(value))
    }

    /// The ledger table, reverse order.
    fn table(&self, page: &mut String) {
        page.push_str(
            "<table class=\"ledger\">\n<thead><tr><th>reverse order</th><th>consuming result</th>\
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
        page.push_str(&short(self.seed));
        let _ = write!(
            page,
            "\",\n  output: {output},\n  limit: {CARD_CHARS},\n  tracked: ["
        );
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
                short(edge.contribution),
                edge.parent_adjoint_after.map_or_else(String::new, short),
            );
        }
        page.push_str("  ],\n};\n");
        page.push_str(SCRIPT);
        page.push_str("</script>\n");
    }
}

impl Page<'_> {
    /// The page as one self-contained HTML document (inline CSS, SVG and script; nothing
    /// fetched from the network): the title, the introduction, the pass as
    /// [`Ledger::to_html`] draws it, then the panels in the order added, each a
    /// `<section id="panel-N">` counting from 0.
    pub fn to_html(&self) -> String {
        let ledger = self.ledger;
        let layout = Layout::of(ledger);
        let mut page =
            String::with_capacity(4096 + 600 * (ledger.nodes.len() + ledger.edges.len()));
        page.push_str(HEAD_START);
        page.push_str(&escape(&self.title.replace('`', "")));
        page.push_str(HEAD_END);
        let _ = writeln!(page, "<h1>{}</h1>", inline(&self.title));
        for text in &self.intro {
            let _ = writeln!(page, "<p class=\"intro\">{}</p>", inline(text));
        }
        let _ = writeln!(
            page,
            "<p class=\"summary\">seed {}, {} nodes, {} operand \
             edges. Each arrow is one use of an operand: its contribution is the upstream \
             adjoint times the local derivative, and a node's adjoint is the sum of the \
             contributions it receives.{}</p>",
            number(ledger.seed),
            ledger.nodes.len(),
            ledger.edges.len(),
            match ledger.rounds() {
                true =>
                    " Cards and arrows round to four significant digits; the table, \
                         and the tooltip of each card and arrow, have every digit.",
                false => "",
            }
        );
        page.push_str(
            "<div class=\"stepper\"><button id=\"previous\" type=\"button\">&larr; Previous</button> \
             <button id=\"next\" type=\"button\">Next &rarr;</button> \
             <span id=\"status\">The final adjoints; step through the pass with Next or the \
             arrow keys.</span></div>\n",
        );
        ledger.graph(&layout, &mut page);
        ledger.table(&mut page);
        if !self.panels.is_empty() {
            page.push_str("<div class=\"panels\" id=\"panels\">\n");
            for (index, panel) in self.panels.iter().enumerate() {
                panel.write_html(index, &mut page);
            }
            page.push_str("</div>\n");
        }
        ledger.script(&mut page);
        page.push_str("</body>\n</html>\n");
        page
    }
}

/// A node's adjoint at the end of the pass (`None`: not tracked), as the sum of the
/// contributions it received (`terms`): `8 = 4 + 4`, the seed for the output, `not tracked`
/// for a node no gradient reaches; numbers written with `show`. A sum longer than `limit`
/// characters is written `= sum of 4` instead (the script writes the same).
fn final_adjoint(
    adjoint: Option<f64>,
    terms: &[f64],
    show: fn(f64) -> String,
    limit: usize,
) -> String {
    let Some(adjoint) = adjoint else {
        return "not tracked".to_owned();
    };
    if terms.is_empty() {
        return format!("adjoint {} (seed)", show(adjoint));
    }
    let shown: Vec<String> = terms.iter().map(|&term| show(term)).collect();
    let sum = format!("adjoint {} = {}", show(adjoint), shown.join(" + "));
    match sum.chars().count() <= limit {
        true => sum,
        false => format!("adjoint {} = sum of {}", show(adjoint), terms.len()),
    }
}

/// Where the cards and the arrows' ends go. A column per depth (the longest path from a
/// leaf; a constant leaf sits just before its first consumer rather than far left with the
/// variables). Within a column, cards are ordered by the mean row of their operands, so
/// arrows run mostly straight, and a constant sits just below its consumer's other
/// operands. Every step is a loop over the nodes or edges in forward order.
struct Layout {
    positions: Vec<(f64, f64)>,
    /// Per reverse edge index: where it leaves its operand's card and enters its result's.
    anchors: Vec<((f64, f64), (f64, f64))>,
    columns: usize,
    rows: usize,
}

impl Layout {
    fn of(ledger: &Ledger) -> Layout {
        let count = ledger.nodes.len();
        let mut operands: Vec<Vec<usize>> = vec![Vec::new(); count];
        let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); count];
        for edge in &ledger.edges {
            if edge.parent < edge.child && edge.child < count {
                operands[edge.child].push(edge.parent);
                consumers[edge.parent].push(edge.child);
            }
        }
        // Forward order is a topological order: a node's operands come before it, so one
        // pass in that order settles every depth (no recursion).
        let mut depth = vec![0usize; count];
        for node in 0..count {
            depth[node] = operands[node]
                .iter()
                .map(|&parent| depth[parent] + 1)
                .max()
                .unwrap_or(0);
        }
        // A constant's consumers have their depths already; moving it right changes none.
        for node in 0..count {
            let constant = operands[node].is_empty() && !ledger.nodes[node].tracked;
            if let Some(first) = consumers[node].iter().map(|&c| depth[c]).min() {
                if constant {
                    depth[node] = first.saturating_sub(1);
                }
            }
        }
        let columns = depth.iter().max().map_or(0, |d| d + 1);
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); columns];
        for (node, &column) in depth.iter().enumerate() {
            members[column].push(node);
        }
        // Column by column, left to right: a card's key is the mean row of its operands
        // (all in earlier columns), and cards with no operands keep forward order. Then
        // each constant goes just below the operands its first consumer already has (the
        // variable it multiplies, say), so its arrow is short.
        let mut row: Vec<Option<f64>> = vec![None; count];
        let mean_row = |nodes: &[usize], row: &[Option<f64>]| {
            let placed: Vec<f64> = nodes.iter().filter_map(|&n| row[n]).collect();
            (!placed.is_empty()).then(|| placed.iter().sum::<f64>() / placed.len() as f64)
        };
        for column in &members {
            let constant = |node: usize| operands[node].is_empty() && !ledger.nodes[node].tracked;
            let mut keyed: Vec<(f64, usize)> = Vec::with_capacity(column.len());
            for &node in column.iter().filter(|&&node| !constant(node)) {
                let key = mean_row(&operands[node], &row).unwrap_or(f64::INFINITY);
                keyed.push((key, node));
            }
            sort(&mut keyed);
            for (at, (key, node)) in keyed.iter_mut().enumerate() {
                *key = at as f64;
                row[*node] = Some(*key);
            }
            for &node in column.iter().filter(|&&node| constant(node)) {
                let key = consumers[node]
                    .first()
                    .and_then(|&consumer| mean_row(&operands[consumer], &row))
                    .map_or(f64::INFINITY, |key| key + 0.5);
                keyed.push((key, node));
            }
            sort(&mut keyed);
            for (at, &(_, node)) in keyed.iter().enumerate() {
                row[node] = Some(at as f64);
            }
        }
        let positions: Vec<(f64, f64)> = (0..count)
            .map(|node| {
                (
                    MARGIN + depth[node] as f64 * (CARD.0 + GAP.0),
                    MARGIN + row[node].unwrap_or(0.0) * (CARD.1 + GAP.1),
                )
            })
            .collect();
        let anchors = Self::anchors_of(ledger, &positions);
        Layout {
            positions,
            anchors,
            columns,
            rows: members.iter().map(Vec::len).max().unwrap_or(0),
        }
    }

    /// Arrows leave an operand's card spread over its right side in the order of the
    /// cards they go to, top to bottom, and enter a result's left side in operand order,
    /// so the two uses of `x * x` are two arrows.
    fn anchors_of(ledger: &Ledger, positions: &[(f64, f64)]) -> Vec<((f64, f64), (f64, f64))> {
        let at = |node: usize| positions.get(node).copied().unwrap_or((MARGIN, MARGIN));
        let spread = |rank: usize, of: usize| {
            let step = (CARD.1 - 20.0) / of.max(1) as f64;
            10.0 + step * (rank as f64 + 0.5)
        };
        let count = positions.len();
        let mut leaving: Vec<Vec<usize>> = vec![Vec::new(); count];
        let mut entering: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (index, edge) in ledger.edges.iter().enumerate() {
            if edge.parent < count && edge.child < count {
                leaving[edge.parent].push(index);
                entering[edge.child].push(index);
            }
        }
        let mut exits = vec![(0, 1); ledger.edges.len()];
        let mut entries = vec![(0, 1); ledger.edges.len()];
        for list in &mut leaving {
            list.sort_by(|&a, &b| {
                let (ea, eb) = (&ledger.edges[a], &ledger.edges[b]);
                at(ea.child)
                    .1
                    .total_cmp(&at(eb.child).1)
                    .then(at(ea.child).0.total_cmp(&at(eb.child).0))
                    .then(ea.operand.cmp(&eb.operand))
            });
            for (rank, &index) in list.iter().enumerate() {
                exits[index] = (rank, list.len());
            }
        }
        for list in &mut entering {
            list.sort_by_key(|&index| ledger.edges[index].operand);
            for (rank, &index) in list.iter().enumerate() {
                entries[index] = (rank, list.len());
            }
        }
        ledger
            .edges
            .iter()
            .enumerate()
            .map(|(index, edge)| {
                let ((px, py), (cx, cy)) = (at(edge.parent), at(edge.child));
                let (exit, entry) = (exits[index], entries[index]);
                (
                    (px + CARD.0, py + spread(exit.0, exit.1)),
                    (cx, cy + spread(entry.0, entry.1)),
                )
            })
            .collect()
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

    /// Where the edge with reverse index `index` leaves its operand and enters its result.
    fn anchors(&self, index: usize) -> ((f64, f64), (f64, f64)) {
        self.anchors
            .get(index)
            .copied()
            .unwrap_or(((0.0, 0.0), (0.0, 0.0)))
    }
}

/// Sorts (key, node) pairs by key, then forward order.
fn sort(keyed: &mut [(f64, usize)]) {
    keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
}

/// The point at `t` on the cubic Bézier curve with control points `p`.
fn bezier(p: [(f64, f64); 4], t: f64) -> (f64, f64) {
    let s = 1.0 - t;
    let weights = [s * s * s, 3.0 * s * s * t, 3.0 * s * t * t, t * t * t];
    p.iter()
        .zip(weights)
        .fold((0.0, 0.0), |(x, y), (&(px, py), w)| {
            (x + w * px, y + w * py)
        })
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

/// A number as a card or an arrow shows it: four significant digits (`-0.07334`,
/// `1.798e308`), or [`number`]'s digits when those are no longer (`8`, `0.25`).
fn short(value: f64) -> String {
    let full = number(value);
    let magnitude = value.abs();
    if value == 0.0 || !value.is_finite() {
        return full;
    }
    let rounded = if (1e-3..1e5).contains(&magnitude) {
        let decimals = (3 - magnitude.log10().floor() as i32).max(0) as usize;
        let text = format!("{value:.decimals$}");
        match text.contains('.') {
            true => text.trim_end_matches('0').trim_end_matches('.').to_owned(),
            false => text,
        }
    } else {
        let text = format!("{value:.3e}");
        match text.split_once('e') {
            Some((mantissa, exponent)) if mantissa.contains('.') => format!(
                "{}e{exponent}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => text,
        }
    };
    match rounded.len() < full.len() {
        true => rounded,
        false => full,
    }
}

const HEAD_START: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>"#;

const HEAD_END: &str = r#"</title>
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
.edge text { font-size: 11px; fill: #6b7280; text-anchor: middle; paint-order: stroke; stroke: #fff; stroke-width: 3px; stroke-linejoin: round; }
.busy .edge text { display: none; }
.busy .edge.current text { display: inline; }
.edge.untracked path { stroke-dasharray: 5 4; }
marker path { fill: #8a94a6; }
.edge.current path { stroke: #d9480f; stroke-width: 3; }
.edge.current text { fill: #d9480f; font-weight: bold; }
.edge.done path { stroke: #1f5fbf; }
table.ledger { border-collapse: collapse; margin-top: 1rem; font-size: .9rem; }
.ledger th, .ledger td { border: 1px solid #d8dce3; padding: .25rem .55rem; text-align: right; }
.ledger th { background: #eef1f6; }
.ledger td:nth-child(2), .ledger td:nth-child(3) { text-align: left; }
tr.current td { background: #ffe8d9; font-weight: bold; }
tr.done td { background: #eef4ff; }
.intro { max-width: 52rem; margin: 0 0 .5rem; }
code { font-family: ui-monospace, monospace; font-size: .92em; background: #eef1f6; padding: 0 .2em; border-radius: 3px; }
.panels { display: grid; grid-template-columns: repeat(auto-fill, minmax(24rem, 1fr)); gap: 1rem; margin-top: 1.5rem; }
.panel { background: #fff; border: 1px solid #d8dce3; border-radius: 8px; padding: .8rem 1rem .9rem; }
.panel.wide { grid-column: 1 / -1; }
.panel.wide table { width: 100%; }
.panel h2 { font-size: 1.05rem; margin: 0 0 .35rem; }
.panel p { margin: 0 0 .6rem; color: #4a5568; max-width: 52rem; }
.panel table { border-collapse: collapse; min-width: 60%; font-size: .9rem; border-top: 1.5px solid #1d2430; border-bottom: 1.5px solid #1d2430; }
.panel th, .panel td { padding: .28rem .6rem; text-align: left; vertical-align: top; }
.panel thead th { border-bottom: 1px solid #1d2430; font-weight: 600; }
.panel tbody th { font-weight: normal; }
.panel tbody tr + tr > * { border-top: 1px solid #e5e8ee; }
.panel td.number { text-align: right; font-family: ui-monospace, monospace; font-variant-numeric: tabular-nums; }
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
      else {
        shown = "adjoint " + sums[node] + " = " + terms[node].join(" + ");
        // As long as the card holds; the tooltip and the table have every term.
        const count = terms[node].length;
        if (shown.length > pass.limit) shown = "adjoint " + sums[node] + " = sum of " + count;
      }
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
    reveal();
  }
  // In a graph larger than the window, scroll the current edge's result into view.
  function reveal() {
    if (step <= 0 || step > edges.length) return;
    const card = document.getElementById("node-" + edges[step - 1].child);
    if (card && card.scrollIntoView) card.scrollIntoView({ block: "nearest", inline: "nearest" });
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
  if (asked) reveal();
})();
"##;

#[cfg(test)]
mod tests {
    use super::{short, Layout, CARD};
    use crate::{Panel, Scalar};

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

    /// A page with a title, an introduction and two panels: everything escaped, code in
    /// backticks, labels and numbers told apart, panels after the ledger and before the
    /// script, and the pass itself as `to_html` draws it.
    #[test]
    fn a_page_with_panels_shows_them_below_the_ledger() {
        let x = Scalar::variable(2.0).unwrap();
        let square = x.mul(&x).unwrap();
        let loss = square.add(&square).unwrap();
        let pass = loss.backward().unwrap();
        let after_one = x.gradient().unwrap();
        loss.backward().unwrap();
        let after_two = x.gradient().unwrap();
        let ledger = pass.ledger().name(&x, "x").name(&square, "square");
        let html = ledger
            .page()
            .title("Square & <sum>")
            .intro("`loss = square + square` at `x = 2`")
            .panel(
                Panel::new("Stored gradients")
                    .note("`backward()` adds; it does not overwrite")
                    .columns(["after", "x"])
                    .row(["one pass".to_owned(), after_one.to_string()])
                    .row(["two passes".to_owned(), after_two.to_string()]),
            )
            .panel(
                Panel::new("Refused")
                    .row(["request", "</script><script>alert(1)</script>"])
                    .wide(),
            )
            .to_html();
        assert!(html.contains("<title>Square &amp; &lt;sum&gt;</title>"));
        assert!(html.contains("<h1>Square &amp; &lt;sum&gt;</h1>"));
        assert!(html.contains(
            "<p class=\"intro\"><code>loss = square + square</code> at <code>x = 2</code></p>"
        ));
        assert!(html.contains("<section class=\"panel\" id=\"panel-0\"><h2>Stored gradients</h2>"));
        assert!(html.contains("<p><code>backward()</code> adds; it does not overwrite</p>"));
        assert!(
            html.contains("<th scope=\"col\">after</th><th scope=\"col\" class=\"number\">x</th>")
        );
        assert!(
            html.contains("<tr><th scope=\"row\">one pass</th><td class=\"number\">8</td></tr>")
        );
        assert!(
            html.contains("<tr><th scope=\"row\">two passes</th><td class=\"number\">16</td></tr>")
        );
        assert!(html.contains("<section class=\"panel wide\" id=\"panel-1\">"));
        assert!(html.contains("<td>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</td>"));
        assert!(!html.contains("alert(1)</script>"));
        // One script element, after the panels; the pass as to_html draws it.
        assert_eq!(html.matches("<script>").count(), 1);
        let (ledger_at, panels_at, script_at) = (
            html.find("<table class=\"ledger\">").unwrap(),
            html.find("id=\"panels\"").unwrap(),
            html.find("<script>").unwrap(),
        );
        assert!(ledger_at < panels_at && panels_at < script_at);
        assert!(html.contains("adjoint 8 = 4 + 4"));
        let plain = ledger.to_html();
        assert!(plain.contains("<title>Backward pass</title>"));
        assert!(!plain.contains("id=\"panels\""));
        assert_eq!(plain, ledger.page().to_html());
    }

    #[test]
    fn backticks_make_code_and_a_lone_one_stays() {
        use super::super::page::inline;
        assert_eq!(inline("a `b` c"), "a <code>b</code> c");
        assert_eq!(inline("a `b` c `d"), "a <code>b</code> c `d");
        assert_eq!(inline("`<x>`"), "<code>&lt;x&gt;</code>");
        assert_eq!(inline("no code"), "no code");
        assert_eq!(inline("`"), "`");
    }

    #[test]
    fn a_panel_keeps_what_it_was_given() {
        let panel = Panel::new("Check")
            .note("first")
            .note("second")
            .columns(["what", "value"])
            .row(["analytic", "8"])
            .row(["verdict", "pass"])
            .row([1.5, 2.0, 3.25]);
        assert_eq!(panel.title(), "Check");
        assert_eq!(panel.notes(), ["first", "second"]);
        assert_eq!(panel.column_names(), ["what", "value"]);
        assert_eq!(
            panel.rows(),
            [
                vec!["analytic", "8"],
                vec!["verdict", "pass"],
                vec!["1.5", "2", "3.25"]
            ]
        );
        // A column with a word in it is not a number column; a number cell still is one.
        let mut html = String::new();
        panel.write_html(0, &mut html);
        assert!(html.contains("<th scope=\"col\">value</th>"));
        assert!(html.contains("<th scope=\"row\">verdict</th><td>pass</td>"));
        assert!(html.contains("<th scope=\"row\">analytic</th><td class=\"number\">8</td>"));
    }

    /// Cards round to four significant digits, and say so; exact short numbers stay.
    #[test]
    fn cards_round_long_numbers_and_the_page_says_so() {
        assert_eq!(short(8.0), "8");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(-0.073_341_182_460_828_53), "-0.07334");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(f64::MAX), "1.798e308");
        assert_eq!(short(1e-6), "1e-6");
        assert_eq!(short(-2.5e-7), "-2.5e-7");
        for value in [
            0.1 + 0.2,
            1.0 / 3.0,
            -7.0 / 9.0,
            6.02e23,
            123_456.7,
            9.999_96e-4,
        ] {
            let shown: f64 = short(value).parse().unwrap();
            assert!(((shown - value) / value).abs() < 5e-4, "{value}: {shown}");
        }
        let x = Scalar::variable(1.0 / 3.0).unwrap();
        let y = x.sin().unwrap();
        let page = y.backward().unwrap().ledger().to_html();
        assert!(page.contains("value 0.3333"));
        assert!(
            page.contains("value 0.3333333333333333;"),
            "every digit in the tooltip"
        );
        assert!(page.contains("round to four significant digits"));
        let x = Scalar::variable(2.0).unwrap();
        let page = x.mul(&x).unwrap().backward().unwrap().ledger().to_html();
        assert!(!page.contains("round to four significant digits"));
    }

    /// A node with more contributions than its card holds shows how many; the script
    /// is given the same limit.
    #[test]
    fn a_long_sum_is_counted_on_the_card() {
        let x = Scalar::variable(0.3).unwrap();
        let mut total = x.sin().unwrap();
        for k in 2..=6 {
            let term = x
                .mul(&Scalar::constant(f64::from(k) / 7.0).unwrap())
                .unwrap();
            total = total.add(&term.sin().unwrap()).unwrap();
        }
        let page = total.backward().unwrap().ledger().name(&x, "x").to_html();
        assert!(
            page.contains("= sum of 6</text>"),
            "x receives six contributions"
        );
        assert!(page.contains(&format!("limit: {},", super::CARD_CHARS)));
    }

    /// A few hundred nodes: a loss over 100 data points, `sum (w x_i - y_i)^2`. Every
    /// card has its own place, constants sit just before their consumers, and the picture
    /// grows (and scrolls) rather than shrinking.
    #[test]
    fn a_few_hundred_nodes_lay_out_in_columns() {
        let w = Scalar::variable(0.5).unwrap();
        let mut loss = Scalar::constant(0.0).unwrap();
        for i in 0..100 {
            let x = Scalar::constant(f64::from(i) / 100.0).unwrap();
            let y = Scalar::constant(f64::from(i) / 50.0).unwrap();
            let error = w.mul(&x).unwrap().sub(&y).unwrap();
            loss = loss.add(&error.mul(&error).unwrap()).unwrap();
        }
        let ledger = loss.backward().unwrap().ledger();
        assert!(ledger.nodes.len() > 500, "{} nodes", ledger.nodes.len());
        let layout = Layout::of(&ledger);
        let mut places: Vec<(u64, u64)> = layout
            .positions
            .iter()
            .map(|&(x, y)| (x.to_bits(), y.to_bits()))
            .collect();
        places.sort_unstable();
        places.dedup();
        assert_eq!(places.len(), ledger.nodes.len(), "no two cards overlap");
        for edge in &ledger.edges {
            let (px, _) = layout.position(edge.parent);
            let (cx, _) = layout.position(edge.child);
            assert!(px < cx, "every arrow points right");
            let constant = !ledger.nodes[edge.parent].tracked
                && !ledger.edges.iter().any(|e| e.child == edge.parent);
            if constant && ledger.edges.iter().find(|e| e.parent == edge.parent) == Some(edge) {
                assert_eq!(
                    cx - px,
                    CARD.0 + super::GAP.0,
                    "a constant sits next to its consumer"
                );
            }
        }
        let (width, height) = layout.size();
        assert!(width.is_finite() && height.is_finite());
        assert!(width >= (layout.columns as f64) * CARD.0);
        let page = ledger.to_html();
        assert!(page.contains("<div class=\"graph busy\" id=\"graph\">"));
        assert_eq!(page.matches("<tr id=\"row-").count(), ledger.edges.len());
    }
}
