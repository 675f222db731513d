//! The generators' memory: blocks of one size, carved from pages the module grows its
//! memory by, and reused through a free list. Generators are the only thing the module
//! allocates, so this stands in for a general allocator (and its code); it is also the
//! global allocator, which the `alloc` crate under wasm-bindgen requires, and which gives
//! nothing bigger than a block.

use core::cell::UnsafeCell;
use core::marker::PhantomData;

/// A free block: the address of the next free one (null at the end) in its first word.
struct Free {
    next: *mut Free,
}

/// Where blocks come from: the free list, then the rest of the last page grown.
struct State {
    free: *mut Free,
    next: usize,
    end: usize,
}

/// Blocks that each hold one `T` (and, once freed, a `Free`), placed 8-aligned. The pool
/// knows nothing of what it holds: the module keeps one, of generators, in a static
/// (`generator::POOL`).
pub struct Pool<T> {
    state: UnsafeCell<State>,
    holds: PhantomData<T>,
}

// SAFETY: one thread per module instance (see lib.rs).
unsafe impl<T> Sync for Pool<T> {}

const PAGE: usize = 65536;

impl<T> Pool<T> {
    /// A block's size: a `T`, rounded up to 8 bytes.
    const BLOCK: usize = {
        assert!(core::mem::align_of::<T>() <= 8 && core::mem::size_of::<Free>() <= 8);
        (core::mem::size_of::<T>() + 7) & !7
    };

    /// An empty pool: it takes memory on first use.
    pub const fn new() -> Self {
        Pool {
            state: UnsafeCell::new(State {
                free: core::ptr::null_mut(),
                next: 0,
                end: 0,
            }),
            holds: PhantomData,
        }
    }

    /// Moves `value` into a block; null when memory cannot grow (the value is dropped).
    pub fn put(&self, value: T) -> *mut T {
        let block = self.block().cast::<T>();
        if !block.is_null() {
            // SAFETY: the block is BLOCK bytes, 8-aligned, and not in use.
            unsafe { block.write(value) };
        }
        block
    }

    /// Ends the value in `block` and frees the block.
    ///
    /// # Safety
    /// `block` came from `put` and is not used again.
    pub unsafe fn take(&self, block: *mut T) {
        // SAFETY: the caller's contract: a live block from `put`, not used again.
        unsafe {
            core::ptr::drop_in_place(block);
            self.release(block.cast());
        }
    }

    /// A free block (BLOCK bytes, 8-aligned), or null when memory cannot grow.
    fn block(&self) -> *mut u8 {
        // SAFETY: one thread, and no reference to the state outlives this call.
        let pool = unsafe { &mut *self.state.get() };
        if !pool.free.is_null() {
            let block = pool.free;
            // SAFETY: a block on the free list holds a `Free` written by `release`.
            pool.free = unsafe { (*block).next };
            return block.cast();
        }
        if pool.end - pool.next < Self::BLOCK {
            let Some(start) = grow() else {
                return core::ptr::null_mut();
            };
            (pool.next, pool.end) = (start, start + PAGE);
        }
        let block = pool.next as *mut u8;
        pool.next += Self::BLOCK;
        block
    }

    /// Puts a block from `block` back on the free list.
    ///
    /// # Safety
    /// `block` came from `block()` and is not used again.
    unsafe fn release(&self, block: *mut u8) {
        // SAFETY: one thread, and no reference to the state outlives this call; the
        // caller hands over `block`, a BLOCK-sized, 8-aligned block.
        unsafe {
            let pool = &mut *self.state.get();
            let free = block.cast::<Free>();
            free.write(Free { next: pool.free });
            pool.free = free;
        }
    }
}

/// The global allocator over a pool: a block for anything that fits in one, else nothing.
#[cfg(target_arch = "wasm32")]
pub struct Blocks<T: 'static>(pub &'static Pool<T>);

// SAFETY: `alloc` gives a block only to a layout it fits (size and alignment); `dealloc`
// gets back only blocks `alloc` gave.
#[cfg(target_arch = "wasm32")]
unsafe impl<T> core::alloc::GlobalAlloc for Blocks<T> {
    unsafe fn alloc(&self, layout: core::alloc::Layout) -> *mut u8 {
        if layout.size() <= Pool::<T>::BLOCK && layout.align() <= 8 {
            self.0.block()
        } else {
            core::ptr::null_mut()
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, _: core::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc`, so from `block()`.
        unsafe { self.0.release(ptr) };
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

    /// A value the size of a generator, or so, that says which it is.
    struct Held {
        node: u64,
        _rest: [u64; 24],
    }

    fn generator(node: u64) -> Held {
        Held {
            node,
            _rest: [0; 24],
        }
    }

    #[test]
    fn freed_blocks_are_reused_and_live_ones_are_not() {
        let pool = Pool::<Held>::new();
        let a = pool.put(generator(1));
        let b = pool.put(generator(2));
        assert_ne!(a, b);
        // SAFETY: `a` came from `put` and is not used again.
        unsafe { pool.take(a) };
        let c = pool.put(generator(3));
        assert_eq!(c, a, "the freed block comes back first");
        let d = pool.put(generator(4));
        assert!(d != b && d != c, "a live block is never handed out");
        // SAFETY: the blocks came from `put`; each is read while live.
        unsafe {
            assert_eq!((*b).node, 2);
            assert_eq!((*c).node, 3);
            assert_eq!((*d).node, 4);
            pool.take(b);
            pool.take(c);
            pool.take(d);
        }
        // Freeing as many as are made takes no new memory.
        let first = pool.put(generator(0));
        // SAFETY: each block came from `put` and is freed once.
        unsafe { pool.take(first) };
        for i in 0..100_000 {
            let block = pool.put(generator(i % 1024));
            assert_eq!(block, first, "create-free cycle {i} took a new block");
            // SAFETY: as above.
            unsafe { pool.take(block) };
        }
    }
}
