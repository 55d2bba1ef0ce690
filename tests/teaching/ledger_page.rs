//! `Ledger::to_html` in a real browser: headless Chromium loads the pages
//! `examples/explain.rs` writes. The chapter's page has no console message, shows the
//! chapter's numbers, `#step=3` highlights the third edge, and its panels show what the
//! chapter's calls returned (stored gradients, the detached branch, the central-difference
//! verdict, the three typed errors). The XOR network's page (a hundred nodes) loads
//! without a console message and steps. Screenshots land in this test's output folder
//! (and, with `AUTODIFF_WRITE_DOCS=1`, the chapter's in `docs/` for the README).
//!
//! `.ci/run` installs Chromium; where no browser can be found the test says so and passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[allow(dead_code)]
#[path = "../../examples/explain.rs"]
mod explain;

/// The first browser on `PATH` that answers `--version`.
fn browser() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|name| {
            Command::new(name)
                .arg("--version")
                .output()
                .is_ok_and(|out| out.status.success())
        })
}

/// Headless Chromium on `url` with a fresh profile, plus `extra` arguments.
fn headless(browser: &str, profile: &Path, url: &str, extra: &[&str]) -> Output {
    let _ = std::fs::remove_dir_all(profile);
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("the browser runs")
}

/// A screenshot of `url` at `size` (`width,height`) saved to `picture`, to look at; its
/// bytes, checked to be a real picture.
fn screenshot(browser: &str, profile: &Path, url: &str, size: &str, picture: &Path) -> Vec<u8> {
    let shot = format!("--screenshot={}", picture.display());
    let size = format!("--window-size={size}");
    let taken = headless(browser, profile, url, &[&shot, &size, "--hide-scrollbars"]);
    assert!(taken.status.success(), "{taken:?}");
    let png = std::fs::read(picture).expect("the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a real picture"
    );
    eprintln!("screenshot: {}", picture.display());
    png
}

/// The console messages a page logged (Chromium writes them to stderr as `CONSOLE` lines).
fn console(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.contains(":CONSOLE"))
        .map(str::to_owned)
        .collect()
}

/// The `class` of the element with `id` in a dumped DOM.
fn class_of(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let start = dom[..at].rfind('<')?;
    let tag = &dom[start..dom[at..].find('>')? + at];
    let class = tag.split("class=\"").nth(1)?;
    Some(class.split('"').next()?.to_owned())
}

/// The panel `<section>` with `id` in a dumped DOM, up to its end.
fn section<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no {id}"));
    let end = dom[at..]
        .find("</section>")
        .map_or(dom.len(), |end| at + end);
    &dom[at..end]
}

/// The rows of the tables in `html`, each a list of its cells' text (tags dropped).
fn rows(html: &str) -> Vec<Vec<String>> {
    html.split("<tr")
        .skip(1)
        .map(|row| {
            let row = row.split("</tr>").next().unwrap_or("");
            row.split("<t")
                .filter(|cell| cell.starts_with('h') || cell.starts_with('d'))
                .map(|cell| {
                    let mut text = String::new();
                    let mut in_tag = true; // the cell's own opening tag
                    for c in cell.chars() {
                        match c {
                            '<' => in_tag = true,
                            '>' => in_tag = false,
                            c if !in_tag => text.push(c),
                            _ => {}
                        }
                    }
                    text.trim().to_owned()
                })
                .collect()
        })
        .collect()
}

/// The text of the element with `id` in a dumped DOM.
fn text_of(dom: &str, id: &str) -> Option<String> {
    let at = dom.find(&format!("id=\"{id}\""))?;
    let open = dom[at..].find('>')? + at + 1;
    let close = dom[open..].find('<')? + open;
    Some(dom[open..close].to_owned())
}

#[test]
fn the_chapters_page_in_a_browser() {
    let Some(browser) = browser() else {
        eprintln!("SKIPPED: no Chromium on PATH (`apt-get install chromium`; .ci/run installs it)");
        return;
    };
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ledger_page");
    std::fs::create_dir_all(&folder).expect("the output folder");
    let page = folder.join("reused_square.html");
    std::fs::write(&page, explain::chapter_page().expect("the chapter's calls"))
        .expect("the page is written");
    let url = format!("file://{}", page.display());
    let profile = folder.join("profile");

    // The final state, as the static page shows it.
    let loaded = headless(browser, &profile, &url, &["--dump-dom"]);
    assert!(loaded.status.success(), "{loaded:?}");
    assert_eq!(console(&loaded), Vec::<String>::new(), "console messages");
    let dom = String::from_utf8_lossy(&loaded.stdout);
    assert_eq!(
        text_of(&dom, "adjoint-0").as_deref(),
        Some("adjoint 8 = 4 + 4")
    );
    assert_eq!(
        text_of(&dom, "adjoint-1").as_deref(),
        Some("adjoint 2 = 1 + 1")
    );
    assert_eq!(
        text_of(&dom, "adjoint-2").as_deref(),
        Some("adjoint 1 (seed)")
    );
    // The four contributions, in reverse order: 1, 1, 4, 4.
    let contributions: Vec<String> = (0..4)
        .map(|edge| {
            let row = dom.find(&format!("id=\"row-{edge}\"")).expect("a row");
            let cells: Vec<&str> = dom[row..]
                .split("<td>")
                .skip(1)
                .take(7)
                .map(|cell| cell.split('<').next().unwrap_or(""))
                .collect();
            cells[6].to_owned()
        })
        .collect();
    assert_eq!(contributions, ["1", "1", "4", "4"]);

    // Three steps: the third edge (square's first use of x) is the current one.
    let stepped = headless(browser, &profile, &format!("{url}#step=3"), &["--dump-dom"]);
    assert_eq!(console(&stepped), Vec::<String>::new(), "console messages");
    let dom = String::from_utf8_lossy(&stepped.stdout);
    assert_eq!(class_of(&dom, "edge-2").as_deref(), Some("edge current"));
    assert_eq!(class_of(&dom, "row-2").as_deref(), Some("current"));
    assert_eq!(class_of(&dom, "edge-1").as_deref(), Some("edge done"));
    assert_eq!(class_of(&dom, "edge-3").as_deref(), Some("edge"));
    assert_eq!(text_of(&dom, "adjoint-0").as_deref(), Some("adjoint 4 = 4"));
    assert_eq!(
        text_of(&dom, "adjoint-1").as_deref(),
        Some("adjoint 2 = 1 + 1")
    );

    // The second panel, from the chapter's real calls: stored gradients over two passes,
    // zero_grad and one more pass; the detached branch; the verdict; the typed errors.
    let stored = rows(section(&dom, "panel-0"));
    let numbers: Vec<&[String]> = stored.iter().skip(1).map(|row| &row[1..]).collect();
    assert_eq!(
        numbers,
        [
            ["8", "2", "1"],
            ["16", "4", "2"],
            ["0", "0", "0"],
            ["8", "2", "1"]
        ],
        "{stored:?}"
    );
    assert_eq!(stored[3][0], "loss.zero_grad()");
    let detached = rows(section(&dom, "panel-1"));
    assert_eq!(detached[1], ["x.gradient()", "4"]);
    assert_eq!(detached[2], ["x.detach().gradient()", "none"]);
    let check = rows(section(&dom, "panel-2"));
    assert_eq!(check[0], ["analytic (reverse pass)", "8"]);
    assert_eq!(check[check.len() - 1], ["verdict", "pass"]);
    let refused = section(&dom, "panel-3");
    assert!(refused.contains("every stored gradient keeps its bits (checked: unchanged)"));
    let errors: Vec<String> = rows(refused)
        .into_iter()
        .skip(1)
        .map(|row| row[2].clone())
        .collect();
    assert_eq!(
        errors,
        [
            "constant-output",
            "non-finite-seed",
            "non-finite-accumulated-gradient"
        ]
    );
    assert!(refused.contains("backward seed inf must be finite"));

    // A screenshot of step 3, panels and all, to look at.
    let picture = folder.join("reused_square.png");
    let page = format!("{url}#step=3");
    let png = screenshot(browser, &profile, &page, "1100,1480", &picture);
    if std::env::var_os("AUTODIFF_WRITE_DOCS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).expect("docs/");
        std::fs::write(docs.join("ledger-page.png"), png).expect("the README's picture");
    }
}

/// The XOR network's loss graph: a hundred nodes in a dozen columns load without a
/// console message, every edge has its row, the parameters' panel agrees with
/// `loss_grad`, and `#step=60` makes edge 59 the current one.
#[test]
fn the_xor_page_in_a_browser() {
    let Some(browser) = browser() else {
        eprintln!("SKIPPED: no Chromium on PATH (`apt-get install chromium`; .ci/run installs it)");
        return;
    };
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ledger_page_xor");
    std::fs::create_dir_all(&folder).expect("the output folder");
    let page = folder.join("xor_mlp.html");
    let html = explain::xor_page().expect("the XOR loss graph");
    std::fs::write(&page, &html).expect("the page is written");
    let url = format!("file://{}", page.display());
    let profile = folder.join("profile");

    let loaded = headless(browser, &profile, &url, &["--dump-dom"]);
    assert!(loaded.status.success(), "{loaded:?}");
    assert_eq!(console(&loaded), Vec::<String>::new(), "console messages");
    let dom = String::from_utf8_lossy(&loaded.stdout);
    let edges = dom.matches("<tr id=\"row-").count();
    assert!(edges > 100, "{edges} edges");
    assert!(dom.contains("class=\"name\">p[0] hidden w[0][0]</text>"));
    assert!(dom.contains("class=\"name\">loss</text>"));
    let parameters = rows(section(&dom, "panel-0"));
    assert_eq!(parameters.len(), 1 + 9);
    for row in &parameters[1..] {
        assert_eq!(
            row[3], row[4],
            "the pass's gradient is loss_grad's: {row:?}"
        );
    }

    let stepped = headless(
        browser,
        &profile,
        &format!("{url}#step=60"),
        &["--dump-dom"],
    );
    assert_eq!(console(&stepped), Vec::<String>::new(), "console messages");
    let dom = String::from_utf8_lossy(&stepped.stdout);
    assert_eq!(class_of(&dom, "edge-59").as_deref(), Some("edge current"));
    assert_eq!(class_of(&dom, "row-59").as_deref(), Some("current"));
    let status = format!("Step 60 of {edges}: edge 59.");
    assert_eq!(text_of(&dom, "status").as_deref(), Some(status.as_str()));

    let picture = folder.join("xor_mlp.png");
    screenshot(
        browser,
        &profile,
        &format!("{url}#step=60"),
        "1400,1000",
        &picture,
    );
}

/// microgpt's slice: one head's attention at one position. The pass from head 0's output
/// reaches head 0's leaves only (the query's first four numbers, the first four of each
/// cached key and value), named; in a browser it loads without a console message.
#[test]
fn the_attention_slice_shows_one_head() {
    let html = explain::attention_page().expect("the attention graph");
    for name in [
        "q[0]",
        "q[3]",
        "k0[0]",
        "k2[3]",
        "v1[2]",
        "head 0's outputs, summed",
    ] {
        let name = name.replace('\'', "&#39;");
        assert!(
            html.contains(&format!("class=\"name\">{name}</text>")),
            "{name} is on the page"
        );
    }
    // Head 1's slice (`q[4]` on) is not reached, so it is not drawn.
    assert!(!html.contains("class=\"name\">q[4]</text>"));
    let edges = html.matches("<tr id=\"row-").count();
    assert!((100..400).contains(&edges), "{edges} edges");
    let Some(browser) = browser() else {
        eprintln!("SKIPPED: no Chromium on PATH (`apt-get install chromium`; .ci/run installs it)");
        return;
    };
    let folder = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ledger_page_attention");
    std::fs::create_dir_all(&folder).expect("the output folder");
    let page = folder.join("microgpt_attention.html");
    std::fs::write(&page, &html).expect("the page is written");
    let url = format!("file://{}", page.display());
    let loaded = headless(browser, &folder.join("profile"), &url, &["--dump-dom"]);
    assert!(loaded.status.success(), "{loaded:?}");
    assert_eq!(console(&loaded), Vec::<String>::new(), "console messages");
}
