//! The generators' memory: blocks of one size, carved from pages the module grows its
//! memory by, and reused through a free list. Generators are the only thing the module
//! allocates, so this stands in for a general allocator (and its code); it is also the
//! global allocator, which the `alloc` crate under wasm-bindgen requires, and which gives
//! nothing bigger than a block.

use crate::generator::Gen;

/// A free block: the address of the next free one (null at the end) in its first word.
struct Free {
    next: *mut Free,
}

/// Where blocks come from: the free list, then the rest of the last page grown.
struct Pool {
    free: *mut Free,
    next: usize,
    end: usize,
}

struct Shared(core::cell::UnsafeCell<Pool>);
// SAFETY: one thread per module instance (see lib.rs).
unsafe impl Sync for Shared {}

static POOL: Shared = Shared(core::cell::UnsafeCell::new(Pool {
    free: core::ptr::null_mut(),
    next: 0,
    end: 0,
}));

/// A block holds a generator and, once freed, a `Free`; blocks are placed 8-aligned.
const BLOCK: usize = {
    assert!(core::mem::align_of::<Gen>() <= 8 && core::mem::size_of::<Free>() <= 8);
    (core::mem::size_of::<Gen>() + 7) & !7
};
const PAGE: usize = 65536;

/// Moves `generator` into a block; null when memory cannot grow (the generator is dropped).
pub fn put(generator: Gen) -> *mut Gen {
    let block = block().cast::<Gen>();
    if !block.is_null() {
        // SAFETY: the block is BLOCK bytes, 8-aligned, and not in use.
        unsafe { block.write(generator) };
    }
    block
}

/// Ends the generator in `block` and frees the block.
///
/// # Safety
/// `block` came from `put` and is not used again.
pub unsafe fn take(block: *mut Gen) {
    // SAFETY: the caller's contract: a live block from `put`, not used again.
    unsafe {
        core::ptr::drop_in_place(block);
        release(block.cast());
    }
}

/// A free block (BLOCK bytes, 8-aligned), or null when memory cannot grow.
fn block() -> *mut u8 {
    // SAFETY: one thread, and no reference to the pool outlives this call.
    let pool = unsafe { &mut *POOL.0.get() };
    if !pool.free.is_null() {
        let block = pool.free;
        // SAFETY: a block on the free list holds a `Free` written by `release`.
        pool.free = unsafe { (*block).next };
        return block.cast();
    }
    if pool.end - pool.next < BLOCK {
        let Some(start) = grow() else {
            return core::ptr::null_mut();
        };
        (pool.next, pool.end) = (start, start + PAGE);
    }
    let block = pool.next as *mut u8;
    pool.next += BLOCK;
    block
}

/// Puts a block from `block` back on the free list.
///
/// # Safety
/// `block` came from `block()` and is not used again.
unsafe fn release(block: *mut u8) {
    // SAFETY: one thread, and no reference to the pool outlives this call; the caller
    // hands over `block`, a BLOCK-sized, 8-aligned block.
    unsafe {
        let pool = &mut *POOL.0.get();
        let free = block.cast::<Free>();
        free.write(Free { next: pool.free });
        pool.free = free;
    }
}

/// The global allocator: a block for anything that fits in one, else nothing.
#[cfg(target_arch = "wasm32")]
pub struct Blocks;

// SAFETY: `alloc` gives a block only to a layout it fits (size and alignment); `dealloc`
// gets back only blocks `alloc` gave.
#[cfg(target_arch = "wasm32")]
unsafe impl core::alloc::GlobalAlloc for Blocks {
    unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
        if layout.size() <= BLOCK && layout.align() <= 8 {
            block()
        } else {
            core::ptr::null_mut()
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, _: core::alloc::Layout) {
        release(ptr);
    }
}

/// One more page of wasm memory: its address.
#[cfg(target_arch = "wasm32")]
fn grow() -> Option<usize> {
    match core::arch::wasm32::memory_grow(0, 1) {
        usize::MAX => None,
        pages => Some(pages * PAGE),
    }
}

/// Host builds (the crate's own tests): a page from the system allocator, never freed.
#[cfg(not(target_arch = "wasm32"))]
fn grow() -> Option<usize> {
    let page = std::alloc::Layout::from_size_align(PAGE, 8).ok()?;
    // SAFETY: the layout is not zero-sized.
    let ptr = unsafe { std::alloc::alloc(page) };
    (!ptr.is_null()).then_some(ptr as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::JsClock;
    use snowdrift::{Generator, IdGenerator, Layout, Policy};

    fn generator(node: u64) -> Gen {
        let generator =
            Generator::new(JsClock::DateNow, Layout::DEFAULT, node, Policy::DEFAULT).unwrap();
        Gen {
            layout: generator.layout(),
            generator,
        }
    }

    // One test: the pool is a static, and test threads would share it.
    #[test]
    fn freed_blocks_are_reused_and_live_ones_are_not() {
        let a = put(generator(1));
        let b = put(generator(2));
        assert_ne!(a, b);
        // SAFETY: `a` came from `put` and is not used again.
        unsafe { take(a) };
        let c = put(generator(3));
        assert_eq!(c, a, "the freed block comes back first");
        let d = put(generator(4));
        assert!(d != b && d != c, "a live block is never handed out");
        // SAFETY: the blocks came from `put`; each is read while live.
        unsafe {
            assert_eq!((*b).generator.node(), 2);
            assert_eq!((*c).generator.node(), 3);
            assert_eq!((*d).generator.node(), 4);
            take(b);
            take(c);
            take(d);
        }
        // Freeing as many as are made takes no new memory.
        let first = put(generator(0));
        // SAFETY: each block came from `put` and is freed once.
        unsafe { take(first) };
        for i in 0..100_000 {
            let block = put(generator(i % 1024));
            assert_eq!(block, first, "create-free cycle {i} took a new block");
            // SAFETY: as above.
            unsafe { take(block) };
        }
    }
}
