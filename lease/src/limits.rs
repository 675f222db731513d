//! The limits of a lease's settings, the same in every client and store of the protocol
//! (PROTOCOL.md, "Limits"). The npm package keeps them in `wasm/js/src/lease/limits.mjs`; the
//! tests here fail when the two differ. Lengths are counted in UTF-16 units, as
//! JavaScript counts a string's length.

use core::ops::RangeInclusive;

/// The shortest TTL of a space, ms.
const MIN_TTL_MS: u64 = 100;
/// The longest TTL of a space, ms: a year (365 days), for browsers that lease over HTTP
/// and issue offline until their fence.
const MAX_TTL_MS: u64 = 31_536_000_000;

/// The shortest and longest TTL a space accepts, in milliseconds (100 ms to a year).
pub const TTL_RANGE_MS: RangeInclusive<u64> = MIN_TTL_MS..=MAX_TTL_MS;

/// The widest node field a space leases ids for (2^32 ids).
pub const MAX_NODE_BITS: u32 = 32;

/// The shortest renewal period, ms (the longest is below `ttl - skew`).
pub(crate) const MIN_RENEW_EVERY_MS: u64 = 10;
/// The longest space name, in UTF-16 units.
pub(crate) const MAX_SPACE_NAME: usize = 1024;
/// The longest holder description, in UTF-16 units.
pub(crate) const MAX_HOLDER: usize = 1024;
/// The longest lease token a store takes (this crate's tokens have 32 characters).
pub(crate) const MAX_TOKEN: usize = 256;

/// The length of `text` as the limits count it (UTF-16 units, as JavaScript does).
pub(crate) fn text_length(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every limit of the npm package's `src/lease/limits.mjs`, and no other, with the value
    /// it has here.
    #[test]
    fn the_npm_package_has_the_same_limits() {
        let rust = [
            ("MIN_TTL_MS", MIN_TTL_MS),
            ("MAX_TTL_MS", MAX_TTL_MS),
            ("MIN_RENEW_EVERY_MS", MIN_RENEW_EVERY_MS),
            ("MAX_NODE_BITS", u64::from(MAX_NODE_BITS)),
            ("MAX_SPACE_NAME", MAX_SPACE_NAME as u64),
            ("MAX_HOLDER", MAX_HOLDER as u64),
            ("MAX_TOKEN", MAX_TOKEN as u64),
        ];
        let js: Vec<(String, u64)> = include_str!("../../wasm/js/src/lease/limits.mjs")
            .lines()
            .filter_map(|line| line.strip_prefix("export const "))
            .map(|line| {
                let (name, value) = line.split_once(" = ").expect("NAME = VALUE");
                let value = value.trim_end_matches(';').replace('_', "");
                (name.to_string(), value.parse().expect("an integer"))
            })
            .collect();
        let js: Vec<(&str, u64)> = js.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        assert_eq!(js, rust);
    }

    /// Lengths are UTF-16 units: a character outside the Basic Multilingual Plane counts 2.
    #[test]
    fn lengths_count_utf16_units() {
        assert_eq!(text_length("ids:orders"), 10);
        assert_eq!(text_length("é"), 1);
        assert_eq!(text_length("\u{1F600}"), 2);
    }
}
