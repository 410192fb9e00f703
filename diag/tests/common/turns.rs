//! Turns between the tests of one binary: a test that times a wall clock runs alone, the
//! others beside each other.
//!
//! cargo runs a binary's tests on as many threads as the machine has CPUs. On two CPUs a
//! test that measures wall time (calibrate's held-out sizes through `serve --realtime`)
//! then shares them with another test's server and clients: one CI run found a held-out
//! size 11 % off that way, on a path that holds to 1 % alone. Waiting for a turn keeps
//! the measurement's claim as tight as it is, and the other tests still run together.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

static WALL_CLOCK: RwLock<()> = RwLock::new(());

/// For a test that measures wall time: no other test of this binary that took a turn
/// runs until the guard is dropped.
pub fn alone() -> RwLockWriteGuard<'static, ()> {
    // A test that failed holding the lock poisons it; the next test's turn is still good.
    WALL_CLOCK.write().unwrap_or_else(|e| e.into_inner())
}

/// For any other test: runs beside the others, never beside one that runs [`alone`].
pub fn beside_others() -> RwLockReadGuard<'static, ()> {
    WALL_CLOCK.read().unwrap_or_else(|e| e.into_inner())
}
