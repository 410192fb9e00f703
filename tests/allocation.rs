//! What `Device::query_block` allocates for a block whose length its header declares:
//! one buffer of that length, zeroed by the allocator, never grown window by window
//! (each window zero-filled and read by a call of its own: 1.58x linux-gpib-rs for
//! 10 MB, where `query_block_into` was 7.3x).
//!
//! A binary of its own: it counts the process's allocations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The system allocator, counting large allocations and reallocations while on.
struct Counting;

static ON: AtomicBool = AtomicBool::new(false);
static LARGE_ALLOCS: AtomicUsize = AtomicUsize::new(0);
static LARGE_REALLOCS: AtomicUsize = AtomicUsize::new(0);
const LARGE: usize = 1 << 20;

// SAFETY: every call is passed to the system allocator unchanged; the counters are
// atomics, touched without allocating.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) && layout.size() >= LARGE {
            LARGE_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) && layout.size() >= LARGE {
            LARGE_ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout, as GlobalAlloc::alloc_zeroed requires.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by System with `layout` (every allocation here is).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.load(Ordering::Relaxed) && new_size >= LARGE {
            LARGE_REALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: `ptr` and `layout` are the caller's, from System, as realloc requires.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

#[test]
fn a_declared_block_is_read_into_one_allocation_of_its_length() {
    let bus = gpib::Bus::new(gpib::sim::bench().board(0).unwrap());
    let mut dmm = bus.device(22).unwrap();
    dmm.set_timeout(Some(std::time::Duration::from_secs(60).into()));
    const N: usize = 10_000_000;
    let ask = format!("BLOCK? {N}");
    // A first query warms the instrument's answer path (its buffers are its own).
    assert_eq!(dmm.query_block(&ask).unwrap().len(), N);
    let warm = (
        LARGE_ALLOCS.load(Ordering::Relaxed),
        LARGE_REALLOCS.load(Ordering::Relaxed),
    );
    assert_eq!(warm, (0, 0), "nothing counted before it is switched on");
    ON.store(true, Ordering::SeqCst);
    let back = dmm.query_block(&ask).unwrap();
    ON.store(false, Ordering::SeqCst);
    assert_eq!(back.len(), N);
    let (allocs, reallocs) = (
        LARGE_ALLOCS.load(Ordering::Relaxed),
        LARGE_REALLOCS.load(Ordering::Relaxed),
    );
    // The body's buffer, and whatever the simulated instrument makes for its answer
    // (at most one buffer of it): never a growth step.
    assert_eq!(reallocs, 0, "the body grew by reallocation");
    assert!(
        (1..=2).contains(&allocs),
        "{allocs} allocations of 1 MiB or more"
    );
}
