//! Error types. Every message carries the numbers a user needs to fix the call.

use core::fmt;

/// The part of an ID (or of a layout) that a value was meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The time field, given as Unix milliseconds.
    Time,
    /// The whole node field.
    Node,
    /// The datacenter half of a split node field.
    Datacenter,
    /// The worker half of a split node field.
    Worker,
    /// The per-tick sequence.
    Sequence,
    /// A whole ID.
    Id,
}

impl Field {
    const fn name(self) -> &'static str {
        match self {
            Field::Time => "time",
            Field::Node => "node id",
            Field::Datacenter => "datacenter id",
            Field::Worker => "worker id",
            Field::Sequence => "sequence",
            Field::Id => "id",
        }
    }
}

/// A value that does not fit the field it was given for.
///
/// ```
/// use snowdrift::Layout;
/// let err = Layout::TWITTER.node_from(3, 40).unwrap_err();
/// assert_eq!(err.to_string(), "worker id 40 does not fit in 5 bits (max 31)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RangeError {
    /// Which field the value was for.
    pub field: Field,
    /// The value that was given.
    pub value: u64,
    /// The smallest allowed value.
    pub min: u64,
    /// The largest allowed value.
    pub max: u64,
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let RangeError {
            field,
            value,
            min,
            max,
        } = *self;
        match field {
            Field::Time => write!(
                f,
                "time {value} ms is outside the layout's range ({min}..={max} ms since the Unix epoch)"
            ),
            Field::Id => write!(
                f,
                "id {value} does not fit the layout's {} bits (max {max})",
                64 - max.leading_zeros()
            ),
            _ => write!(
                f,
                "{} {value} does not fit in {} bits (max {max})",
                field.name(),
                64 - max.leading_zeros()
            ),
        }
    }
}

/// Why a [`Layout`](crate::Layout) was rejected.
///
/// ```
/// use snowdrift::{Layout, LayoutError};
/// let err = Layout::builder().time_bits(41).node_bits(12).sequence_bits(12).build().unwrap_err();
/// assert_eq!(err, LayoutError::TooWide { total: 65 });
/// assert_eq!(err.to_string(), "the fields take 65 bits (max 64)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LayoutError {
    /// The time field has no bits.
    NoTimeBits,
    /// The sequence field has no bits.
    NoSequenceBits,
    /// The sequence field is wider than 32 bits.
    SequenceTooWide {
        /// Bits asked for.
        bits: u32,
    },
    /// Time + node + sequence take more than 64 bits.
    TooWide {
        /// Bits the fields take together.
        total: u32,
    },
    /// Time and sequence take all 64 bits (no node bits): a generator's slot counter needs
    /// one bit of room above them.
    NoNodeRoom,
    /// The time unit is zero milliseconds.
    ZeroUnit,
    /// The epoch plus the time field's range passes the largest Unix millisecond value
    /// snowdrift accepts (`i64::MAX`).
    EpochOutOfRange {
        /// The epoch, in Unix milliseconds.
        epoch_ms: u64,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LayoutError::NoTimeBits => f.write_str("the time field needs at least 1 bit"),
            LayoutError::NoSequenceBits => f.write_str("the sequence field needs at least 1 bit"),
            LayoutError::SequenceTooWide { bits } => {
                write!(f, "the sequence field takes {bits} bits (max 32)")
            }
            LayoutError::TooWide { total } => write!(f, "the fields take {total} bits (max 64)"),
            LayoutError::NoNodeRoom => {
                f.write_str("time and sequence take 64 bits together (max 63)")
            }
            LayoutError::ZeroUnit => f.write_str("the time unit is 0 ms (min 1 ms)"),
            LayoutError::EpochOutOfRange { epoch_ms } => write!(
                f,
                "epoch {epoch_ms} ms plus the time field's range passes {} ms",
                i64::MAX
            ),
        }
    }
}

/// Why a generator did not hand out an ID.
///
/// ```
/// use snowdrift::{Generator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut gen = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Fail).unwrap();
/// gen.next().unwrap();
/// clock.rewind(37);
/// let err = gen.next().unwrap_err();
/// assert_eq!(err.to_string(), "clock moved backwards by 37 ms (limit 0 ms)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    /// The clock reads earlier than the newest tick already used, by more than the policy
    /// allows.
    ClockBackwards {
        /// How far back, in milliseconds (whole ticks).
        by_ms: u64,
        /// How far back the policy tolerates, in milliseconds.
        limit_ms: u64,
    },
    /// The clock went backwards under [`Policy::SwitchNode`](crate::Policy::SwitchNode): move
    /// to a node id that has not been used, then go on.
    SwitchNode {
        /// How far back, in milliseconds (whole ticks).
        by_ms: u64,
    },
    /// The call would have to wait (for the next tick, or for the clock to catch up).
    /// Only `try_*` calls return this.
    WouldBlock,
    /// Under [`Policy::Borrow`](crate::Policy::Borrow), the next ID would be further ahead
    /// of the clock than allowed.
    TooFarAhead {
        /// How far ahead the next ID would be, in milliseconds.
        ahead_ms: u64,
        /// The policy's `max_ahead_ms`.
        limit_ms: u64,
    },
    /// The clock reading (or a requested time) is outside the layout's time range: before
    /// the epoch, or past the time field's last tick. IDs never wrap around.
    Time(RangeError),
    /// A node, datacenter or worker id, or an ID, does not fit the layout.
    Range(RangeError),
    /// The clock stopped moving forward (no reading above `at_ms` for a few million reads
    /// in a row) while a call waited for it, so the call gave up instead of spinning
    /// forever.
    ClockStalled {
        /// The newest reading, in Unix milliseconds.
        at_ms: u64,
    },
    /// The policy cannot be used with this generator (for example
    /// [`Policy::History`](crate::Policy::History) with no history ring).
    Unsupported {
        /// What is missing.
        reason: &'static str,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::ClockBackwards { by_ms, limit_ms } => {
                write!(
                    f,
                    "clock moved backwards by {by_ms} ms (limit {limit_ms} ms)"
                )
            }
            Error::SwitchNode { by_ms } => write!(
                f,
                "clock moved backwards by {by_ms} ms: switch to an unused node id"
            ),
            Error::WouldBlock => f.write_str("no ID available without waiting"),
            Error::TooFarAhead { ahead_ms, limit_ms } => write!(
                f,
                "next ID would be {ahead_ms} ms ahead of the clock (limit {limit_ms} ms)"
            ),
            Error::Time(e) | Error::Range(e) => e.fmt(f),
            Error::ClockStalled { at_ms } => {
                write!(
                    f,
                    "clock stopped at {at_ms} ms while waiting for it to advance"
                )
            }
            Error::Unsupported { reason } => f.write_str(reason),
        }
    }
}

impl From<RangeError> for Error {
    fn from(e: RangeError) -> Self {
        match e.field {
            Field::Time => Error::Time(e),
            _ => Error::Range(e),
        }
    }
}

/// Why a text form of an ID was rejected.
///
/// ```
/// use snowdrift::{text, ParseErrorKind};
/// let err = text::parse_base32("01HZ!").unwrap_err();
/// assert_eq!(err.kind, ParseErrorKind::WrongLength { expected: 13, found: 5 });
/// let err = text::parse_decimal("12x4").unwrap_err();
/// assert_eq!((err.kind, err.position), (ParseErrorKind::InvalidChar { found: 'x' }, 2));
/// assert_eq!(err.to_string(), "invalid character 'x' at position 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParseError {
    /// What is wrong.
    pub kind: ParseErrorKind,
    /// Byte offset of the offending character (0 for empty input and wrong lengths; the
    /// first character that made the value too large for overflow).
    pub position: usize,
}

/// What is wrong with a text form; see [`ParseError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The text is empty.
    Empty,
    /// A character outside the form's alphabet.
    InvalidChar {
        /// The character found.
        found: char,
    },
    /// The value does not fit in 64 bits.
    Overflow,
    /// A fixed-width form with the wrong number of characters.
    WrongLength {
        /// Characters the form needs.
        expected: usize,
        /// Characters given.
        found: usize,
    },
    /// A variable-width form with more characters than it can have.
    TooLong {
        /// The most characters the form allows.
        max: usize,
    },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ParseErrorKind::Empty => f.write_str("empty input"),
            ParseErrorKind::InvalidChar { found } => {
                write!(
                    f,
                    "invalid character {found:?} at position {}",
                    self.position
                )
            }
            ParseErrorKind::Overflow => {
                write!(
                    f,
                    "value does not fit in 64 bits (at position {})",
                    self.position
                )
            }
            ParseErrorKind::WrongLength { expected, found } => {
                write!(f, "wrong length: {found} characters (expected {expected})")
            }
            ParseErrorKind::TooLong { max } => write!(f, "too long: at most {max} characters"),
        }
    }
}

impl core::error::Error for RangeError {}
impl core::error::Error for LayoutError {}
impl core::error::Error for Error {}
impl core::error::Error for ParseError {}
