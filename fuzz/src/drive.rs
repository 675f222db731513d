//! Runs a scripted sequence of calls on a generator and checks each outcome.

use std::cell::RefCell;

use snowdrift::{
    AtomicGenerator, Batch, Clock, Error, ErrorKind, Field, Generator, IdGenerator, Layout,
};

use crate::check::{Checker, refers};
use crate::clock::{Interrupt, Nested, ScriptClock, Window};
use crate::input::{Call, IdPick, Input, MsPick, NodePick, PolicyPick};
use crate::model::{Expect, Model};

/// Calls per run, and IDs per run past which the remaining calls are skipped: enough to
/// use up ticks and rings, small enough for thousands of runs a second.
const MAX_CALLS: usize = 256;
const MAX_IDS: u64 = 200_000;

/// What the driver needs beyond the core's [`IdGenerator`]: moving to another node id.
pub trait Subject: IdGenerator {
    /// `None` where the generator has no `switch_node` (the atomic one: a new generator is
    /// built instead, and a node of its own keeps its IDs apart by construction).
    fn switch_node(&mut self, node: u64) -> Option<Result<(), Error>>;
}

impl<C: Clock, const H: usize> Subject for Generator<C, H> {
    fn switch_node(&mut self, node: u64) -> Option<Result<(), Error>> {
        Some(Generator::switch_node(self, node, 0))
    }
}

impl<C: Clock> Subject for &AtomicGenerator<C> {
    fn switch_node(&mut self, _node: u64) -> Option<Result<(), Error>> {
        None
    }
}

/// A constructor's result: a node that does not fit must be refused, naming it.
fn made<G>(result: Result<G, Error>, layout: &Layout, node: u64) -> Option<G> {
    let max = layout.max_node();
    match result {
        Ok(g) => {
            assert!(node <= max, "node {node} accepted (max {max})");
            Some(g)
        }
        Err(r) if r.kind() == ErrorKind::OutOfRange => {
            assert!(
                node > max && refers(&r, Field::Node, node, max),
                "node {node} refused with {r:?}"
            );
            None
        }
        Err(e) => panic!("constructor for node {node}: {e:?}"),
    }
}

/// The `Generator` target: every policy, and history rings of 1, 2 and 8 ticks.
pub fn generator(input: Input) {
    let layout = input.layout.layout();
    let node = input.node.node(&layout);
    let clock = ScriptClock::new(input.start.ms(&layout), input.script);
    let policy = input.policy.policy();
    let history = matches!(input.policy, PolicyPick::History(_));
    let mut checker = Checker::new(layout, policy, history, node);
    let calls = &input.calls;
    match input.policy {
        PolicyPick::History(ring) => match ring % 3 {
            0 => {
                let g = Generator::<_, 1>::with_history(&clock, layout, node);
                if let Some(g) = made(g, &layout, node) {
                    drive(g, &clock, &mut checker, calls, None, None);
                }
            }
            1 => {
                let g = Generator::<_, 2>::with_history(&clock, layout, node);
                if let Some(g) = made(g, &layout, node) {
                    drive(g, &clock, &mut checker, calls, None, None);
                }
            }
            _ => {
                let g = Generator::<_, 8>::with_history(&clock, layout, node);
                if let Some(g) = made(g, &layout, node) {
                    drive(g, &clock, &mut checker, calls, None, None);
                }
            }
        },
        _ => {
            let g = Generator::new(&clock, layout, node, policy);
            if let Some(g) = made(g, &layout, node) {
                let model = Model::new(layout, policy, false, node);
                drive(g, &clock, &mut checker, calls, None, Some(model));
            }
        }
    }
}

/// The `AtomicGenerator` target: every policy (a history ring is the single-owner
/// generator's alone), with interrupt handlers that take IDs in the middle of a clock
/// reading.
pub fn atomic(input: Input) {
    let layout = input.layout.layout();
    let node = input.node.node(&layout);
    let clock = ScriptClock::new(input.start.ms(&layout), input.script);
    if let PolicyPick::History(_) = input.policy {
        return;
    }
    let policy = input.policy.policy();
    let Some(generator) = made(
        AtomicGenerator::new(&clock, layout, node, policy),
        &layout,
        node,
    ) else {
        return;
    };
    let handler = Handler {
        generator: &generator,
        clock: &clock,
        done: RefCell::new(Vec::new()),
    };
    clock.set_interrupt(&handler);
    let mut checker = Checker::new(layout, policy, false, node);
    drive(
        &generator,
        &clock,
        &mut checker,
        &input.calls,
        Some(&handler),
        Some(Model::new(layout, policy, true, node)),
    );
}

/// What a nested call returned.
enum NestedResult {
    Id(Result<u64, Error>),
    Batch(u32, Result<Batch, Error>),
}

/// An interrupt handler sharing the atomic generator with the code it interrupts.
struct Handler<'a> {
    generator: &'a AtomicGenerator<&'a ScriptClock<'a>>,
    clock: &'a ScriptClock<'a>,
    done: RefCell<Vec<(Nested, NestedResult, Window)>>,
}

impl Interrupt for Handler<'_> {
    fn fire(&self, call: Nested) {
        self.clock.open();
        let result = match call {
            Nested::TryNext => NestedResult::Id(self.generator.try_next()),
            Nested::Next => NestedResult::Id(self.generator.next()),
            Nested::TryBatch(n) => {
                let n = u32::from(n);
                NestedResult::Batch(n, self.generator.try_next_batch(n))
            }
        };
        let window = self.clock.close();
        self.done.borrow_mut().push((call, result, window));
    }
}

/// Runs the calls, checking each outcome (and those of interrupts nested in it, which
/// completed before it), and each against the model's prediction until an interrupt
/// changes the generator behind the model's back.
fn drive<S: Subject>(
    mut generator: S,
    clock: &ScriptClock,
    checker: &mut Checker,
    calls: &[Call],
    handler: Option<&Handler>,
    mut model: Option<Model>,
) {
    for &call in calls.iter().take(MAX_CALLS) {
        if checker.total > MAX_IDS {
            break;
        }
        let before = checker.last;
        clock.open();
        let outcome = perform(&mut generator, call, clock, checker);
        let w = clock.close();
        if w.interrupts > 0 {
            model = None;
        }
        if let Some(m) = model.as_mut() {
            predicted(m, call, &outcome, &w, generator.node());
        }
        let nested = handler.map(|h| std::mem::take(&mut *h.done.borrow_mut()));
        // Interrupts completed before the call's last step, so their IDs are below its
        // IDs. A fill that wrote IDs took several steps, and interrupts may have come
        // between them: it is checked first, and the interrupts' IDs only against what
        // came before the call.
        if let Outcome::Fill(Ok(_), _) = outcome {
            check_outcome(&generator, call, outcome, &w, checker, before);
            check_nested(nested.unwrap_or_default(), checker, before);
        } else {
            let floor = checker.last;
            check_nested(nested.unwrap_or_default(), checker, floor);
            check_outcome(&generator, call, outcome, &w, checker, before);
        }
    }
}

/// The interrupts' results, in the order they completed, each above `floor` and the
/// interrupts before it.
fn check_nested(
    done: Vec<(Nested, NestedResult, Window)>,
    checker: &mut Checker,
    floor: Option<u64>,
) {
    let mut floor = floor;
    for (nested, result, nw) in done {
        let what = format!("interrupt {nested:?}");
        let try_call = !matches!(nested, Nested::Next);
        match result {
            NestedResult::Id(Ok(id)) => {
                checker.id(id, &nw, &what, floor);
                floor = Some(id);
            }
            NestedResult::Batch(n, Ok(b)) => {
                let last = b.len().checked_sub(1).and_then(|i| b.get(i));
                checker.batch(n, b, &nw, &what, floor);
                floor = last.or(floor);
            }
            NestedResult::Id(Err(e)) | NestedResult::Batch(_, Err(e)) => {
                checker.error(e, try_call, &nw, &what)
            }
        }
    }
}

/// A call's result.
enum Outcome {
    Id(Result<u64, Error>),
    Batch(u32, Result<Batch, Error>),
    Fill(Result<usize, Error>, Vec<u64>),
    Resume(u64, Result<(), Error>),
    ResumeMs(u64, Result<(), Error>),
    Switch(u64, Option<Result<(), Error>>),
    Skipped,
}

fn perform<S: Subject>(generator: &mut S, call: Call, clock: &ScriptClock, c: &Checker) -> Outcome {
    match call {
        Call::Next => Outcome::Id(generator.next()),
        Call::TryNext => Outcome::Id(generator.try_next()),
        Call::Batch(n) => Outcome::Batch(n, generator.next_batch(n)),
        Call::TryBatch(n) => Outcome::Batch(n, generator.try_next_batch(n)),
        Call::Fill(n) => {
            let mut out = vec![0u64; usize::from(n) % 4097];
            let r = generator.fill(&mut out);
            Outcome::Fill(r, out)
        }
        Call::ResumeAfter(pick) => {
            let id = match pick {
                IdPick::Raw(id) => id,
                IdPick::NearNewest(d) => c.last.unwrap_or(0).saturating_add_signed(i64::from(d)),
                IdPick::NearClock {
                    ticks,
                    node,
                    sequence,
                } => {
                    let l = &c.layout;
                    let now = c.tick_of(clock.peek()).unwrap_or(0);
                    let tick = now
                        .saturating_add_signed(i64::from(ticks))
                        .min(l.max_tick());
                    let node = node % (u128::from(l.max_node()) + 1) as u64;
                    let seq = u64::from(sequence) & l.max_sequence();
                    let parts = snowdrift::Parts {
                        time_ms: l.tick_start_ms(tick),
                        node,
                        sequence: seq,
                    };
                    l.compose(parts).unwrap_or(0)
                }
            };
            Outcome::Resume(id, generator.resume_after(id))
        }
        Call::ResumeAfterMs(pick) => {
            let ms = match pick {
                MsPick::Raw(ms) => ms,
                MsPick::NearClock(d) => clock.peek().saturating_add_signed(i64::from(d)),
            };
            Outcome::ResumeMs(ms, generator.resume_after_ms(ms))
        }
        Call::SwitchNode(pick) => {
            let max = c.layout.max_node();
            let node = match pick {
                NodePick::Same => c.node,
                NodePick::Fresh(from) => {
                    let span = u128::from(max) + 1;
                    let fresh = (0..=c.used_nodes.len() as u128)
                        .map(|i| ((u128::from(from) + i) % span) as u64)
                        .find(|n| !c.used_nodes.contains(n));
                    match fresh {
                        Some(n) => n,
                        None => return Outcome::Skipped,
                    }
                }
                // A node used before (other than the current one) may not be taken again:
                // that is the caller's promise, not the generator's.
                NodePick::Any(n) if n <= max && n != c.node && c.used_nodes.contains(&n) => {
                    return Outcome::Skipped;
                }
                NodePick::Any(n) => n,
            };
            Outcome::Switch(node, generator.switch_node(node))
        }
    }
}

fn check_outcome<S: Subject>(
    generator: &S,
    call: Call,
    outcome: Outcome,
    w: &Window,
    c: &mut Checker,
    before: Option<u64>,
) {
    let try_call = matches!(call, Call::TryNext | Call::TryBatch(_));
    let what = format!("{call:?}");
    if try_call {
        // A try call reads the clock once, and once more to confirm a step back (again
        // after each interrupt that raced it): it never waits.
        assert!(
            w.own_reads <= 2 + 2 * w.interrupts,
            "{what}: a try call read the clock {} times ({} interrupts)",
            w.own_reads,
            w.interrupts
        );
    }
    let floor = c.last;
    match outcome {
        Outcome::Id(Ok(id)) => c.id(id, w, &what, floor),
        Outcome::Batch(n, Ok(b)) => c.batch(n, b, w, &what, floor),
        Outcome::Id(Err(e)) | Outcome::Batch(_, Err(e)) => {
            if let (Call::Batch(0) | Call::TryBatch(0), e) = (call, e) {
                panic!("{what}: an empty batch failed: {e:?}");
            }
            c.error(e, try_call, w, &what)
        }
        // Interrupts during a fill may take IDs between its batches: its IDs are above
        // everything before the call, and increase among themselves.
        Outcome::Fill(r, out) => c.fill(out.len(), r, &out, w, before),
        Outcome::Resume(id, r) => c.resume_after(id, r, &w.readings),
        Outcome::ResumeMs(ms, r) => c.resume_after_ms(ms, r, &w.readings),
        Outcome::Switch(node, Some(r)) => c.switch_node(node, r, generator.node()),
        Outcome::Switch(_, None) | Outcome::Skipped => {}
    }
}

/// Checks a call's outcome against the model's prediction from the readings it took (all
/// of them, no more), and moves the model on.
fn predicted(m: &mut Model, call: Call, outcome: &Outcome, w: &Window, node: u64) {
    let what = format!("{call:?}");
    let mut readings = w.own.iter().copied();
    let take = |m: &mut Model, n: u32, blocking: bool, readings: &mut dyn Iterator<Item = u64>| {
        m.call(n, blocking, &mut *readings).unwrap_or_else(|_| {
            panic!(
                "{what}: the model wanted more readings than the call took ({:?})",
                w.own
            )
        })
    };
    let agree = |expect: Expect, got: Result<(u64, u64), &Error>, m: &Model| {
        let ok = match (expect, got) {
            (Expect::Slots { slot, len }, Ok((first, n))) => m.slot_of(first) == slot && n == len,
            (e, Err(got)) => e.matches(got),
            _ => false,
        };
        assert!(
            ok,
            "{what}: the model expected {expect:?}, the generator gave {got:?} \
             (readings {:?})",
            w.own
        );
    };
    match (call, outcome) {
        (Call::Next | Call::TryNext, Outcome::Id(r)) => {
            let expect = take(m, 1, matches!(call, Call::Next), &mut readings);
            agree(expect, r.as_ref().map(|&id| (id, 1)), m);
        }
        (Call::Batch(0) | Call::TryBatch(0), _) => {}
        (Call::Batch(n) | Call::TryBatch(n), Outcome::Batch(_, r)) => {
            let expect = take(m, n, matches!(call, Call::Batch(_)), &mut readings);
            agree(expect, r.as_ref().map(|b| (b.first(), b.len() as u64)), m);
        }
        (Call::Fill(_), Outcome::Fill(r, out)) => {
            // Batches of what is left, until the buffer is full or an error stops it.
            let mut done = 0;
            while done < out.len() {
                let want = u32::try_from(out.len() - done).unwrap_or(u32::MAX);
                match take(m, want, true, &mut readings) {
                    Expect::Slots { slot, len } => {
                        let got = out.get(done).copied();
                        assert_eq!(
                            got.map(|id| m.slot_of(id)),
                            Some(slot),
                            "{what}: a batch of the fill ({:?})",
                            w.own
                        );
                        done += len as usize;
                    }
                    e if done == 0 => {
                        let Err(got) = r else {
                            panic!("{what}: the model expected {e:?}, the fill gave {r:?}")
                        };
                        agree(e, Err(got), m);
                        break;
                    }
                    _ => break,
                }
            }
            if let Ok(n) = r {
                assert_eq!(done.min(out.len()), *n, "{what}: IDs written");
            }
        }
        (_, Outcome::Resume(id, Ok(()))) => {
            let floor = m.floor_above_id(*id);
            m.raise(floor, readings.next().unwrap_or(0));
        }
        (_, Outcome::ResumeMs(ms, Ok(()))) => {
            let floor = m.floor_after_ms(*ms);
            m.raise(floor, readings.next().unwrap_or(0));
        }
        (_, Outcome::Switch(_, Some(Ok(())))) => {
            m.reset(node);
            let floor = m.floor_after_ms(0);
            m.raise(floor, readings.next().unwrap_or(0));
        }
        _ => {}
    }
    let left: Vec<u64> = readings.collect();
    assert!(
        left.is_empty(),
        "{what}: the call took {} readings more than the model ({:?})",
        left.len(),
        w.own
    );
}
