//! A space of node ids and the settings of the leases taken from it.

use crate::error::Error;
use crate::limits::{
    MAX_HOLDER, MAX_NODE_BITS, MAX_SPACE_NAME, MIN_RENEW_EVERY_MS, TTL_RANGE_MS, text_length,
};
use snowdrift::{AtomicGenerator, Clock, Layout, MonotonicClock, Order, Policy};

/// A named set of node ids (`2^node bits` of the layout; datacenter and worker bits
/// together for split layouts, the worker bits alone with a [`region`](Space::region))
/// and how leases on it behave.
///
/// Every client of one space must use the same layout (every field that decides where
/// an ID's bits go: see [`layout_text`](Space::layout_text)), region, `ttl_ms` and
/// `skew_ms` (the store refuses others with [`Error::Config`]); the other settings are
/// per process.
///
/// ```
/// use snowdrift::{Layout, Policy};
/// use snowdrift_lease::Space;
/// let space = Space::new("ids:orders", Layout::TWITTER)
///     .ttl_ms(10_000)
///     .skew_ms(1_000)
///     .policy(Policy::Wait { max_wait_ms: 50 });
/// assert_eq!(space.capacity(), 1024);
/// assert_eq!(space.renew_every(), 3_333);
/// assert!(space.validate().is_ok());
/// let bad = Space::new("ids:orders", Layout::TWITTER).ttl_ms(10_000).skew_ms(6_000);
/// assert_eq!(bad.validate().unwrap_err().to_string(), "skew_ms 6000 must be below half of ttl_ms 10000");
/// ```
#[derive(Debug, Clone)]
pub struct Space<C = MonotonicClock> {
    pub(crate) name: String,
    pub(crate) layout: Layout,
    pub(crate) region: Option<Region>,
    pub(crate) ttl_ms: u64,
    pub(crate) skew_ms: u64,
    pub(crate) renew_every_ms: Option<u64>,
    pub(crate) holder: Option<String>,
    pub(crate) policy: Policy,
    pub(crate) clock: C,
}

impl Space<MonotonicClock> {
    /// A space named `name` (the keys are `{name}:meta` and so on) for IDs of `layout`,
    /// with a TTL of 10 s, a skew allowance of 1 s, [`Policy::DEFAULT`] and a
    /// [`MonotonicClock`].
    pub fn new(name: impl Into<String>, layout: Layout) -> Self {
        Space {
            name: name.into(),
            layout,
            region: None,
            ttl_ms: 10_000,
            skew_ms: 1_000,
            renew_every_ms: None,
            holder: None,
            policy: Policy::DEFAULT,
            clock: MonotonicClock::new(),
        }
    }
}

/// The fixed part of a space's node ids: the top `bits` of the layout's node field hold
/// `id`, the same for every holder of the space; the worker bits below are leased.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Region {
    /// How many of the node field's top bits the region takes.
    pub(crate) bits: u32,
    /// The region's id, below `2^bits`.
    pub(crate) id: u64,
}

impl<C> Space<C> {
    /// The space's region: the top `bits` of the layout's node field are `id` in every ID
    /// of this space, and its leases cover only the worker bits below them, so two stores
    /// (one per data centre) given different regions of one layout never issue the same
    /// ID. Every holder of one space must give the same region (the store refuses others
    /// with [`Error::Config`], naming both). `bits` is 1 to the node bits less one; `id`
    /// below `2^bits` ([`validate`](Space::validate) checks both).
    ///
    /// A layout split into datacenter and worker with `bits` equal to its datacenter bits
    /// makes the region its datacenter field: `decode` shows the region as the datacenter
    /// and the leased id as the worker.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// use snowdrift_lease::Space;
    /// let space = Space::new("ids:orders", Layout::TWITTER).region(5, 3);
    /// assert_eq!(space.capacity(), 32);
    /// assert_eq!(space.node_id(7), 3 << 5 | 7);
    /// assert!(space.layout_text().ends_with(", region 3 of 5 bits"));
    /// let bad = Space::new("ids:orders", Layout::TWITTER).region(5, 32);
    /// assert_eq!(
    ///     bad.validate().unwrap_err().to_string(),
    ///     "region id 32 does not fit in 5 bits (allowed 0..=31)"
    /// );
    /// ```
    pub fn region(mut self, bits: u32, id: u64) -> Self {
        self.region = Some(Region { bits, id });
        self
    }

    /// How long a lease lasts without renewal, in milliseconds (100 ms to a year:
    /// [`TTL_RANGE_MS`](crate::TTL_RANGE_MS)).
    pub fn ttl_ms(mut self, ttl_ms: u64) -> Self {
        self.ttl_ms = ttl_ms;
        self
    }

    /// How far the clocks of the store (across a restart or failover) and of the hosts may
    /// disagree, in milliseconds; below half the TTL. A holder stops issuing `ttl - skew`
    /// ms after its last successful renewal was sent.
    pub fn skew_ms(mut self, skew_ms: u64) -> Self {
        self.skew_ms = skew_ms;
        self
    }

    /// How often the heartbeat renews, in milliseconds (default a third of the TTL);
    /// at least 10 and below `ttl - skew`.
    pub fn renew_every_ms(mut self, renew_every_ms: u64) -> Self {
        self.renew_every_ms = Some(renew_every_ms);
        self
    }

    /// The description of the holder shown to operators (default `rust pid N on HOST`;
    /// at most 1024 characters).
    pub fn holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = Some(holder.into());
        self
    }

    /// What the generator does when the clock goes backwards.
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// The clock of the leases' generators (cloned into each).
    pub fn clock<D>(self, clock: D) -> Space<D> {
        Space {
            name: self.name,
            layout: self.layout,
            region: self.region,
            ttl_ms: self.ttl_ms,
            skew_ms: self.skew_ms,
            renew_every_ms: self.renew_every_ms,
            holder: self.holder,
            policy: self.policy,
            clock,
        }
    }

    /// The space's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The layout of the IDs.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The bits of the node field the store leases: all of them, or those below the
    /// region.
    fn worker_bits(&self) -> u32 {
        let bits = self.layout.node_bits();
        bits.saturating_sub(self.region.map_or(0, |r| r.bits))
    }

    /// The node id the IDs of the leased id `leased` carry: the region above the leased
    /// id, or the leased id itself in a space without a region.
    pub fn node_id(&self, leased: u64) -> u64 {
        match self.region {
            Some(r) => r.id.checked_shl(self.worker_bits()).unwrap_or(0) | leased,
            None => leased,
        }
    }

    /// The layout as the space records it, the same text from every client (Rust and
    /// Node): two layouts that place an ID's bits differently never share a space, since
    /// their holders' IDs would not compare by time. A datacenter + worker split is not
    /// part of it (the node id's bits are the same). A [`region`](Space::region) is: the
    /// text ends with `, region ID of BITS bits`.
    ///
    /// ```
    /// use snowdrift::Layout;
    /// use snowdrift_lease::Space;
    /// assert_eq!(
    ///     Space::new("ids:orders", Layout::TWITTER).layout_text(),
    ///     "time 41 bits of 1 ms from 1288834974657, node 10 bits, sequence 12 bits, node above sequence"
    /// );
    /// ```
    pub fn layout_text(&self) -> String {
        let l = &self.layout;
        // With an empty node or sequence field the two orders place the bits alike.
        let order = match l.order() {
            Order::SequenceThenNode if l.node_bits() > 0 && l.sequence_bits() > 0 => {
                "sequence above node"
            }
            _ => "node above sequence",
        };
        let region = match self.region {
            Some(r) => format!(", region {} of {} bits", r.id, r.bits),
            None => String::new(),
        };
        format!(
            "time {} bits of {} ms from {}, node {} bits, sequence {} bits, {order}{region}",
            l.time_bits(),
            l.unit_ms(),
            l.epoch_ms(),
            l.node_bits(),
            l.sequence_bits()
        )
    }

    /// How many node ids the space has: `2^node bits` of the layout, or `2^(node bits -
    /// region bits)` with a region.
    pub fn capacity(&self) -> u64 {
        1u64 << self.worker_bits().min(63)
    }

    /// The renewal period in milliseconds: as set, or a third of the TTL.
    pub fn renew_every(&self) -> u64 {
        self.renew_every_ms.unwrap_or(self.ttl_ms / 3)
    }

    /// The holder description sent to the store.
    pub fn holder_description(&self) -> String {
        match &self.holder {
            Some(h) => h.clone(),
            None => format!("rust pid {} on {}", std::process::id(), host_name()),
        }
    }

    /// Checks every option; [`Lease::acquire`](crate::Lease::acquire) calls this before it
    /// sends anything to the store.
    pub fn validate(&self) -> Result<(), Error>
    where
        C: Clock + Clone,
    {
        if self.name.is_empty() {
            return Err(Error::invalid("space name must not be empty".into()));
        }
        let name_length = text_length(&self.name);
        if name_length > MAX_SPACE_NAME {
            return Err(Error::invalid(format!(
                "space name has {name_length} characters (allowed 1..={MAX_SPACE_NAME})"
            )));
        }
        if self.name.contains(['{', '}']) {
            return Err(Error::invalid(format!(
                "space name '{}' must not contain '{{' or '}}' (the keys' hash tag)",
                self.name
            )));
        }
        if !TTL_RANGE_MS.contains(&self.ttl_ms) {
            return Err(Error::invalid(format!(
                "ttl_ms {} is outside {}..={}",
                self.ttl_ms,
                TTL_RANGE_MS.start(),
                TTL_RANGE_MS.end()
            )));
        }
        if self.skew_ms.saturating_mul(2) >= self.ttl_ms {
            return Err(Error::invalid(format!(
                "skew_ms {} must be below half of ttl_ms {}",
                self.skew_ms, self.ttl_ms
            )));
        }
        let live = self.ttl_ms - self.skew_ms;
        let renew = self.renew_every();
        if !(MIN_RENEW_EVERY_MS..live).contains(&renew) {
            return Err(Error::invalid(format!(
                "renew_every_ms {renew} is outside {MIN_RENEW_EVERY_MS}..={} (below ttl_ms - skew_ms)",
                live - 1
            )));
        }
        if let Some(holder) = &self.holder {
            let length = text_length(holder);
            if length > MAX_HOLDER {
                return Err(Error::invalid(format!(
                    "holder has {length} characters (allowed 0..={MAX_HOLDER})"
                )));
            }
        }
        let bits = self.layout.node_bits();
        if bits > MAX_NODE_BITS {
            return Err(Error::invalid(format!(
                "a node field of {bits} bits is too wide to lease (max {MAX_NODE_BITS} bits)"
            )));
        }
        if let Some(Region { bits: b, id }) = self.region {
            if b == 0 || b >= bits {
                return Err(Error::invalid(format!(
                    "region bits {b} is outside 1..={} (the layout's node field has {bits} bits; at least one is leased)",
                    bits.saturating_sub(1)
                )));
            }
            let max = (1u64 << b) - 1;
            if id > max {
                return Err(Error::invalid(format!(
                    "region id {id} does not fit in {b} bits (allowed 0..={max})"
                )));
            }
        }
        // The generator checks the policy (and the layout) the way it will at acquire.
        AtomicGenerator::new(self.clock.clone(), self.layout, 0, self.policy)?;
        Ok(())
    }
}

/// This machine's name, as far as the standard library and the environment tell.
fn host_name() -> String {
    let from_file = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string());
    from_file
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .or_else(|| std::env::var("COMPUTERNAME").ok())
        .unwrap_or_else(|| "unknown host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every space of the shared table records its text, capacity and node ids as the
    /// table says (the JS holder's tests read the same table).
    #[test]
    fn the_spaces_table() {
        let table: Value =
            serde_json::from_str(include_str!("../../tests/vectors/spaces.json")).expect("JSON");
        let cases = table["spaces"].as_array().expect("spaces");
        for case in cases {
            let name = case["layout"].as_str().expect("layout");
            let mut space = Space::new("ids:table", Layout::preset(name).expect("preset"));
            if let Some(r) = case.get("region") {
                let bits = r["bits"].as_u64().expect("bits");
                space = space.region(
                    u32::try_from(bits).expect("bits"),
                    r["id"].as_u64().expect("id"),
                );
            }
            let text = case["text"].as_str().expect("text");
            assert!(space.validate().is_ok(), "{text}");
            assert_eq!(space.layout_text(), text);
            assert_eq!(Some(space.capacity()), case["capacity"].as_u64(), "{text}");
            assert_eq!(Some(space.node_id(0)), case["base"].as_u64(), "{text}");
            assert_eq!(space.node_id(1), space.node_id(0) | 1, "{text}");
        }
    }
}
