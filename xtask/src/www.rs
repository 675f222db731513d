//! `cargo xtask www`: builds the web page into `www/dist/` from the npm package build,
//! and the guides it links to into `www/dist/docs/` (mdBook, `crate::docs`);
//! `cargo xtask serve`: serves it on 127.0.0.1; the `www` test suite.
//!
//! The page's module (`www/src/app.js`) imports `snowdrift/browser`; esbuild bundles it
//! with the package from `wasm/pkg/` (resolved through its `exports`, `browser`
//! condition) into one minified `app.js`. The package's loader fetches `snowdrift.wasm`
//! next to that script, so the wasm is copied beside it. The service worker gets the
//! build's file list and a cache name that changes with the files' contents.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::npm::{path_str, pkg_dir, tool, tools_dir};
use crate::util::{Result, ensure_apt, root, run_in};

/// The files of the built page, served from `www/dist/`.
const FILES: &[&str] = &[
    "index.html",
    "app.js",
    "style.css",
    "snowdrift.wasm",
    "sw.js",
];

/// Files of the page loaded only when used (the lease client, for a lease URL; the
/// sealed-ID module, when a sealed ID is opened): not in its first load; the service
/// worker keeps them once fetched, not at install.
const LAZY: &[&str] = &["lease.js", "seal.js", "seal.wasm"];

fn www_dir() -> PathBuf {
    root().join("www")
}

fn dist_dir() -> PathBuf {
    www_dir().join("dist")
}

/// `cargo xtask www`.
pub fn build() -> Result {
    crate::npm::build()?;
    let (www, dist) = (www_dir(), dist_dir());
    if dist.exists() {
        fs::remove_dir_all(&dist).map_err(|e| format!("cannot clear {}: {e}", dist.display()))?;
    }
    fs::create_dir_all(&dist).map_err(|e| format!("cannot create {}: {e}", dist.display()))?;
    let esbuild = tool("esbuild");
    let node_path = tools_dir().join("node_modules");
    let esbuild_args = |entry: &str, out: &str, extra: &[&str]| -> Result<Vec<String>> {
        let mut args = vec![
            path_str(&www.join(entry))?.to_string(),
            "--minify".into(),
            "--log-level=warning".into(),
            format!("--outfile={}", path_str(&dist.join(out))?),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        Ok(args)
    };
    // The page's script, then the two modules app.js imports only when used: the lease
    // client (`snowdrift/browser-lease` with its own copy of the API) when a lease URL is
    // set, the sealed-ID module when a sealed ID is opened. `snowdrift/browser` is found
    // in xtask/js/node_modules, where the package is linked.
    let scripts: [(&str, &[&str]); 3] = [
        ("app", &["--external:./lease.js", "--external:./seal.js"]),
        ("lease", &[]),
        ("seal", &[]),
    ];
    for (name, externals) in scripts {
        let mut flags = vec![
            "--bundle",
            "--format=esm",
            "--platform=browser",
            "--target=es2022",
        ];
        flags.extend_from_slice(externals);
        let args = esbuild_args(&format!("src/{name}.js"), &format!("{name}.js"), &flags)?;
        run_esbuild(&esbuild, &args, &[("NODE_PATH", path_str(&node_path)?)])?;
    }
    copy(&pkg_dir().join("seal.wasm"), &dist.join("seal.wasm"))?;
    run_esbuild(&esbuild, &esbuild_args("style.css", "style.css", &[])?, &[])?;
    copy(&www.join("index.html"), &dist.join("index.html"))?;
    copy(
        &pkg_dir().join("snowdrift.wasm"),
        &dist.join("snowdrift.wasm"),
    )?;

    // The service worker: the files to keep (the page as "./", the URL it is opened at)
    // and a cache name from their contents.
    let mut hash = Fnv::new();
    for file in FILES.iter().chain(LAZY).filter(|f| **f != "sw.js") {
        hash.write(&read(&dist.join(file))?);
    }
    let list: Vec<String> = FILES
        .iter()
        .filter(|f| **f != "sw.js")
        .map(|f| match *f {
            "index.html" => "\"./\"".to_string(),
            f => format!("\"{f}\""),
        })
        .collect();
    let sw = String::from_utf8(read(&www.join("sw.js"))?).map_err(|e| e.to_string())?;
    let lazy: Vec<String> = LAZY.iter().map(|f| format!("\"{f}\"")).collect();
    let sw = sw
        .replace("__BUILD__", &format!("{:016x}", hash.0))
        .replace("__FILES__", &format!("[{}]", list.join(", ")))
        .replace("__LAZY__", &format!("[{}]", lazy.join(", ")));
    let sw_path = dist.join("sw.js");
    fs::write(&sw_path, sw).map_err(|e| format!("cannot write sw.js: {e}"))?;
    let sw = path_str(&sw_path)?;
    let minify = [sw, "--minify", "--log-level=warning", "--allow-overwrite"].map(String::from);
    run_esbuild(
        &esbuild,
        &[&minify[..], &[format!("--outfile={sw}")]].concat(),
        &[],
    )?;
    print_sizes(&dist)?;
    // The guides, which the page links to (`docs/`): not part of the page's first load.
    crate::docs::build_site()
}

fn run_esbuild(esbuild: &Path, args: &[String], env: &[(&str, &str)]) -> Result {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_in(&root(), path_str(esbuild)?, &args, env)
}

/// Each file's size and its gzip -9 size (what a server that compresses sends), and the
/// totals: the page's first load transfers all of them once.
fn print_sizes(dist: &Path) -> Result {
    let (mut raw_total, mut gz_total) = (0, 0);
    eprintln!("page built in {}:", dist.display());
    eprintln!("  {:<16} {:>9} {:>9}", "file", "bytes", "gzip -9");
    for file in FILES.iter().chain(LAZY) {
        let path = dist.join(file);
        let raw = read(&path)?.len();
        let out = Command::new("gzip")
            .args(["-9", "-c"])
            .arg(&path)
            .output()
            .map_err(|e| format!("cannot run gzip: {e}"))?;
        let gz = out.stdout.len();
        eprintln!("  {file:<16} {raw:>9} {gz:>9}");
        // A file loaded only on demand is not part of the first load.
        if !LAZY.contains(file) {
            raw_total += raw;
            gz_total += gz;
        }
    }
    eprintln!(
        "  {:<16} {raw_total:>9} {gz_total:>9}",
        "total (first load)"
    );
    Ok(())
}

/// `cargo xtask serve [--port N]`: builds the page, then serves `www/dist` on 127.0.0.1
/// until interrupted (the server prints the URL).
pub fn serve(args: &[String]) -> Result {
    let port = match args {
        [] => "8000".to_string(),
        [flag, port] if flag == "--port" && port.parse::<u16>().is_ok() => port.clone(),
        _ => {
            return Err(format!(
                "usage: cargo xtask serve [--port N] (N in 0..=65535), got {args:?}"
            ));
        }
    };
    build()?;
    let server = root().join("xtask/serve.mjs");
    run_in(
        &root(),
        "node",
        &[path_str(&server)?, path_str(&dist_dir())?, "--port", &port],
        &[],
    )
}

/// The `www` test suite: the page, `snowdrift/browser` and `snowdrift/browser-lease`
/// (leasing from `snowdrift/http` over Redis) (tests/www/*.test.mjs), against
/// a fresh build, in headless Chromium, then the same files in headless Firefox ESR
/// (the harness picks the engine from `SNOWDRIFT_BROWSER`), then a smoke of both in
/// WebKit (tests/www/webkit.mjs: WebKitGTK's MiniBrowser under Xvfb).
pub fn test() -> Result {
    ensure_apt(&[
        ("chromium", "chromium"),
        ("firefox-esr", "firefox-esr"),
        ("webkit2gtk-driver", "WebKitWebDriver"),
        ("xvfb", "Xvfb"),
        // tests/www/lease.test.mjs serves snowdrift/http over a redis-server of its own.
        ("redis-server", "redis-server"),
    ])?;
    build()?;
    for engine in ["chromium", "firefox"] {
        eprintln!("-- www suite in {engine}");
        run_in(
            &root().join("tests/www"),
            "node",
            &["--test", "--test-concurrency=1", "--test-timeout=600000"],
            &[
                ("CHROMIUM", "/usr/bin/chromium"),
                ("FIREFOX", "/usr/bin/firefox-esr"),
                ("SNOWDRIFT_BROWSER", engine),
            ],
        )?;
    }
    eprintln!("-- www smoke in webkit");
    run_in(
        &root().join("tests/www"),
        "node",
        &["--test-timeout=300000", "webkit.mjs"],
        &[],
    )
}

fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn copy(from: &Path, to: &Path) -> Result {
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {}: {e}", from.display()))
}

/// FNV-1a, 64 bits: a cache name that changes when any file does.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}
