//! The generator guarantees, checked after every call against what the clock read.
//!
//! 1. No ID is issued twice (issued IDs are kept as runs of slots per node).
//! 2. IDs strictly increase, except from a generator with a history ring.
//! 3. Every ID decodes to the generator's node and to a tick the clock read during the
//!    call (under `Borrow`: at most `max_ahead_ms` past one).
//! 4. Nothing at or below a resume mark once `resume_after` / `resume_after_ms` succeeded.
//! 5. An error changes no state: the next ID is still above every earlier one (2), and
//!    every error is true of what happened (the step it reports is larger than its limit
//!    and no larger than the clock's actual step, a `WouldBlock` comes from a `try_*` call,
//!    a stall from a clock that stalled).

use std::collections::{BTreeMap, BTreeSet};

use snowdrift::{Batch, Error, ErrorKind, Field, Layout, Order, Parts, Policy};

use crate::clock::Window;

/// Reads in a row without progress below which a clock has not stalled. The core gives up
/// after 2^22, which the scripted clock never reaches (a `Freeze` lasts 20,000 reads), so
/// any `ClockStalled` here fails unless the core's limit comes down to this.
const STALL: u64 = 1 << 10;

/// IDs of one batch checked one by one; longer batches are checked at both ends.
const ITERATE_UP_TO: usize = 4096;

/// What the checker knows about the generator under test.
pub struct Checker {
    pub layout: Layout,
    pub policy: Policy,
    /// Whether the generator has a history ring (its policy is then `Fail`, past the ring).
    pub history: bool,
    unit: u64,
    pub node: u64,
    pub used_nodes: BTreeSet<u64>,
    /// Per node: issued slots (`tick << sequence_bits | sequence`) as `start -> end`
    /// (exclusive) runs.
    issued: BTreeMap<u64, BTreeMap<u64, u64>>,
    /// The newest ID in issue order (current node; not kept with a history ring).
    pub last: Option<u64>,
    /// The newest tick taken or reserved by a resume (current node).
    newest_tick: Option<u64>,
    mark_id: Option<u64>,
    mark_ms: Option<u64>,
    /// How many ticks ahead of the clock a resume mark may let IDs run: the largest gap
    /// between a mark's next tick and a reading taken while it was set (current node).
    lead: u64,
    /// IDs issued so far.
    pub total: u64,
}

/// One run of consecutive slots of one tick: `len` IDs from `first`.
#[derive(Debug, Clone, Copy)]
struct Run {
    first: u64,
    len: u64,
    last: u64,
}

impl Checker {
    pub fn new(layout: Layout, policy: Policy, history: bool, node: u64) -> Self {
        Checker {
            layout,
            policy,
            history,
            unit: u64::from(layout.unit_ms()),
            node,
            used_nodes: BTreeSet::from([node]),
            issued: BTreeMap::new(),
            last: None,
            newest_tick: None,
            mark_id: None,
            mark_ms: None,
            lead: 0,
            total: 0,
        }
    }

    fn history(&self) -> bool {
        self.history
    }

    /// (tick, node, sequence) of an ID, by plain shifts, independently of `decode`.
    fn split(&self, id: u64) -> (u64, u64, u64) {
        let l = &self.layout;
        let (s, n) = (l.sequence_bits(), l.node_bits());
        assert!(
            u128::from(id) >> l.total_bits() == 0,
            "ID {id} has bits above the layout's {} ({l:?})",
            l.total_bits()
        );
        let id = u128::from(id);
        let low = id & ((1u128 << (s + n)) - 1);
        let (node, seq) = match l.order() {
            Order::NodeThenSequence => (low >> s, low & ((1 << s) - 1)),
            Order::SequenceThenNode => (low & ((1 << n) - 1), low >> n),
        };
        ((id >> (s + n)) as u64, node as u64, seq as u64)
    }

    fn slot(&self, tick: u64, seq: u64) -> u64 {
        (tick << self.layout.sequence_bits()) | seq
    }

    /// The tick a reading falls in, if the layout covers it.
    pub fn tick_of(&self, ms: u64) -> Option<u64> {
        let since = ms.checked_sub(self.layout.epoch_ms())?;
        let tick = since / self.unit;
        (tick <= self.layout.max_tick()).then_some(tick)
    }

    fn tick_start(&self, tick: u64) -> u64 {
        self.layout.epoch_ms() + tick * self.unit
    }

    /// The largest ID the current node can ever have.
    fn last_id_of_node(&self) -> u64 {
        let l = &self.layout;
        let (s, n) = (l.sequence_bits(), l.node_bits());
        let low = match l.order() {
            Order::NodeThenSequence => (self.node << s) | l.max_sequence(),
            Order::SequenceThenNode => (l.max_sequence() << n) | self.node,
        };
        (l.max_tick() << (s + n)) | low
    }

    /// Checks and records the runs one call issued, in issue order. `floor` is the ID every
    /// one of them must be above (the newest before the call, or after nested calls).
    fn record(&mut self, runs: &[Run], w: &Window, what: &str, floor: Option<u64>) {
        let mut floor = floor;
        let read: BTreeSet<u64> = w.readings.iter().filter_map(|&r| self.tick_of(r)).collect();
        for run in runs {
            let (tick, node, seq) = self.split(run.first);
            let ctx = || format!("{what}: {} ID(s) from {}", run.len, run.first);
            assert_eq!(node, self.node, "{}: wrong node", ctx());
            let parts = self.layout.decode(run.first);
            assert_eq!(
                parts,
                Ok(Parts {
                    time_ms: self.tick_start(tick),
                    node,
                    sequence: seq
                }),
                "{}: decode disagrees with the layout's fields",
                ctx()
            );
            assert!(
                seq + run.len - 1 <= self.layout.max_sequence(),
                "{}: the run passes the end of its tick",
                ctx()
            );
            let (last_tick, last_node, last_seq) = self.split(run.last);
            assert_eq!(
                (last_tick, last_node, last_seq),
                (tick, node, seq + run.len - 1),
                "{}: the last ID {} is not where the run ends",
                ctx(),
                run.last
            );
            self.check_time(tick, &read, w, &ctx());
            if let Some(mark) = self.mark_id {
                assert!(
                    run.first > mark,
                    "{}: at or below the resume mark {mark}",
                    ctx()
                );
            }
            if let Some(ms) = self.mark_ms {
                assert!(
                    self.tick_start(tick) > ms,
                    "{}: time {} is at or before the resume time {ms}",
                    ctx(),
                    self.tick_start(tick)
                );
            }
            if !self.history() {
                if let Some(f) = floor {
                    assert!(
                        run.first > f,
                        "{}: not above the newest earlier ID {f}",
                        ctx()
                    );
                }
                floor = Some(run.last);
                self.last = Some(self.last.map_or(run.last, |l| l.max(run.last)));
            }
            let start = self.slot(tick, seq);
            self.insert(start, start + run.len, &ctx());
            self.newest_tick = Some(self.newest_tick.map_or(tick, |t| t.max(tick)));
            self.total += run.len;
        }
    }

    /// Adds slots `start..end` of the current node, failing if any was issued before.
    fn insert(&mut self, start: u64, end: u64, ctx: &str) {
        let runs = self.issued.entry(self.node).or_default();
        if let Some((&s, &e)) = runs.range(..=start).next_back() {
            assert!(
                e <= start,
                "{ctx}: ID issued twice (slots {start}..{end} overlap {s}..{e} issued before)"
            );
        }
        if let Some((&s, &e)) = runs.range(start..).next() {
            assert!(
                s >= end,
                "{ctx}: ID issued twice (slots {start}..{end} overlap {s}..{e} issued before)"
            );
        }
        let (mut start, mut end) = (start, end);
        if let Some((&s, &e)) = runs.range(..start).next_back()
            && e == start
        {
            runs.remove(&s);
            start = s;
        }
        if let Some(e) = runs.remove(&end) {
            end = e;
        }
        runs.insert(start, end);
    }

    /// The tick of an ID must be one the clock read during the call (under Borrow, at most
    /// `max_ahead_ms` after one).
    fn check_time(&self, tick: u64, read: &BTreeSet<u64>, w: &Window, ctx: &str) {
        let ahead = match self.policy {
            // start(tick) - reading <= max_ahead_ms, the reading anywhere in its own tick
            Policy::Borrow { max_ahead_ms } => u64::from(max_ahead_ms).div_ceil(self.unit),
            _ => 0,
        } + self.lead;
        let ok = read
            .range(tick.saturating_sub(ahead)..=tick)
            .next()
            .is_some();
        assert!(
            ok,
            "{ctx}: tick {tick} (ms {}) is not one the clock read, within {ahead} tick(s) \
             ahead (readings {:?})",
            self.tick_start(tick),
            shorten(&w.readings)
        );
    }

    /// A single ID.
    pub fn id(&mut self, id: u64, w: &Window, what: &str, floor: Option<u64>) {
        let run = Run {
            first: id,
            len: 1,
            last: id,
        };
        self.record(&[run], w, what, floor);
    }

    /// A batch asked for with `n`.
    pub fn batch(&mut self, n: u32, batch: Batch, w: &Window, what: &str, floor: Option<u64>) {
        let len = batch.len();
        let step = match self.layout.order() {
            Order::NodeThenSequence => 1,
            Order::SequenceThenNode => 1u64 << self.layout.node_bits(),
        };
        if n == 0 {
            assert_eq!(len, 0, "{what}: a batch of 0 has IDs");
            return;
        }
        assert!(
            (1..=n as usize).contains(&len),
            "{what}: {len} IDs for a batch of {n}"
        );
        assert_eq!(batch.step(), step, "{what}: step between IDs");
        let first = batch.first();
        let expect = |i: usize| u128::from(first) + i as u128 * u128::from(step);
        let last = batch
            .get(len - 1)
            .unwrap_or_else(|| panic!("{what}: no ID {}", len - 1));
        assert_eq!(u128::from(last), expect(len - 1), "{what}: the last ID");
        assert_eq!(batch.get(len), None, "{what}: an ID past the end");
        let mut buf = [0u64; 64];
        let written = batch.write_to(&mut buf);
        assert_eq!(written, len.min(64), "{what}: write_to");
        for (i, &id) in buf[..written].iter().enumerate() {
            assert_eq!(u128::from(id), expect(i), "{what}: write_to, ID {i}");
        }
        if len <= ITERATE_UP_TO {
            let ids: Vec<u64> = batch.collect();
            assert_eq!(ids.len(), len, "{what}: the iterator's length");
            for (i, &id) in ids.iter().enumerate() {
                assert_eq!(u128::from(id), expect(i), "{what}: iterator, ID {i}");
            }
        }
        let run = Run {
            first,
            len: len as u64,
            last,
        };
        self.record(&[run], w, what, floor);
    }

    /// The IDs `fill` wrote into a buffer of `want`.
    pub fn fill(
        &mut self,
        want: usize,
        result: Result<usize, Error>,
        out: &[u64],
        w: &Window,
        floor: Option<u64>,
    ) {
        let what = format!("fill({want})");
        let n = match result {
            Ok(n) => n,
            Err(e) => {
                assert!(want > 0, "{what}: error {e:?} for an empty buffer");
                return self.error(e, false, w, &what);
            }
        };
        assert!(n <= want && (n > 0 || want == 0), "{what}: wrote {n} IDs");
        assert!(
            out[n..].iter().all(|&x| x == 0),
            "{what}: wrote past the {n} IDs it reported"
        );
        let step = match self.layout.order() {
            Order::NodeThenSequence => 1,
            Order::SequenceThenNode => 1u64 << self.layout.node_bits(),
        };
        let mut runs: Vec<Run> = Vec::new();
        for &id in &out[..n] {
            match runs.last_mut() {
                Some(r)
                    if id.checked_sub(r.last) == Some(step)
                        && self.split(id).0 == self.split(r.last).0 =>
                {
                    r.last = id;
                    r.len += 1;
                }
                _ => runs.push(Run {
                    first: id,
                    len: 1,
                    last: id,
                }),
            }
        }
        self.record(&runs, w, &what, floor);
    }

    /// An error from a call that takes IDs.
    pub fn error(&self, e: Error, try_call: bool, w: &Window, what: &str) {
        let ctx = || {
            format!(
                "{what} under {:?}: {e:?} (\"{e}\"), newest tick {:?}, readings {:?}",
                self.policy,
                self.newest_tick,
                shorten(&w.readings)
            )
        };
        // A reported step (in ms) must be no larger than the distance from the end of the
        // newest tick used (plus `slack` ticks) down to the lowest reading.
        let step_back = |ms: u64, slack: u64| {
            let (Some(newest), Some(low)) = (self.newest_tick, w.readings.iter().min()) else {
                panic!("{}: a step back with no tick used or read", ctx())
            };
            assert!(
                ms <= self.tick_start(newest + 1 + slack).saturating_sub(*low),
                "{}: larger than the clock's step",
                ctx()
            );
        };
        let n = |v: Option<u64>| v.unwrap_or_else(|| panic!("{}: a number is missing", ctx()));
        match e.kind() {
            ErrorKind::WouldBlock => {
                assert!(try_call, "{}: a blocking call said WouldBlock", ctx())
            }
            ErrorKind::ClockBackwards => {
                let (by_ms, limit_ms) = (n(e.behind_ms()), n(e.limit_ms()));
                assert!(by_ms > limit_ms, "{}: the step is within its limit", ctx());
                match self.policy {
                    _ if self.history => {}
                    Policy::Fail => assert_eq!(limit_ms, 0, "{}", ctx()),
                    Policy::Wait { max_wait_ms } => {
                        assert_eq!(limit_ms, u64::from(max_wait_ms), "{}", ctx())
                    }
                    _ => panic!("{}: not an error of this policy", ctx()),
                }
                step_back(by_ms, 0);
            }
            ErrorKind::SwitchNode => {
                let by_ms = n(e.behind_ms());
                assert_eq!(self.policy, Policy::SwitchNode, "{}", ctx());
                assert!(by_ms > 0, "{}: a step of 0", ctx());
                step_back(by_ms, 0);
            }
            ErrorKind::TooFarAhead => {
                let (ahead_ms, limit_ms) = (n(e.ahead_ms()), n(e.limit_ms()));
                let Policy::Borrow { max_ahead_ms } = self.policy else {
                    panic!("{}: not an error of this policy", ctx())
                };
                assert_eq!(limit_ms, u64::from(max_ahead_ms), "{}", ctx());
                // Within the bound, the ID is taken; a wait that runs out leaves it
                // past the bound still (and a resume mark's lead may let it run further).
                assert!(ahead_ms > limit_ms, "{}: within the bound", ctx());
                step_back(ahead_ms, 1);
            }
            ErrorKind::OutOfRange => {
                let l = &self.layout;
                let value = n(e.value());
                assert_eq!(
                    (e.field(), e.min(), e.max()),
                    (Some(Field::Time), Some(l.epoch_ms()), Some(l.last_ms())),
                    "{}",
                    ctx()
                );
                let outside = w.readings.iter().any(|&m| self.tick_of(m).is_none());
                let used_up = self.newest_tick.is_some_and(|t| t >= l.max_tick());
                assert!(
                    outside || used_up,
                    "{}: every reading is in range and the time field is not used up",
                    ctx()
                );
                assert!(
                    w.readings.contains(&value) && self.tick_of(value).is_none()
                        || value == l.exhausts_at(),
                    "{}: the time in the error was not read",
                    ctx()
                );
            }
            ErrorKind::ClockStalled => {
                let at_ms = n(e.time_ms());
                assert!(!try_call, "{}: a try call waited", ctx());
                assert!(
                    w.longest_stall >= STALL,
                    "{}: the clock did not stall (longest run without progress: {} reads)",
                    ctx(),
                    w.longest_stall
                );
                assert!(w.readings.contains(&at_ms), "{}: never read", ctx());
            }
            _ => panic!("{}: not an error of this call", ctx()),
        }
    }

    /// Records a mark whose next free tick is `tick`, set while the clock read `readings`.
    fn raise(&mut self, tick: u64, readings: &[u64]) {
        self.newest_tick = Some(self.newest_tick.map_or(tick, |t| t.max(tick)));
        if let Some(low) = readings.iter().filter_map(|&m| self.tick_of(m)).min() {
            self.lead = self.lead.max(tick.saturating_sub(low));
        }
    }

    /// `resume_after(id)`: refused exactly when no ID of this node lies above `id`, naming
    /// the largest mark that leaves room.
    pub fn resume_after(&mut self, id: u64, result: Result<(), Error>, readings: &[u64]) {
        let l = self.layout;
        let top = self.last_id_of_node();
        match result {
            Ok(()) => {
                assert!(
                    id < top,
                    "resume_after({id}) accepted, but no ID of node {} is above it",
                    self.node
                );
                self.mark_id = Some(self.mark_id.map_or(id, |m| m.max(id)));
                let tick = self.split(id).0 + 1;
                self.raise(tick, readings);
            }
            Err(r) if r.kind() == ErrorKind::OutOfRange => assert!(
                id > l.max_id() && refers(&r, Field::Id, id, l.max_id()),
                "resume_after({id}): {r:?}"
            ),
            Err(r) if r.kind() == ErrorKind::ResumeOutOfRange => assert!(
                id <= l.max_id() && id >= top && refers(&r, Field::Id, id, top - 1),
                "resume_after({id}): {r:?} though ID {top} of node {} is above it",
                self.node
            ),
            Err(e) => panic!("resume_after({id}): {e:?}"),
        }
    }

    /// `resume_after_ms(ms)`: refused exactly when `ms` is in the layout's last tick or
    /// later, naming it and the last millisecond before that tick.
    pub fn resume_after_ms(&mut self, ms: u64, result: Result<(), Error>, readings: &[u64]) {
        let last = self.layout.last_ms();
        match result {
            Ok(()) => {
                assert!(
                    ms < last,
                    "resume_after_ms({ms}) accepted, but no tick follows it (last {last})"
                );
                self.mark_ms = Some(self.mark_ms.map_or(ms, |m| m.max(ms)));
                if let Some(t) = self.tick_of(ms) {
                    self.raise(t + 1, readings);
                }
            }
            Err(r) if r.kind() == ErrorKind::ResumeOutOfRange => assert!(
                ms >= last && refers(&r, Field::Time, ms, last - 1),
                "resume_after_ms({ms}): {r:?} (last tick starts at {last})"
            ),
            Err(e) => panic!("resume_after_ms({ms}): {e:?}"),
        }
    }

    /// `switch_node(node)`; `now` is the node the generator reports afterwards.
    pub fn switch_node(&mut self, node: u64, result: Result<(), Error>, now: u64) {
        let max = self.layout.max_node();
        match result {
            Ok(()) => {
                assert!(node <= max, "switch_node({node}) accepted (max {max})");
                assert_eq!(now, node, "switch_node({node}): node() afterwards");
                if node != self.node {
                    self.node = node;
                    self.used_nodes.insert(node);
                    self.last = None;
                    self.newest_tick = None;
                    self.mark_id = None;
                    self.mark_ms = None;
                    self.lead = 0;
                }
            }
            Err(e) if e.kind() == ErrorKind::SameNode => {
                assert_eq!(
                    e.value(),
                    Some(node),
                    "switch_node({node}): names another node"
                );
                assert_eq!(node, self.node, "switch_node({node}): not the node held");
                assert_eq!(now, self.node, "switch_node({node}) failed but moved");
            }
            Err(r) if r.kind() == ErrorKind::OutOfRange => {
                assert!(
                    node > max && refers(&r, Field::Node, node, max),
                    "switch_node({node}): {r:?}"
                );
                assert_eq!(now, self.node, "switch_node({node}) failed but moved");
            }
            Err(e) => panic!("switch_node({node}): {e:?}"),
        }
    }
}

/// Whether `e` names `value` of `field` and the largest allowed, `max`.
pub fn refers(e: &Error, field: Field, value: u64, max: u64) -> bool {
    (e.field(), e.value(), e.max()) == (Some(field), Some(value), Some(max))
}

/// The first and last few readings, for messages.
fn shorten(r: &[u64]) -> String {
    if r.len() <= 12 {
        format!("{r:?}")
    } else {
        format!(
            "{:?} .. {:?} ({} in all)",
            &r[..6],
            &r[r.len() - 6..],
            r.len()
        )
    }
}
