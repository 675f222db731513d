//! The `newcomer` test suite: every fenced code block of the READMEs and the guides
//! (`docs/*.md`), copied into fresh projects the way a new user would, compiled and run as
//! written.
//!
//! The projects live in a temporary directory outside the workspace, removed afterwards:
//! a `cargo new` edition-2024 binary crate that depends on the core (and, for lease
//! blocks, on `snowdrift-lease`) by path, with default features, and an `npm init -y`
//! project (`"type": "module"`) with the packed npm package (`npm pack` of `wasm/pkg`)
//! installed. Each ```rust block becomes `src/main.rs` of the one crate (a fragment is
//! wrapped in a `fn main` returning `Result`, so `?` works; rustdoc's hidden `# ` lines
//! count), built into `target/newcomer/` so that reruns are incremental. Each ```js,
//! ```mjs or ```cjs block runs with node; a Worker module (`export default { fetch }`)
//! runs in workerd through Miniflare and a browser block (`snowdrift/browser`,
//! `localStorage`, `document`) in headless Chromium, both through
//! `tests/newcomer/runtimes.mjs`. Each ```python block runs with python3, with the ID
//! service it calls (`snowdrift serve` of the packed package, over the suite's Redis, on
//! 127.0.0.1:8080, its token in `SNOWDRIFT_TOKEN`) started when a block posts to `/ids`.
//! Blocks that connect to Redis find a redis-server on
//! 127.0.0.1:6379, and blocks that connect to PostgreSQL a server on 127.0.0.1:5432 with
//! the database and role `app` (`tests/fleet/pg-server.mjs`); the suite starts each when
//! its port is free. A Worker block that exports the lease store gets it bound as
//! `LEASES`.
//!
//! Shell blocks and other languages are listed as skipped. A block that cannot run here
//! is marked in the markdown by a comment on the line right before it:
//! `<!-- newcomer: skip (reason) -->`.

use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{Result, cargo, cargo_bin, ensure_apt, lock_version, root, run_in};

/// The files whose blocks are run, besides the guides (`docs/*.md`).
const FILES: &[&str] = &[
    "README.md",
    "core/README.md",
    "wasm/README.md",
    "lease/README.md",
];

/// The longest a block may run (a lease block waits up to a second for its first lease).
const RUN_LIMIT: Duration = Duration::from_secs(60);

/// The Redis server the blocks name.
const REDIS_PORT: u16 = 6379;

/// The PostgreSQL server the blocks name (`postgres://app@127.0.0.1/app`).
const POSTGRES_PORT: u16 = 5432;

/// The ID service the Python blocks call (`http://127.0.0.1:8080/ids`, docs/serve.md).
const SERVICE_PORT: u16 = 8080;

/// The ID service's token, in the Python blocks' `SNOWDRIFT_TOKEN`.
const SERVICE_TOKEN: &str = "newcomer-suite-token-0123456789";

/// Crates a Rust block may use besides snowdrift, added to its manifest at the version of
/// the workspace's Cargo.lock, with the features a user would name for the block.
const RUST_CRATES: &[(&str, &str)] = &[
    ("redis", ""),
    ("tokio-postgres", ""),
    ("tokio", r#", features = ["macros", "rt-multi-thread"]"#),
];

/// Where a block runs, or why it does not.
#[derive(Debug, PartialEq)]
enum Kind {
    Rust,
    /// Node, as an ES module (`.mjs`) or CommonJS (`.cjs`).
    Node {
        commonjs: bool,
    },
    Workerd,
    Browser,
    /// python3, with `SNOWDRIFT_TOKEN` set for the ID service.
    Python,
    Skip(String),
}

/// One fenced code block.
struct Block {
    file: String,
    /// The line of its opening fence (1-based).
    line: usize,
    lang: String,
    code: String,
    kind: Kind,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// A file name for the block: `wasm-README.md-32`.
    fn slug(&self) -> String {
        format!("{}-{}", self.file.replace('/', "-"), self.line)
    }

    /// Whether the block talks to Redis (which the blocks find at 127.0.0.1:6379), itself
    /// or through the ID service.
    fn needs_redis_server(&self) -> bool {
        self.code.contains("redis") || self.needs_id_service()
    }

    /// Whether the block calls the ID service (`snowdrift serve` at 127.0.0.1:8080).
    fn needs_id_service(&self) -> bool {
        self.kind == Kind::Python && self.code.contains("/ids")
    }

    /// Whether the block talks to PostgreSQL (database and role `app` at 127.0.0.1:5432).
    fn needs_postgres_server(&self) -> bool {
        self.code.contains("postgres")
    }
}

/// `cargo xtask test newcomer`.
pub fn test() -> Result {
    let started = Instant::now();
    // The suite's own unit tests: block parsing, markers, runtimes, the rustdoc wrapping.
    cargo(&["test", "-p", "xtask", "--quiet", "--", "newcomer::"])?;
    let mut files: Vec<String> = FILES.iter().map(|f| f.to_string()).collect();
    files.extend(crate::docs::markdown_in("docs", false)?);
    let mut blocks = Vec::new();
    for file in &files {
        let text = fs::read_to_string(root().join(file))
            .map_err(|e| format!("cannot read {file}: {e}"))?;
        blocks.extend(parse(file, &text)?);
    }
    let scratch = std::env::temp_dir().join(format!("snowdrift-newcomer-{}", std::process::id()));
    let result = run_all(&blocks, &files, &scratch);
    let _ = fs::remove_dir_all(&scratch);
    eprintln!("newcomer suite: {:.1} s", started.elapsed().as_secs_f64());
    result
}

fn run_all(blocks: &[Block], files: &[String], scratch: &Path) -> Result {
    let runs = |f: fn(&Kind) -> bool| blocks.iter().any(|b| f(&b.kind));
    let rust = runs(|k| *k == Kind::Rust)
        .then(|| rust_project(scratch))
        .transpose()?;
    let node = runs(|k| {
        matches!(
            k,
            Kind::Node { .. } | Kind::Workerd | Kind::Browser | Kind::Python
        )
    })
    .then(|| node_project(scratch, blocks))
    .transpose()?;
    if runs(|k| *k == Kind::Browser) {
        ensure_apt(&[("chromium", "chromium")])?;
    }
    let needs = |f: fn(&Block) -> bool| {
        blocks
            .iter()
            .any(|b| !matches!(b.kind, Kind::Skip(_)) && f(b))
    };
    let redis = needs(Block::needs_redis_server)
        .then(start_redis)
        .transpose()?;
    let postgres = needs(Block::needs_postgres_server)
        .then(start_postgres)
        .transpose()?;
    let service = needs(Block::needs_id_service)
        .then(|| start_service(node.as_deref().expect("made above"), scratch))
        .transpose()?;

    let mut report = Vec::new();
    let mut failures = Vec::new();
    for block in blocks {
        let t = Instant::now();
        let outcome = match &block.kind {
            Kind::Skip(reason) => Err(reason.clone()),
            Kind::Rust => Ok(run_rust(block, rust.as_ref().expect("made above"))),
            Kind::Node { .. } | Kind::Workerd | Kind::Browser => {
                Ok(run_js(block, node.as_deref().expect("made above")))
            }
            Kind::Python => Ok(run_python(block, node.as_deref().expect("made above"))),
        };
        let line = match outcome {
            Err(reason) => format!("skipped ({reason})"),
            Ok(Ok(())) => format!("ok ({:.1} s)", t.elapsed().as_secs_f64()),
            Ok(Err(output)) => {
                failures.push(format!(
                    "{} ({}) failed:\n{}",
                    block.at(),
                    block.lang,
                    output
                ));
                "FAILED".to_string()
            }
        };
        let where_ = match block.kind {
            Kind::Workerd => " in workerd",
            Kind::Browser => " in Chromium",
            _ => "",
        };
        eprintln!("{:<22} {:<5} {line}{where_}", block.at(), block.lang);
        report.push(line);
    }
    // The service first: it releases its lease in Redis.
    for server in [service, redis, postgres].into_iter().flatten() {
        stop(server);
    }

    let count = |p: &str| report.iter().filter(|l| l.starts_with(p)).count();
    eprintln!(
        "\n{} blocks in {}: {} ran ok, {} skipped, {} failed",
        blocks.len(),
        files.join(", "),
        count("ok"),
        count("skipped"),
        failures.len()
    );
    if failures.is_empty() {
        return Ok(());
    }
    for f in &failures {
        eprintln!("\n{f}");
    }
    Err(format!(
        "{} README block(s) failed (fix the README, or mark a block that cannot run here \
         with <!-- newcomer: skip (reason) --> on the line before it)",
        failures.len()
    ))
}

/// The fenced code blocks of a markdown file, each with its skip marker.
fn parse(file: &str, text: &str) -> Result<Vec<Block>> {
    let mut blocks = Vec::new();
    let mut marker: Option<(usize, String)> = None;
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let fence: String = trimmed
            .chars()
            .take_while(|&c| c == '`' || c == '~')
            .collect();
        let is_fence = indent < 4
            && fence.len() >= 3
            && fence
                .chars()
                .all(|c| c == fence.chars().next().unwrap_or('`'));
        if !is_fence {
            if let Some(rest) = trimmed.strip_prefix("<!-- newcomer:") {
                marker = Some((i + 1, skip_reason(file, i + 1, rest)?));
            } else if !trimmed.is_empty()
                && let Some((at, _)) = marker
            {
                return Err(format!(
                    "{file}:{at}: a newcomer marker must be right before a code block"
                ));
            }
            continue;
        }
        let info = trimmed[fence.len()..].trim();
        let mut words = info.split([',', ' ']).filter(|w| !w.is_empty());
        let lang = words.next().unwrap_or("").to_string();
        let mut code = String::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            let t = l.trim_start();
            if t.starts_with(&fence)
                && t.trim_end()
                    .chars()
                    .all(|c| c == fence.as_bytes()[0] as char)
            {
                closed = true;
                break;
            }
            // Content keeps its indentation relative to the fence's.
            let cut = l.len() - l.trim_start().len();
            code.push_str(&l[cut.min(indent)..]);
            code.push('\n');
        }
        if !closed {
            return Err(format!("{file}:{}: code block is never closed", i + 1));
        }
        let kind = match marker.take() {
            Some((_, reason)) => Kind::Skip(reason),
            None => kind(&lang, &code),
        };
        blocks.push(Block {
            file: file.to_string(),
            line: i + 1,
            lang: if lang.is_empty() { "none".into() } else { lang },
            code,
            kind,
        });
    }
    if let Some((at, _)) = marker {
        return Err(format!(
            "{file}:{at}: a newcomer marker must be right before a code block"
        ));
    }
    Ok(blocks)
}

/// The reason of `<!-- newcomer: skip (reason) -->` (given the text after `newcomer:`).
fn skip_reason(file: &str, line: usize, rest: &str) -> Result<String> {
    rest.trim()
        .strip_suffix("-->")
        .map(str::trim)
        .and_then(|r| r.strip_prefix("skip"))
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'))
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.trim().to_string())
        .ok_or_else(|| {
            format!("{file}:{line}: write the marker as <!-- newcomer: skip (reason) -->")
        })
}

/// Where a block of this language and code runs.
fn kind(lang: &str, code: &str) -> Kind {
    match lang {
        "rust" => Kind::Rust,
        "js" | "javascript" | "mjs" | "cjs" => {
            if code.contains("export default") && code.contains("fetch") {
                Kind::Workerd
            } else if [
                "\"snowdrift/browser\"",
                "localStorage",
                "document.",
                "window.",
            ]
            .iter()
            .any(|s| code.contains(s))
            {
                Kind::Browser
            } else {
                let module = code
                    .lines()
                    .any(|l| l.starts_with("import ") || l.starts_with("export "));
                Kind::Node {
                    commonjs: lang == "cjs"
                        || (lang != "mjs" && !module && code.contains("require(")),
                }
            }
        }
        "python" | "py" => Kind::Python,
        "sh" | "bash" | "shell" | "console" | "zsh" => Kind::Skip("shell".into()),
        "" => Kind::Skip("no language".into()),
        other => Kind::Skip(format!("{other}, not run")),
    }
}

/// The crate every Rust block is built in.
struct RustProject {
    dir: PathBuf,
    /// The manifest `cargo new` wrote, without dependencies.
    manifest: String,
}

/// `cargo new` in the scratch directory.
fn rust_project(scratch: &Path) -> Result<RustProject> {
    let dir = scratch.join("rust");
    fs::create_dir_all(scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    run_in(
        scratch,
        &cargo_bin(),
        &[
            "new",
            "--bin",
            "--edition",
            "2024",
            "--vcs",
            "none",
            "--quiet",
            "--name",
            "readme-example",
            "rust",
        ],
        &[],
    )?;
    // The workspace's lockfile: the blocks build with the versions the repository tests.
    fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock"))
        .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    let manifest = fs::read_to_string(dir.join("Cargo.toml"))
        .map_err(|e| format!("cannot read the new crate's Cargo.toml: {e}"))?;
    Ok(RustProject { dir, manifest })
}

/// The manifest for one block: `cargo new`'s, with the dependencies the block uses.
fn manifest(base: &str, code: &str) -> Result<String> {
    let path = |dir: &str| root().join(dir).display().to_string();
    // Sealed IDs are behind the core's `seal` feature, which a user names for them.
    let features = if code.contains("Sealer") {
        ", features = [\"seal\"]"
    } else {
        ""
    };
    let mut deps = format!("snowdrift = {{ path = {:?}{features} }}\n", path("core"));
    if code.contains("snowdrift_lease") {
        let mut features = Vec::new();
        if code.contains("acquire_async") || code.contains("release_async") {
            features.push("\"tokio\"");
        }
        if code.contains("ClusterClient") || code.contains("redis::cluster") {
            features.push("\"cluster\"");
        }
        if code.contains("Postgres") {
            features.push("\"postgres\"");
        }
        deps += &format!(
            "snowdrift-lease = {{ path = {:?}, features = [{}] }}\n",
            path("lease"),
            features.join(", ")
        );
    }
    for (name, extra) in RUST_CRATES {
        if code.contains(&format!("{}::", name.replace('-', "_"))) {
            let version = lock_version(name)?;
            deps += &format!("{name} = {{ version = \"={version}\"{extra} }}\n");
        }
    }
    Ok(format!("{}\n{deps}", base.trim_end()))
}

/// `src/main.rs` for a block, the way rustdoc makes a doctest: rustdoc's hidden lines
/// (`# ...`) are code, and a block without `fn main` is wrapped in one, returning a
/// `Result` so that `?` works.
fn main_rs(code: &str) -> String {
    let mut attrs = String::new();
    let mut body = String::new();
    for line in code.lines() {
        let t = line.trim_start();
        let line = if t == "#" {
            ""
        } else if let Some(rest) = t.strip_prefix("# ") {
            rest
        } else {
            line
        };
        if line.trim_start().starts_with("#![") {
            attrs.push_str(line);
            attrs.push('\n');
        } else {
            body.push_str(line);
            body.push('\n');
        }
    }
    if body.contains("fn main(") {
        return attrs + &body;
    }
    let tail = if body.trim_end().ends_with("(())") {
        ""
    } else {
        "Ok(())\n"
    };
    format!("{attrs}fn main() -> Result<(), Box<dyn std::error::Error>> {{\n{body}{tail}}}\n")
}

fn run_rust(block: &Block, project: &RustProject) -> std::result::Result<(), String> {
    let dir = &project.dir;
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        // Unchanged files keep their times: cargo then rebuilds nothing.
        if fs::read_to_string(&path).ok().as_deref() != Some(text) {
            fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok::<_, String>(())
    };
    write("Cargo.toml", &manifest(&project.manifest, &block.code)?)?;
    write("src/main.rs", &main_rs(&block.code))?;
    let target = root().join("target/newcomer");
    let build = Command::new(cargo_bin())
        .args(["build", "--quiet", "--color", "never"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .map_err(|e| format!("cannot start cargo: {e}"))?;
    if !build.status.success() {
        return Err(format!(
            "cargo build of this src/main.rs failed:\n{}\n{}",
            numbered(&main_rs(&block.code)),
            String::from_utf8_lossy(&build.stderr)
        ));
    }
    run_limited(Command::new(target.join("debug/readme-example")).current_dir(dir))
}

/// The text with line numbers, as the compiler's messages count them.
fn numbered(text: &str) -> String {
    text.lines()
        .enumerate()
        .map(|(i, l)| format!("{:>4} | {l}\n", i + 1))
        .collect()
}

/// `npm init -y` in the scratch directory, `"type": "module"`, then one `npm install` of
/// the packed package and the npm packages the blocks import (at the versions the
/// repository's test package.json pins).
fn node_project(scratch: &Path, blocks: &[Block]) -> Result<PathBuf> {
    crate::npm::build()?;
    let dir = scratch.join("node");
    fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    run_in(&dir, "npm", &["init", "-y", "--silent"], &[])?;
    run_in(&dir, "npm", &["pkg", "set", "type=module"], &[])?;
    let pack = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(scratch)
        .arg(crate::npm::pkg_dir())
        .current_dir(scratch)
        .output()
        .map_err(|e| format!("cannot start npm: {e}"))?;
    let tarball = String::from_utf8_lossy(&pack.stdout)
        .lines()
        .rev()
        .find(|l| l.ends_with(".tgz"))
        .map(|l| scratch.join(l.trim()))
        .ok_or_else(|| {
            format!(
                "npm pack of wasm/pkg failed: {}",
                String::from_utf8_lossy(&pack.stderr)
            )
        })?;
    let mut install = vec![
        "install".to_string(),
        "--no-audit".into(),
        "--no-fund".into(),
        tarball.display().to_string(),
    ];
    let mut packages = imported_packages(blocks);
    // The ID service loads the Redis client from the project it runs in.
    if blocks.iter().any(Block::needs_id_service) && !packages.iter().any(|p| p == "redis") {
        packages.push("redis".into());
    }
    for name in packages {
        install.push(format!("{name}@{}", pinned_npm_version(&name)?));
    }
    let args: Vec<&str> = install.iter().map(String::as_str).collect();
    run_in(&dir, "npm", &args, &[])?;
    Ok(dir)
}

/// The npm packages other than snowdrift and Node's own that the JS blocks import.
fn imported_packages(blocks: &[Block]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let js = blocks
        .iter()
        .filter(|b| matches!(b.kind, Kind::Node { .. } | Kind::Workerd | Kind::Browser));
    for block in js {
        for opener in ["from ", "require(", "import("] {
            for (at, _) in block.code.match_indices(opener) {
                let rest = &block.code[at + opener.len()..];
                let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
                    continue;
                };
                let spec = rest[1..].split(quote).next().unwrap_or("");
                if spec.starts_with('.') || spec.starts_with('/') || spec.contains(':') {
                    continue; // a file, or node:, npm:, cloudflare:...
                }
                // The package of `name/sub` or `@scope/name/sub`.
                let parts = if spec.starts_with('@') { 2 } else { 1 };
                let name = spec.split('/').take(parts).collect::<Vec<_>>().join("/");
                if name != "snowdrift" && !name.is_empty() && !names.contains(&name) {
                    names.push(name);
                }
            }
        }
    }
    names
}

/// The version range `tests/js/package.json` gives an npm package.
fn pinned_npm_version(name: &str) -> Result<String> {
    let path = crate::npm::js_dir().join("package.json");
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .find_map(|l| l.trim().strip_prefix(&format!("\"{name}\": \"")))
        .and_then(|rest| rest.split('"').next())
        .map(str::to_string)
        .ok_or_else(|| {
            format!("a README block imports {name:?}: pin its version in tests/js/package.json")
        })
}

fn run_js(block: &Block, dir: &Path) -> std::result::Result<(), String> {
    let ext = match block.kind {
        Kind::Node { commonjs: true } => "cjs",
        _ => "mjs",
    };
    let file = format!("{}.{ext}", block.slug());
    fs::write(dir.join(&file), &block.code).map_err(|e| format!("cannot write {file}: {e}"))?;
    let runtimes = root().join("tests/newcomer/runtimes.mjs");
    let mut command = Command::new("node");
    match block.kind {
        Kind::Workerd => command.arg(&runtimes).arg("workerd"),
        Kind::Browser => command
            .arg(&runtimes)
            .arg("chromium")
            .env("CHROMIUM", "/usr/bin/chromium"),
        _ => &mut command,
    };
    run_limited(command.arg(&file).current_dir(dir))
}

/// Runs a Python block with python3, the ID service's token in `SNOWDRIFT_TOKEN`.
fn run_python(block: &Block, dir: &Path) -> std::result::Result<(), String> {
    let file = format!("{}.py", block.slug());
    fs::write(dir.join(&file), &block.code).map_err(|e| format!("cannot write {file}: {e}"))?;
    run_limited(
        Command::new("python3")
            .arg(&file)
            .current_dir(dir)
            .env("SNOWDRIFT_TOKEN", SERVICE_TOKEN),
    )
}

/// Runs a command for at most [`RUN_LIMIT`], its output captured; Err(output) unless it
/// exits with status 0.
fn run_limited(command: &mut Command) -> std::result::Result<(), String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() < RUN_LIMIT => {
                std::thread::sleep(Duration::from_millis(20))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let output = format!(
        "{}{}",
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default()
    );
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!("exited with {s}:\n{output}")),
        None => Err(format!(
            "still running after {} s (a newcomer's program would not end):\n{output}",
            RUN_LIMIT.as_secs()
        )),
    }
}

/// Reads a pipe to its end on a thread of its own.
fn read_all(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_string(&mut s);
        }
        s
    })
}

/// Starts redis-server on 127.0.0.1:6379, where the blocks connect, when the port is free.
fn start_redis() -> Result<Child> {
    ensure_apt(&[("redis-server", "redis-server")])?;
    if TcpListener::bind(("127.0.0.1", REDIS_PORT)).is_err() {
        return Err(format!(
            "README blocks connect to redis://127.0.0.1:{REDIS_PORT}, but something already \
             listens on that port: stop it, and the suite starts a redis-server of its own there"
        ));
    }
    let port = REDIS_PORT.to_string();
    // Its working directory (where a snapshot would go) is a temp one, not the checkout.
    let dir = std::env::temp_dir().join(format!("snowdrift-newcomer-redis-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut child = Command::new("redis-server")
        .args([
            "--port",
            &port,
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .arg("--dir")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start redis-server: {e}"))?;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if ping(REDIS_PORT) {
            eprintln!("redis-server on 127.0.0.1:{port} (pid {})", child.id());
            return Ok(child);
        }
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "redis-server on port {port} exited at once ({status})"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    stop(child);
    Err(format!(
        "redis-server on port {port} did not answer PING within 10 s"
    ))
}

/// Starts PostgreSQL on 127.0.0.1:5432 with the database and role `app`, where the blocks
/// connect, when the port is free: `tests/fleet/pg-server.mjs serve` (initdb in a temp
/// dir, the server as nobody when we are root), which stops it on SIGTERM.
fn start_postgres() -> Result<Child> {
    ensure_apt(&[("postgresql", "\"$(pg_config --bindir 2>/dev/null)/initdb\"")])?;
    if TcpListener::bind(("127.0.0.1", POSTGRES_PORT)).is_err() {
        return Err(format!(
            "README blocks connect to postgres://app@127.0.0.1:{POSTGRES_PORT}/app, but something \
             already listens on that port: stop it, and the suite starts a server of its own there"
        ));
    }
    let mut child = Command::new("node")
        .arg(root().join("tests/fleet/pg-server.mjs"))
        .args(["serve", &POSTGRES_PORT.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start tests/fleet/pg-server.mjs: {e}"))?;
    // The first line is "ready ..." once the server answers (the script bounds its waits).
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout of pg-server.mjs")?;
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
    if !line.starts_with("ready") {
        stop(child);
        return Err(format!(
            "PostgreSQL did not start for the README blocks: {line:?}"
        ));
    }
    eprintln!("PostgreSQL: {}", line.trim().trim_start_matches("ready "));
    Ok(child)
}

/// Starts the ID service the Python blocks call, `snowdrift serve` of the packed package in
/// the node project `dir` (which holds the Redis client), over the suite's Redis on
/// 127.0.0.1:6379, on 127.0.0.1:8080, when the port is free; its token file in `scratch`.
fn start_service(dir: &Path, scratch: &Path) -> Result<Child> {
    if TcpListener::bind(("127.0.0.1", SERVICE_PORT)).is_err() {
        return Err(format!(
            "the Python blocks call the ID service at http://127.0.0.1:{SERVICE_PORT}, but \
             something already listens on that port: stop it, and the suite starts the service there"
        ));
    }
    let token = scratch.join("service-token");
    fs::write(&token, format!("{SERVICE_TOKEN}\n"))
        .map_err(|e| format!("cannot write {}: {e}", token.display()))?;
    let mut child = Command::new("node")
        .args(["node_modules/snowdrift/bin/snowdrift.cjs", "serve"])
        .args(["--redis", &format!("redis://127.0.0.1:{REDIS_PORT}")])
        .args(["--space", "newcomer", "--port", &SERVICE_PORT.to_string()])
        .arg("--token-file")
        .arg(&token)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start snowdrift serve: {e}"))?;
    // Its first line says where it listens, once it does (it bounds its own waits).
    let mut line = String::new();
    let stdout = child.stdout.take().ok_or("no stdout of snowdrift serve")?;
    let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
    if !line.contains("listening on") {
        stop(child);
        return Err(format!(
            "snowdrift serve did not start for the Python blocks: {line:?}"
        ));
    }
    eprintln!("{} (pid {})", line.trim(), child.id());
    Ok(child)
}

fn ping(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
    let mut reply = [0; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

/// Stops a server the suite started by its pid (SIGTERM: redis-server keeps no data;
/// pg-server.mjs stops PostgreSQL and removes its files), then reaps it.
fn stop(mut child: Child) {
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_with_their_lines_languages_and_markers() {
        let text = "# t\n\n```sh\nls\n```\n<!-- newcomer: skip (needs a board) -->\n```rust\nlet x = 1;\n```\n\n  ```js\n  import { a } from \"b\";\n  ```\n";
        let blocks = parse("R.md", text).unwrap();
        let seen: Vec<_> = blocks.iter().map(|b| (b.line, b.lang.as_str())).collect();
        assert_eq!(seen, [(3, "sh"), (7, "rust"), (11, "js")]);
        assert_eq!(blocks[0].kind, Kind::Skip("shell".into()));
        assert_eq!(blocks[1].kind, Kind::Skip("needs a board".into()));
        assert_eq!(blocks[2].kind, Kind::Node { commonjs: false });
        assert_eq!(blocks[2].code, "import { a } from \"b\";\n");
    }

    #[test]
    fn a_marker_must_precede_a_block() {
        let err = parse("R.md", "<!-- newcomer: skip (x) -->\ntext\n")
            .err()
            .unwrap();
        assert!(err.contains("R.md:1"), "{err}");
        assert!(parse("R.md", "<!-- newcomer: skip -->\n```js\n```\n").is_err());
    }

    #[test]
    fn runtimes_of_js_blocks() {
        assert_eq!(
            kind("js", "const { S } = require(\"snowdrift\");\n"),
            Kind::Node { commonjs: true }
        );
        assert_eq!(
            kind(
                "js",
                "import { S } from \"snowdrift\";\nexport default { fetch: () => 1 };\n"
            ),
            Kind::Workerd
        );
        assert_eq!(
            kind(
                "js",
                "import { openSnowdrift } from \"snowdrift/browser\";\n"
            ),
            Kind::Browser
        );
        assert_eq!(kind("toml", ""), Kind::Skip("toml, not run".into()));
        assert_eq!(kind("python", "print(1)\n"), Kind::Python);
    }

    #[test]
    fn packages_the_js_blocks_import() {
        let text = "```js\nimport { createClient } from \"redis\";\nimport { leaseNode } from \"snowdrift/redis\";\nimport x from './x.js';\nimport fs from \"node:fs\";\n```\n```cjs\nconst Redis = require('ioredis');\nconst t = require(\"@scope/tool/sub\");\n```\n```sh\nnpm i from \"left-pad\"\n```\n";
        let blocks = parse("R.md", text).unwrap();
        assert_eq!(
            imported_packages(&blocks),
            ["redis", "ioredis", "@scope/tool"]
        );
    }

    #[test]
    fn fragments_are_wrapped_as_rustdoc_does() {
        let main = main_rs("use a::B;\nlet x = f()?;\n# Ok::<(), E>(())\n");
        assert_eq!(
            main,
            "fn main() -> Result<(), Box<dyn std::error::Error>> {\nuse a::B;\nlet x = f()?;\nOk::<(), E>(())\n}\n"
        );
        assert!(main_rs("let x = 1;\n").ends_with("let x = 1;\nOk(())\n}\n"));
        assert_eq!(main_rs("fn main() {}\n"), "fn main() {}\n");
    }
}
