//! Bit layouts: field widths, time unit and epoch, with the presets people already store.

use core::num::{NonZeroU32, NonZeroU64};

use crate::error::{Error, Field, LayoutCheck};

/// The order of the node and sequence fields below the time field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    /// `time | node | sequence`, as Twitter, Discord, Instagram and Baidu do.
    NodeThenSequence,
    /// `time | sequence | node`, as Sonyflake does.
    SequenceThenNode,
}

/// How the 64 bits of an ID are shared out: field widths, the time unit and the epoch.
///
/// A layout is built and checked by `const fn`s, so a preset or a layout written as a
/// constant is validated at compile time. The time field counts *ticks* of
/// [`unit_ms`](Layout::unit_ms) milliseconds since [`epoch_ms`](Layout::epoch_ms) (Unix
/// milliseconds). The node field may be split into a datacenter and a worker part.
///
/// | preset | time | node | sequence | unit | epoch |
/// |---|---|---|---|---|---|
/// | [`DEFAULT`](Layout::DEFAULT) | 41 | 10 | 12 | 1 ms | 2024-01-01T00:00:00Z |
/// | [`TWITTER`](Layout::TWITTER) | 41 | 5 + 5 | 12 | 1 ms | 1288834974657 |
/// | [`DISCORD`](Layout::DISCORD) | 42 | 5 + 5 | 12 | 1 ms | 2015-01-01T00:00:00Z |
/// | [`SONYFLAKE`](Layout::SONYFLAKE) | 39 | 16 (after the sequence) | 8 | 10 ms | 2014-09-01T00:00:00Z |
/// | [`INSTAGRAM`](Layout::INSTAGRAM) | 41 | 13 | 10 | 1 ms | 1314220021721 ([`instagram`](Layout::instagram) takes another) |
/// | [`BAIDU`](Layout::BAIDU) | 28 | 22 | 13 | 1 s | 2016-05-20T00:00:00Z |
/// | [`JS53`](Layout::JS53) | 38 | 7 | 8 | 10 ms | 2024-01-01T00:00:00Z |
///
/// ```
/// use snowdrift::Layout;
/// const MINE: Layout = match Layout::builder()
///     .time_bits(40).datacenter_bits(3).worker_bits(7).sequence_bits(13)
///     .unit_ms(1).epoch_ms(1_704_067_200_000).build()
/// {
///     Ok(layout) => layout,
///     Err(_) => panic!("bad layout"), // a compile error, not a run-time panic
/// };
/// assert_eq!(MINE.total_bits(), 63);
/// assert!(MINE.fits_i64());
/// assert_eq!(MINE.max_worker(), 127);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Layout {
    time_bits: u8,
    datacenter_bits: u8,
    worker_bits: u8,
    sequence_bits: u8,
    order: Order,
    unit_ms: NonZeroU32,
    epoch_ms: u64,
}

/// Builds a [`Layout`]; see [`Layout::builder`]. All methods are `const`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct LayoutBuilder {
    time_bits: u32,
    datacenter_bits: u32,
    worker_bits: u32,
    sequence_bits: u32,
    order: Order,
    unit_ms: u32,
    epoch_ms: u64,
}

impl LayoutBuilder {
    /// Width of the time field, in bits.
    pub const fn time_bits(mut self, bits: u32) -> Self {
        self.time_bits = bits;
        self
    }
    /// Width of an unsplit node field, in bits (clears any datacenter/worker split).
    pub const fn node_bits(mut self, bits: u32) -> Self {
        self.datacenter_bits = 0;
        self.worker_bits = bits;
        self
    }
    /// Width of the datacenter part of a split node field, in bits.
    pub const fn datacenter_bits(mut self, bits: u32) -> Self {
        self.datacenter_bits = bits;
        self
    }
    /// Width of the worker part of a split node field, in bits.
    pub const fn worker_bits(mut self, bits: u32) -> Self {
        self.worker_bits = bits;
        self
    }
    /// Width of the sequence field, in bits (1..=32).
    pub const fn sequence_bits(mut self, bits: u32) -> Self {
        self.sequence_bits = bits;
        self
    }
    /// Field order below the time field (default [`Order::NodeThenSequence`]).
    pub const fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }
    /// Milliseconds per tick of the time field (default 1).
    pub const fn unit_ms(mut self, unit_ms: u32) -> Self {
        self.unit_ms = unit_ms;
        self
    }
    /// The epoch: the Unix millisecond at which the time field is zero (default 0).
    pub const fn epoch_ms(mut self, epoch_ms: u64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }

    /// Checks the widths, unit and epoch and returns the layout.
    pub const fn build(self) -> Result<Layout, Error> {
        let b = self;
        if b.time_bits == 0 {
            return Err(Error::layout(LayoutCheck::NoTimeBits, [0; 2], 0, 0));
        }
        if b.sequence_bits == 0 {
            return Err(Error::layout(LayoutCheck::NoSequenceBits, [0; 2], 0, 0));
        }
        // Sum in u64 so huge inputs cannot wrap.
        let total = b.time_bits as u64
            + b.datacenter_bits as u64
            + b.worker_bits as u64
            + b.sequence_bits as u64;
        if total > 64 {
            return Err(Error::layout(LayoutCheck::LayoutTooWide, [total, 0], 0, 0));
        }
        if b.sequence_bits > 32 {
            let bits = b.sequence_bits as u64;
            return Err(Error::layout(LayoutCheck::SequenceTooWide, [bits, 0], 0, 0));
        }
        if b.time_bits + b.sequence_bits > 63 {
            return Err(Error::layout(LayoutCheck::NoNodeRoom, [0; 2], 0, 0));
        }
        let unit = match NonZeroU32::new(b.unit_ms) {
            Some(unit) => unit,
            None => return Err(Error::layout(LayoutCheck::ZeroUnit, [0; 2], 0, 0)),
        };
        // The last tick must start by i64::MAX: first the span from the epoch to it
        // (time_bits <= 62 here, since the sequence takes at least one bit), then the
        // epoch.
        let last_tick = (1u64 << b.time_bits) - 1;
        let span = match checked_mul_u32(last_tick, b.unit_ms) {
            Some(span) if span <= i64::MAX as u64 => span,
            _ => {
                let numbers = [last_tick, b.unit_ms as u64];
                let check = LayoutCheck::TimeSpanTooLong;
                return Err(Error::layout(check, numbers, b.time_bits, b.unit_ms));
            }
        };
        let max_epoch_ms = i64::MAX as u64 - span;
        if b.epoch_ms > max_epoch_ms {
            let numbers = [b.epoch_ms, max_epoch_ms];
            let check = LayoutCheck::EpochOutOfRange;
            return Err(Error::layout(check, numbers, b.time_bits, b.unit_ms));
        }
        Ok(Layout {
            time_bits: b.time_bits as u8,
            datacenter_bits: b.datacenter_bits as u8,
            worker_bits: b.worker_bits as u8,
            sequence_bits: b.sequence_bits as u8,
            order: b.order,
            unit_ms: unit,
            epoch_ms: b.epoch_ms,
        })
    }
}

/// Unwraps a preset at compile time.
const fn preset(r: Result<Layout, Error>) -> Layout {
    match r {
        Ok(l) => l,
        Err(_) => panic!("invalid preset layout"),
    }
}

impl Layout {
    /// snowdrift's own layout: 41 bits of milliseconds since 2024-01-01T00:00:00Z (good
    /// until 2093), a 10-bit node (1,024 generators), a 12-bit sequence (4,096 IDs per
    /// millisecond per node), 63 bits in all so IDs stay positive as signed 64-bit integers
    /// (Java `long`, SQL `BIGINT`).
    pub const DEFAULT: Layout = preset(
        Layout::builder()
            .time_bits(41)
            .node_bits(10)
            .sequence_bits(12)
            .epoch_ms(1_704_067_200_000)
            .build(),
    );
    /// Twitter's snowflake: 41-bit ms since 1288834974657, 5-bit datacenter, 5-bit worker,
    /// 12-bit sequence.
    pub const TWITTER: Layout = preset(
        Layout::builder()
            .time_bits(41)
            .datacenter_bits(5)
            .worker_bits(5)
            .sequence_bits(12)
            .epoch_ms(1_288_834_974_657)
            .build(),
    );
    /// Discord's snowflake: 42-bit ms since 2015-01-01T00:00:00Z (1420070400000), 5-bit
    /// worker ("datacenter" here), 5-bit process ("worker"), 12-bit increment. Uses all 64
    /// bits.
    pub const DISCORD: Layout = preset(
        Layout::builder()
            .time_bits(42)
            .datacenter_bits(5)
            .worker_bits(5)
            .sequence_bits(12)
            .epoch_ms(1_420_070_400_000)
            .build(),
    );
    /// Sonyflake: 39 bits of 10 ms since 2014-09-01T00:00:00Z, then an 8-bit sequence, then
    /// a 16-bit machine id (the node).
    pub const SONYFLAKE: Layout = preset(
        Layout::builder()
            .time_bits(39)
            .sequence_bits(8)
            .node_bits(16)
            .order(Order::SequenceThenNode)
            .unit_ms(10)
            .epoch_ms(1_409_529_600_000)
            .build(),
    );
    /// Instagram's sharded IDs: 41-bit ms, 13-bit shard (the node), 10-bit sequence, with
    /// Instagram's epoch 1314220021721. Use [`Layout::instagram`] for another epoch.
    pub const INSTAGRAM: Layout = preset(Layout::instagram(1_314_220_021_721));
    /// Baidu uid-generator's default: 28 bits of seconds since 2016-05-20T00:00:00Z, a
    /// 22-bit worker id, a 13-bit sequence (63 bits, sign bit clear).
    pub const BAIDU: Layout = preset(
        Layout::builder()
            .time_bits(28)
            .node_bits(22)
            .sequence_bits(13)
            .unit_ms(1000)
            .epoch_ms(1_463_702_400_000)
            .build(),
    );

    /// IDs that a JavaScript `Number` (and so every JSON parser) holds exactly: 53 bits,
    /// so every ID is at most `2^53 - 1` (`Number.MAX_SAFE_INTEGER`). 38 bits of 10 ms
    /// since 2024-01-01T00:00:00Z (about 87 years: until 2111-02-08), a 7-bit node (128
    /// generators), an 8-bit sequence (256 IDs per 10 ms per node: 25,600 IDs/s).
    ///
    /// Eleven bits fewer than [`DEFAULT`](Layout::DEFAULT) have to come from the lifetime,
    /// the nodes or the IDs per tick. This preset takes them from the tick (10 ms instead
    /// of 1 ms: 3 bits, and a longer life) and from the node and sequence fields (3 and 4
    /// bits). A fleet of more than 128 generators, or one that issues more than 25,600 IDs
    /// per second per generator, needs a 64-bit layout (with IDs as `bigint` or strings in
    /// JavaScript). With 1 ms ticks the same 53 bits give 41 bits of time (about 70
    /// years) and 12 bits for node and sequence together, such as 32 nodes of 128 IDs per
    /// millisecond.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert_eq!(Layout::JS53.total_bits(), 53);
    /// assert_eq!(Layout::JS53.max_id(), (1 << 53) - 1); // Number.MAX_SAFE_INTEGER
    /// // 2111-02-08T13:44:29.440Z
    /// assert_eq!(Layout::JS53.exhausts_at(), 4_452_846_269_440);
    /// ```
    pub const JS53: Layout = preset(
        Layout::builder()
            .time_bits(38)
            .node_bits(7)
            .sequence_bits(8)
            .unit_ms(10)
            .epoch_ms(1_704_067_200_000)
            .build(),
    );

    /// The preset layouts with their names, as the frontends spell them.
    pub const PRESETS: [(&'static str, Layout); 7] = [
        ("default", Layout::DEFAULT),
        ("twitter", Layout::TWITTER),
        ("discord", Layout::DISCORD),
        ("sonyflake", Layout::SONYFLAKE),
        ("instagram", Layout::INSTAGRAM),
        ("baidu", Layout::BAIDU),
        ("js53", Layout::JS53),
    ];

    /// A builder with no fields, a 1 ms unit, the Unix epoch and
    /// [`Order::NodeThenSequence`].
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let l = Layout::builder().time_bits(41).node_bits(10).sequence_bits(12).build()?;
    /// assert_eq!(l.epoch_ms(), 0);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn builder() -> LayoutBuilder {
        LayoutBuilder {
            time_bits: 0,
            datacenter_bits: 0,
            worker_bits: 0,
            sequence_bits: 0,
            order: Order::NodeThenSequence,
            unit_ms: 1,
            epoch_ms: 0,
        }
    }

    /// Instagram's 41/13/10 layout with the given epoch (Unix ms).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let mine = Layout::instagram(1_750_000_000_000)?;
    /// assert_eq!((mine.time_bits(), mine.node_bits(), mine.sequence_bits()), (41, 13, 10));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn instagram(epoch_ms: u64) -> Result<Layout, Error> {
        Layout::builder()
            .time_bits(41)
            .node_bits(13)
            .sequence_bits(10)
            .epoch_ms(epoch_ms)
            .build()
    }

    /// Looks a preset up by its name (`"default"`, `"twitter"`, `"discord"`,
    /// `"sonyflake"`, `"instagram"`, `"baidu"`, `"js53"`).
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert_eq!(Layout::preset("discord"), Some(Layout::DISCORD));
    /// assert_eq!(Layout::preset("nope"), None);
    /// ```
    pub fn preset(name: &str) -> Option<Layout> {
        Layout::PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| *l)
    }

    /// Width of the time field.
    #[inline]
    pub const fn time_bits(&self) -> u32 {
        self.time_bits as u32
    }
    /// Width of the whole node field (datacenter + worker).
    #[inline]
    pub const fn node_bits(&self) -> u32 {
        self.datacenter_bits as u32 + self.worker_bits as u32
    }
    /// Width of the datacenter part of the node (0 when the node is not split).
    #[inline]
    pub const fn datacenter_bits(&self) -> u32 {
        self.datacenter_bits as u32
    }
    /// Width of the worker part of the node (the whole node when it is not split).
    #[inline]
    pub const fn worker_bits(&self) -> u32 {
        self.worker_bits as u32
    }
    /// Whether the node field is split into datacenter and worker.
    pub const fn is_split(&self) -> bool {
        self.datacenter_bits > 0
    }
    /// Width of the sequence field.
    #[inline]
    pub const fn sequence_bits(&self) -> u32 {
        self.sequence_bits as u32
    }
    /// Order of the node and sequence fields.
    #[inline]
    pub const fn order(&self) -> Order {
        self.order
    }
    /// Milliseconds per tick.
    #[inline]
    pub const fn unit_ms(&self) -> u32 {
        self.unit_ms.get()
    }
    /// Unix millisecond at which the time field is zero.
    #[inline]
    pub const fn epoch_ms(&self) -> u64 {
        self.epoch_ms
    }
    /// Bits all fields take together.
    #[inline]
    pub const fn total_bits(&self) -> u32 {
        self.time_bits() + self.node_bits() + self.sequence_bits()
    }
    /// Whether every ID of this layout is a non-negative signed 64-bit integer (Java
    /// `long`, SQL `BIGINT`): at most 63 bits.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert!(Layout::TWITTER.fits_i64());
    /// assert!(!Layout::DISCORD.fits_i64()); // 64 bits: IDs pass i64::MAX in 2084
    /// ```
    pub const fn fits_i64(&self) -> bool {
        self.total_bits() <= 63
    }
    /// The largest value of the time field.
    #[inline]
    pub const fn max_tick(&self) -> u64 {
        (1u64 << self.time_bits) - 1
    }
    /// The largest node id.
    #[inline]
    pub const fn max_node(&self) -> u64 {
        mask(self.node_bits())
    }
    /// The largest datacenter id (0 when the node is not split).
    pub const fn max_datacenter(&self) -> u64 {
        mask(self.datacenter_bits())
    }
    /// The largest worker id.
    pub const fn max_worker(&self) -> u64 {
        mask(self.worker_bits())
    }
    /// The largest sequence number.
    #[inline]
    pub const fn max_sequence(&self) -> u64 {
        mask(self.sequence_bits())
    }
    /// The largest ID this layout can hold.
    #[inline]
    pub const fn max_id(&self) -> u64 {
        mask(self.total_bits())
    }
    /// The Unix millisecond at which the last tick of the time field starts: the last
    /// time an ID can be made.
    pub const fn last_ms(&self) -> u64 {
        self.epoch_ms + self.max_tick() * self.unit_ms.get() as u64
    }
    /// The Unix millisecond at which the time field runs out: from then on generators
    /// return [`ErrorKind::OutOfRange`](crate::ErrorKind::OutOfRange) for [`Field::Time`]; they never wrap around.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// // 2093-09-06T15:47:35.552Z
    /// assert_eq!(Layout::DEFAULT.exhausts_at(), 3_903_090_455_552);
    /// // Sonyflake: 2^39 ticks of 10 ms, about 174 years.
    /// assert_eq!(Layout::SONYFLAKE.exhausts_at(), 6_907_087_738_880);
    /// ```
    pub const fn exhausts_at(&self) -> u64 {
        self.last_ms() + self.unit_ms.get() as u64
    }

    /// The tick (time field value) that contains the Unix millisecond `ms`.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert_eq!(Layout::SONYFLAKE.tick_at(1_409_529_600_019), Ok(1));
    /// assert!(Layout::SONYFLAKE.tick_at(0).is_err()); // before the epoch
    /// ```
    pub const fn tick_at(&self, ms: u64) -> Result<u64, Error> {
        if ms < self.epoch_ms {
            return Err(self.time_error(ms));
        }
        // A non-zero divisor: no zero check, no panic path.
        let unit = NonZeroU64::new(self.unit_ms.get() as u64);
        let tick = match unit {
            Some(unit) => (ms - self.epoch_ms) / unit.get(),
            None => ms - self.epoch_ms,
        };
        if tick > self.max_tick() {
            return Err(self.time_error(ms));
        }
        Ok(tick)
    }

    /// The Unix millisecond at which `tick` starts. `tick` is masked to the time field.
    #[inline]
    pub const fn tick_start_ms(&self, tick: u64) -> u64 {
        self.epoch_ms + (tick & self.max_tick()) * self.unit_ms.get() as u64
    }

    pub(crate) const fn time_error(&self, ms: u64) -> Error {
        Error::out_of_range(Field::Time, ms, self.epoch_ms, self.last_ms())
    }

    /// Shift of the time field.
    #[inline]
    pub(crate) const fn time_shift(&self) -> u32 {
        self.node_bits() + self.sequence_bits()
    }
    /// Shift of the node field.
    #[inline]
    pub(crate) const fn node_shift(&self) -> u32 {
        match self.order {
            Order::NodeThenSequence => self.sequence_bits(),
            Order::SequenceThenNode => 0,
        }
    }
    /// Shift of the sequence field.
    #[inline]
    pub(crate) const fn sequence_shift(&self) -> u32 {
        match self.order {
            Order::NodeThenSequence => 0,
            Order::SequenceThenNode => self.node_bits(),
        }
    }
}

/// `a * b`, or `None` past `u64::MAX`. By 32-bit halves: a 64-bit multiply with an
/// overflow check becomes a call to a 128-bit multiply on wasm and 32-bit targets.
pub(crate) const fn checked_mul_u32(a: u64, b: u32) -> Option<u64> {
    let b = b as u64;
    // Both factors below 2^32: no overflow here.
    let high = (a >> 32) * b;
    if high >> 32 != 0 {
        return None;
    }
    (high << 32).checked_add((a & 0xffff_ffff) * b)
}

/// `bits` ones (bits <= 64).
#[inline]
pub(crate) const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_their_documented_shape() {
        let shapes = [
            (Layout::TWITTER, 41, 5, 5, 12, 1, 1_288_834_974_657, 63),
            (Layout::DISCORD, 42, 5, 5, 12, 1, 1_420_070_400_000, 64),
            (Layout::SONYFLAKE, 39, 0, 16, 8, 10, 1_409_529_600_000, 63),
            (Layout::INSTAGRAM, 41, 0, 13, 10, 1, 1_314_220_021_721, 64),
            (Layout::BAIDU, 28, 0, 22, 13, 1000, 1_463_702_400_000, 63),
            (Layout::DEFAULT, 41, 0, 10, 12, 1, 1_704_067_200_000, 63),
            (Layout::JS53, 38, 0, 7, 8, 10, 1_704_067_200_000, 53),
        ];
        for (l, t, d, w, s, u, e, total) in shapes {
            assert_eq!(
                (
                    l.time_bits(),
                    l.datacenter_bits(),
                    l.worker_bits(),
                    l.sequence_bits()
                ),
                (t, d, w, s)
            );
            assert_eq!((l.unit_ms(), l.epoch_ms(), l.total_bits()), (u, e, total));
        }
        assert_eq!(Layout::SONYFLAKE.order(), Order::SequenceThenNode);
        assert_eq!(Layout::JS53.order(), Order::NodeThenSequence);
    }

    #[test]
    fn every_js53_id_is_a_safe_javascript_integer() {
        const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
        let l = Layout::JS53;
        assert_eq!(l.max_id(), MAX_SAFE_INTEGER);
        let last = l
            .compose(crate::Parts {
                time_ms: l.last_ms(),
                node: l.max_node(),
                sequence: l.max_sequence(),
            })
            .unwrap();
        assert_eq!(last, MAX_SAFE_INTEGER);
        assert!(l.decode(MAX_SAFE_INTEGER + 1).is_err());
        // 87 years of 10 ms ticks from 2024: its IDs run out in 2111.
        assert_eq!(l.exhausts_at() - l.epoch_ms(), (1 << 38) * 10);
        assert_eq!((l.max_node(), l.max_sequence()), (127, 255));
    }

    #[test]
    fn invalid_layouts_are_rejected_with_the_reason() {
        let b = Layout::builder()
            .time_bits(41)
            .node_bits(10)
            .sequence_bits(12);
        assert_eq!(
            b.time_bits(0).build(),
            Err(Error::layout(LayoutCheck::NoTimeBits, [0; 2], 0, 0))
        );
        assert_eq!(
            b.sequence_bits(0).build(),
            Err(Error::layout(LayoutCheck::NoSequenceBits, [0; 2], 0, 0))
        );
        assert_eq!(
            b.node_bits(12).build(),
            Err(Error::layout(LayoutCheck::LayoutTooWide, [65, 0], 0, 0))
        );
        assert_eq!(
            b.time_bits(u32::MAX).build(),
            Err(Error::layout(
                LayoutCheck::LayoutTooWide,
                [u64::from(u32::MAX) + 22, 0],
                0,
                0
            ))
        );
        assert_eq!(
            b.time_bits(20).node_bits(0).sequence_bits(33).build(),
            Err(Error::layout(LayoutCheck::SequenceTooWide, [33, 0], 0, 0))
        );
        assert_eq!(
            b.unit_ms(0).build(),
            Err(Error::layout(LayoutCheck::ZeroUnit, [0; 2], 0, 0))
        );
        assert_eq!(
            b.time_bits(52).node_bits(0).build(),
            Err(Error::layout(LayoutCheck::NoNodeRoom, [0; 2], 0, 0))
        );
        assert!(b.time_bits(51).node_bits(1).build().is_ok());
        assert_eq!(
            b.time_bits(50).node_bits(0).unit_ms(10_000).build(),
            Err(Error::layout(
                LayoutCheck::TimeSpanTooLong,
                [(1 << 50) - 1, 10_000],
                50,
                10_000
            ))
        );
        assert_eq!(
            b.epoch_ms(u64::MAX).build(),
            Err(Error::layout(
                LayoutCheck::EpochOutOfRange,
                [u64::MAX, i64::MAX as u64 - ((1 << 41) - 1)],
                41,
                1
            ))
        );
        assert!(b.build().is_ok());
    }

    #[test]
    fn too_wide_names_the_true_sum_of_the_widths() {
        let b = Layout::builder().time_bits(41).sequence_bits(12);
        let max = u32::MAX;
        let cases = [
            (b.node_bits(12), "the fields take 65 bits (max 64)"),
            // Far past u32::MAX, and still the exact sum.
            (
                b.time_bits(max).node_bits(max),
                "the fields take 8589934602 bits (max 64)",
            ),
            (
                b.time_bits(max)
                    .datacenter_bits(max)
                    .worker_bits(max)
                    .sequence_bits(max),
                "the fields take 17179869180 bits (max 64)",
            ),
        ];
        for (b, text) in cases {
            assert_eq!(b.build().unwrap_err().message().as_str(), text);
        }
    }

    #[test]
    fn a_late_epoch_is_rejected_with_the_epochs_the_layout_allows() {
        let b = Layout::builder()
            .time_bits(41)
            .node_bits(10)
            .sequence_bits(12);
        // The last of 2^41 ticks of 1 ms starts 2^41 - 1 ms after the epoch, and must
        // start by i64::MAX.
        let last = i64::MAX as u64 - ((1 << 41) - 1);
        assert_eq!(
            b.epoch_ms(last).build().map(|l| l.last_ms()),
            Ok(i64::MAX as u64)
        );
        let err = b.epoch_ms(last + 1).build().unwrap_err();
        assert_eq!(
            err.message().as_str(),
            "epoch 9223369837831520257 ms is outside 0..=9223369837831520256 ms \
             (the epochs a 41-bit time field of 1 ms ticks allows)"
        );
        let err = b.epoch_ms(u64::MAX).build().unwrap_err();
        assert_eq!(
            err.message().as_str(),
            "epoch 18446744073709551615 ms is outside 0..=9223369837831520256 ms \
             (the epochs a 41-bit time field of 1 ms ticks allows)"
        );
        // 2^62 ticks of 2 ms: the last starts at i64::MAX - 1, so epochs 0 and 1 fit.
        let b = b.time_bits(62).node_bits(0).sequence_bits(1).unit_ms(2);
        assert!(b.epoch_ms(1).build().is_ok());
        let err = b.epoch_ms(2).build().unwrap_err();
        assert_eq!(
            err.message().as_str(),
            "epoch 2 ms is outside 0..=1 ms (the epochs a 62-bit time field of 2 ms ticks allows)"
        );
    }

    #[test]
    fn a_time_field_too_long_for_any_epoch_names_its_span() {
        let b = Layout::builder().time_bits(50).sequence_bits(12);
        for epoch in [0, 1, u64::MAX] {
            let err = b.unit_ms(10_000).epoch_ms(epoch).build().unwrap_err();
            assert_eq!(
                err.message().as_str(),
                "the time field's 50 bits of 10000 ms ticks span 11258999068426230000 ms, \
                 so no epoch fits (max span 9223372036854775807 ms)"
            );
        }
        // Just past i64::MAX, and the widest span there is (past u64::MAX).
        let b = b.time_bits(62).sequence_bits(1);
        let err = b.unit_ms(3).build().unwrap_err();
        assert_eq!(
            err.message().as_str(),
            "the time field's 62 bits of 3 ms ticks span 13835058055282163709 ms, \
             so no epoch fits (max span 9223372036854775807 ms)"
        );
        let err = b.unit_ms(u32::MAX).build().unwrap_err();
        assert_eq!(
            err.message().as_str(),
            "the time field's 62 bits of 4294967295 ms ticks span \
             19807040623954398375663632385 ms, so no epoch fits (max span 9223372036854775807 ms)"
        );
    }

    #[test]
    fn tick_at_rejects_times_outside_the_range() {
        let l = Layout::DEFAULT;
        assert_eq!(l.tick_at(l.epoch_ms()), Ok(0));
        assert_eq!(l.tick_at(l.last_ms()), Ok(l.max_tick()));
        let err = l.tick_at(l.exhausts_at()).unwrap_err();
        assert_eq!(err.value(), Some(l.exhausts_at()));
        assert_eq!(err.max(), Some(l.last_ms()));
        assert!(l.tick_at(l.epoch_ms() - 1).is_err());
    }
}
