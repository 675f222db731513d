//! What a generator does when time misbehaves.

/// What a generator does when the clock reads earlier than the newest tick it has used,
/// and when a tick's sequence numbers run out.
///
/// | policy | clock went back | sequence used up | IDs strictly increase |
/// |---|---|---|---|
/// | `Fail` | `Err(ClockBackwards)` with the step size | wait for the next tick | yes |
/// | `Wait` | wait up to `max_wait_ms` for the clock to catch up with the newest tick used (then, if that tick is used up, for the next one), else `Err(ClockBackwards)` | wait for the next tick | yes |
/// | `Borrow` (the default, 1 s) | go on from the newest tick used (a logical clock that never goes back), up to `max_ahead_ms` ahead of the clock; past that, wait for the clock, at most `max_ahead_ms`; further than twice the bound ahead (a step back larger than the bound), or still past the bound after that wait: `Err(TooFarAhead)` | take the next tick early, up to the bound; then wait for the clock | yes |
///
/// The step a `ClockBackwards` or `SwitchNode` error reports
/// ([`Error::behind_ms`](crate::Error::behind_ms)) is counted in whole ticks, from the
/// tick the clock reads up to the newest tick used. How far ahead an ID is
/// ([`Error::ahead_ms`](crate::Error::ahead_ms), and the bound of `Borrow`) is the start
/// of its tick less the clock's reading: with ticks longer than the bound, a used-up tick
/// takes the next one early only within the bound's last milliseconds before it starts,
/// and otherwise waits for it (so an ID may then be a tick ahead of the tick the clock
/// reads, but never more than `max_ahead_ms` ahead of the clock). A resume mark above the
/// clock is not a step: while it sets the pace, IDs run up to its lead ahead (see
/// [`IdGenerator::resume_after`](crate::IdGenerator::resume_after)), under `Borrow` up to
/// the larger of the lead and the bound.
/// | `SwitchNode` | `Err(SwitchNode)`: move to another node id, after its previous holder's IDs ([`Generator::switch_node`](crate::Generator::switch_node)), and go on | wait for the next tick | per node |
///
/// A further behaviour is not a policy but a generator of its own, since it needs state
/// the others do not: [`Generator::with_history`](crate::Generator::with_history) keeps a
/// ring of recent ticks and reuses their unspent sequence numbers when the clock goes back
/// into them (IDs stay unique but may then be below earlier ones); past the ring it fails
/// as `Fail` does.
///
/// Every wait is bounded: a clock that is behind is waited for at most the policy's limit
/// (measured on the clock from the call's first reading); a used-up tick is waited out
/// while the clock moves forward (one tick for a single owner); and a clock that stops
/// moving forward ends any wait with [`ErrorKind::ClockStalled`]. The `try_*` calls never
/// wait: they return [`ErrorKind::WouldBlock`] instead.
///
/// [`ErrorKind::ClockStalled`]: crate::ErrorKind::ClockStalled
/// [`ErrorKind::WouldBlock`]: crate::ErrorKind::WouldBlock
///
/// ```
/// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 7, Policy::Borrow { max_ahead_ms: 1000 })?;
/// let a = generator.next()?;
/// clock.rewind(500); // NTP stepped the clock back
/// let b = generator.next()?; // still increasing: borrowed from the logical clock
/// assert!(b > a);
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Policy {
    /// Report the backwards step as an error, with its size.
    Fail,
    /// Wait for the clock to catch up with the newest tick used, at most `max_wait_ms`
    /// (measured on the clock).
    Wait {
        /// The longest wait, in milliseconds; larger steps fail at once.
        max_wait_ms: u32,
    },
    /// Keep going on a logical clock, never more than `max_ahead_ms` ahead of the real one
    /// (an ID's time, the start of its tick, at most that much after the clock's reading).
    /// A limit below one time unit lets a used-up tick take the next one only within the
    /// limit of its start.
    Borrow {
        /// How far ahead of the clock IDs may go, in milliseconds.
        max_ahead_ms: u32,
    },
    /// Surface the step as [`ErrorKind::SwitchNode`](crate::ErrorKind::SwitchNode) so the caller
    /// moves to another node id (with its previous holder's high-water mark).
    SwitchNode,
}

impl Policy {
    /// The default, in Rust and JS alike: [`Policy::Borrow`] up to 1 s ahead. A step back
    /// of the clock (an NTP correction, a VM resumed) costs no wait and no error; load
    /// beyond the layout's rate waits for the clock about a tick at a time; IDs stay
    /// within a second of real time, so they still order across nodes by when they were
    /// made. Only a step back of more than a second is an error.
    pub const DEFAULT: Policy = Policy::Borrow { max_ahead_ms: 1000 };
}

impl Default for Policy {
    fn default() -> Self {
        Policy::DEFAULT
    }
}
