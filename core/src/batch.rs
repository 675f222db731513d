//! Batches of consecutive IDs, as both generators hand them out.

use crate::engine::Engine;
use crate::error::Error;

/// Consecutive IDs reserved in one step, all in one tick: `first`, `first + step`, ...
///
/// ```
/// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
/// let clock = ManualClock::new(1_750_000_000_000);
/// let mut generator = Generator::new(&clock, Layout::DEFAULT, 1, Policy::DEFAULT)?;
/// let batch = generator.next_batch(100)?;
/// assert_eq!(batch.len(), 100);
/// let ids: Vec<u64> = batch.collect();
/// assert!(ids.windows(2).all(|w| w[1] > w[0]));
/// assert!(generator.next()? > ids[99]);
/// # Ok::<(), snowdrift::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    first: u64,
    step: u64,
    len: u32,
}

impl Batch {
    pub(crate) fn new(engine: &Engine, slot: u64, len: u32) -> Batch {
        Batch {
            first: engine.id(slot),
            step: engine.id_step(),
            len,
        }
    }
    pub(crate) fn empty(engine: &Engine) -> Batch {
        Batch {
            first: 0,
            step: engine.id_step(),
            len: 0,
        }
    }
    /// The first ID (0 for an empty batch).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// assert_eq!(batch.first(), batch.get(0).unwrap());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn first(&self) -> u64 {
        self.first
    }
    /// Distance between consecutive IDs (1 unless the sequence sits above the node).
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// assert_eq!(batch.step(), 1); // the default layout: sequence in the low bits
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn step(&self) -> u64 {
        self.step
    }
    /// How many IDs are left.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// assert_eq!(batch.len(), 3);
    /// assert_eq!(batch.skip(1).len(), 2);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether no IDs are left.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// assert!(!batch.is_empty());
    /// assert!(generator.next_batch(0)?.is_empty());
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The `i`th remaining ID.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// assert_eq!(batch.get(2), Some(batch.first() + 2 * batch.step()));
    /// assert_eq!(batch.get(3), None);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    pub fn get(&self, i: usize) -> Option<u64> {
        (i < self.len()).then(|| self.first + i as u64 * self.step)
    }
    /// Writes the IDs to the start of `out` (as many as fit) and returns how many.
    ///
    /// ```
    /// use snowdrift::{Generator, IdGenerator, Layout, ManualClock, Policy};
    /// let mut generator = Generator::new(ManualClock::new(1_750_000_000_000), Layout::DEFAULT, 1, Policy::DEFAULT)?;
    /// let batch = generator.next_batch(3)?;
    /// let mut out = [0u64; 2];
    /// assert_eq!(batch.write_to(&mut out), 2);
    /// assert_eq!(out, [batch.first(), batch.first() + 1]);
    /// # Ok::<(), snowdrift::Error>(())
    /// ```
    #[inline]
    pub fn write_to(&self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.len());
        let (first, step) = (self.first, self.step);
        for (i, to) in out.iter_mut().take(n).enumerate() {
            *to = first + i as u64 * step;
        }
        n
    }
}

/// Fills `out` from batches taken by `take`: all of it, or what was written before an
/// error (the error itself when nothing was).
pub(crate) fn fill_with(
    out: &mut [u64],
    mut take: impl FnMut(u32) -> Result<Batch, Error>,
) -> Result<usize, Error> {
    let mut done = 0;
    while done < out.len() {
        let want = u32::try_from(out.len() - done).unwrap_or(u32::MAX);
        match take(want) {
            Ok(batch) => done += batch.write_to(&mut out[done..]),
            Err(e) if done == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(done)
}

impl Iterator for Batch {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let id = self.first;
        self.len -= 1;
        if self.len > 0 {
            // Not past the last ID, which may be u64::MAX.
            self.first += self.step;
        }
        Some(id)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.len(), Some(self.len()))
    }
}

impl ExactSizeIterator for Batch {}
