//! Picks the board for the target: its memory map (memory.x for cortex-m-rt) and the
//! `board` cfg the sources switch on.

use std::{env, fs, path::PathBuf};

fn main() {
    let target = env::var("TARGET").unwrap_or_default();
    let board = match target.as_str() {
        "thumbv7m-none-eabi" => "lm3s6965",
        "thumbv6m-none-eabi" => "microbit",
        "riscv32imc-unknown-none-elf" => "riscv",
        other => panic!(
            "snowdrift-firmware builds for thumbv7m-none-eabi (LM3S6965), thumbv6m-none-eabi \
             (micro:bit) or riscv32imc-unknown-none-elf, not `{other}`"
        ),
    };
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let memory = fs::read(format!("memory/{board}.x")).expect("memory map");
    fs::write(out.join("memory.x"), memory).unwrap();
    // cortex-m-rt's `device` feature includes device.x; our vector table is in main.rs.
    fs::write(out.join("device.x"), b"").unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-env=FIRMWARE_TARGET={target}");
    println!("cargo:rustc-check-cfg=cfg(board, values(\"lm3s6965\", \"microbit\", \"riscv\"))");
    println!("cargo:rustc-cfg=board=\"{board}\"");
    println!("cargo:rerun-if-changed=memory/{board}.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SNOWDRIFT_NODE");
}
