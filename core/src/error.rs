//! Error types. Every message carries the numbers a user needs to fix the call; each is
//! one template rendered by `message.rs` (`\x01` to `\x04` stand for the numbers,
//! `\x05` for a text such as a field's name).

use core::fmt;

use crate::message::{Message, quoted, render, utf8};

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

impl RangeError {
    /// The message, without allocating or formatting: the same text as `Display`.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::TWITTER.node_from(3, 40).unwrap_err();
    /// assert_eq!(err.message().as_str(), "worker id 40 does not fit in 5 bits (max 31)");
    /// ```
    pub fn message(&self) -> Message {
        let RangeError {
            field,
            value,
            min,
            max,
        } = *self;
        let bits = u64::from(64 - max.leading_zeros());
        // Every message begins with the field's name (`\x05`).
        let template = match field {
            Field::Time => {
                "\x05 \x01 ms is outside the layout's range (\x03..=\x02 ms since the Unix epoch)"
            }
            Field::Id => "\x05 \x01 does not fit the layout's \x04 bits (max \x02)",
            _ => "\x05 \x01 does not fit in \x04 bits (max \x02)",
        };
        render(template, &[value, max, min, bits], field.name())
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
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
        /// Bits the fields take together: the exact sum of the widths given.
        total: u64,
    },
    /// Time and sequence take all 64 bits (no node bits): a generator's slot counter needs
    /// one bit of room above them.
    NoNodeRoom,
    /// The time unit is zero milliseconds.
    ZeroUnit,
    /// The epoch is so late that the time field's last tick would start after the
    /// largest Unix millisecond snowdrift accepts (`i64::MAX`).
    EpochOutOfRange {
        /// The epoch given, in Unix milliseconds.
        epoch_ms: u64,
        /// The latest epoch this time field allows: `i64::MAX` minus its span.
        max_epoch_ms: u64,
        /// Width of the time field, in bits.
        time_bits: u32,
        /// Milliseconds per tick.
        unit_ms: u32,
    },
    /// The time field alone spans more than `i64::MAX` milliseconds (from the start of
    /// its first tick to the start of its last), so no epoch, not even 0, fits.
    TimeSpanTooLong {
        /// Width of the time field, in bits.
        time_bits: u32,
        /// Milliseconds per tick.
        unit_ms: u32,
    },
}

impl LayoutError {
    /// The message, without allocating or formatting: the same text as `Display`.
    pub fn message(&self) -> Message {
        let (template, args) = match *self {
            LayoutError::NoTimeBits => ("the time field needs at least 1 bit", [0; 4]),
            LayoutError::NoSequenceBits => ("the sequence field needs at least 1 bit", [0; 4]),
            LayoutError::SequenceTooWide { bits } => (
                "the sequence field takes \x01 bits (max 32)",
                [u64::from(bits), 0, 0, 0],
            ),
            LayoutError::TooWide { total } => {
                ("the fields take \x01 bits (max 64)", [total, 0, 0, 0])
            }
            LayoutError::NoNodeRoom => ("time and sequence take 64 bits together (max 63)", [0; 4]),
            LayoutError::ZeroUnit => ("the time unit is 0 ms (min 1 ms)", [0; 4]),
            LayoutError::EpochOutOfRange {
                epoch_ms,
                max_epoch_ms,
                time_bits,
                unit_ms,
            } => (
                "epoch \x01 ms is outside 0..=\x02 ms \
                 (the epochs a \x03-bit time field of \x04 ms ticks allows)",
                [
                    epoch_ms,
                    max_epoch_ms,
                    u64::from(time_bits),
                    u64::from(unit_ms),
                ],
            ),
            LayoutError::TimeSpanTooLong { time_bits, unit_ms } => (
                // i64::MAX written out: one argument less.
                "the time field's \x03 bits of \x02 ms ticks span \x07 ms, \
                 so no epoch fits (max span 9223372036854775807 ms)",
                [
                    crate::layout::mask(time_bits),
                    u64::from(unit_ms),
                    u64::from(time_bits),
                    0,
                ],
            ),
        };
        render(template, &args, "")
    }
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
    }
}

/// Why a generator did not hand out an ID.
///
/// ```
/// use snowdrift::{Generator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Fail).unwrap();
/// generator.next().unwrap();
/// clock.rewind(37);
/// let err = generator.next().unwrap_err();
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
    /// to another node id with [`Generator::switch_node`](crate::Generator::switch_node),
    /// giving the time its previous holder issued up to (a lease's `notBefore`), then go on.
    SwitchNode {
        /// How far back, in milliseconds (whole ticks).
        by_ms: u64,
    },
    /// The call would have to wait (for the next tick, or for the clock to catch up).
    /// Only `try_*` calls return this.
    WouldBlock,
    /// Under [`Policy::Borrow`](crate::Policy::Borrow), the next ID would be further ahead
    /// of the clock than a call may borrow and then wait for: more than twice the policy's
    /// `max_ahead_ms` (the clock stepped back by more than the bound).
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
    /// [`Generator::switch_node`](crate::Generator::switch_node) was given the node id the
    /// generator already holds: going on with it afresh would repeat IDs.
    SameNode {
        /// The node id.
        node: u64,
    },
    /// A resume mark past the last ID the generator could issue: nothing can follow it.
    /// The range error's `max` is the largest mark that leaves room.
    ResumeOutOfRange(RangeError),
    /// The next ID's time is not before the generator's fence (for example the end of a
    /// node id lease): move the fence forward to go on.
    PastFence {
        /// The time of the ID that was refused, in Unix milliseconds (the start of its
        /// tick).
        time_ms: u64,
        /// The fence: IDs must be earlier than this Unix millisecond.
        fence_ms: u64,
    },
    /// The policy cannot be used with this generator (for example
    /// [`Policy::History`](crate::Policy::History) with no history ring).
    Unsupported {
        /// What is missing.
        reason: &'static str,
    },
}

impl Error {
    /// The message, without allocating or formatting: the same text as `Display`.
    ///
    /// ```
    /// use snowdrift::Error;
    /// let err = Error::ClockBackwards { by_ms: 37, limit_ms: 0 };
    /// assert_eq!(err.message().as_str(), "clock moved backwards by 37 ms (limit 0 ms)");
    /// ```
    pub fn message(&self) -> Message {
        let mut text = "";
        let (template, args) = match *self {
            Error::ClockBackwards { by_ms, limit_ms } => (
                "clock moved backwards by \x01 ms (limit \x02 ms)",
                [by_ms, limit_ms, 0, 0],
            ),
            Error::SwitchNode { by_ms } => (
                "clock moved backwards by \x01 ms: switch to an unused node id",
                [by_ms, 0, 0, 0],
            ),
            Error::WouldBlock => ("no ID available without waiting", [0; 4]),
            Error::TooFarAhead { ahead_ms, limit_ms } => (
                "next ID would be \x01 ms ahead of the clock (limit \x02 ms, then a wait of up to \x02 ms)",
                [ahead_ms, limit_ms, 0, 0],
            ),
            Error::Time(e) | Error::Range(e) => return e.message(),
            Error::ClockStalled { at_ms } => (
                "clock stopped at \x01 ms while waiting for it to advance",
                [at_ms, 0, 0, 0],
            ),
            Error::Unsupported { reason } => {
                text = reason;
                ("\x05", [0; 4])
            }
            Error::SameNode { node } => (
                "node id \x01 is the one this generator holds: \
                 switch to a node id it has not used",
                [node, 0, 0, 0],
            ),
            Error::ResumeOutOfRange(RangeError {
                field, value, max, ..
            }) => (
                if field == Field::Time {
                    "no ID can follow time \x01 ms (max \x02 ms)"
                } else {
                    "no ID of this node can follow id \x01 (max \x02)"
                },
                [value, max, 0, 0],
            ),
            Error::PastFence { time_ms, fence_ms } => (
                "next ID at \x01 ms is not before the fence at \x02 ms",
                [time_ms, fence_ms, 0, 0],
            ),
        };
        render(template, &args, text)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
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
    /// first character past the limit for [`TooLong`](ParseErrorKind::TooLong); the
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
        /// Characters given.
        found: usize,
        /// The most characters the form allows.
        max: usize,
    },
}

impl ParseError {
    /// The message, without allocating or formatting: the same text as `Display`.
    ///
    /// ```
    /// use snowdrift::text;
    /// let err = text::parse_decimal("12x4").unwrap_err();
    /// assert_eq!(err.message().as_str(), "invalid character 'x' at position 2");
    /// ```
    pub fn message(&self) -> Message {
        let position = self.position as u64;
        let mut text = "";
        let (template, args) = match self.kind {
            ParseErrorKind::Empty => ("empty input", [0; 4]),
            ParseErrorKind::InvalidChar { found } => {
                text = quoted(found);
                (
                    "invalid character \x06 at position \x02",
                    [u64::from(found), position, utf8(found), 0],
                )
            }
            ParseErrorKind::Overflow => (
                "value does not fit in 64 bits (at position \x01)",
                [position, 0, 0, 0],
            ),
            ParseErrorKind::WrongLength { expected, found } => (
                "wrong length: \x01 characters (expected \x02)",
                [found as u64, expected as u64, 0, 0],
            ),
            ParseErrorKind::TooLong { found, max } => (
                "too long: \x01 characters (max \x02)",
                [found as u64, max as u64, 0, 0],
            ),
        };
        render(template, &args, text)
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message().as_str())
    }
}

impl core::error::Error for RangeError {}
impl core::error::Error for LayoutError {}
impl core::error::Error for Error {}
impl core::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::ToString;

    /// The text `Display` wrote before messages were built by hand, with `write!`.
    fn formatted(e: &Error) -> std::string::String {
        match *e {
            Error::ClockBackwards { by_ms, limit_ms } => {
                format!("clock moved backwards by {by_ms} ms (limit {limit_ms} ms)")
            }
            Error::SwitchNode { by_ms } => {
                format!("clock moved backwards by {by_ms} ms: switch to an unused node id")
            }
            Error::WouldBlock => "no ID available without waiting".to_string(),
            Error::TooFarAhead { ahead_ms, limit_ms } => {
                format!(
                    "next ID would be {ahead_ms} ms ahead of the clock (limit {limit_ms} ms, then a wait of up to {limit_ms} ms)"
                )
            }
            Error::Time(RangeError {
                field: Field::Time,
                value,
                min,
                max,
            }) => format!(
                "time {value} ms is outside the layout's range ({min}..={max} ms since the Unix epoch)"
            ),
            Error::Range(RangeError {
                field: Field::Id,
                value,
                max,
                ..
            }) => format!(
                "id {value} does not fit the layout's {} bits (max {max})",
                64 - max.leading_zeros()
            ),
            Error::Range(RangeError {
                field, value, max, ..
            }) => format!(
                "{} {value} does not fit in {} bits (max {max})",
                field.name(),
                64 - max.leading_zeros()
            ),
            Error::ClockStalled { at_ms } => {
                format!("clock stopped at {at_ms} ms while waiting for it to advance")
            }
            Error::Unsupported { reason } => reason.to_string(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn generator_messages_match_the_formatted_text_at_the_extremes() {
        for n in crate::message::tests::EXTREMES {
            let range = |field| RangeError {
                field,
                value: n,
                min: n / 3,
                max: n,
            };
            let errors = [
                Error::ClockBackwards {
                    by_ms: n,
                    limit_ms: n / 7,
                },
                Error::SwitchNode { by_ms: n },
                Error::WouldBlock,
                Error::TooFarAhead {
                    ahead_ms: n,
                    limit_ms: n / 2,
                },
                Error::Time(range(Field::Time)),
                Error::Range(range(Field::Id)),
                Error::Range(range(Field::Node)),
                Error::Range(range(Field::Datacenter)),
                Error::Range(range(Field::Worker)),
                Error::Range(range(Field::Sequence)),
                Error::ClockStalled { at_ms: n },
                Error::Unsupported {
                    reason: "the history policy needs a ring: use Generator::with_history",
                },
            ];
            for e in errors {
                assert_eq!(e.message().as_str(), formatted(&e));
                assert_eq!(e.to_string(), formatted(&e));
            }
        }
    }

    /// The text of a layout error, written with `format!` (128-bit for the span).
    fn formatted_layout(e: &LayoutError) -> std::string::String {
        match *e {
            LayoutError::NoTimeBits => "the time field needs at least 1 bit".to_string(),
            LayoutError::NoSequenceBits => "the sequence field needs at least 1 bit".to_string(),
            LayoutError::SequenceTooWide { bits } => {
                format!("the sequence field takes {bits} bits (max 32)")
            }
            LayoutError::TooWide { total } => format!("the fields take {total} bits (max 64)"),
            LayoutError::NoNodeRoom => {
                "time and sequence take 64 bits together (max 63)".to_string()
            }
            LayoutError::ZeroUnit => "the time unit is 0 ms (min 1 ms)".to_string(),
            LayoutError::EpochOutOfRange {
                epoch_ms,
                max_epoch_ms,
                time_bits,
                unit_ms,
            } => format!(
                "epoch {epoch_ms} ms is outside 0..={max_epoch_ms} ms \
                 (the epochs a {time_bits}-bit time field of {unit_ms} ms ticks allows)"
            ),
            LayoutError::TimeSpanTooLong { time_bits, unit_ms } => {
                let span = u128::from(crate::layout::mask(time_bits)) * u128::from(unit_ms);
                format!(
                    "the time field's {time_bits} bits of {unit_ms} ms ticks span {span} ms, \
                     so no epoch fits (max span {} ms)",
                    i64::MAX
                )
            }
        }
    }

    #[test]
    fn layout_messages_match_the_formatted_text_at_the_extremes() {
        let small = [
            0u32,
            1,
            9,
            10,
            33,
            62,
            63,
            64,
            65,
            99,
            100,
            u32::MAX - 1,
            u32::MAX,
        ];
        let mut cases = std::vec![
            LayoutError::NoTimeBits,
            LayoutError::NoSequenceBits,
            LayoutError::NoNodeRoom,
            LayoutError::ZeroUnit,
        ];
        for n in small {
            let wide = u64::from(n);
            cases.push(LayoutError::SequenceTooWide { bits: n });
            for total in [wide, wide * 4, u64::MAX] {
                cases.push(LayoutError::TooWide { total });
            }
            for unit_ms in small {
                cases.push(LayoutError::TimeSpanTooLong {
                    time_bits: n,
                    unit_ms,
                });
                for epoch_ms in [0, 1, i64::MAX as u64, u64::MAX] {
                    cases.push(LayoutError::EpochOutOfRange {
                        epoch_ms,
                        max_epoch_ms: epoch_ms / 3,
                        time_bits: n,
                        unit_ms,
                    });
                }
            }
        }
        for e in cases {
            assert_eq!(e.message().as_str(), formatted_layout(&e));
            assert_eq!(e.to_string(), formatted_layout(&e));
        }
        // The widest span there is: 64 bits of u32::MAX ms, past u64::MAX.
        let e = LayoutError::TimeSpanTooLong {
            time_bits: 64,
            unit_ms: u32::MAX,
        };
        assert!(e.message().contains(" 79228162495817593515539431425 ms"));
    }

    #[test]
    fn parse_messages_quote_every_char_visibly() {
        let chars = [
            ('x', "'x'"),
            ('!', "'!'"),
            (' ', "' '"),
            ('\'', r"'\''"),
            ('"', "'\"'"),
            ('\\', r"'\\'"),
            ('\n', r"'\n'"),
            ('\t', r"'\t'"),
            ('\0', r"'\0'"),
            ('\u{1b}', r"'\u{1B}'"),
            ('\u{7f}', r"'\u{7F}'"),
            ('é', "'é' (U+00E9)"),
            ('\u{200b}', "'\u{200b}' (U+200B)"),
            ('😀', "'😀' (U+1F600)"),
            ('\u{10ffff}', "'\u{10ffff}' (U+10FFFF)"),
        ];
        for (found, quoted) in chars {
            for position in [0, 7, usize::MAX] {
                let e = ParseError {
                    kind: ParseErrorKind::InvalidChar { found },
                    position,
                };
                let text = format!("invalid character {quoted} at position {position}");
                assert_eq!(e.message().as_str(), text);
                assert_eq!(e.to_string(), text);
            }
        }
        let cases = [
            (ParseErrorKind::Empty, 0, "empty input".to_string()),
            (
                ParseErrorKind::Overflow,
                12,
                "value does not fit in 64 bits (at position 12)".to_string(),
            ),
            (
                ParseErrorKind::WrongLength {
                    expected: 13,
                    found: 5,
                },
                0,
                "wrong length: 5 characters (expected 13)".to_string(),
            ),
        ];
        for (kind, position, text) in cases {
            let e = ParseError { kind, position };
            assert_eq!(e.message().as_str(), text);
            assert_eq!(e.to_string(), text);
        }
        for found in [0, 1, 17, 21, 1000, usize::MAX] {
            for max in [0, 16, 20, usize::MAX] {
                let e = ParseError {
                    kind: ParseErrorKind::TooLong { found, max },
                    position: max,
                };
                let text = format!("too long: {found} characters (max {max})");
                assert_eq!(e.message().as_str(), text);
                assert_eq!(e.to_string(), text);
            }
        }
    }
}
