//! `cargo xtask docs` and the `docs` suite: the guides built into a site with mdBook, and
//! every local link and anchor of the markdown checked.
//!
//! The markdown is written for GitHub (relative links, GitHub's heading anchors), and the
//! site is built from a copy of it (`target/book-src/`): the files that are pages of the
//! site (`BOOK_PAGES` and `docs/*.md`) are copied side by side, links between them are
//! rewritten to the copies, images are copied along, and links to any other file of the
//! repository point to it on GitHub. So the markdown stays readable where it is, and the
//! site has no broken link.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::npm::path_str;
use crate::util::{Result, cargo, cargo_bin, output, root, run_in};

/// The mdBook release the site is built with.
const MDBOOK_VERSION: &str = "0.4.52";

/// Where links to files outside the site go.
const REPOSITORY: &str = "https://github.com/snowdrift-ids/snowdrift";

/// Repository files that are pages of the site besides `docs/*.md`, with their names there.
const BOOK_PAGES: &[(&str, &str)] = &[
    ("README.md", "introduction.md"),
    ("core/README.md", "rust.md"),
    ("wasm/README.md", "npm.md"),
    ("lease/README.md", "lease.md"),
    ("lease/PROTOCOL.md", "protocol.md"),
    ("CONTRIBUTING.md", "contributing.md"),
];

/// The markdown files whose links are checked, besides `docs/**/*.md` and `lease/*.md`.
const CHECKED: &[&str] = &[
    "README.md",
    "CONTRIBUTING.md",
    "core/README.md",
    "wasm/README.md",
    "embedded-example/README.md",
    "www/README.md",
];

/// `cargo xtask docs`: checks the links, then builds the site.
pub fn build() -> Result {
    check_links()?;
    build_site()
}

/// Builds the site into `www/dist/docs/`, where the page links to it (`cargo xtask www`
/// builds it with the page).
pub fn build_site() -> Result {
    ensure_mdbook()?;
    let staged = root().join("target/book-src");
    stage(&staged)?;
    let out = root().join("www/dist/docs");
    run_in(
        &root(),
        "mdbook",
        &["build", path_str(&staged)?, "--dest-dir", path_str(&out)?],
        &[],
    )?;
    eprintln!("docs built in {}", out.display());
    Ok(())
}

/// The `docs` suite.
pub fn test() -> Result {
    cargo(&["test", "-p", "xtask", "--quiet", "--", "docs::"])?;
    // Every public item documented (`deny(missing_docs)` in both crates) and every
    // intra-doc link resolved.
    run_in(
        &root(),
        &cargo_bin(),
        &[
            "doc",
            "--no-deps",
            "--all-features",
            "-p",
            "snowdrift",
            "-p",
            "snowdrift-lease",
        ],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    // The doctests run with the crates' other tests: the core's in the `core` suite, the
    // lease crate's in `fleet`.
    build()?;
    check_site(&root().join("www/dist/docs"))
}

/// Every local `href` and `src` of the built site names a file of it, and every anchor an
/// `id` in that file: what the staging's rewriting promises.
fn check_site(dir: &Path) -> Result {
    let mut broken = Vec::new();
    let entries = fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut pages = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "html") {
            pages.push(path);
        }
    }
    let read =
        |p: &Path| fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    for page in &pages {
        let html = read(page)?;
        for target in attributes(&html, &["href=\"", "src=\""]) {
            let Some((path, anchor)) = local(target) else {
                continue;
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path.split('?').next().unwrap_or(path))
            };
            let name = page.file_name().unwrap_or_default().to_string_lossy();
            if !file.exists() {
                broken.push(format!("{name}: {target}: no such file"));
            } else if let Some(anchor) = anchor.filter(|a| !a.is_empty())
                && file.extension().is_some_and(|e| e == "html")
                && !attributes(&read(&file)?, &["id=\""]).contains(&anchor)
            {
                broken.push(format!("{name}: {target}: no element with that id"));
            }
        }
    }
    eprintln!("{} pages of the site checked", pages.len());
    report("the site has", broken)
}

/// `Ok` for no broken links, else an error listing them.
fn report(what: &str, broken: Vec<String>) -> Result {
    if broken.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{what} {} broken link(s):\n{}",
        broken.len(),
        broken.join("\n")
    ))
}

/// The values of the given attributes (`href="`) in HTML, in order.
fn attributes<'a>(html: &'a str, names: &[&str]) -> Vec<&'a str> {
    let mut found = Vec::new();
    for name in names {
        let mut rest = html;
        while let Some(at) = rest.find(name) {
            rest = &rest[at + name.len()..];
            if let Some(end) = rest.find('"') {
                found.push(&rest[..end]);
            }
        }
    }
    found
}

/// Installs mdBook at `MDBOOK_VERSION` unless `mdbook --version` already says it.
fn ensure_mdbook() -> Result {
    let installed = output("mdbook", &["--version"]).unwrap_or_default();
    if installed.trim() == format!("mdbook v{MDBOOK_VERSION}") {
        return Ok(());
    }
    // Without the `serve` and `watch` features (a web server and a file watcher the build
    // does not use): a third less to compile.
    cargo(&[
        "install",
        "mdbook",
        "--version",
        MDBOOK_VERSION,
        "--no-default-features",
        "--features",
        "search",
    ])
}

fn read(rel: &str) -> Result<String> {
    fs::read_to_string(root().join(rel)).map_err(|e| format!("cannot read {rel}: {e}"))
}

/// The markdown files of a folder of the repository (`docs`, `lease`), as repository paths.
pub fn markdown_in(dir: &str, recursive: bool) -> Result<Vec<String>> {
    let mut found = Vec::new();
    let entries = fs::read_dir(root().join(dir)).map_err(|e| format!("cannot list {dir}: {e}"))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot list {dir}: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let rel = format!("{dir}/{name}");
        if entry.path().is_dir() {
            if recursive {
                found.extend(markdown_in(&rel, true)?);
            }
        } else if name.ends_with(".md") {
            found.push(rel);
        }
    }
    found.sort();
    Ok(found)
}

/// Every local link and anchor of the checked markdown resolves.
pub fn check_links() -> Result {
    let mut files: Vec<String> = CHECKED.iter().map(|f| f.to_string()).collect();
    files.extend(markdown_in("lease", false)?);
    files.extend(markdown_in("docs", true)?);
    let mut broken = Vec::new();
    let mut count = 0;
    for file in &files {
        let text = read(file)?;
        for link in links(&text) {
            count += 1;
            if let Err(e) = check(file, &text[link.target.clone()]) {
                broken.push(format!("{file}:{}: {e}", link.line));
            }
        }
    }
    eprintln!("{count} links in {} files checked", files.len());
    report("the markdown has", broken)
}

/// Whether a link target written in the repository file `from` resolves: a URL is not
/// checked; a path must name a file or folder of the repository, and an anchor one of the
/// target markdown's headings.
fn check(from: &str, target: &str) -> Result {
    let Some((path, anchor)) = local(target) else {
        return Ok(());
    };
    let rel = if path.is_empty() {
        from.to_string()
    } else {
        resolve(from, path).ok_or_else(|| format!("{target}: leaves the repository"))?
    };
    let full = root().join(&rel);
    if !full.exists() {
        return Err(format!("{target}: {rel} does not exist"));
    }
    match anchor {
        Some(anchor) if rel.ends_with(".md") => {
            let text = read(&rel)?;
            if anchors(&text).contains(anchor) {
                Ok(())
            } else {
                Err(format!(
                    "{target}: {rel} has no heading with the anchor #{anchor}"
                ))
            }
        }
        _ => Ok(()),
    }
}

/// A link target's path and anchor, or `None` for a URL (`https:`, `mailto:`, ...).
fn local(target: &str) -> Option<(&str, Option<&str>)> {
    let scheme = target.split_once(':').map(|(s, _)| s);
    if scheme.is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic())) {
        return None;
    }
    Some(match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    })
}

/// A relative path written in the repository file `from`, as a repository path (`None`
/// when it leaves the repository). A leading `/` starts at the repository's root, as on
/// GitHub.
fn resolve(from: &str, path: &str) -> Option<String> {
    let base = match path.strip_prefix('/') {
        Some(_) => PathBuf::new(),
        None => Path::new(from).parent()?.to_path_buf(),
    };
    let mut parts: Vec<String> = Vec::new();
    for c in base.join(path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(s) => parts.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// A link found in markdown: the line it is on and the byte range of its target.
#[derive(Debug)]
struct Link {
    line: usize,
    target: std::ops::Range<usize>,
}

/// The inline links and images (`[text](target)`, `![alt](target)`) of markdown text,
/// outside fenced code blocks and code spans. A target's title (`"..."`) and angle
/// brackets are not part of it.
fn links(text: &str) -> Vec<Link> {
    let mut found = Vec::new();
    let mut fence: Option<String> = None;
    // The length of the backtick run that opened the code span we are in.
    let mut span: Option<usize> = None;
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str()) {
                fence = None;
            }
            continue;
        }
        if line.len() - trimmed.len() < 4
            && (trimmed.starts_with("```") || trimmed.starts_with("~~~"))
        {
            let marker = &trimmed[..1];
            let run = trimmed
                .chars()
                .take_while(|c| *c == marker.chars().next().unwrap())
                .count();
            fence = Some(marker.repeat(run));
            span = None;
            continue;
        }
        if trimmed.trim().is_empty() {
            span = None; // a code span ends with its paragraph
            continue;
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'`' {
                let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
                span = match span {
                    None => Some(run),
                    Some(open) if open == run => None,
                    other => other,
                };
                i += run;
                continue;
            }
            if span.is_none()
                && bytes[i] == b']'
                && bytes.get(i + 1) == Some(&b'(')
                && let Some(len) = line[i + 2..].find(')')
            {
                let inner = &line[i + 2..i + 2 + len];
                let lead = inner.len() - inner.trim_start().len();
                let body = inner.trim();
                let from = start + i + 2 + lead;
                let (from, to) = match body.strip_prefix('<').and_then(|b| b.find('>')) {
                    Some(end) => (from + 1, from + 1 + end),
                    None => (
                        from,
                        from + body.find(char::is_whitespace).unwrap_or(body.len()),
                    ),
                };
                if to > from {
                    found.push(Link {
                        line: n + 1,
                        target: from..to,
                    });
                }
                i += 2 + len;
                continue;
            }
            i += 1;
        }
    }
    found
}

/// The anchors GitHub gives a markdown file's headings (`## Running a fleet` is
/// `#running-a-fleet`; a repeated heading gets `-1`, `-2`, ...), plus any `<a id>` or
/// `<a name>` in it.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(open) = fence {
            if trimmed.starts_with(open) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        for attr in ["<a id=\"", "<a name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                rest = &rest[at + attr.len()..];
                if let Some(end) = rest.find('"') {
                    found.insert(rest[..end].to_string());
                }
            }
        }
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || line.len() != trimmed.len() {
            continue;
        }
        let Some(heading) = trimmed[hashes..].strip_prefix(' ') else {
            continue;
        };
        let base = slug(heading.trim().trim_end_matches('#').trim_end());
        let mut anchor = base.clone();
        let mut n = 0;
        while !found.insert(anchor.clone()) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
    }
    found
}

/// GitHub's anchor for a heading: the text as shown (link targets, backticks and
/// emphasis marks dropped), lower-cased, with every character but letters, digits, `-`
/// and `_` removed and spaces made `-`.
fn slug(heading: &str) -> String {
    let mut shown = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        let close = rest[at..].find(')').map(|c| at + c);
        let Some(close) = close else { break };
        shown.push_str(&rest[..at]);
        rest = &rest[close + 1..];
    }
    shown.push_str(rest);
    shown
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The site's pages: repository path and name in the site.
fn pages() -> Result<Vec<(String, String)>> {
    let mut pages: Vec<(String, String)> = BOOK_PAGES
        .iter()
        .map(|(from, to)| (from.to_string(), to.to_string()))
        .collect();
    for file in markdown_in("docs", false)? {
        let name = file.trim_start_matches("docs/").to_string();
        if name != "SUMMARY.md" {
            pages.push((file, name));
        }
    }
    Ok(pages)
}

/// Copies `docs/book.toml` into `dir` and the site's pages and `docs/SUMMARY.md` into
/// `dir/src`, links rewritten for the site.
fn stage(dir: &Path) -> Result {
    if dir.exists() {
        fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let copy = |from: &Path, to: &Path| -> Result {
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        fs::copy(from, to)
            .map(drop)
            .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
    };
    // The book's sources are `docs/` itself; the staged ones are apart from book.toml.
    let config = read("docs/book.toml")?;
    let config = config.replacen("src = \".\"", "src = \"src\"", 1);
    if !config.contains("src = \"src\"") {
        return Err("docs/book.toml must say src = \".\"".into());
    }
    fs::write(dir.join("book.toml"), config).map_err(|e| format!("cannot write book.toml: {e}"))?;
    let src = dir.join("src");
    let pages = pages()?;
    let summary = ("docs/SUMMARY.md".to_string(), "SUMMARY.md".to_string());
    for (from, to) in pages.iter().chain([&summary]) {
        let text = read(from)?;
        let (staged, assets) = rewrite(from, &text, &pages);
        for asset in assets {
            copy(&root().join(&asset), &src.join("assets").join(&asset))?;
        }
        fs::create_dir_all(&src).map_err(|e| format!("cannot create {}: {e}", src.display()))?;
        fs::write(src.join(to), staged).map_err(|e| format!("cannot write {to}: {e}"))?;
    }
    Ok(())
}

/// `text` of the repository file `from` with its links made the site's: a link to a page
/// goes to the page, an image is copied to `assets/` (returned), anything else in the
/// repository goes to GitHub.
fn rewrite(from: &str, text: &str, pages: &[(String, String)]) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut assets = Vec::new();
    let mut last = 0;
    for link in links(text) {
        let target = &text[link.target.clone()];
        let Some((path, anchor)) = local(target) else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        let Some(rel) = resolve(from, path) else {
            continue;
        };
        let anchor = anchor.map(|a| format!("#{a}")).unwrap_or_default();
        let new = if let Some((_, page)) = pages.iter().find(|(p, _)| *p == rel) {
            format!("{page}{anchor}")
        } else if [".png", ".jpg", ".svg", ".gif"]
            .iter()
            .any(|e| rel.ends_with(e))
        {
            assets.push(rel.clone());
            format!("assets/{rel}")
        } else {
            let kind = if path.ends_with('/') || !rel.contains('.') {
                "tree"
            } else {
                "blob"
            };
            format!("{REPOSITORY}/{kind}/main/{rel}{anchor}")
        };
        out.push_str(&text[last..link.target.start]);
        out.push_str(&new);
        last = link.target.end;
    }
    out.push_str(&text[last..]);
    (out, assets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn targets(text: &str) -> Vec<&str> {
        links(text).into_iter().map(|l| &text[l.target]).collect()
    }

    #[test]
    fn links_outside_code_are_found_with_their_lines() {
        let text = "See [a](a.md) and ![pic](img/p.png \"title\").\n\
                    `[not](code.md)` but [b](<b c.md>)\n\
                    ```rust\nlet x = [y](z);\n```\n\
                    [sealed\nIDs](docs/s.md#x)\n";
        assert_eq!(
            targets(text),
            ["a.md", "img/p.png", "b c.md", "docs/s.md#x"]
        );
        let lines: Vec<usize> = links(text).iter().map(|l| l.line).collect();
        assert_eq!(lines, [1, 1, 2, 7]);
    }

    #[test]
    fn a_code_span_across_lines_hides_its_brackets() {
        let text = "run `cargo doc\n[x](y.md)` then [z](z.md)\n\n`open\n\nthen [w](w.md)\n";
        assert_eq!(targets(text), ["z.md", "w.md"]);
    }

    #[test]
    fn anchors_follow_github() {
        let text = "# snowdrift\n## Offline in browsers: `snowdrift/browser`\n\
                    ### A holder's state copied\n## Costs\n## Costs\n\
                    ```sh\n# not a heading\n```\n#nospace\n## [Linked](x.md) title ##\n\
                    <a id=\"custom\"></a>\n";
        let found = anchors(text);
        for a in [
            "snowdrift",
            "offline-in-browsers-snowdriftbrowser",
            "a-holders-state-copied",
            "costs",
            "costs-1",
            "linked-title",
            "custom",
        ] {
            assert!(found.contains(a), "{a} missing from {found:?}");
        }
        assert!(!found.contains("not-a-heading"));
        assert!(!found.contains("nospace"));
        assert_eq!(found.len(), 7);
    }

    #[test]
    fn paths_resolve_inside_the_repository_only() {
        assert_eq!(
            resolve("docs/a.md", "../lease/P.md").as_deref(),
            Some("lease/P.md")
        );
        assert_eq!(
            resolve("README.md", "docs/./a.md").as_deref(),
            Some("docs/a.md")
        );
        assert_eq!(resolve("docs/a.md", "/core/").as_deref(), Some("core"));
        assert_eq!(resolve("README.md", "../x.md"), None);
        assert_eq!(local("https://x.org/a#b"), None);
        assert_eq!(local("a.md#b"), Some(("a.md", Some("b"))));
        assert_eq!(local("#b"), Some(("", Some("b"))));
    }

    #[test]
    fn broken_links_are_reported() {
        assert!(check("README.md", "docs/clocks.md#the-restart-rule").is_ok());
        assert!(check("README.md", "https://nowhere.invalid/").is_ok());
        let missing = check("README.md", "docs/no-such-guide.md").unwrap_err();
        assert!(
            missing.contains("docs/no-such-guide.md does not exist"),
            "{missing}"
        );
        let anchor = check("docs/clocks.md", "#no-such-heading").unwrap_err();
        assert!(
            anchor.contains("no heading with the anchor #no-such-heading"),
            "{anchor}"
        );
        assert!(check("docs/clocks.md", "../../outside.md").is_err());
    }

    #[test]
    fn the_built_site_is_checked_for_missing_pages_and_ids() {
        let dir = std::env::temp_dir().join(format!("snowdrift-site-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let page = |name: &str, html: &str| fs::write(dir.join(name), html).unwrap();
        page(
            "a.html",
            r##"<h2 id="costs">Costs</h2><a href="b.html#top">b</a><a href="#costs">here</a><a href="https://x.y/">x</a>"##,
        );
        page("b.html", r#"<p id="top"></p><img src="a.html">"#);
        assert_eq!(check_site(&dir), Ok(()));
        page(
            "b.html",
            r##"<p id="bottom"></p><a href="c.html">c</a><a href="#nowhere">n</a>"##,
        );
        let err = check_site(&dir).unwrap_err();
        fs::remove_dir_all(&dir).unwrap();
        assert!(
            err.contains("a.html: b.html#top: no element with that id"),
            "{err}"
        );
        assert!(err.contains("b.html: c.html: no such file"), "{err}");
        assert!(
            err.contains("b.html: #nowhere: no element with that id"),
            "{err}"
        );
        assert!(err.contains("3 broken link(s)"), "{err}");
    }

    #[test]
    fn the_site_links_to_its_pages_and_to_github_for_the_rest() {
        let pages = vec![
            ("README.md".to_string(), "introduction.md".to_string()),
            ("lease/PROTOCOL.md".to_string(), "protocol.md".to_string()),
            ("docs/fleet.md".to_string(), "fleet.md".to_string()),
        ];
        let text = "[p](../lease/PROTOCOL.md#over-http) [r](../README.md) [f](fleet.md#costs) \
                    [d](../lease/) [s](../core/src/lib.rs) ![i](../www/s/d.png) [u](https://a.b/) [h](#here)";
        let (out, assets) = rewrite("docs/x.md", text, &pages);
        assert_eq!(
            out,
            format!(
                "[p](protocol.md#over-http) [r](introduction.md) [f](fleet.md#costs) \
                 [d]({REPOSITORY}/tree/main/lease) [s]({REPOSITORY}/blob/main/core/src/lib.rs) \
                 ![i](assets/www/s/d.png) [u](https://a.b/) [h](#here)"
            )
        );
        assert_eq!(assets, ["www/s/d.png"]);
    }
}
