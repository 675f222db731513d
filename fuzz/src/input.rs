//! The structured fuzz input of the generator targets: a layout, a node, a policy, where
//! the clock starts, the clock's script and the calls.

use arbitrary::Arbitrary;
use snowdrift::{Layout, Order, Policy};

use crate::clock::Step;

#[derive(Arbitrary, Debug)]
pub struct Input {
    pub layout: LayoutPick,
    pub node: NodeStart,
    pub policy: PolicyPick,
    pub start: StartPick,
    pub script: Vec<Step>,
    pub calls: Vec<Call>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum LayoutPick {
    Preset(u8),
    Custom {
        time: u8,
        node: u8,
        datacenter: u8,
        sequence: u8,
        sequence_first: bool,
        unit: UnitPick,
        epoch: u64,
    },
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum UnitPick {
    Ms,
    TenMs,
    Second,
    Other(u16),
}

impl LayoutPick {
    /// A valid layout: a preset, or builder fields reduced into the valid ranges (which
    /// the builder must then accept).
    pub fn layout(self) -> Layout {
        let LayoutPick::Custom {
            time,
            node,
            datacenter,
            sequence,
            sequence_first,
            unit,
            epoch,
        } = self
        else {
            let LayoutPick::Preset(i) = self else {
                unreachable!()
            };
            return Layout::PRESETS[usize::from(i) % Layout::PRESETS.len()].1;
        };
        let sequence = 1 + u32::from(sequence) % 32;
        let time = 1 + u32::from(time) % (63 - sequence);
        let node = u32::from(node) % (65 - time - sequence);
        let datacenter = u32::from(datacenter) % (node + 1);
        let unit = match unit {
            UnitPick::Ms => 1,
            UnitPick::TenMs => 10,
            UnitPick::Second => 1000,
            UnitPick::Other(u) => u32::from(u).max(1),
        };
        let last_tick = (1u128 << time) - 1;
        let unit = if last_tick * u128::from(unit) > i64::MAX as u128 {
            1
        } else {
            unit
        };
        let span = last_tick * u128::from(unit);
        let epoch = (u128::from(epoch) % (i64::MAX as u128 - span + 1)) as u64;
        let builder = Layout::builder()
            .time_bits(time)
            .datacenter_bits(datacenter)
            .worker_bits(node - datacenter)
            .sequence_bits(sequence)
            .order(if sequence_first {
                Order::SequenceThenNode
            } else {
                Order::NodeThenSequence
            })
            .unit_ms(unit)
            .epoch_ms(epoch);
        match builder.build() {
            Ok(layout) => layout,
            Err(e) => panic!("a valid layout was rejected ({e}): {builder:?}"),
        }
    }
}

/// The generator's node: one that fits, or any number (the constructor must refuse one
/// that does not fit).
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum NodeStart {
    Fits(u64),
    Any(u64),
}

impl NodeStart {
    pub fn node(self, layout: &Layout) -> u64 {
        match self {
            NodeStart::Fits(n) => n % (u128::from(layout.max_node()) + 1) as u64,
            NodeStart::Any(n) => n,
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum PolicyPick {
    Fail,
    Wait(u32),
    Borrow(u32),
    SwitchNode,
    History(u8),
}

impl PolicyPick {
    pub fn policy(self) -> Policy {
        match self {
            PolicyPick::Fail => Policy::Fail,
            PolicyPick::Wait(ms) => Policy::Wait { max_wait_ms: ms },
            PolicyPick::Borrow(ms) => Policy::Borrow { max_ahead_ms: ms },
            PolicyPick::SwitchNode => Policy::SwitchNode,
            // Past its ring, a generator with a history ring fails as under `Fail`.
            PolicyPick::History(_) => Policy::Fail,
        }
    }
}

/// Where the clock starts, relative to the layout's time range.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum StartPick {
    NearEpoch(u16),
    NearEnd(u16),
    Within(u64),
    BeforeEpoch(u16),
}

impl StartPick {
    pub fn ms(self, layout: &Layout) -> u64 {
        let (epoch, end) = (layout.epoch_ms(), layout.exhausts_at());
        match self {
            StartPick::NearEpoch(d) => epoch + u64::from(d),
            StartPick::NearEnd(d) => end.saturating_sub(1 + u64::from(d)).max(epoch),
            StartPick::Within(x) => epoch + x % (end - epoch),
            StartPick::BeforeEpoch(d) => epoch.saturating_sub(1 + u64::from(d)),
        }
    }
}

/// One call of the script.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Call {
    Next,
    TryNext,
    Batch(u32),
    TryBatch(u32),
    /// Fills a buffer of this many IDs (taken modulo 4097).
    Fill(u16),
    ResumeAfter(IdPick),
    ResumeAfterMs(MsPick),
    SwitchNode(NodePick),
}

/// A high-water mark for `resume_after`.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum IdPick {
    Raw(u64),
    /// The newest ID issued, moved by this much.
    NearNewest(i16),
    /// An ID of any node, near the clock's current tick.
    NearClock {
        ticks: i16,
        node: u64,
        sequence: u32,
    },
}

/// A time for `resume_after_ms`.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum MsPick {
    Raw(u64),
    NearClock(i32),
}

/// The node for `switch_node`.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum NodePick {
    Same,
    /// The first node not used yet, counting from this one.
    Fresh(u64),
    Any(u64),
}
