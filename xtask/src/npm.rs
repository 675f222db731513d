//! `cargo xtask npm`: builds the `snowdrift` npm package into `wasm/pkg/`, and the `npm`
//! test suite and JS benchmark that run against it.
//!
//! The package is a release build of the `snowdrift-wasm` crate (`#[wasm_bindgen]` free
//! functions) run through the wasm-bindgen CLI (`--target web`) and `wasm-opt -Oz` (npm
//! `binaryen`), plus the hand-written files in `wasm/js/`:
//!
//! - `entries/`: one file per runtime and subpath export, a few lines each, which become the
//!   package's top-level files (`index.js`, `node.mjs`, `node.cjs`, `workerd.js`,
//!   `browser.js`, `redis.cjs`, `seal.js`, `http-node.cjs`, ...);
//! - `src/`: the modules they share, bundled into them: the JS API (`api.mjs`, over one module per concept in `api/`),
//!   the argument checks (`check.mjs`), the error codes, what the wasm imports (`host.mjs`),
//!   and by concept `browser/` (`snowdrift/browser`), `lease/` (the lease rules and limits,
//!   the Node holder and its Redis and PostgreSQL clients, the Durable Object, the HTTP
//!   handler, the browser client, and what the leases of a process report, `metrics.mjs`:
//!   one registry on `globalThis` for every bundle that holds leases) and `seal/`;
//! - `types/`: the TypeScript declarations, copied to the package's top level; `bin/` (the
//!   `snowdrift` command), package.json and the licence.
//!
//! The build copies `wasm/js/` into `target/npm/` and writes the generated modules into its
//! `src/`, beside the modules that import them: the glue, the numbers the wasm and the JS
//! share (error kinds, policy codes, fact fields, buffer offsets, kept once in
//! `wasm/src/shared.rs`, the seal module's in `wasm/seal/src/shared.rs`) as
//! `constants.mjs` (`seal-constants.mjs`), the names of the core's error kinds, which JS
//! errors carry as `code` (read from `core/src/error.rs` into `codes.mjs` and the types'
//! `ErrorCode`, in the order `wasm/src/codes.rs` numbers them), and the wasm as base64 for
//! the Node ES module entries. Then esbuild bundles and terser minifies each of [`BUNDLES`]:
//! the API with the glue into `api.mjs` and `api.cjs`, and with the browser entry into
//! `index.js`, and with the Node ES module entry and the wasm into `node.mjs`, so that an
//! import reads one file; the other entries over the entry of their runtime. The names of
//! the core's preset layouts are written into the types and the command's help from
//! `snowdrift::Layout::PRESETS`; the JS API reads them from the wasm. The tools (esbuild,
//! terser, wasm-opt, and Biome for the lint suite) are installed in `xtask/js/` from its
//! lockfile; the tests' own packages in `tests/js/`.
//!
//! Adding an entry point (a subpath export): a file in `wasm/js/entries/` that imports the
//! API from the entry of its runtime (`./node.mjs`, `./node.cjs`, `./index.js`,
//! `./workerd.js`: one wasm instance per runtime) and its own code from `../src/`, a line
//! in [`BUNDLES`] (unless it is copied as it is), its types in `wasm/js/types/`, plus its
//! `exports` entry and `files` name in `wasm/js/package.json`. The lease protocol's
//! scripts (`lease/lua/*.lua`, `lease/postgres/*.sql`) go into the package's `lua/` and
//! `postgres/`. Adding a wasm export: a `#[wasm_bindgen] pub fn` over numbers in
//! `wasm/src/`, imported by name in the module of its concept in `wasm/js/src/api/`.

use std::fs;
use std::path::{Path, PathBuf};

use crate::util::{
    self, Result, cargo, ensure_apt, ensure_targets, lock_version, output, root, run_in,
};

/// The package's bundled files: (source in `wasm/js/`, format, file in the package, imports
/// left external). The other entries bundle what they import from `src/` (the argument
/// checks, `check.mjs`) but not the entry of their runtime they reach the API through
/// (one wasm instance per runtime): its import names the package's file, as the entry's
/// neighbour (`./node.cjs`, `./index.js`). The Node lease clients share one holder
/// (`holder.cjs`: one set of live leases to release at exit).
const BUNDLES: &[(&str, &str, &str, &[&str])] = &[
    ("src/api.mjs", "esm", "api.mjs", &[]),
    ("src/api.mjs", "cjs", "api.cjs", &[]),
    ("entries/index.js", "esm", "index.js", &[]),
    ("entries/browser.js", "esm", "browser.js", &["./index.js"]),
    (
        "entries/browser-lease.js",
        "esm",
        "browser-lease.js",
        &["./index.js"],
    ),
    ("entries/http.js", "esm", "http.js", &["./index.js"]),
    (
        "entries/http-workerd.js",
        "esm",
        "http-workerd.js",
        &["./workerd.js"],
    ),
    (
        "entries/http-node.cjs",
        "cjs",
        "http-node.cjs",
        &["./node.cjs"],
    ),
    ("src/lease/holder.cjs", "cjs", "holder.cjs", &["./node.cjs"]),
    ("src/seal/api.mjs", "esm", "seal-api.mjs", &[]),
    ("src/seal/api.mjs", "cjs", "seal-api.cjs", &[]),
    ("entries/seal.js", "esm", "seal.js", &[]),
    ("entries/node.mjs", "esm", "node.mjs", &[]),
    ("entries/seal-node.mjs", "esm", "seal-node.mjs", &[]),
    ("entries/metrics.mjs", "esm", "metrics.mjs", &[]),
    ("entries/metrics.mjs", "cjs", "metrics.cjs", &[]),
    ("entries/redis.cjs", "cjs", "redis.cjs", LEASE),
    ("entries/postgres.cjs", "cjs", "postgres.cjs", LEASE),
    (
        "entries/cloudflare.js",
        "esm",
        "cloudflare.js",
        &["cloudflare:workers", "./workerd.js"],
    ),
];

/// What the Node lease clients leave external: the Node entry and the shared holder.
const LEASE: &[&str] = &["./node.cjs", "./holder.cjs"];

/// The JS tests of the package (and their runtimes, browsers' drivers, benchmark peers).
pub fn js_dir() -> PathBuf {
    root().join("tests/js")
}

/// The build and lint tools: esbuild, terser, binaryen's wasm-opt, Biome.
pub fn tools_dir() -> PathBuf {
    root().join("xtask/js")
}

/// A build or lint tool installed in `xtask/js/node_modules/.bin/`.
pub fn tool(name: &str) -> PathBuf {
    tools_dir().join("node_modules/.bin").join(name)
}

pub fn pkg_dir() -> PathBuf {
    root().join("wasm/pkg")
}

/// Installs what building the package needs, skipping what is there.
fn ensure_tools() -> Result {
    ensure_targets(&["wasm32-unknown-unknown"])?;
    ensure_wasm_bindgen()?;
    ensure_tools_installed()?;
    ensure_node_modules()
}

/// Installs the wasm-bindgen CLI (`wasm-bindgen`, `wasm-bindgen-test-runner`) of the
/// crate's version unless `wasm-bindgen --version` already matches (a few minutes, once).
pub fn ensure_wasm_bindgen() -> Result {
    // The version of the crate in Cargo.lock (pinned with `=` in wasm/Cargo.toml).
    let version = lock_version("wasm-bindgen")?;
    let installed = output("wasm-bindgen", &["--version"]).unwrap_or_default();
    if installed.split_whitespace().nth(1) == Some(version.as_str()) {
        return Ok(());
    }
    // Not `--locked`: the CLI's own lockfile names crate versions the registry may lack.
    cargo(&["install", "wasm-bindgen-cli", "--version", &version])
}

/// Whether `dir/node_modules` is missing or older than `dir/package-lock.json`.
fn stale(dir: &Path) -> bool {
    let modified = |p: &Path| fs::metadata(p).and_then(|m| m.modified()).ok();
    let stamp = modified(&dir.join("node_modules/.package-lock.json"));
    let lock = modified(&dir.join("package-lock.json"));
    !matches!((stamp, lock), (Some(s), Some(l)) if s >= l)
}

/// Installs xtask/js/node_modules (the build and lint tools) from its lockfile when it is
/// missing or older than the lockfile, and links the package there for the page's build.
pub fn ensure_tools_installed() -> Result {
    let dir = tools_dir();
    if stale(&dir) {
        run_in(&dir, "npm", &["ci", "--no-audit", "--no-fund"], &[])?;
    }
    link_package(&dir)
}

/// Installs tests/js/node_modules when it is missing or older than the lockfile.
fn ensure_node_modules() -> Result {
    let dir = js_dir();
    if stale(&dir) {
        // `npm install` from the lockfile rather than `npm ci`: the lockfile lacks the
        // other platforms' optional binaries (deno's), which `npm ci` rejects as out of
        // sync. `--no-save` leaves package.json and the lockfile untouched.
        run_in(
            &dir,
            "npm",
            &["install", "--no-save", "--no-audit", "--no-fund"],
            &[],
        )?;
    }
    // The tests import the package by its name, through its `exports`.
    link_package(&dir)
}

/// Links wasm/pkg as `dir/node_modules/snowdrift`, so code there imports the package by
/// its name, through its `exports`.
fn link_package(dir: &Path) -> Result {
    symlink(&pkg_dir(), &dir.join("node_modules/snowdrift"))
}

/// Links `dir/node_modules` to `tests/js/node_modules` (the package, Miniflare, the Redis
/// and PostgreSQL clients), for a test folder beside `tests/js`.
pub fn link_test_modules(dir: &Path) -> Result {
    symlink(Path::new("../js/node_modules"), &dir.join("node_modules"))
}

/// Makes `link` a symbolic link to `target`, unless something is there already.
fn symlink(target: &Path, link: &Path) -> Result {
    if fs::symlink_metadata(link).is_err() {
        std::os::unix::fs::symlink(target, link)
            .map_err(|e| format!("cannot link {}: {e}", link.display()))?;
    }
    Ok(())
}

/// `cargo xtask npm`.
pub fn build() -> Result {
    ensure_tools()?;
    // One build each: built together, cargo would unify the core's features, and the main
    // module would link the `seal` feature's error messages.
    for package in ["snowdrift-wasm", "snowdrift-seal-wasm"] {
        cargo(&[
            "build",
            "-p",
            package,
            "--target",
            "wasm32-unknown-unknown",
            "--profile",
            "wasm-release",
        ])?;
    }
    let built = root().join("target/wasm32-unknown-unknown/wasm-release");
    // A copy of `wasm/js/`, with the generated modules (the glue, the shared numbers, the
    // error codes, the wasm as base64) written into its `src/`, beside the modules that
    // import them.
    let stage = root().join("target/npm");
    let pkg = pkg_dir();
    for dir in [&stage, &pkg] {
        if dir.exists() {
            fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    copy_dir(&root().join("wasm/js"), &stage, &[])?;
    let generated = stage.join("src");
    write_constants("wasm/src/shared.rs", &generated.join("constants.mjs"))?;
    write_constants(
        "wasm/seal/src/shared.rs",
        &generated.join("seal-constants.mjs"),
    )?;
    write_codes(&generated.join("codes.mjs"))?;
    // The main module, and `snowdrift/seal`'s module apart from it (AES stays out of the
    // default entry).
    for (name, out) in [
        ("snowdrift_wasm", "snowdrift.wasm"),
        ("snowdrift_seal_wasm", "seal.wasm"),
    ] {
        glue(
            &built.join(format!("{name}.wasm")),
            name,
            &generated,
            &pkg.join(out),
        )?;
    }
    // The Node ES module entries carry their wasm inside the bundle, as base64 text.
    for (wasm, module) in [
        ("snowdrift.wasm", "snowdrift.wasm.mjs"),
        ("seal.wasm", "seal.wasm.mjs"),
    ] {
        let bytes = fs::read(pkg.join(wasm)).map_err(|e| format!("cannot read {wasm}: {e}"))?;
        let text = format!(
            "// Written by `cargo xtask npm`: {wasm} in base64.\nexport default \"{}\";\n",
            base64(&bytes)
        );
        fs::write(generated.join(module), text)
            .map_err(|e| format!("cannot write {module}: {e}"))?;
    }
    copy_package_files(&pkg)?;
    copy_lease_scripts(&pkg)?;
    // The API module with the glue, bundled by esbuild and minified by terser (whose
    // output is smaller), once as an ES module and once as CommonJS, so that
    // require("snowdrift") needs no require(esm); and the browser entry with all of it in
    // one file, the only script a page downloads. Only `initSync` is imported from the
    // glue: its async loader (and its `import.meta`) is left out.
    // `snowdrift/browser` is minified; the lease clients (for Node) and
    // `snowdrift/cloudflare` (the Durable Object and the Workers client, over the workerd
    // entry) are not.
    for &(entry, format, file, external) in BUNDLES {
        let bundled = stage.join(format!("bundled-{file}"));
        bundle(&stage.join(entry), format, external, &bundled)?;
        let minified = ["api.cjs", "seal-api.cjs"].contains(&file);
        if (format == "cjs" && !minified) || file == "cloudflare.js" {
            fs::copy(&bundled, pkg.join(file)).map_err(|e| format!("cannot copy {file}: {e}"))?;
        } else {
            // The Node ES module entries keep single-use functions apart: terser's inlining
            // of the glue's `decode` into `decode(id)` costs V8 about 2 ns a call. (The
            // browser entry keeps the inlining, which makes it smaller.)
            let inline = !["node.mjs", "seal-node.mjs"].contains(&file);
            minify(&bundled, format == "esm", inline, &pkg.join(file))?;
        }
    }
    fill_preset_names(&pkg)?;
    fill_error_codes(&pkg)?;
    fill_version(&pkg)?;
    fs::copy(root().join("wasm/README.md"), pkg.join("README.md"))
        .map_err(|e| format!("cannot copy README: {e}"))?;
    eprintln!("npm package built in {}", pkg.display());
    Ok(())
}

/// Runs the wasm-bindgen CLI on `wasm` (its glue, `<name>.js`, into `dir`), then
/// `wasm-opt -Oz` on the module it wrote, into `out`.
fn glue(wasm: &Path, name: &str, dir: &Path, out: &Path) -> Result {
    util::run(
        "wasm-bindgen",
        &[
            "--target",
            "web",
            "--no-typescript",
            "--out-name",
            name,
            "--out-dir",
            path_str(dir)?,
            path_str(wasm)?,
        ],
    )?;
    let wasm_opt = tool("wasm-opt");
    util::run(
        path_str(&wasm_opt)?,
        &[
            "-Oz",
            "--enable-bulk-memory",
            "--enable-nontrapping-float-to-int",
            "--enable-sign-ext",
            "--enable-mutable-globals",
            "--enable-multivalue",
            "--enable-reference-types",
            "--converge",
            "--strip-debug",
            "--strip-producers",
            "--strip-target-features",
            path_str(&dir.join(format!("{name}_bg.wasm")))?,
            "-o",
            path_str(out)?,
        ],
    )
}

/// The numbers a wasm module exports and its JS layer shares, kept once in `source`
/// (`pub const NAME: TYPE = VALUE;`), written as the ES module `out` for the JS to import.
fn write_constants(source: &str, out: &Path) -> Result {
    let mut js = format!("// Written by `cargo xtask npm` from {source}: edit that file.\n");
    for (name, value) in consts(source)? {
        js.push_str(&format!("export const {name} = {value};\n"));
    }
    fs::write(out, js).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The `pub const NAME: TYPE = <integer>;` lines of the file `source` (a path from the
/// root), as (name, value); `pub const fn`s are passed over.
fn consts(source: &str) -> Result<Vec<(String, u64)>> {
    let path = root().join(source);
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut out = Vec::new();
    let constant = |l: &&str| l.starts_with("pub const ") && !l.starts_with("pub const fn ");
    for line in text.lines().filter(constant) {
        let parsed = line
            .strip_prefix("pub const ")
            .and_then(|l| l.split_once(':'))
            .and_then(|(name, rest)| Some((name, rest.split_once('=')?.1)))
            .and_then(|(name, value)| Some((name, value.trim().strip_suffix(';')?)))
            .and_then(|(name, value)| Some((name.to_string(), value.parse::<u64>().ok()?)));
        let Some(pair) = parsed else {
            return Err(format!(
                "{source}: not `pub const NAME: TYPE = <integer>;`: {line}"
            ));
        };
        out.push(pair);
    }
    Ok(out)
}

/// The names of the core's error kinds, which the JS errors carry as `code`, in the order
/// `core/src/error.rs` declares them: the order in which `wasm/src/codes.rs` numbers them
/// (`ErrorKind`s from 1, `ParseErrorKind`s from `base`).
struct ErrorCodes {
    errors: Vec<String>,
    parse: Vec<String>,
    base: u64,
}

impl ErrorCodes {
    fn read() -> Result<ErrorCodes> {
        let source = root().join("core/src/error.rs");
        let text = fs::read_to_string(&source)
            .map_err(|e| format!("cannot read {}: {e}", source.display()))?;
        let errors = variants(&text, "ErrorKind")?;
        let parse = variants(&text, "ParseErrorKind")?;
        let base = consts("wasm/src/codes.rs")?
            .into_iter()
            .find(|(name, _)| name == "PARSE_CODE_BASE")
            .map(|(_, value)| value)
            .ok_or("wasm/src/codes.rs has no PARSE_CODE_BASE")?;
        if errors.len() as u64 >= base {
            return Err(format!(
                "ErrorKind has {} kinds: raise PARSE_CODE_BASE ({base}) in wasm/src/codes.rs",
                errors.len()
            ));
        }
        Ok(ErrorCodes {
            errors,
            parse,
            base,
        })
    }
}

/// Writes the error codes as the ES module `out`: `ERROR_KINDS`, `PARSE_ERROR_KINDS` and
/// `PARSE_CODE_BASE`, from which `check.mjs` names an error's kind.
fn write_codes(out: &Path) -> Result {
    let codes = ErrorCodes::read()?;
    let list = |names: &[String]| {
        names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let js = format!(
        "// Written by `cargo xtask npm` from core/src/error.rs and wasm/src/codes.rs.\n\
         export const PARSE_CODE_BASE = {};\n\
         export const ERROR_KINDS = [{}];\n\
         export const PARSE_ERROR_KINDS = [{}];\n",
        codes.base,
        list(&codes.errors),
        list(&codes.parse)
    );
    fs::write(out, js).map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// The variants of the fieldless `pub enum name` in `text`, in declaration order (their
/// numbers as `name as u32`). A variant under an attribute (a `#[cfg]` could take it out
/// and renumber the rest) or with an explicit number is refused.
fn variants(text: &str, name: &str) -> Result<Vec<String>> {
    let head = format!("pub enum {name} {{");
    let mut lines = text.lines().skip_while(|l| l.trim() != head);
    if lines.next().is_none() {
        return Err(format!("core/src/error.rs has no `{head}`"));
    }
    let mut names = Vec::new();
    for line in lines.map(str::trim) {
        if line == "}" {
            return Ok(names);
        }
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        match line.strip_suffix(',') {
            Some(v) if !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric()) => {
                names.push(v.to_string())
            }
            _ => {
                return Err(format!(
                    "{name} in core/src/error.rs: `{line}` is not a plain variant (`Name,`), \
                     which wasm/src/codes.rs numbers by its place"
                ));
            }
        }
    }
    Err(format!("{name} in core/src/error.rs has no closing brace"))
}

/// Bundles `entry` and what it imports into `out` as `format` ("esm" or "cjs"), leaving
/// the imports of `external` as they are. A CommonJS bundle is for Node (its `node:` imports
/// stay imports).
fn bundle(entry: &Path, format: &str, external: &[&str], out: &Path) -> Result {
    let esbuild = tool("esbuild");
    let mut args = vec![
        path_str(entry)?.to_string(),
        "--bundle".into(),
        "--target=es2022".into(),
        "--log-level=warning".into(),
        // The glue's unused async loader reads import.meta; it is dropped.
        "--log-override:empty-import-meta=silent".into(),
        format!("--format={format}"),
        format!("--outfile={}", path_str(out)?),
    ];
    if format == "cjs" {
        args.push("--platform=node".into());
    }
    for external in external {
        args.push(format!("--external:{external}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    util::run(path_str(&esbuild)?, &args)
}

/// Minifies `file` into `out` with terser (an ES module when `module`; functions called
/// once are inlined into their caller when `inline`).
fn minify(file: &Path, module: bool, inline: bool, out: &Path) -> Result {
    let terser = tool("terser");
    let mut args = vec![
        path_str(file)?,
        "--ecma",
        "2022",
        "--compress",
        if inline {
            "passes=3"
        } else {
            "passes=3,reduce_funcs=false"
        },
        "--mangle",
    ];
    if module {
        args.push("--module");
    }
    args.extend(["--output", path_str(out)?]);
    util::run(path_str(&terser)?, &args)
}

/// Writes the package's version where the Node entries name the instance they share
/// (`"@VERSION"`), so that two versions in one process keep apart.
fn fill_version(pkg: &Path) -> Result {
    let manifest = fs::read_to_string(pkg.join("package.json"))
        .map_err(|e| format!("cannot read package.json: {e}"))?;
    let version = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"version\": \""))
        .and_then(|v| v.split('"').next())
        .ok_or("package.json has no version")?;
    for file in ["node.mjs", "node.cjs", "seal-node.mjs", "seal.cjs"] {
        let path = pkg.join(file);
        let text = fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if !text.contains("@VERSION") {
            return Err(format!("{} has no @VERSION marker", path.display()));
        }
        fs::write(&path, text.replace("@VERSION", version))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// `bytes` in standard base64, with padding.
fn base64(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            out.push(if i <= chunk.len() {
                char::from(DIGITS[(n >> (18 - 6 * i)) as usize & 63])
            } else {
                '='
            });
        }
    }
    out
}

/// Writes the names of the core's presets where the package lists them: the `LayoutName`
/// union of the types and the command's help. The sources hold the marker `"@PRESETS"`.
fn fill_preset_names(pkg: &Path) -> Result {
    let names: Vec<&str> = snowdrift::Layout::PRESETS.iter().map(|(n, _)| *n).collect();
    let union = names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" | ");
    for (file, with) in [
        ("index.d.ts", union),
        ("bin/snowdrift.cjs", format!("\"{}\"", names.join(", "))),
    ] {
        fill(&pkg.join(file), "\"@PRESETS\"", &with)?;
    }
    Ok(())
}

/// Writes the codes errors carry where the types list them: the `ErrorCode` union of
/// `index.d.ts`, at the marker `"@ERROR_CODES"`.
fn fill_error_codes(pkg: &Path) -> Result {
    let codes = ErrorCodes::read()?;
    let union = codes
        .errors
        .iter()
        .chain(&codes.parse)
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" | ");
    fill(&pkg.join("index.d.ts"), "\"@ERROR_CODES\"", &union)
}

/// Replaces `marker` in the file at `path` with `with`; a file without it is an error.
fn fill(path: &Path, marker: &str, with: &str) -> Result {
    let text =
        fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !text.contains(marker) {
        return Err(format!("{} has no {marker} marker", path.display()));
    }
    fs::write(path, text.replace(marker, with))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The `npm` test suite: the wasm crate's unit tests, then the JS tests (API, vectors,
/// errors, clock policies, the binding's own checks and the smoke test in every runtime
/// including Node and headless Chromium, duplicates, types, the command), all against the
/// built package.
pub fn test() -> Result {
    ensure_apt(&[("chromium", "chromium")])?;
    // The wasm crate's own unit tests (its memory pool), on the host.
    cargo(&["test", "-p", "snowdrift-wasm"])?;
    build()?;
    run_in(
        &js_dir(),
        "node",
        &["--test", "--test-concurrency=1", "--test-timeout=600000"],
        &[("CHROMIUM", "/usr/bin/chromium")],
    )
}

/// The JS benchmark (one Node process), run by `cargo xtask bench`.
pub fn bench() -> Result {
    build()?;
    run_in(&js_dir(), "node", &["bench.mjs"], &[])
}

pub fn path_str(p: &Path) -> Result<&str> {
    p.to_str()
        .ok_or_else(|| format!("path is not UTF-8: {}", p.display()))
}

/// The node id lease protocol's scripts, kept once in the repository: `lease/lua/*.lua`
/// into `lua/` of the package and `lease/postgres/*.sql` into `postgres/`, where
/// `snowdrift/redis`, `snowdrift/postgres` and the command read them.
fn copy_lease_scripts(pkg: &Path) -> Result {
    for (dir, ext) in [("lua", "lua"), ("postgres", "sql")] {
        let (from, to) = (root().join("lease").join(dir), pkg.join(dir));
        fs::create_dir_all(&to).map_err(|e| format!("cannot create {}: {e}", to.display()))?;
        let entries =
            fs::read_dir(&from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
        for entry in entries {
            let path = entry.map_err(|e| e.to_string())?.path();
            if path.extension().is_some_and(|e| e == ext) {
                let dst = to.join(path.file_name().unwrap_or_default());
                fs::copy(&path, &dst)
                    .map_err(|e| format!("cannot copy {}: {e}", path.display()))?;
            }
        }
    }
    Ok(())
}

/// The hand-written files that go into the package as they are: the entries the build does
/// not bundle (`wasm/js/entries/`) and the types (`wasm/js/types/`), at the package's top
/// level, and the rest of `wasm/js/` (the command in `bin/`, package.json, the licence)
/// where it is. The modules of `src/` go in only bundled.
fn copy_package_files(pkg: &Path) -> Result {
    let js = root().join("wasm/js");
    copy_dir(&js, pkg, &["entries", "types", "src"])?;
    let bundled: Vec<&str> = BUNDLES
        .iter()
        .filter_map(|(entry, ..)| entry.strip_prefix("entries/"))
        .collect();
    copy_dir(&js.join("entries"), pkg, &bundled)?;
    copy_dir(&js.join("types"), pkg, &[])
}

/// Copies a directory tree, leaving out the top-level files named in `skip`.
fn copy_dir(from: &Path, to: &Path, skip: &[&str]) -> Result {
    let entries = fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        if skip.iter().any(|s| entry.file_name() == *s) {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            fs::create_dir_all(&dst).map_err(|e| e.to_string())?;
            copy_dir(&src, &dst, &[])?;
        } else {
            fs::copy(&src, &dst).map_err(|e| format!("cannot copy {}: {e}", src.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{base64, variants};

    #[test]
    fn variants_are_read_in_order_and_attributes_refused() {
        let text = "pub enum Kind {\n    /// Doc.\n    First,\n\n    Second,\n}\n";
        assert_eq!(variants(text, "Kind").unwrap(), ["First", "Second"]);
        assert!(variants(text, "Other").is_err());
        let cfg = "pub enum Kind {\n    First,\n    #[cfg(feature = \"x\")]\n    Second,\n}\n";
        assert!(variants(cfg, "Kind").unwrap_err().contains("#[cfg"));
        let numbered = "pub enum Kind {\n    First = 3,\n}\n";
        assert!(variants(numbered, "Kind").is_err());
    }

    #[test]
    fn the_core_error_kinds_are_read_from_its_source() {
        let codes = super::ErrorCodes::read().unwrap();
        assert_eq!(codes.errors[0], "ClockBackwards");
        assert!(codes.errors.iter().any(|k| k == "PastFence"));
        assert_eq!(codes.parse[0], "Empty");
    }

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        // RFC 4648's test vectors, and bytes whose 6-bit groups reach both ends.
        for (bytes, text) in [
            (&b""[..], ""),
            (b"f", "Zg=="),
            (b"fo", "Zm8="),
            (b"foo", "Zm9v"),
            (b"foob", "Zm9vYg=="),
            (b"fooba", "Zm9vYmE="),
            (b"foobar", "Zm9vYmFy"),
            (&[0x00, 0x10, 0x83, 0xff, 0xff, 0xff], "ABCD////"),
        ] {
            assert_eq!(base64(bytes), text, "{bytes:?}");
        }
    }
}
