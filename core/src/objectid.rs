//! MongoDB ObjectIds: 4-byte big-endian seconds, 5 bytes unique to the process, and a
//! 3-byte counter.

use core::fmt;

use crate::clock::Clock;
use crate::error::ParseError;
use crate::text::{self, IdText, HEX, HEX_VALUES, INVALID};

/// A MongoDB ObjectId (12 bytes).
///
/// ```
/// use snowdrift::ObjectId;
/// let oid = ObjectId::parse("5c4a7fcc0ed0240001a79289")?;
/// assert_eq!(oid.timestamp(), 1548386252);
/// assert_eq!(oid.to_string(), "5c4a7fcc0ed0240001a79289");
/// # Ok::<(), snowdrift::ParseError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId([u8; 12]);

impl ObjectId {
    /// Assembles an ObjectId: `counter` is taken modulo 2^24.
    pub const fn new(seconds: u32, process: [u8; 5], counter: u32) -> ObjectId {
        let s = seconds.to_be_bytes();
        let c = counter.to_be_bytes();
        let p = process;
        ObjectId([
            s[0], s[1], s[2], s[3], p[0], p[1], p[2], p[3], p[4], c[1], c[2], c[3],
        ])
    }
    /// From the 12 raw bytes.
    pub const fn from_bytes(bytes: [u8; 12]) -> ObjectId {
        ObjectId(bytes)
    }
    /// The 12 raw bytes.
    pub const fn bytes(&self) -> [u8; 12] {
        self.0
    }
    /// Creation time, in Unix seconds.
    pub const fn timestamp(&self) -> u32 {
        u32::from_be_bytes([self.0[0], self.0[1], self.0[2], self.0[3]])
    }
    /// The 5 per-process bytes.
    pub const fn process(&self) -> [u8; 5] {
        [self.0[4], self.0[5], self.0[6], self.0[7], self.0[8]]
    }
    /// The 3-byte counter.
    pub const fn counter(&self) -> u32 {
        u32::from_be_bytes([0, self.0[9], self.0[10], self.0[11]])
    }
    /// 24 lowercase hex digits.
    pub fn to_hex(&self) -> IdText {
        text::fixed::<24>(|i| HEX[((self.0[i / 2] >> (4 - 4 * (i % 2))) & 0xf) as usize])
    }
    /// Parses 24 hex digits, either case.
    ///
    /// ```
    /// use snowdrift::{ObjectId, ParseErrorKind};
    /// let err = ObjectId::parse("5c4a7fcc0ed0240001a7928").unwrap_err();
    /// assert_eq!(err.kind, ParseErrorKind::WrongLength { expected: 24, found: 23 });
    /// ```
    pub fn parse(hex: &str) -> Result<ObjectId, ParseError> {
        let bytes = text::check_len(hex, 24)?;
        let mut out = [0u8; 12];
        // Two digits per byte, zipped rather than indexed: no panic path.
        for (i, (byte, pair)) in out.iter_mut().zip(bytes.chunks_exact(2)).enumerate() {
            for (j, &b) in pair.iter().enumerate() {
                let d = HEX_VALUES[b as usize];
                if d == INVALID {
                    return Err(text::invalid(hex, 2 * i + j));
                }
                *byte = (*byte << 4) | d;
            }
        }
        Ok(ObjectId(out))
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.to_hex().as_str())
    }
}

/// Makes ObjectIds from a clock, the process's 5 random bytes and a counter that starts
/// at a random value. The core has no random source: the caller supplies both, once per
/// process (for example from `getrandom`).
///
/// ```
/// use snowdrift::{ManualClock, ObjectIdGenerator};
/// let clock = ManualClock::new(1_548_386_252_123);
/// let mut gen = ObjectIdGenerator::new(&clock, [0x0e, 0xd0, 0x24, 0x00, 0x01], 0xa79289);
/// let oid = gen.next();
/// assert_eq!(oid.to_string(), "5c4a7fcc0ed0240001a79289");
/// assert_eq!(gen.next().counter(), 0xa7928a);
/// ```
#[derive(Debug, Clone)]
pub struct ObjectIdGenerator<C> {
    clock: C,
    process: [u8; 5],
    counter: u32,
}

impl<C: Clock> ObjectIdGenerator<C> {
    /// A generator; `counter_start` is taken modulo 2^24.
    pub fn new(clock: C, process: [u8; 5], counter_start: u32) -> Self {
        ObjectIdGenerator {
            clock,
            process,
            counter: counter_start & 0xff_ffff,
        }
    }

    /// The next ObjectId. The counter wraps modulo 2^24, as MongoDB's does; seconds are
    /// taken modulo 2^32 (the field runs out in 2106).
    #[allow(clippy::should_implement_trait)] // fallible, not an iterator
    pub fn next(&mut self) -> ObjectId {
        let seconds = (self.clock.now_ms() / 1000) as u32;
        let id = ObjectId::new(seconds, self.process, self.counter);
        self.counter = (self.counter + 1) & 0xff_ffff;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_through_hex() {
        let oid = ObjectId::new(0xdead_beef, [1, 2, 3, 4, 5], 0x1ff_ffff);
        assert_eq!(oid.to_hex().as_str(), "deadbeef0102030405ffffff");
        assert_eq!(ObjectId::parse("DEADBEEF0102030405FFFFFF"), Ok(oid));
        assert_eq!(
            (oid.timestamp(), oid.process(), oid.counter()),
            (0xdead_beef, [1, 2, 3, 4, 5], 0xff_ffff)
        );
    }

    #[test]
    fn counter_wraps_at_24_bits() {
        let clock = crate::ManualClock::new(0);
        let mut gen = ObjectIdGenerator::new(&clock, [0; 5], 0xff_ffff);
        assert_eq!(gen.next().counter(), 0xff_ffff);
        assert_eq!(gen.next().counter(), 0);
    }

    #[test]
    fn parse_names_the_bad_digit() {
        let err = ObjectId::parse("5c4a7fcc0ed0240001a7928g").unwrap_err();
        assert_eq!(err.position, 23);
    }
}
