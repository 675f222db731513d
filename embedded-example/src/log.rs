//! Records in issue order, from the main loop and the timer interrupt, until the main loop
//! prints them. A small ring behind a critical section: pushing and popping are a few
//! instructions, and an ID is only taken when there is room for its record.

use core::cell::RefCell;
use critical_section::{CriticalSection, Mutex};
use heapless::Deque;

#[derive(Clone, Copy)]
pub enum Src {
    Main,
    Isr,
}

#[derive(Clone, Copy)]
pub struct Record {
    pub n: u32,
    pub src: Src,
    pub id: u64,
}

struct Log {
    ring: Deque<Record, 16>,
    issued: u32,
}

static LOG: Mutex<RefCell<Log>> = Mutex::new(RefCell::new(Log {
    ring: Deque::new(),
    issued: 0,
}));

/// Whether another record fits: the run is not complete and the ring has room.
pub fn has_room(cs: CriticalSection<'_>) -> bool {
    let log = LOG.borrow_ref(cs);
    log.issued < crate::RECORDS && !log.ring.is_full()
}

/// Appends a record; callers check [`has_room`] in the same critical section first.
pub fn push(cs: CriticalSection<'_>, src: Src, id: u64) {
    let mut log = LOG.borrow_ref_mut(cs);
    let n = log.issued;
    if log.ring.push_back(Record { n, src, id }).is_ok() {
        log.issued += 1;
    }
}

/// The oldest record not printed yet.
pub fn pop() -> Option<Record> {
    critical_section::with(|cs| LOG.borrow_ref_mut(cs).ring.pop_front())
}

/// Records issued so far.
pub fn issued() -> u32 {
    critical_section::with(|cs| LOG.borrow_ref(cs).issued)
}
