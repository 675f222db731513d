//! snowdrift's build, test, demo and benchmark driver: `cargo xtask <command>`.

mod baseline;
mod bench;
mod demo;
mod docs;
mod edge;
mod firmware;
mod fleet;
mod fuzz;
mod newcomer;
mod npm;
mod service;
mod test;
mod util;
mod www;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask <command>

commands:
  demo      generate IDs under each clock policy, decode them, print text forms
  test      install what is missing, then run every test suite
  bench     run the benchmarks against peer crates and print the tables; `bench SECTION...`:
            only those sections of the core's table (real, fake, batch, text, sustained, seal);
            `bench --baseline REV [SECTION...]`: the core's benchmark built at git revision REV
            (a detached worktree under target/baseline/, removed afterwards) and at the working
            tree, run alternately, each row's figure at both and new ÷ old
  firmware  build the firmware, boot it twice under QEMU (Cortex-M3, Cortex-M0, RISC-V),
            print the records; `firmware --size`: flash and RAM the core adds
  fuzz      fuzz the core with cargo fuzz (libFuzzer): `fuzz [TARGET] [--seconds N] [--merge]`,
            60 s per target by default; installs nightly and cargo-fuzz when missing
  docs      check the markdown's links and build the guides into a site (mdBook) in
            www/dist/docs/; installs mdbook when missing
  npm       build the npm package into wasm/pkg/
  www       build the web page (make IDs offline, decode any ID) into www/dist/, with the
            guides it links to in www/dist/docs/
  serve     build the web page and serve www/dist on 127.0.0.1 (`serve --port N`; default 8000)
  vectors   regenerate tests/vectors/*.json (python3 tests/vectors/generate.py)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("demo") => demo::run(),
        Some("test") => test::run(&args[1..]),
        Some("bench") => bench::run(&args[1..]),
        Some("firmware") => firmware::run(&args[1..]),
        Some("fuzz") => fuzz::run_command(&args[1..]),
        Some("docs") => docs::build(),
        Some("npm") => npm::build(),
        Some("www") => www::build(),
        Some("serve") => www::serve(&args[1..]),
        Some("vectors") => util::ensure_python_packages()
            .and_then(|()| util::run("python3", &["tests/vectors/generate.py"])),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}
