//! Lease tokens: what a store matches a holder's calls against (PROTOCOL.md, "Tokens").

/// A token no other lease has: 128 bits from the operating system's random source, so
/// that two copies of one process (a snapshot resumed twice) draw different tokens. Where
/// that source fails, the process's randomly keyed hashers over the time, the pid and a
/// counter.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        bytes = hashed_token();
    }
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    debug_assert!(token.len() <= crate::limits::MAX_TOKEN);
    token
}

fn hashed_token() -> [u8; 16] {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let mut bytes = [0u8; 16];
    for half in bytes.chunks_mut(8) {
        let mut h = RandomState::new().build_hasher();
        h.write_u128(nanos);
        h.write_u32(std::process::id());
        h.write_u64(count);
        half.copy_from_slice(&h.finish().to_le_bytes());
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tokens are 32 hex digits, and no two are alike, from either source.
    #[test]
    fn tokens_are_128_bits_each_new() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let t = new_token();
            assert_eq!(t.len(), 32, "{t}");
            assert!(t.bytes().all(|b| b.is_ascii_hexdigit()), "{t}");
            assert!(seen.insert(t));
            assert!(seen.insert(format!("{:?}", hashed_token())));
        }
    }
}
