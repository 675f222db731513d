//! MongoDB ObjectIds: 4-byte big-endian seconds, 5 bytes unique to the process, and a
//! 3-byte counter.

use core::fmt;

use crate::clock::Clock;
use crate::engine::{self, Behind, Overdue, Step};
use crate::error::{Error, Field, ParseError, Repr};
use crate::text::{self, HEX, HEX_VALUES, INVALID, IdText};

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
    /// assert_eq!(err.kind(), ParseErrorKind::WrongLength);
    /// assert_eq!((err.found_len(), err.expected_len()), (Some(23), Some(24)));
    /// ```
    pub fn parse(hex: &str) -> Result<ObjectId, ParseError> {
        let bytes = text::check_len(hex, 24, |b| HEX_VALUES[b as usize] != INVALID)?;
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
/// Like the Snowflake generators, it never makes the same ObjectId twice (it is not
/// `Clone` either). The counter runs on across seconds and wraps, as MongoDB's does;
/// when 2^24 ObjectIds have been made within one second, [`next`](Self::next) waits for
/// the next second and [`try_next`](Self::try_next) reports [`ErrorKind::WouldBlock`](crate::ErrorKind::WouldBlock). A
/// clock that steps back keeps the newest second (ObjectIds carry seconds only); a full
/// second with the clock more than a second behind it is [`ErrorKind::ClockBackwards`](crate::ErrorKind::ClockBackwards).
///
/// ```
/// use snowdrift::{ManualClock, ObjectIdGenerator};
/// let clock = ManualClock::new(1_548_386_252_123);
/// let mut generator = ObjectIdGenerator::new(&clock, [0x0e, 0xd0, 0x24, 0x00, 0x01], 0xa79289);
/// let oid = generator.next()?;
/// assert_eq!(oid.to_string(), "5c4a7fcc0ed0240001a79289");
/// assert_eq!(generator.next()?.counter(), 0xa7928a);
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug)]
pub struct ObjectIdGenerator<C> {
    clock: C,
    process: [u8; 5],
    counter: u32,
    /// The newest second used, and how many ObjectIds it has had.
    second: u32,
    used: u32,
}

/// ObjectIds one second can hold: the counter's 24 bits.
const PER_SECOND: u32 = 1 << 24;

impl<C: Clock> ObjectIdGenerator<C> {
    /// A generator; `counter_start` is taken modulo 2^24.
    pub fn new(clock: C, process: [u8; 5], counter_start: u32) -> Self {
        ObjectIdGenerator {
            clock,
            process,
            counter: counter_start & (PER_SECOND - 1),
            second: 0,
            used: 0,
        }
    }

    /// The next ObjectId, waiting for the next second when this one is full. Fails if the
    /// clock is past the seconds field (2106) or stalls, or is more than a second behind
    /// a full second.
    #[allow(clippy::should_implement_trait)] // fallible, not an iterator
    pub fn next(&mut self) -> Result<ObjectId, Error> {
        self.take(true)
    }

    /// The next ObjectId if one is available without waiting, else
    /// [`ErrorKind::WouldBlock`](crate::ErrorKind::WouldBlock).
    ///
    /// ```
    /// use snowdrift::{ErrorKind, ManualClock, ObjectIdGenerator};
    /// let clock = ManualClock::new(1_548_386_252_123);
    /// let mut generator = ObjectIdGenerator::new(&clock, [1, 2, 3, 4, 5], 0);
    /// for _ in 0..1 << 24 { generator.try_next()?; }
    /// assert_eq!(generator.try_next().unwrap_err().kind(), ErrorKind::WouldBlock); // the second is full
    /// clock.advance(1_000);
    /// assert!(generator.try_next().is_ok());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn try_next(&mut self) -> Result<ObjectId, Error> {
        self.take(false)
    }

    fn take(&mut self, blocking: bool) -> Result<ObjectId, Error> {
        let ObjectIdGenerator {
            clock,
            process,
            counter,
            second,
            used,
        } = self;
        engine::run(clock, blocking, &mut (), |ms| {
            let Ok(now) = u32::try_from(ms / 1000) else {
                return Step::Fail(Error::out_of_range(
                    Field::Time,
                    ms,
                    0,
                    u64::from(u32::MAX) * 1000 + 999,
                ));
            };
            if now > *second || *used == 0 {
                (*second, *used) = (now.max(*second), 0);
            }
            if *used == PER_SECOND {
                let target_ms = (u64::from(*second) + 1) * 1000;
                let wait = target_ms - ms; // ms is within or before `second`
                if wait > 1000 {
                    return Step::Fail(Error(Repr::ClockBackwards {
                        by_ms: wait,
                        limit_ms: 1000,
                    }));
                }
                return Step::Wait(Behind {
                    at_ms: ms,
                    target_ms,
                    limit_ms: 1000,
                    overdue: Overdue::Backwards { tick_ms: ms },
                });
            }
            let id = ObjectId::new(*second, *process, *counter);
            *counter = (*counter + 1) & (PER_SECOND - 1);
            *used += 1;
            Step::Done(id)
        })
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
        let mut generator = ObjectIdGenerator::new(&clock, [0; 5], 0xff_ffff);
        assert_eq!(generator.next().unwrap().counter(), 0xff_ffff);
        assert_eq!(generator.next().unwrap().counter(), 0);
    }

    #[test]
    fn parse_names_the_bad_digit() {
        let err = ObjectId::parse("5c4a7fcc0ed0240001a7928g").unwrap_err();
        assert_eq!(err.position(), 23);
    }
}
