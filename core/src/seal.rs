//! Sealed public IDs: [`Sealer`], a keyed permutation of a layout's ID space, so that an
//! ID shown to the public reveals neither its time nor how many IDs came before it, and
//! turns back into the ID with the key.

use core::fmt;

use crate::error::{Error, Field, Repr};
use crate::ff1::{Aes, Ff1};
use crate::layout::Layout;

/// Seals IDs into public IDs and opens them again: NIST SP 800-38G FF1 over AES with a
/// secret key, in radix 2, over the layout's ID space: 63 bits for a layout whose IDs fit
/// a signed 64-bit integer ([`Layout::fits_i64`]), so a sealed ID is one too, else 64.
///
/// - [`seal`](Sealer::seal) and [`open`](Sealer::open) are inverse permutations of
///   `0..=max`: every value is the sealed form of exactly one ID. So a sealed ID has the
///   ID space's width, like any ID, and formats with [`text`](crate::text) as any ID does.
/// - The **tweak** (public, any bytes, often a key id such as `b"k1"`) picks one of many
///   unrelated permutations under the same key: give each key (or each kind of record)
///   its own, and keep it with the key, so sealed IDs from a retired key still open.
/// - Sealing hides an ID's time, node and sequence, and how far apart two IDs are. It
///   does not hide how many IDs a user sees, nor authenticate: **any** value opens to some
///   ID, so look the opened ID up and treat an unknown one as not found; never take a
///   successful `open` as proof that the ID was issued.
/// - Sealed IDs do not sort by time: store raw IDs and seal at the boundary.
///
/// ```
/// use snowdrift::{Layout, Sealer, text};
///
/// let key = [0x2b; 16]; // 16, 24 or 32 secret bytes (AES-128, -192, -256)
/// let sealer = Sealer::new(&Layout::TWITTER, &key, b"k1")?;
/// let id = 1_541_815_603_606_036_480;
/// let public = text::to_base62(sealer.seal(id)?); // 11 characters, shown to the public
/// let back = sealer.open(text::parse_base62(&public)?)?;
/// assert_eq!(back, id);
/// assert!(sealer.seal(id)? <= i64::MAX as u64); // Twitter IDs are 63 bits: so is the sealed one
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Sealer {
    ff1: Ff1,
    bits: u32,
}

impl Sealer {
    /// A sealer for `layout`'s ID space under the AES `key` (16, 24 or 32 bytes) and the
    /// `tweak` (any bytes, up to 2^32 - 1; empty is allowed).
    ///
    /// The work FF1 repeats for every ID (the key schedule, and the MAC of everything that
    /// depends only on the domain and the tweak) is done here, once: build one sealer and
    /// keep it.
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Layout, Sealer};
    /// let err = Sealer::new(&Layout::DEFAULT, &[0; 20], b"").err().unwrap();
    /// assert_eq!(err.kind(), ErrorKind::KeyLength);
    /// assert_eq!(err.to_string(), "key of 20 bytes: AES keys are 16, 24 or 32 bytes");
    /// ```
    pub fn new(layout: &Layout, key: &[u8], tweak: &[u8]) -> Result<Sealer, Error> {
        let bits = if layout.fits_i64() { 63 } else { 64 };
        let Some(aes) = Aes::new(key) else {
            return Err(Error(Repr::KeyLength {
                len: key.len() as u64,
            }));
        };
        match Ff1::new(aes, 2, bits, tweak) {
            Some(ff1) => Ok(Sealer { ff1, bits }),
            // Radix 2 and 63 or 64 numerals are within FF1's bounds: only the tweak is not.
            None => Err(Error(Repr::TweakTooLong {
                len: tweak.len() as u64,
            })),
        }
    }

    /// The width of the ID space in bits: 63 or 64.
    ///
    /// ```
    /// use snowdrift::{Layout, Sealer};
    /// assert_eq!(Sealer::new(&Layout::DEFAULT, &[7; 32], b"")?.bits(), 63);
    /// assert_eq!(Sealer::new(&Layout::DISCORD, &[7; 32], b"")?.bits(), 64);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn bits(&self) -> u32 {
        self.bits
    }

    /// The largest ID, and the largest sealed ID: `2^bits - 1`.
    ///
    /// ```
    /// use snowdrift::{Layout, Sealer};
    /// assert_eq!(Sealer::new(&Layout::DEFAULT, &[7; 16], b"")?.max(), i64::MAX as u64);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn max(&self) -> u64 {
        u64::MAX >> (64 - self.bits)
    }

    /// Splits `x` into FF1's halves: the top `bits / 2` bits and the rest.
    #[inline]
    fn halves(&self, x: u64) -> (u64, u64) {
        let v = self.bits - self.bits / 2;
        (x >> v, x & (u64::MAX >> (64 - v)))
    }

    #[inline]
    fn join(&self, (a, b): (u64, u64)) -> u64 {
        (a << (self.bits - self.bits / 2)) | b
    }

    /// The sealed form of `id`: an error if `id` is past [`max`](Sealer::max).
    ///
    /// ```
    /// use snowdrift::{Field, Layout, Sealer};
    /// let sealer = Sealer::new(&Layout::DEFAULT, &[7; 16], b"")?;
    /// let err = sealer.seal(1 << 63).unwrap_err();
    /// assert_eq!(err.field(), Some(Field::Id));
    /// assert_eq!(err.to_string(), "id 9223372036854775808 does not fit the layout's 63 bits (max 9223372036854775807)");
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline]
    pub fn seal(&self, id: u64) -> Result<u64, Error> {
        if id > self.max() {
            return Err(Error::out_of_range(Field::Id, id, 0, self.max()));
        }
        let (a, b) = self.halves(id);
        Ok(self.join(self.ff1.encrypt(a, b)))
    }

    /// The ID that `sealed` is the sealed form of: an error if `sealed` is past
    /// [`max`](Sealer::max). Every other value opens to some ID, whoever made it: look the
    /// ID up before trusting it.
    ///
    /// ```
    /// use snowdrift::{Layout, Sealer};
    /// let sealer = Sealer::new(&Layout::DEFAULT, &[7; 16], b"")?;
    /// assert_eq!(sealer.open(sealer.seal(42)?)?, 42);
    /// let guessed = sealer.open(12_345)?; // some ID, probably never issued
    /// assert_eq!(sealer.seal(guessed)?, 12_345);
    /// assert!(sealer.open(u64::MAX).is_err());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline]
    pub fn open(&self, sealed: u64) -> Result<u64, Error> {
        if sealed > self.max() {
            return Err(Error::out_of_range(Field::Sealed, sealed, 0, self.max()));
        }
        let (a, b) = self.halves(sealed);
        Ok(self.join(self.ff1.decrypt(a, b)))
    }
}

/// Shows the width only: never the key.
impl fmt::Debug for Sealer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sealer")
            .field("bits", &self.bits)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn seal_and_open_are_inverse_at_the_edges() {
        for layout in [Layout::DEFAULT, Layout::DISCORD] {
            let sealer = Sealer::new(&layout, &[9; 32], b"t").unwrap();
            let max = sealer.max();
            for id in [
                0,
                1,
                2,
                max / 2,
                max - 1,
                max,
                1 << 31,
                (1 << 32) - 1,
                1 << 32,
            ] {
                let sealed = sealer.seal(id).unwrap();
                assert!(sealed <= max);
                assert_eq!(sealer.open(sealed), Ok(id), "{id}");
            }
        }
    }

    #[test]
    fn errors_name_the_value_and_the_range() {
        let sealer = Sealer::new(&Layout::TWITTER, &[1; 24], b"").unwrap();
        let e = sealer.open(u64::MAX).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::OutOfRange);
        assert_eq!(
            e.message().as_str(),
            "sealed id 18446744073709551615 does not fit the layout's 63 bits (max 9223372036854775807)"
        );
        let e = Sealer::new(&Layout::TWITTER, &[], b"").unwrap_err();
        assert_eq!((e.kind(), e.value()), (ErrorKind::KeyLength, Some(0)));
        let wide = Sealer::new(&Layout::DISCORD, &[1; 16], b"").unwrap();
        assert!(wide.seal(u64::MAX).is_ok() && wide.open(u64::MAX).is_ok());
    }

    #[test]
    fn the_debug_form_shows_no_key() {
        let sealer = Sealer::new(&Layout::DEFAULT, &[0xab; 16], b"").unwrap();
        let text = std::format!("{sealer:?}");
        assert_eq!(text, "Sealer { bits: 63, .. }");
    }
}
