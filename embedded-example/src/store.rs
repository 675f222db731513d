//! What the firmware keeps across boots, and what it is told at boot.
//!
//! `snowdrift.state` stands in for a flash page: 16 bytes, little-endian, `b"SDHW"`, the
//! boot count (u32) and the reservation (u64): the Unix millisecond up to which IDs may
//! already have been issued. Real firmware would write two alternating pages with a
//! sequence number and a CRC so a power cut during a write loses nothing; the file write
//! here is all-or-nothing enough for the demo.
//!
//! `snowdrift.cfg` stands in for provisioning (or an RTC): `epoch_ms=<Unix ms>` on a line
//! gives the wall-clock time at boot. Without it the host's clock is asked (whole seconds).

use crate::host;

const STATE_FILE: &[u8] = b"snowdrift.state\0";
const CONFIG_FILE: &[u8] = b"snowdrift.cfg\0";
const MAGIC: &[u8; 4] = b"SDHW";

/// The persisted state.
#[derive(Clone, Copy, Default)]
pub struct State {
    pub boots: u32,
    pub reserved_ms: u64,
}

impl State {
    /// The saved state, or the default (first boot) when there is none or it is not ours.
    pub fn load() -> State {
        let mut buf = [0u8; 16];
        match host::read_file(STATE_FILE, &mut buf) {
            Some(16) if &buf[..4] == MAGIC => State {
                boots: u32::from_le_bytes([buf[4], buf[5], buf[6], buf[7]]),
                reserved_ms: u64::from_le_bytes([
                    buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15],
                ]),
            },
            _ => State::default(),
        }
    }

    /// Writes the state; false if the host refused.
    pub fn save(&self) -> bool {
        let mut buf = [0u8; 16];
        buf[..4].copy_from_slice(MAGIC);
        buf[4..8].copy_from_slice(&self.boots.to_le_bytes());
        buf[8..].copy_from_slice(&self.reserved_ms.to_le_bytes());
        host::write_file(STATE_FILE, &buf)
    }
}

/// The wall-clock time at boot, in Unix milliseconds.
pub fn boot_epoch_ms() -> u64 {
    let mut buf = [0u8; 64];
    if let Some(n) = host::read_file(CONFIG_FILE, &mut buf)
        && let Some(ms) = value(&buf[..n], b"epoch_ms=")
    {
        return ms;
    }
    host::unix_seconds().saturating_mul(1000)
}

/// The decimal value after `key` at the start of a line.
fn value(text: &[u8], key: &[u8]) -> Option<u64> {
    for line in text.split(|&b| b == b'\n') {
        if let Some(digits) = line.strip_prefix(key) {
            return parse_u64(digits);
        }
    }
    None
}

fn parse_u64(digits: &[u8]) -> Option<u64> {
    let digits = match digits.last() {
        Some(b'\r') => &digits[..digits.len() - 1],
        _ => digits,
    };
    if digits.is_empty() {
        return None;
    }
    let mut n = 0u64;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}
