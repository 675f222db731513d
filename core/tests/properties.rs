//! Property tests: encode/decode and text round trips over every preset and random
//! layouts, and the generator invariants under random clock walks (jitter, steps back from
//! 1 ms to 2 h, frozen stretches, jumps ahead) for every policy.

// In wasm32 (wasm/core-tests) the tests run under wasm-bindgen-test.
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;

use std::cell::{Cell, RefCell};
use std::collections::HashSet;

use proptest::prelude::*;
#[cfg(feature = "atomic")]
use snowdrift::AtomicGenerator;
use snowdrift::text::{self, Format};
use snowdrift::{Clock, Error, ErrorKind, Generator, IdGenerator, Layout, Order, Parts, Policy};

fn any_layout() -> impl Strategy<Value = Layout> {
    let presets =
        proptest::sample::select(Layout::PRESETS.iter().map(|(_, l)| *l).collect::<Vec<_>>());
    let custom = (
        1u32..=44,
        0u32..=8,
        0u32..=12,
        1u32..=22,
        1u32..=1000,
        0u64..=2_000_000_000_000,
        any::<bool>(),
    )
        .prop_filter_map("valid layout", |(t, d, w, s, unit, epoch, seq_first)| {
            let order = if seq_first {
                Order::SequenceThenNode
            } else {
                Order::NodeThenSequence
            };
            Layout::builder()
                .time_bits(t)
                .datacenter_bits(d)
                .worker_bits(w)
                .sequence_bits(s)
                .unit_ms(unit)
                .epoch_ms(epoch)
                .order(order)
                .build()
                .ok()
        });
    prop_oneof![presets, custom]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn compose_then_decode_gives_the_parts_back(l in any_layout(), t in any::<u64>(), n in any::<u64>(), s in any::<u64>()) {
        let tick = t % (l.max_tick() + 1);
        let parts = Parts {
            time_ms: l.epoch_ms() + tick * u64::from(l.unit_ms()),
            node: n & l.max_node(),
            sequence: s & l.max_sequence(),
        };
        let id = l.compose(parts).unwrap();
        prop_assert!(id <= l.max_id());
        prop_assert_eq!(l.decode(id), Ok(parts));
        prop_assert!(l.min_id_at(parts.time_ms).unwrap() <= id && id <= l.max_id_at(parts.time_ms).unwrap());
        prop_assert_eq!(l.node_from(l.datacenter_of(parts.node), l.worker_of(parts.node)), Ok(parts.node));
    }

    #[test]
    fn decode_then_compose_gives_the_id_back(l in any_layout(), raw in any::<u64>()) {
        let id = raw & l.max_id();
        prop_assert_eq!(l.compose(l.decode(id).unwrap()), Ok(id));
        if raw > l.max_id() {
            prop_assert!(l.decode(raw).is_err());
        }
    }

    #[test]
    fn text_forms_round_trip_and_sort(a in any::<u64>(), b in any::<u64>()) {
        for form in Format::ALL {
            prop_assert_eq!(text::parse(&text::format(a, form), form), Ok(a));
        }
        for form in [Format::Hex, Format::Base32, Format::Base62] {
            prop_assert_eq!(a.cmp(&b), text::format(a, form).as_str().cmp(text::format(b, form).as_str()));
        }
    }

    #[test]
    fn parsing_arbitrary_text_never_panics(s in "\\PC{0,24}") {
        for form in Format::ALL {
            if let Ok(v) = text::parse(&s, form) {
                // Whatever parses formats back to an equivalent text.
                prop_assert_eq!(text::parse(&text::format(v, form), form), Ok(v));
            }
        }
    }
}

/// A clock that plays back a script of readings, then moves 1 ms per read.
struct Walk {
    readings: Vec<u64>,
    end: u64,
    at: Cell<usize>,
    log: RefCell<Vec<u64>>,
}

impl Clock for Walk {
    fn now_ms(&self) -> u64 {
        let i = self.at.get();
        self.at.set(i + 1);
        let r = match self.readings.get(i) {
            Some(&r) => r,
            None => self.end + (i - self.readings.len()) as u64,
        };
        self.log.borrow_mut().push(r);
        r
    }
}

#[derive(Debug, Clone)]
enum Segment {
    Steady { reads: u16, step: u8 },
    Jitter { reads: u16, spread: u8 },
    Back(u64),
    Frozen(u16),
    Ahead(u64),
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        4 => (1u16..400, 0u8..3).prop_map(|(reads, step)| Segment::Steady { reads, step }),
        2 => (1u16..200, 1u8..20).prop_map(|(reads, spread)| Segment::Jitter { reads, spread }),
        2 => prop_oneof![1u64..20, 20u64..5_000, 5_000u64..=7_200_000].prop_map(Segment::Back),
        1 => (1u16..600).prop_map(Segment::Frozen),
        1 => (1u64..100_000).prop_map(Segment::Ahead),
    ]
}

fn walk(start: u64, segments: &[Segment]) -> Walk {
    let mut now = start;
    let mut out = Vec::new();
    let mut noise = 0x9e37_79b9_7f4a_7c15u64;
    for seg in segments {
        match *seg {
            Segment::Steady { reads, step } => {
                for _ in 0..reads {
                    out.push(now);
                    now += u64::from(step);
                }
            }
            Segment::Jitter { reads, spread } => {
                for _ in 0..reads {
                    noise ^= noise << 13;
                    noise ^= noise >> 7;
                    noise ^= noise << 17;
                    let off = noise % (2 * u64::from(spread) + 1);
                    out.push(now + off - u64::from(spread));
                    now += 1;
                }
            }
            Segment::Back(ms) => now -= ms,
            Segment::Frozen(reads) => out.extend(std::iter::repeat_n(now, reads.into())),
            Segment::Ahead(ms) => now += ms,
        }
    }
    Walk {
        readings: out,
        end: now,
        at: Cell::new(0),
        log: RefCell::new(Vec::new()),
    }
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Next,
    TryNext,
    Batch(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![6 => Just(Op::Next), 2 => Just(Op::TryNext), 2 => (1u32..9).prop_map(Op::Batch)]
}

/// A policy, or `None` for a generator with a history ring.
fn policy() -> impl Strategy<Value = Option<Policy>> {
    prop_oneof![
        Just(Some(Policy::Fail)),
        (0u32..60).prop_map(|max_wait_ms| Some(Policy::Wait { max_wait_ms })),
        (0u32..5_000).prop_map(|max_ahead_ms| Some(Policy::Borrow { max_ahead_ms })),
        Just(None),
        Just(Some(Policy::SwitchNode)),
    ]
}

/// Layouts small enough to run out of sequence numbers often.
fn walk_layout() -> impl Strategy<Value = Layout> {
    (1u32..=5, prop_oneof![Just(1u32), Just(10)], any::<bool>()).prop_map(|(s, unit, seq_first)| {
        let order = if seq_first {
            Order::SequenceThenNode
        } else {
            Order::NodeThenSequence
        };
        Layout::builder()
            .time_bits(38)
            .node_bits(6)
            .sequence_bits(s)
            .unit_ms(unit)
            .epoch_ms(1_600_000_000_000)
            .order(order)
            .build()
            .unwrap()
    })
}

/// Every kind of generator (the one with a ring is told apart to switch nodes).
enum AnyGen<'a> {
    Plain(Generator<&'a Walk>),
    History(Generator<&'a Walk, 8>),
    #[cfg(feature = "atomic")]
    Atomic(AtomicGenerator<&'a Walk>),
}

impl AnyGen<'_> {
    fn call(&mut self, op: Op) -> Result<Vec<u64>, Error> {
        macro_rules! on {
            ($g:expr) => {
                match op {
                    Op::Next => $g.next().map(|id| vec![id]),
                    Op::TryNext => $g.try_next().map(|id| vec![id]),
                    Op::Batch(n) => $g.next_batch(n).map(|b| b.collect()),
                }
            };
        }
        match self {
            AnyGen::Plain(g) => on!(g),
            AnyGen::History(g) => on!(g),
            #[cfg(feature = "atomic")]
            AnyGen::Atomic(g) => on!(g),
        }
    }
}

fn is_shared(generator: &AnyGen<'_>) -> bool {
    #[cfg(feature = "atomic")]
    if let AnyGen::Atomic(_) = generator {
        return true;
    }
    let _ = generator;
    false
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn generators_never_repeat_never_go_back_and_never_wait_past_the_bound(
        layout in walk_layout(),
        policy in policy(),
        segments in prop::collection::vec(segment(), 1..24),
        ops in prop::collection::vec(op(), 1..300),
        shared in any::<bool>(),
    ) {
        let start = layout.epoch_ms() + 30 * 86_400_000;
        let clock = walk(start, &segments);
        let unit = u64::from(layout.unit_ms());
        let mut node = 1u64;
        let _ = shared; // the shared generator needs the `atomic` feature
        let mut generator = match policy {
            None => AnyGen::History(Generator::<_, 8>::with_history(&clock, layout, node).unwrap()),
            #[cfg(feature = "atomic")]
            Some(p) if shared && p != Policy::SwitchNode => AnyGen::Atomic(AtomicGenerator::new(&clock, layout, node, p).unwrap()),
            Some(p) => AnyGen::Plain(Generator::new(&clock, layout, node, p).unwrap()),
        };
        let mut seen = HashSet::new();
        let mut last: Option<u64> = None;
        let mut high = 0u64;
        for op in ops {
            clock.log.borrow_mut().clear();
            let result = generator.call(op);
            let log = clock.log.borrow().clone();
            // Bounded waiting: readings before the last stay within what the policy allows.
            // `high` is the end of the newest tick used: a used-up tick is waited out while
            // the clock is inside it; a clock behind is waited for up to the policy's limit
            // from the call's first reading; Borrow never waits.
            if let Some((&last_read, before)) = log.split_last() {
                let bound = match policy {
                    Some(Policy::Wait { max_wait_ms }) => (log[0] + u64::from(max_wait_ms) + unit - 1).max(high.saturating_sub(1)),
                    None => (log[0] + 9 * unit).max(high.saturating_sub(1)), // ring of 8
                    _ => high.saturating_sub(1),
                };
                prop_assert!(
                    before.iter().all(|&r| r <= bound),
                    "waited past {} ms: {:?}", bound, &log[..log.len().min(20)]
                );
                if matches!(op, Op::TryNext) {
                    // The shared generator confirms a step back with one more reading.
                    let reads = if is_shared(&generator) { 2 } else { 1 };
                    prop_assert!(log.len() <= reads, "try_next read the clock {} times", log.len());
                }
                match result {
                    Ok(ids) => {
                        prop_assert!(!ids.is_empty());
                        for id in ids {
                            prop_assert!(seen.insert(id), "duplicate {} under {:?}", id, policy);
                            let p = layout.decode(id).unwrap();
                            prop_assert_eq!(p.node, node);
                            high = high.max(p.time_ms + unit);
                            let id_tick = (p.time_ms - layout.epoch_ms()) / unit;
                            let now_tick = layout.tick_at(last_read).unwrap();
                            match policy {
                                Some(Policy::Borrow { max_ahead_ms }) => {
                                    // Measured from the newest reading the call made.
                                    let newest = log.iter().copied().max().unwrap_or(last_read);
                                    prop_assert!(p.time_ms.saturating_sub(newest) <= u64::from(max_ahead_ms), "ID {} ms ahead", p.time_ms - newest);
                                }
                                _ => prop_assert!(id_tick <= now_tick, "ID ahead of the clock"),
                            }
                            if policy.is_some() {
                                prop_assert!(last.is_none_or(|l| id > l), "not increasing under {:?}", policy);
                                last = Some(id);
                            }
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::SwitchNode => {
                        prop_assert_eq!(policy, Some(Policy::SwitchNode));
                        node += 1;
                        if node > layout.max_node() {
                            break; // every node id used once: a real fleet would lease another
                        }
                        if let AnyGen::Plain(g) = &mut generator { g.switch_node(node, 0).unwrap(); }
                        (last, high) = (None, 0);
                    }
                    Err(e) if e.kind() == ErrorKind::TooFarAhead => {
                        prop_assert!(matches!(policy, Some(Policy::Borrow { .. })), "TooFarAhead under {:?}", policy);
                        prop_assert!(e.ahead_ms() > e.limit_ms(), "{}", e);
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => prop_assert!(!matches!(op, Op::Next | Op::Batch(_))),
                    Err(e) if e.kind() == ErrorKind::ClockBackwards => {
                        prop_assert!(matches!(policy, Some(Policy::Fail | Policy::Wait { .. }) | None), "ClockBackwards under {:?}", policy);
                        prop_assert!(e.behind_ms() > e.limit_ms(), "{}", e);
                    }
                    Err(e) => prop_assert!(false, "unexpected error {e:?}"),
                }
            }
        }
    }
}
