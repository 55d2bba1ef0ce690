//! `Ledger::to_html` in a real browser: headless Chromium loads the chapter's page, with no
//! console message, shows the chapter's numbers, and `#step=3` highlights the third edge.
//! A screenshot lands in this test's output folder (and, with `AUTODIFF_WRITE_DOCS=1`,
//! in `docs/` for the README).
//!
//! `.ci/run` installs Chromium; where no browser can be found the test says so and passes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use autodiff::Scalar;

/// The chapter's page: `square = x * x`, `loss = square + square`, at `x = 2`.
fn chapter_page() -> String {
    let x = Scalar::variable(2.0).expect("finite");
    let square = x.mul(&x).expect("finite");
    let loss = square.add(&square).expect("finite");
    let pass = loss.backward().expect("a pass");
    pass.ledger()
        .name(&x, "x")
        .name(&square, "square")
        .name(&loss, "loss")
        .to_html()
}

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
    std::fs::write(&page, chapter_page()).expect("the page is written");
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

    // A screenshot of step 3, to look at.
    let picture = folder.join("reused_square.png");
    let shot = format!("--screenshot={}", picture.display());
    let taken = headless(
        browser,
        &profile,
        &format!("{url}#step=3"),
        &[&shot, "--window-size=1100,560", "--hide-scrollbars"],
    );
    assert!(taken.status.success(), "{taken:?}");
    let png = std::fs::read(&picture).expect("the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "a real picture"
    );
    eprintln!("screenshot: {}", picture.display());
    if std::env::var_os("AUTODIFF_WRITE_DOCS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        std::fs::create_dir_all(&docs).expect("docs/");
        std::fs::write(docs.join("ledger-page.png"), png).expect("the README's picture");
    }
}
