//! The two error types: [`Error`] for generators, layouts and values, [`ParseError`] for
//! text forms. Each is a struct around a private representation (uuid's `Error` is the
//! model): callers match on a fieldless [`ErrorKind`] / [`ParseErrorKind`] and read the
//! numbers through methods. Every message carries the numbers a user needs to fix the
//! call; each is one template rendered by `message.rs` (`\x01` to `\x04` stand for the
//! numbers, `\x05` for a text such as a field's name).

use core::fmt;

use crate::message::{Message, quoted, render, utf8};

/// The part of an ID (or of a layout) that a value was meant for: see [`Error::field`].
///
/// ```
/// use snowdrift::{Field, Layout};
/// let err = Layout::TWITTER.node_from(3, 40).unwrap_err();
/// assert_eq!(err.field(), Some(Field::Worker));
/// ```
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
    /// A sealed ID (see `Sealer`, feature `seal`).
    #[cfg(feature = "seal")]
    Sealed,
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
            #[cfg(feature = "seal")]
            Field::Sealed => "sealed id",
        }
    }
}

/// What went wrong with a generator call, a layout or a value: see [`Error::kind`].
///
/// ```
/// use snowdrift::{ErrorKind, Layout};
/// let err = Layout::builder().time_bits(41).node_bits(12).sequence_bits(12).build().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::LayoutTooWide);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The clock reads earlier than the newest tick already used, by more than the policy
    /// allows: [`behind_ms`](Error::behind_ms) and [`limit_ms`](Error::limit_ms).
    ClockBackwards,
    /// The clock went backwards under [`Policy::SwitchNode`](crate::Policy::SwitchNode)
    /// (by [`behind_ms`](Error::behind_ms)): move to another node id with
    /// [`Generator::switch_node`](crate::Generator::switch_node), giving the time its
    /// previous holder issued up to (a lease's `notBefore`), then go on.
    SwitchNode,
    /// The call would have to wait (for the next tick, or for the clock to catch up).
    /// Only `try_*` calls return this.
    WouldBlock,
    /// Under [`Policy::Borrow`](crate::Policy::Borrow), the next ID would be
    /// [`ahead_ms`](Error::ahead_ms) ahead of the clock: more than a call may borrow
    /// (the policy's `max_ahead_ms`, [`limit_ms`](Error::limit_ms), or while a resume
    /// mark above the clock sets the pace, the mark's lead if larger) and then wait for
    /// (`max_ahead_ms` more). Reported at once when the clock steps back that far; on a
    /// shared generator also after a call waited `max_ahead_ms` while other callers took
    /// the ticks the clock reached.
    TooFarAhead,
    /// The clock stopped moving forward (no reading above [`time_ms`](Error::time_ms) for
    /// a few million reads in a row) while a call waited for it, so the call gave up
    /// instead of spinning forever.
    ClockStalled,
    /// The next ID's time ([`time_ms`](Error::time_ms)) is not before the generator's
    /// fence ([`fence_ms`](Error::fence_ms), for example the end of a node id lease): move
    /// the fence forward to go on.
    PastFence,
    /// [`Generator::switch_node`](crate::Generator::switch_node) was given the node id the
    /// generator already holds ([`value`](Error::value)): going on with it afresh would
    /// repeat IDs.
    SameNode,
    /// A value does not fit its [`field`](Error::field): a time outside the layout's range
    /// (before the epoch or past the time field's last tick: IDs never wrap around), a
    /// node, datacenter or worker id, a sequence or an ID too large.
    /// [`value`](Error::value), [`min`](Error::min) and [`max`](Error::max) say more.
    OutOfRange,
    /// A resume mark past the last ID the generator could issue: nothing can follow it.
    /// [`max`](Error::max) is the largest mark of that [`field`](Error::field) that leaves
    /// room.
    ResumeOutOfRange,
    /// A layout without time bits.
    NoTimeBits,
    /// A layout without sequence bits.
    NoSequenceBits,
    /// A layout whose sequence field is wider than 32 bits ([`value`](Error::value)).
    SequenceTooWide,
    /// A layout whose fields take more than 64 bits together ([`value`](Error::value)).
    LayoutTooWide,
    /// A layout whose time and sequence take all 64 bits: a generator's counter of
    /// (tick, sequence) pairs needs one bit of room above them.
    NoNodeRoom,
    /// A layout whose time unit is zero milliseconds.
    ZeroUnit,
    /// A layout whose epoch ([`value`](Error::value)) is so late that the time field's
    /// last tick would start after the largest Unix millisecond snowdrift accepts
    /// (`i64::MAX`); [`max`](Error::max) is the latest epoch this time field allows.
    EpochOutOfRange,
    /// A layout whose time field alone ([`time_bits`](Error::time_bits) of
    /// [`unit_ms`](Error::unit_ms)) spans more than `i64::MAX` milliseconds, so no epoch,
    /// not even 0, fits.
    TimeSpanTooLong,
    /// A key whose length ([`value`](Error::value), in bytes) is not one AES takes: 16,
    /// 24 or 32 bytes (feature `seal`).
    KeyLength,
    /// A tweak longer ([`value`](Error::value), in bytes) than FF1 allows
    /// ([`max`](Error::max), 2^32 - 1 bytes) (feature `seal`).
    TweakTooLong,
}

/// Why a generator did not hand out an ID, a layout was rejected, or a value does not fit
/// a layout. Match on [`kind`](Error::kind); the numbers are methods.
///
/// ```
/// use snowdrift::{ErrorKind, Generator, IdGenerator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Fail).unwrap();
/// generator.next().unwrap();
/// clock.rewind(37);
/// let err = generator.next().unwrap_err();
/// assert_eq!(err.kind(), ErrorKind::ClockBackwards);
/// assert_eq!((err.behind_ms(), err.limit_ms()), (Some(37), Some(0)));
/// assert_eq!(err.to_string(), "clock moved backwards by 37 ms (limit 0 ms)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Error(pub(crate) Repr);

/// The private representation of an [`Error`]: a kind with its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Repr {
    ClockBackwards {
        by_ms: u64,
        limit_ms: u64,
    },
    SwitchNode {
        by_ms: u64,
    },
    WouldBlock,
    TooFarAhead {
        ahead_ms: u64,
        limit_ms: u64,
    },
    ClockStalled {
        at_ms: u64,
    },
    PastFence {
        time_ms: u64,
        fence_ms: u64,
    },
    SameNode {
        node: u64,
    },
    OutOfRange {
        field: Field,
        value: u64,
        min: u64,
        max: u64,
    },
    ResumeOutOfRange {
        field: Field,
        value: u64,
        max: u64,
    },
    Layout(Rejected),
    // Made only by `Sealer`: without the feature, no build links their messages.
    #[cfg(feature = "seal")]
    KeyLength {
        len: u64,
    },
    #[cfg(feature = "seal")]
    TweakTooLong {
        len: u64,
    },
}

/// Why a layout was rejected: which check failed, its numbers, and the message template,
/// chosen where the layout was built. The templates are not in [`Error::message`], so a
/// program that builds no layout at run time (its layouts are constants, checked at
/// compile time) links none of them when it shows a generator's errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Rejected {
    check: LayoutCheck,
    /// The time field's width (at most 64 where a message names it).
    time_bits: u8,
    unit_ms: u32,
    /// Numbers 0 and 1 of the template (2 and 3 are `time_bits` and `unit_ms`).
    numbers: [u64; 2],
    template: &'static str,
}

/// The layout checks, each with the numbers its message names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum LayoutCheck {
    NoTimeBits,
    NoSequenceBits,
    /// The bits asked for.
    SequenceTooWide,
    /// The bits the fields take together.
    LayoutTooWide,
    NoNodeRoom,
    ZeroUnit,
    /// The epoch and the latest epoch allowed.
    EpochOutOfRange,
    /// The time field's last tick and the unit (the span is their product).
    TimeSpanTooLong,
}

impl Error {
    /// A layout rejected by `check`, with its `numbers`, time field width and unit.
    pub(crate) const fn layout(
        check: LayoutCheck,
        numbers: [u64; 2],
        time_bits: u32,
        unit_ms: u32,
    ) -> Error {
        let template = match check {
            LayoutCheck::NoTimeBits => "the time field needs at least 1 bit",
            LayoutCheck::NoSequenceBits => "the sequence field needs at least 1 bit",
            LayoutCheck::SequenceTooWide => "the sequence field takes \x01 bits (max 32)",
            LayoutCheck::LayoutTooWide => "the fields take \x01 bits (max 64)",
            LayoutCheck::NoNodeRoom => "time and sequence take 64 bits together (max 63)",
            LayoutCheck::ZeroUnit => "the time unit is 0 ms (min 1 ms)",
            LayoutCheck::EpochOutOfRange => {
                "epoch \x01 ms is outside 0..=\x02 ms \
                 (the epochs a \x03-bit time field of \x04 ms ticks allows)"
            }
            // i64::MAX written out: one argument less.
            LayoutCheck::TimeSpanTooLong => {
                "the time field's \x03 bits of \x04 ms ticks span \x07 ms, \
                 so no epoch fits (max span 9223372036854775807 ms)"
            }
        };
        Error(Repr::Layout(Rejected {
            check,
            time_bits: if time_bits > 255 {
                255
            } else {
                time_bits as u8
            },
            unit_ms,
            numbers,
            template,
        }))
    }

    /// Would block: see [`ErrorKind::WouldBlock`].
    pub(crate) const WOULD_BLOCK: Error = Error(Repr::WouldBlock);

    /// A value that does not fit `field`, whose values run `min..=max`.
    pub(crate) const fn out_of_range(field: Field, value: u64, min: u64, max: u64) -> Error {
        Error(Repr::OutOfRange {
            field,
            value,
            min,
            max,
        })
    }

    /// What went wrong.
    ///
    /// ```
    /// use snowdrift::{ErrorKind, Layout};
    /// assert_eq!(Layout::DEFAULT.decode(u64::MAX).unwrap_err().kind(), ErrorKind::OutOfRange);
    /// ```
    pub const fn kind(&self) -> ErrorKind {
        match self.0 {
            Repr::ClockBackwards { .. } => ErrorKind::ClockBackwards,
            Repr::SwitchNode { .. } => ErrorKind::SwitchNode,
            Repr::WouldBlock => ErrorKind::WouldBlock,
            Repr::TooFarAhead { .. } => ErrorKind::TooFarAhead,
            Repr::ClockStalled { .. } => ErrorKind::ClockStalled,
            Repr::PastFence { .. } => ErrorKind::PastFence,
            Repr::SameNode { .. } => ErrorKind::SameNode,
            Repr::OutOfRange { .. } => ErrorKind::OutOfRange,
            Repr::ResumeOutOfRange { .. } => ErrorKind::ResumeOutOfRange,
            #[cfg(feature = "seal")]
            Repr::KeyLength { .. } => ErrorKind::KeyLength,
            #[cfg(feature = "seal")]
            Repr::TweakTooLong { .. } => ErrorKind::TweakTooLong,
            Repr::Layout(r) => match r.check {
                LayoutCheck::NoTimeBits => ErrorKind::NoTimeBits,
                LayoutCheck::NoSequenceBits => ErrorKind::NoSequenceBits,
                LayoutCheck::SequenceTooWide => ErrorKind::SequenceTooWide,
                LayoutCheck::LayoutTooWide => ErrorKind::LayoutTooWide,
                LayoutCheck::NoNodeRoom => ErrorKind::NoNodeRoom,
                LayoutCheck::ZeroUnit => ErrorKind::ZeroUnit,
                LayoutCheck::EpochOutOfRange => ErrorKind::EpochOutOfRange,
                LayoutCheck::TimeSpanTooLong => ErrorKind::TimeSpanTooLong,
            },
        }
    }

    /// The field a value was meant for ([`OutOfRange`](ErrorKind::OutOfRange),
    /// [`ResumeOutOfRange`](ErrorKind::ResumeOutOfRange)).
    ///
    /// ```
    /// use snowdrift::{Field, Layout};
    /// let err = Layout::DEFAULT.tick_at(0).unwrap_err(); // before the epoch
    /// assert_eq!(err.field(), Some(Field::Time));
    /// ```
    pub const fn field(&self) -> Option<Field> {
        match self.0 {
            Repr::OutOfRange { field, .. } | Repr::ResumeOutOfRange { field, .. } => Some(field),
            _ => None,
        }
    }

    /// The value that was refused: the value out of range or the resume mark, the node id
    /// already held ([`SameNode`](ErrorKind::SameNode)), the bits a layout asked for
    /// ([`SequenceTooWide`](ErrorKind::SequenceTooWide),
    /// [`LayoutTooWide`](ErrorKind::LayoutTooWide)) or its epoch
    /// ([`EpochOutOfRange`](ErrorKind::EpochOutOfRange)).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::TWITTER.node_from(3, 40).unwrap_err();
    /// assert_eq!((err.value(), err.min(), err.max()), (Some(40), Some(0), Some(31)));
    /// ```
    pub const fn value(&self) -> Option<u64> {
        match self.0 {
            Repr::OutOfRange { value, .. } | Repr::ResumeOutOfRange { value, .. } => Some(value),
            Repr::SameNode { node } => Some(node),
            #[cfg(feature = "seal")]
            Repr::KeyLength { len } | Repr::TweakTooLong { len } => Some(len),
            Repr::Layout(Rejected {
                check:
                    LayoutCheck::SequenceTooWide
                    | LayoutCheck::LayoutTooWide
                    | LayoutCheck::EpochOutOfRange,
                numbers,
                ..
            }) => Some(numbers[0]),
            _ => None,
        }
    }

    /// The smallest value allowed ([`OutOfRange`](ErrorKind::OutOfRange); for a time,
    /// the layout's epoch).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::TWITTER.tick_at(0).unwrap_err();
    /// assert_eq!(err.min(), Some(Layout::TWITTER.epoch_ms()));
    /// ```
    pub const fn min(&self) -> Option<u64> {
        match self.0 {
            Repr::OutOfRange { min, .. } => Some(min),
            _ => None,
        }
    }

    /// The largest value allowed: of the field, of a resume mark, of a layout's width or
    /// epoch.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::builder().time_bits(41).node_bits(12).sequence_bits(12).build().unwrap_err();
    /// assert_eq!((err.value(), err.max()), (Some(65), Some(64)));
    /// ```
    pub const fn max(&self) -> Option<u64> {
        match self.0 {
            Repr::OutOfRange { max, .. } | Repr::ResumeOutOfRange { max, .. } => Some(max),
            #[cfg(feature = "seal")]
            Repr::TweakTooLong { .. } => Some(u32::MAX as u64),
            Repr::Layout(r) => match r.check {
                LayoutCheck::SequenceTooWide => Some(32),
                LayoutCheck::LayoutTooWide => Some(64),
                LayoutCheck::EpochOutOfRange => Some(r.numbers[1]),
                _ => None,
            },
            _ => None,
        }
    }

    /// How far the clock went back, in milliseconds, counted in whole ticks: from the
    /// tick the clock reads up to the newest tick the generator used (less the lead of a
    /// resume mark above the clock, which is no step), whether or not that tick's
    /// sequence is used up: [`ClockBackwards`](ErrorKind::ClockBackwards) (then always
    /// above [`limit_ms`](Error::limit_ms)), [`SwitchNode`](ErrorKind::SwitchNode).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::SwitchNode)?;
    /// generator.next()?;
    /// clock.rewind(5_000);
    /// assert_eq!(generator.next().unwrap_err().behind_ms(), Some(5_000));
    ///
    /// // Sonyflake's 10 ms ticks: 73 ms back from the start of a tick is 8 ticks back.
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::SONYFLAKE, 1, Policy::Fail)?;
    /// generator.next()?;
    /// clock.rewind(73);
    /// assert_eq!(generator.next().unwrap_err().behind_ms(), Some(80));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn behind_ms(&self) -> Option<u64> {
        match self.0 {
            Repr::ClockBackwards { by_ms, .. } | Repr::SwitchNode { by_ms } => Some(by_ms),
            _ => None,
        }
    }

    /// How far ahead of the clock the next ID would be, in milliseconds: the start of its
    /// tick less the clock's reading ([`TooFarAhead`](ErrorKind::TooFarAhead)).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Borrow { max_ahead_ms: 10 })?;
    /// generator.next()?;
    /// clock.rewind(50);
    /// let err = generator.next().unwrap_err();
    /// assert_eq!((err.ahead_ms(), err.limit_ms()), (Some(50), Some(10)));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn ahead_ms(&self) -> Option<u64> {
        match self.0 {
            Repr::TooFarAhead { ahead_ms, .. } => Some(ahead_ms),
            _ => None,
        }
    }

    /// How far the policy lets the clock go back ([`ClockBackwards`](ErrorKind::ClockBackwards))
    /// or IDs run ahead ([`TooFarAhead`](ErrorKind::TooFarAhead)), in milliseconds.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::Wait { max_wait_ms: 10 })?;
    /// generator.next()?;
    /// clock.rewind(50);
    /// assert_eq!(generator.next().unwrap_err().limit_ms(), Some(10));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn limit_ms(&self) -> Option<u64> {
        match self.0 {
            Repr::ClockBackwards { limit_ms, .. } | Repr::TooFarAhead { limit_ms, .. } => {
                Some(limit_ms)
            }
            _ => None,
        }
    }

    /// A Unix millisecond: the time of the ID refused at the fence
    /// ([`PastFence`](ErrorKind::PastFence), the start of its tick), or the clock's newest
    /// reading when it stalled ([`ClockStalled`](ErrorKind::ClockStalled)).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// generator.set_fence_ms(1_750_000_000_000);
    /// let err = generator.next().unwrap_err();
    /// assert_eq!((err.time_ms(), err.fence_ms()), (Some(1_750_000_000_000), Some(1_750_000_000_000)));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn time_ms(&self) -> Option<u64> {
        match self.0 {
            Repr::PastFence { time_ms, .. } => Some(time_ms),
            Repr::ClockStalled { at_ms } => Some(at_ms),
            _ => None,
        }
    }

    /// The fence, a Unix millisecond IDs must be earlier than
    /// ([`PastFence`](ErrorKind::PastFence)), as the generator applies it: the fence set
    /// with [`set_fence_ms`](crate::IdGenerator::set_fence_ms) rounded up to the start of
    /// a tick (the layout's epoch for a fence before it), which refuses the same IDs; see
    /// [`time_ms`](Error::time_ms).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let clock = ManualClock::new(1_750_000_000_000);
    /// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// generator.set_fence_ms(1_000);
    /// assert!(generator.next().unwrap_err().fence_ms().is_some());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn fence_ms(&self) -> Option<u64> {
        match self.0 {
            Repr::PastFence { fence_ms, .. } => Some(fence_ms),
            _ => None,
        }
    }

    /// The width of a rejected layout's time field, in bits
    /// ([`EpochOutOfRange`](ErrorKind::EpochOutOfRange),
    /// [`TimeSpanTooLong`](ErrorKind::TimeSpanTooLong)).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::builder().time_bits(62).sequence_bits(1).unit_ms(3).build().unwrap_err();
    /// assert_eq!((err.time_bits(), err.unit_ms()), (Some(62), Some(3)));
    /// ```
    pub const fn time_bits(&self) -> Option<u32> {
        match self.0 {
            Repr::Layout(Rejected {
                check: LayoutCheck::EpochOutOfRange | LayoutCheck::TimeSpanTooLong,
                time_bits,
                ..
            }) => Some(time_bits as u32),
            _ => None,
        }
    }

    /// The time unit of a rejected layout, in milliseconds; see
    /// [`time_bits`](Error::time_bits).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::builder().time_bits(41).sequence_bits(12).epoch_ms(u64::MAX).build().unwrap_err();
    /// assert_eq!(err.unit_ms(), Some(1));
    /// ```
    pub const fn unit_ms(&self) -> Option<u32> {
        match self.0 {
            Repr::Layout(Rejected {
                check: LayoutCheck::EpochOutOfRange | LayoutCheck::TimeSpanTooLong,
                unit_ms,
                ..
            }) => Some(unit_ms),
            _ => None,
        }
    }

    /// The message, without allocating or formatting: the same text as `Display`.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let err = Layout::TWITTER.node_from(3, 40).unwrap_err();
    /// assert_eq!(err.message().as_str(), "worker id 40 does not fit in 5 bits (max 31)");
    /// ```
    pub fn message(&self) -> Message {
        let mut text = "";
        let (template, args) = match self.0 {
            Repr::ClockBackwards { by_ms, limit_ms } => (
                "clock moved backwards by \x01 ms (limit \x02 ms)",
                [by_ms, limit_ms, 0, 0],
            ),
            Repr::SwitchNode { by_ms } => (
                "clock moved backwards by \x01 ms: switch to an unused node id",
                [by_ms, 0, 0, 0],
            ),
            Repr::WouldBlock => ("no ID available without waiting", [0; 4]),
            Repr::TooFarAhead { ahead_ms, limit_ms } => (
                "next ID would be \x01 ms ahead of the clock (limit \x02 ms, then a wait of up to \x02 ms)",
                [ahead_ms, limit_ms, 0, 0],
            ),
            Repr::OutOfRange {
                field,
                value,
                min,
                max,
            } => {
                let bits = u64::from(64 - max.leading_zeros());
                text = field.name();
                // Every message begins with the field's name (`\x05`).
                let template = match field {
                    Field::Time => {
                        "\x05 \x01 ms is outside the layout's range (\x03..=\x02 ms since the Unix epoch)"
                    }
                    Field::Id => "\x05 \x01 does not fit the layout's \x04 bits (max \x02)",
                    #[cfg(feature = "seal")]
                    Field::Sealed => "\x05 \x01 does not fit the layout's \x04 bits (max \x02)",
                    _ => "\x05 \x01 does not fit in \x04 bits (max \x02)",
                };
                (template, [value, max, min, bits])
            }
            Repr::ClockStalled { at_ms } => (
                "clock stopped at \x01 ms while waiting for it to advance",
                [at_ms, 0, 0, 0],
            ),
            Repr::SameNode { node } => (
                "node id \x01 is the one this generator holds: \
                 switch to a node id it has not used",
                [node, 0, 0, 0],
            ),
            Repr::ResumeOutOfRange { field, value, max } => (
                if let Field::Time = field {
                    "no ID can follow time \x01 ms (max \x02 ms)"
                } else {
                    "no ID of this node can follow id \x01 (max \x02)"
                },
                [value, max, 0, 0],
            ),
            #[cfg(feature = "seal")]
            Repr::KeyLength { len } => (
                "key of \x01 bytes: AES keys are 16, 24 or 32 bytes",
                [len, 0, 0, 0],
            ),
            #[cfg(feature = "seal")]
            Repr::TweakTooLong { len } => ("tweak of \x01 bytes (max 4294967295)", [len, 0, 0, 0]),
            Repr::PastFence { time_ms, fence_ms } => (
                "next ID at \x01 ms is not before the fence at \x02 ms",
                [time_ms, fence_ms, 0, 0],
            ),
            Repr::Layout(r) => (
                r.template,
                [
                    r.numbers[0],
                    r.numbers[1],
                    u64::from(r.time_bits),
                    u64::from(r.unit_ms),
                ],
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

/// Why a text form of an ID was rejected: see [`ParseError::kind`].
///
/// ```
/// use snowdrift::{ParseErrorKind, text};
/// assert_eq!(text::parse_decimal("").unwrap_err().kind(), ParseErrorKind::Empty);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The text is empty.
    Empty,
    /// A character outside the form's alphabet ([`invalid_char`](ParseError::invalid_char)).
    InvalidChar,
    /// The value does not fit in 64 bits.
    Overflow,
    /// A fixed-width form with the wrong number of characters
    /// ([`found_len`](ParseError::found_len), [`expected_len`](ParseError::expected_len)).
    WrongLength,
    /// A variable-width form with more characters than it can have
    /// ([`found_len`](ParseError::found_len), [`max_len`](ParseError::max_len)).
    TooLong,
}

/// Why a text form of an ID was rejected. Match on [`kind`](ParseError::kind); the
/// details are methods.
///
/// ```
/// use snowdrift::{ParseErrorKind, text};
/// let err = text::parse_base32("01HZ!").unwrap_err();
/// assert_eq!(err.kind(), ParseErrorKind::WrongLength);
/// assert_eq!((err.found_len(), err.expected_len()), (Some(5), Some(13)));
/// let err = text::parse_decimal("12x4").unwrap_err();
/// assert_eq!((err.invalid_char(), err.position()), (Some('x'), 2));
/// assert_eq!(err.to_string(), "invalid character 'x' at position 2");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParseError {
    repr: ParseRepr,
    position: usize,
}

/// The private representation of a [`ParseError`]'s kind, with its numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ParseRepr {
    Empty,
    InvalidChar { found: char },
    Overflow,
    WrongLength { expected: usize, found: usize },
    TooLong { found: usize, max: usize },
}

impl ParseError {
    /// The error `repr` at byte offset `position`.
    pub(crate) const fn new(repr: ParseRepr, position: usize) -> ParseError {
        ParseError { repr, position }
    }

    /// What is wrong.
    ///
    /// ```
    /// use snowdrift::{ParseErrorKind, text};
    /// assert_eq!(text::parse_base62("LygHa16AHYG").unwrap_err().kind(), ParseErrorKind::Overflow);
    /// ```
    pub const fn kind(&self) -> ParseErrorKind {
        match self.repr {
            ParseRepr::Empty => ParseErrorKind::Empty,
            ParseRepr::InvalidChar { .. } => ParseErrorKind::InvalidChar,
            ParseRepr::Overflow => ParseErrorKind::Overflow,
            ParseRepr::WrongLength { .. } => ParseErrorKind::WrongLength,
            ParseRepr::TooLong { .. } => ParseErrorKind::TooLong,
        }
    }

    /// Byte offset of the offending character: 0 for empty input and wrong lengths; the
    /// first character past the limit for [`TooLong`](ParseErrorKind::TooLong); the
    /// first character that made the value too large for
    /// [`Overflow`](ParseErrorKind::Overflow).
    ///
    /// ```
    /// use snowdrift::text;
    /// assert_eq!(text::parse_decimal("18446744073709551616").unwrap_err().position(), 19);
    /// ```
    pub const fn position(&self) -> usize {
        self.position
    }

    /// The character outside the alphabet ([`InvalidChar`](ParseErrorKind::InvalidChar)).
    ///
    /// ```
    /// use snowdrift::text;
    /// assert_eq!(text::parse_hex("12g").unwrap_err().invalid_char(), Some('g'));
    /// ```
    pub const fn invalid_char(&self) -> Option<char> {
        match self.repr {
            ParseRepr::InvalidChar { found } => Some(found),
            _ => None,
        }
    }

    /// Characters given ([`WrongLength`](ParseErrorKind::WrongLength),
    /// [`TooLong`](ParseErrorKind::TooLong)).
    ///
    /// ```
    /// use snowdrift::text;
    /// let err = text::parse_decimal("123456789012345678901").unwrap_err();
    /// assert_eq!((err.found_len(), err.max_len()), (Some(21), Some(20)));
    /// ```
    pub const fn found_len(&self) -> Option<usize> {
        match self.repr {
            ParseRepr::WrongLength { found, .. } | ParseRepr::TooLong { found, .. } => Some(found),
            _ => None,
        }
    }

    /// Characters a fixed-width form needs ([`WrongLength`](ParseErrorKind::WrongLength)).
    ///
    /// ```
    /// use snowdrift::text;
    /// assert_eq!(text::parse_base32("01HZ").unwrap_err().expected_len(), Some(13));
    /// ```
    pub const fn expected_len(&self) -> Option<usize> {
        match self.repr {
            ParseRepr::WrongLength { expected, .. } => Some(expected),
            _ => None,
        }
    }

    /// The most characters a variable-width form allows ([`TooLong`](ParseErrorKind::TooLong)).
    ///
    /// ```
    /// use snowdrift::text;
    /// assert_eq!(text::parse_hex("12345678901234567").unwrap_err().max_len(), Some(16));
    /// ```
    pub const fn max_len(&self) -> Option<usize> {
        match self.repr {
            ParseRepr::TooLong { max, .. } => Some(max),
            _ => None,
        }
    }

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
        let (template, args) = match self.repr {
            ParseRepr::Empty => ("empty input", [0; 4]),
            ParseRepr::InvalidChar { found } => {
                text = quoted(found);
                (
                    "invalid character \x06 at position \x02",
                    [u64::from(found), position, utf8(found), 0],
                )
            }
            ParseRepr::Overflow => (
                "value does not fit in 64 bits (at position \x01)",
                [position, 0, 0, 0],
            ),
            ParseRepr::WrongLength { expected, found } => (
                "wrong length: \x01 characters (expected \x02)",
                [found as u64, expected as u64, 0, 0],
            ),
            ParseRepr::TooLong { found, max } => (
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

impl core::error::Error for Error {}
impl core::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::format;
    use std::string::ToString;

    /// The largest value of `bits` bits.
    fn mask(bits: u32) -> u64 {
        u64::MAX.checked_shr(64 - bits.min(64)).unwrap_or(0)
    }

    /// The text `Display` wrote before messages were built by hand, with `write!`.
    fn formatted(e: &Error) -> std::string::String {
        match e.0 {
            Repr::ClockBackwards { by_ms, limit_ms } => {
                format!("clock moved backwards by {by_ms} ms (limit {limit_ms} ms)")
            }
            Repr::SwitchNode { by_ms } => {
                format!("clock moved backwards by {by_ms} ms: switch to an unused node id")
            }
            Repr::WouldBlock => "no ID available without waiting".to_string(),
            Repr::TooFarAhead { ahead_ms, limit_ms } => {
                format!(
                    "next ID would be {ahead_ms} ms ahead of the clock (limit {limit_ms} ms, then a wait of up to {limit_ms} ms)"
                )
            }
            Repr::OutOfRange {
                field: Field::Time,
                value,
                min,
                max,
            } => format!(
                "time {value} ms is outside the layout's range ({min}..={max} ms since the Unix epoch)"
            ),
            Repr::OutOfRange {
                field: Field::Id,
                value,
                max,
                ..
            } => format!(
                "id {value} does not fit the layout's {} bits (max {max})",
                64 - max.leading_zeros()
            ),
            Repr::OutOfRange {
                field, value, max, ..
            } => format!(
                "{} {value} does not fit in {} bits (max {max})",
                field.name(),
                64 - max.leading_zeros()
            ),
            Repr::ClockStalled { at_ms } => {
                format!("clock stopped at {at_ms} ms while waiting for it to advance")
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn generator_messages_match_the_formatted_text_at_the_extremes() {
        for n in crate::message::tests::EXTREMES {
            let range = |field| Error::out_of_range(field, n, n / 3, n);
            let errors = [
                Error(Repr::ClockBackwards {
                    by_ms: n,
                    limit_ms: n / 7,
                }),
                Error(Repr::SwitchNode { by_ms: n }),
                Error::WOULD_BLOCK,
                Error(Repr::TooFarAhead {
                    ahead_ms: n,
                    limit_ms: n / 2,
                }),
                range(Field::Time),
                range(Field::Id),
                range(Field::Node),
                range(Field::Datacenter),
                range(Field::Worker),
                range(Field::Sequence),
                Error(Repr::ClockStalled { at_ms: n }),
            ];
            for e in errors {
                assert_eq!(e.message().as_str(), formatted(&e));
                assert_eq!(e.to_string(), formatted(&e));
            }
        }
    }

    /// The text of a layout error, written with `format!` (128-bit for the span).
    fn formatted_layout(e: &Error) -> std::string::String {
        let Repr::Layout(r) = e.0 else { unreachable!() };
        let [n0, n1] = r.numbers;
        let (time_bits, unit_ms) = (r.time_bits, r.unit_ms);
        match r.check {
            LayoutCheck::NoTimeBits => "the time field needs at least 1 bit".to_string(),
            LayoutCheck::NoSequenceBits => "the sequence field needs at least 1 bit".to_string(),
            LayoutCheck::SequenceTooWide => format!("the sequence field takes {n0} bits (max 32)"),
            LayoutCheck::LayoutTooWide => format!("the fields take {n0} bits (max 64)"),
            LayoutCheck::NoNodeRoom => {
                "time and sequence take 64 bits together (max 63)".to_string()
            }
            LayoutCheck::ZeroUnit => "the time unit is 0 ms (min 1 ms)".to_string(),
            LayoutCheck::EpochOutOfRange => format!(
                "epoch {n0} ms is outside 0..={n1} ms \
                 (the epochs a {time_bits}-bit time field of {unit_ms} ms ticks allows)"
            ),
            LayoutCheck::TimeSpanTooLong => {
                let span = u128::from(n0) * u128::from(unit_ms);
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
        let small = [0u32, 1, 9, 10, 33, 62, 63, 64, 65, 99, 100, 255];
        let units = [0u32, 1, 9, 10, 99, 100, u32::MAX - 1, u32::MAX];
        let mut cases = std::vec![
            Error::layout(LayoutCheck::NoTimeBits, [0; 2], 0, 0),
            Error::layout(LayoutCheck::NoSequenceBits, [0; 2], 0, 0),
            Error::layout(LayoutCheck::NoNodeRoom, [0; 2], 0, 0),
            Error::layout(LayoutCheck::ZeroUnit, [0; 2], 0, 0),
        ];
        for n in small.into_iter().chain([u32::MAX - 1, u32::MAX]) {
            let wide = u64::from(n);
            cases.push(Error::layout(LayoutCheck::SequenceTooWide, [wide, 0], 0, 0));
            for total in [wide, wide * 4, u64::MAX] {
                cases.push(Error::layout(LayoutCheck::LayoutTooWide, [total, 0], 0, 0));
            }
        }
        for n in small {
            for unit_ms in units {
                let span = [mask(n), u64::from(unit_ms)];
                cases.push(Error::layout(
                    LayoutCheck::TimeSpanTooLong,
                    span,
                    n,
                    unit_ms,
                ));
                for epoch_ms in [0, 1, i64::MAX as u64, u64::MAX] {
                    let epochs = [epoch_ms, epoch_ms / 3];
                    cases.push(Error::layout(
                        LayoutCheck::EpochOutOfRange,
                        epochs,
                        n,
                        unit_ms,
                    ));
                }
            }
        }
        for e in cases {
            assert_eq!(e.message().as_str(), formatted_layout(&e));
            assert_eq!(e.to_string(), formatted_layout(&e));
        }
        // The widest span there is: 64 bits of u32::MAX ms, past u64::MAX.
        let e = Error::layout(
            LayoutCheck::TimeSpanTooLong,
            [u64::MAX, u64::from(u32::MAX)],
            64,
            u32::MAX,
        );
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
                let e = ParseError::new(ParseRepr::InvalidChar { found }, position);
                let text = format!("invalid character {quoted} at position {position}");
                assert_eq!(e.message().as_str(), text);
                assert_eq!(e.to_string(), text);
            }
        }
        let cases = [
            (ParseRepr::Empty, 0, "empty input".to_string()),
            (
                ParseRepr::Overflow,
                12,
                "value does not fit in 64 bits (at position 12)".to_string(),
            ),
            (
                ParseRepr::WrongLength {
                    expected: 13,
                    found: 5,
                },
                0,
                "wrong length: 5 characters (expected 13)".to_string(),
            ),
        ];
        for (kind, position, text) in cases {
            let e = ParseError::new(kind, position);
            assert_eq!(e.message().as_str(), text);
            assert_eq!(e.to_string(), text);
        }
        for found in [0, 1, 17, 21, 1000, usize::MAX] {
            for max in [0, 16, 20, usize::MAX] {
                let e = ParseError::new(ParseRepr::TooLong { found, max }, max);
                let text = format!("too long: {found} characters (max {max})");
                assert_eq!(e.message().as_str(), text);
                assert_eq!(e.to_string(), text);
            }
        }
    }
}
