//! [`Page`] and [`Panel`]: a pass's page (see [`Ledger::page`]) with a title, an
//! introduction and tables of your own below the ledger, such as what other calls on the
//! same graph returned. The pass itself is drawn by `ledger/html.rs`, which also writes
//! the page ([`Page::to_html`]).

use std::fmt::{Display, Write as _};

use super::Ledger;

/// A page for one pass: a title, an introduction, the pass as [`Ledger::to_html`] draws it
/// (graph, ledger table, stepper) and, below it, [`Panel`]s of your own. Made by
/// [`Ledger::page`], written by [`Page::to_html`].
///
/// Text given to a page or a panel is escaped, so it may hold any characters; text between
/// backticks is shown as code (`` `zero_grad()` ``). The page stays one self-contained
/// file that reads the same without JavaScript: panels are static HTML.
///
/// ```
/// use autodiff_runtime::{Panel, Scalar};
///
/// let x = Scalar::variable(2.0)?;
/// let loss = x.mul(&x)?;
/// let pass = loss.backward()?;
/// let after_one = x.gradient();
/// loss.backward()?;
/// let ledger = pass.ledger().name(&x, "x").name(&loss, "loss");
/// let html = ledger
///     .page()
///     .title("The square")
///     .intro("`loss = x * x` at `x = 2`: one node `x`, two uses.")
///     .panel(
///         Panel::new("Stored gradient")
///             .columns(["after", "x"])
///             .row(["one `backward()`", &format!("{}", after_one.unwrap_or(f64::NAN))])
///             .row(["two", &format!("{}", x.gradient().unwrap_or(f64::NAN))]),
///     )
///     .to_html();
/// assert!(html.contains("<h1>The square</h1>"));
/// assert!(html.contains("one <code>backward()</code>"));
/// assert!(html.contains("<td class=\"number\">8</td>"));
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Page<'a> {
    pub(crate) ledger: &'a Ledger,
    pub(crate) title: String,
    pub(crate) intro: Vec<String>,
    pub(crate) panels: Vec<Panel>,
}

impl<'a> Page<'a> {
    /// A page for `ledger` titled `Backward pass`, with no introduction and no panels:
    /// what [`Ledger::page`] returns.
    pub fn new(ledger: &'a Ledger) -> Self {
        Page {
            ledger,
            title: "Backward pass".to_owned(),
            intro: Vec::new(),
            panels: Vec::new(),
        }
    }

    /// The page's heading and the browser tab's title (`Backward pass` unless set).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// A paragraph under the heading, before the pass's own summary; call again for more.
    pub fn intro(mut self, text: impl Into<String>) -> Self {
        self.intro.push(text.into());
        self
    }

    /// Adds `panel` below the ledger table. Panels appear in the order added, side by side
    /// where the window is wide enough (a [`Panel::wide`] one takes a whole row).
    pub fn panel(mut self, panel: Panel) -> Self {
        self.panels.push(panel);
        self
    }

    /// The panels added so far.
    pub fn panels(&self) -> &[Panel] {
        &self.panels
    }
}

/// A small table of your own on a [`Page`]: a title, notes, optional column names and rows
/// of cells. A row's first cell labels it; cells that read as numbers are right-aligned in
/// a monospace font. Any [`Display`] value can be a cell, so a row can be `["x", "8"]`,
/// `[8.0, 2.0, 1.0]`, or strings you formatted yourself.
///
/// ```
/// use autodiff_runtime::{scalar_gradient_check, Panel};
///
/// let check = scalar_gradient_check(2.0, 8.0, 1e-6, 1e-9, |x| 2.0 * x * x)?;
/// let panel = Panel::new("Central-difference check")
///     .note("The slope of `2 x²` at `x = 2` against `(f(x + h) - f(x - h)) / 2h`.")
///     .row(["analytic", &check.analytic.to_string()])
///     .row(["numerical", &check.numerical.to_string()])
///     .row(["verdict", if check.passed { "pass" } else { "FAIL" }]);
/// assert_eq!(panel.rows()[2], ["verdict", "pass"]);
/// # Ok::<(), autodiff_runtime::ScalarAutodiffError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Panel {
    title: String,
    notes: Vec<String>,
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    wide: bool,
}

impl Panel {
    /// An empty panel headed `title`.
    pub fn new(title: impl Into<String>) -> Self {
        Panel {
            title: title.into(),
            ..Panel::default()
        }
    }

    /// A paragraph under the title, before the table; call again for more.
    pub fn note(mut self, text: impl Into<String>) -> Self {
        self.notes.push(text.into());
        self
    }

    /// The column names, shown as the table's header (no header unless set).
    pub fn columns<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Display,
    {
        self.columns = names.into_iter().map(|name| name.to_string()).collect();
        self
    }

    /// Adds a row of cells; rows appear in the order added and may differ in length.
    pub fn row<I>(mut self, cells: I) -> Self
    where
        I: IntoIterator,
        I::Item: Display,
    {
        self.rows
            .push(cells.into_iter().map(|cell| cell.to_string()).collect());
        self
    }

    /// Lets the panel take the page's full width (for long cells, such as messages).
    pub fn wide(mut self) -> Self {
        self.wide = true;
        self
    }

    /// The title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The notes, in order.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The column names (empty when there is no header).
    pub fn column_names(&self) -> &[String] {
        &self.columns
    }

    /// The rows added so far, each a list of cells as text.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Appends the panel to `page` as a `<section>` with id `panel-{index}`.
    pub(crate) fn write_html(&self, index: usize, page: &mut String) {
        let class = if self.wide { "panel wide" } else { "panel" };
        let _ = writeln!(
            page,
            "<section class=\"{class}\" id=\"panel-{index}\"><h2>{}</h2>",
            inline(&self.title)
        );
        for note in &self.notes {
            let _ = writeln!(page, "<p>{}</p>", inline(note));
        }
        if self.columns.is_empty() && self.rows.is_empty() {
            page.push_str("</section>\n");
            return;
        }
        page.push_str("<table>\n");
        if !self.columns.is_empty() {
            page.push_str("<thead><tr>");
            for (at, name) in self.columns.iter().enumerate() {
                let class = if self.numeric_column(at) {
                    " class=\"number\""
                } else {
                    ""
                };
                let _ = write!(page, "<th scope=\"col\"{class}>{}</th>", inline(name));
            }
            page.push_str("</tr></thead>\n");
        }
        page.push_str("<tbody>\n");
        for row in &self.rows {
            page.push_str("<tr>");
            for (at, cell) in row.iter().enumerate() {
                let text = inline(cell);
                if at == 0 && row.len() > 1 {
                    let _ = write!(page, "<th scope=\"row\">{text}</th>");
                } else if is_number(cell) {
                    let _ = write!(page, "<td class=\"number\">{text}</td>");
                } else {
                    let _ = write!(page, "<td>{text}</td>");
                }
            }
            page.push_str("</tr>\n");
        }
        page.push_str("</tbody>\n</table>\n</section>\n");
    }

    /// Whether column `at` (not the label column) holds numbers in every row that has it.
    fn numeric_column(&self, at: usize) -> bool {
        let mut cells = self.rows.iter().filter_map(|row| row.get(at)).peekable();
        at > 0 && cells.peek().is_some() && cells.all(|cell| is_number(cell))
    }
}

fn is_number(cell: &str) -> bool {
    cell.trim().parse::<f64>().is_ok()
}

/// Escaped text with each pair of backticks around code: `` `x.grad` `` becomes
/// `<code>x.grad</code>`; a backtick without a partner stays a backtick.
pub(crate) fn inline(text: &str) -> String {
    let pieces: Vec<&str> = text.split('`').collect();
    // Backtick k (from 1) sits before piece k; backticks 1 and 2, 3 and 4, ... pair up.
    let paired = 2 * ((pieces.len() - 1) / 2);
    let mut html = String::with_capacity(text.len() + 16);
    for (at, piece) in pieces.iter().enumerate() {
        if at % 2 == 1 && at < paired {
            let _ = write!(html, "<code>{}</code>", escape(piece));
        } else {
            if at > paired {
                html.push('`');
            }
            html.push_str(&escape(piece));
        }
    }
    html
}

/// Text safe inside HTML elements and quoted attributes.
pub(crate) fn escape(text: &str) -> String {
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
