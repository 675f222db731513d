//! The host, through semihosting (Arm's, or RISC-V's which copies it): the console, files in QEMU's working directory
//! (standing in for flash and for a provisioning file), the host clock, and the exit code.
//!
//! Every call here traps into the debugger or QEMU; none is made from an interrupt handler.

#[cfg(target_arch = "arm")]
use cortex_m_semihosting as semihosting;
#[cfg(target_arch = "riscv32")]
use riscv_semihosting as semihosting;

use semihosting::{debug, hio, nr, syscall};

/// The console (semihosting stdout).
pub struct Console(hio::HostStream);

impl Console {
    pub fn open() -> Self {
        match hio::hstdout() {
            Ok(stream) => Console(stream),
            Err(()) => exit(false),
        }
    }
}

impl core::fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.0
            .write_all(s.as_bytes())
            .map_err(|()| core::fmt::Error)
    }
}

/// Ends the emulation with exit code 0 (`ok`) or 1.
pub fn exit(ok: bool) -> ! {
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    // Not under a debugger or QEMU: nowhere to go.
    loop {
        crate::board::idle();
    }
}

/// The host's wall clock, in whole seconds since 1970.
pub fn unix_seconds() -> u64 {
    // SAFETY: SYS_TIME takes no argument block.
    unsafe { syscall!(TIME) as u64 }
}

/// Opens `name` (NUL-terminated) with fopen mode `mode`, or `None`.
fn open(name: &[u8], mode: usize) -> Option<usize> {
    debug_assert_eq!(name.last(), Some(&0));
    // SAFETY: name is a NUL-terminated byte string that outlives the call.
    let fd = unsafe { syscall!(OPEN, name.as_ptr(), mode, name.len() - 1) };
    (fd != usize::MAX).then_some(fd)
}

fn close(fd: usize) {
    // SAFETY: fd came from a successful open.
    unsafe { syscall!(CLOSE, fd) };
}

/// Reads up to `buf.len()` bytes of the file `name`; `None` if it does not exist.
pub fn read_file(name: &[u8], buf: &mut [u8]) -> Option<usize> {
    let fd = open(name, nr::open::R_BINARY)?;
    // SAFETY: buf is writable for buf.len() bytes; READ returns how many were NOT read.
    let left = unsafe { syscall!(READ, fd, buf.as_mut_ptr(), buf.len()) };
    close(fd);
    Some(buf.len() - left.min(buf.len()))
}

/// Replaces the file `name` with `data`. Returns whether all of it was written.
pub fn write_file(name: &[u8], data: &[u8]) -> bool {
    let Some(fd) = open(name, nr::open::W_TRUNC_BINARY) else {
        return false;
    };
    // SAFETY: data is readable for data.len() bytes; WRITE returns how many were NOT written.
    let left = unsafe { syscall!(WRITE, fd, data.as_ptr(), data.len()) };
    close(fd);
    left == 0
}
