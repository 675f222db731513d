//! Decoding IDs into their parts, composing them back, and ID ranges for a point in time.

use crate::error::{Error, Field};
use crate::layout::Layout;

/// The fields of an ID, with the time as Unix milliseconds.
///
/// For a split node field, [`Layout::datacenter_of`] and [`Layout::worker_of`] take the
/// node apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Parts {
    /// Start of the ID's tick, in Unix milliseconds.
    pub time_ms: u64,
    /// The whole node field.
    pub node: u64,
    /// The sequence number within the tick.
    pub sequence: u64,
}

impl Layout {
    /// Takes an ID apart.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// // The example ID from Discord's documentation.
    /// let parts = Layout::DISCORD.decode(175928847299117063)?;
    /// assert_eq!(parts.time_ms, 1462015105796);
    /// assert_eq!(Layout::DISCORD.datacenter_of(parts.node), 1);
    /// assert_eq!(Layout::DISCORD.worker_of(parts.node), 0);
    /// assert_eq!(parts.sequence, 7);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline]
    pub const fn decode(&self, id: u64) -> Result<Parts, Error> {
        if id > self.max_id() {
            return Err(Error::out_of_range(Field::Id, id, 0, self.max_id()));
        }
        Ok(Parts {
            time_ms: self.tick_start_ms(id >> self.time_shift()),
            node: (id >> self.node_shift()) & self.max_node(),
            sequence: (id >> self.sequence_shift()) & self.max_sequence(),
        })
    }

    /// Puts an ID together. `time_ms` is rounded down to its tick.
    ///
    /// ```
    /// use snowdrift::{Layout, Parts};
    /// let id = Layout::DISCORD.compose(Parts { time_ms: 1462015105796, node: 32, sequence: 7 })?;
    /// assert_eq!(id, 175928847299117063);
    /// let err = Layout::DISCORD.compose(Parts { time_ms: 0, node: 0, sequence: 0 }).unwrap_err();
    /// assert!(err.to_string().starts_with("time 0 ms is outside the layout's range"));
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn compose(&self, parts: Parts) -> Result<u64, Error> {
        let tick = match self.tick_at(parts.time_ms) {
            Ok(t) => t,
            Err(e) => return Err(e),
        };
        if parts.node > self.max_node() {
            return Err(self.range(Field::Node, parts.node, self.max_node()));
        }
        if parts.sequence > self.max_sequence() {
            return Err(self.range(Field::Sequence, parts.sequence, self.max_sequence()));
        }
        Ok(self.pack(tick, parts.node, parts.sequence))
    }

    /// Packs fields already known to fit.
    pub(crate) const fn pack(&self, tick: u64, node: u64, sequence: u64) -> u64 {
        (tick << self.time_shift())
            | (node << self.node_shift())
            | (sequence << self.sequence_shift())
    }

    /// The node id for a datacenter and a worker of a split layout.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert_eq!(Layout::TWITTER.node_from(1, 2), Ok(34));
    /// let err = Layout::TWITTER.node_from(32, 0).unwrap_err();
    /// assert_eq!(err.to_string(), "datacenter id 32 does not fit in 5 bits (max 31)");
    /// ```
    pub const fn node_from(&self, datacenter: u64, worker: u64) -> Result<u64, Error> {
        if datacenter > self.max_datacenter() {
            return Err(self.range(Field::Datacenter, datacenter, self.max_datacenter()));
        }
        if worker > self.max_worker() {
            return Err(self.range(Field::Worker, worker, self.max_worker()));
        }
        Ok((datacenter << self.worker_bits()) | worker)
    }

    /// Checks that `node` fits the node field.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// assert_eq!(Layout::DEFAULT.check_node(1023), Ok(1023));
    /// assert_eq!(
    ///     Layout::DEFAULT.check_node(1024).unwrap_err().to_string(),
    ///     "node id 1024 does not fit in 10 bits (max 1023)"
    /// );
    /// ```
    pub const fn check_node(&self, node: u64) -> Result<u64, Error> {
        if node > self.max_node() {
            return Err(self.range(Field::Node, node, self.max_node()));
        }
        Ok(node)
    }

    /// The datacenter part of a node id (0 when the node is not split).
    pub const fn datacenter_of(&self, node: u64) -> u64 {
        (node >> self.worker_bits()) & self.max_datacenter()
    }

    /// The worker part of a node id (the whole node when it is not split).
    pub const fn worker_of(&self, node: u64) -> u64 {
        node & self.max_worker()
    }

    /// The smallest ID any node can make in the tick holding `time_ms`: `id >= min_id_at(t)`
    /// selects IDs made at or after `t`.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// let l = Layout::TWITTER;
    /// let (lo, hi) = (l.min_id_at(1_750_000_000_000)?, l.max_id_at(1_750_000_000_999)?);
    /// assert!(lo < hi);
    /// assert_eq!(l.decode(lo)?.time_ms, 1_750_000_000_000);
    /// assert_eq!(l.decode(hi)?.time_ms, 1_750_000_000_999);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub const fn min_id_at(&self, time_ms: u64) -> Result<u64, Error> {
        match self.tick_at(time_ms) {
            Ok(tick) => Ok(tick << self.time_shift()),
            Err(e) => Err(e),
        }
    }

    /// The largest ID any node can make in the tick holding `time_ms`.
    pub const fn max_id_at(&self, time_ms: u64) -> Result<u64, Error> {
        match self.tick_at(time_ms) {
            Ok(tick) => Ok((tick << self.time_shift()) | crate::layout::mask(self.time_shift())),
            Err(e) => Err(e),
        }
    }

    const fn range(&self, field: Field, value: u64, max: u64) -> Error {
        Error::out_of_range(field, value, 0, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discord_documentation_example() {
        let p = Layout::DISCORD.decode(175_928_847_299_117_063).unwrap();
        assert_eq!(
            p,
            Parts {
                time_ms: 1_462_015_105_796,
                node: 32,
                sequence: 7
            }
        );
        assert_eq!(Layout::DISCORD.compose(p), Ok(175_928_847_299_117_063));
    }

    #[test]
    fn sonyflake_puts_the_sequence_above_the_machine() {
        let l = Layout::SONYFLAKE;
        let id = l
            .compose(Parts {
                time_ms: l.epoch_ms() + 20,
                node: 3,
                sequence: 1,
            })
            .unwrap();
        assert_eq!(id, (2 << 24) | (1 << 16) | 3);
    }

    #[test]
    fn decode_rejects_bits_above_the_layout() {
        let err = Layout::DEFAULT.decode(1 << 63).unwrap_err();
        assert_eq!(err.field(), Some(Field::Id));
        assert_eq!(err.max(), Some((1 << 63) - 1));
        assert!(Layout::DISCORD.decode(u64::MAX).is_ok());
    }

    #[test]
    fn compose_names_the_field_that_does_not_fit() {
        let l = Layout::TWITTER;
        let t = l.epoch_ms();
        let e = l
            .compose(Parts {
                time_ms: t,
                node: 1024,
                sequence: 0,
            })
            .unwrap_err();
        assert_eq!(
            (e.field(), e.value(), e.max()),
            (Some(Field::Node), Some(1024), Some(1023))
        );
        let e = l
            .compose(Parts {
                time_ms: t,
                node: 0,
                sequence: 4096,
            })
            .unwrap_err();
        assert_eq!(
            (e.field(), e.value(), e.max()),
            (Some(Field::Sequence), Some(4096), Some(4095))
        );
        let e = l
            .compose(Parts {
                time_ms: l.exhausts_at(),
                node: 0,
                sequence: 0,
            })
            .unwrap_err();
        assert_eq!(e.field(), Some(Field::Time));
    }

    #[test]
    fn id_range_of_a_tick_covers_every_node_and_sequence() {
        let l = Layout::BAIDU;
        let t = l.epoch_ms() + 5_500;
        let lo = l.min_id_at(t).unwrap();
        let hi = l.max_id_at(t).unwrap();
        let full = Parts {
            time_ms: t,
            node: l.max_node(),
            sequence: l.max_sequence(),
        };
        assert_eq!(hi, l.compose(full).unwrap());
        assert_eq!(
            lo,
            l.compose(Parts {
                time_ms: t,
                node: 0,
                sequence: 0
            })
            .unwrap()
        );
        assert_eq!(l.decode(lo).unwrap().time_ms, l.epoch_ms() + 5_000);
        assert_eq!(l.min_id_at(t + 500).unwrap(), hi + 1);
    }
}
