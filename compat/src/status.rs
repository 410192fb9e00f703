//! The status of the last call: per thread (`ThreadIbsta()`...), per thread for the
//! last asynchronous I/O resynchronized by `ibwait`/`ibstop` (`AsyncIbsta()`...), and
//! the process-wide globals `ibsta`, `iberr`, `ibcnt`, `ibcntl`, which every call
//! refreshes from the calling thread's values (as libgpib's `sync_globals` does).

use std::cell::Cell;
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};

/// One thread's (or one asynchronous I/O's) status values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Values {
    /// The status word.
    pub sta: i32,
    /// The error code of the last failed call.
    pub err: i32,
    /// The count of the last call that reports one.
    pub cntl: i64,
}

thread_local! {
    static THREAD: Cell<Values> = const { Cell::new(Values { sta: 0, err: 0, cntl: 0 }) };
    static ASYNC: Cell<Values> = const { Cell::new(Values { sta: 0, err: 0, cntl: 0 }) };
}

/// `extern volatile int ibsta;` (an `AtomicI32` has the layout of an `int`).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static ibsta: AtomicI32 = AtomicI32::new(0);
/// `extern volatile int iberr;`
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static iberr: AtomicI32 = AtomicI32::new(0);
/// `extern volatile int ibcnt;` (ibcntl truncated to `int`).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static ibcnt: AtomicI32 = AtomicI32::new(0);
/// `extern volatile long ibcntl;` (an `AtomicI64` has the layout of a `long` on LP64).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static ibcntl: AtomicI64 = AtomicI64::new(0);

const _: () = assert!(std::mem::size_of::<std::os::raw::c_long>() == 8);

/// The calling thread's values.
pub fn thread() -> Values {
    THREAD.with(Cell::get)
}

/// The calling thread's values of its last resynchronized asynchronous I/O.
pub fn asynchronous() -> Values {
    ASYNC.with(Cell::get)
}

/// Sets the asynchronous values of the calling thread.
pub fn set_async(v: Values) {
    ASYNC.with(|c| c.set(v));
}

/// Ends a call: `sta` becomes the status, `err` the error code (0 when the call
/// succeeded), `cnt` the count (0 when the call reports none); the globals follow.
/// Returns `sta`.
///
/// Every call of the C API ends here, so every call starts from iberr and ibcnt 0,
/// as linux-gpib's `general_enter_library` resets them on entry to every call.
pub fn finish(sta: i32, err: Option<i32>, cnt: Option<i64>) -> i32 {
    let v = Values {
        sta,
        err: err.unwrap_or(0),
        cntl: cnt.unwrap_or(0),
    };
    THREAD.with(|c| c.set(v));
    ibsta.store(v.sta, Ordering::SeqCst);
    iberr.store(v.err, Ordering::SeqCst);
    ibcntl.store(v.cntl, Ordering::SeqCst);
    ibcnt.store(v.cntl as i32, Ordering::SeqCst);
    sta
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::*;

    #[test]
    fn finish_sets_thread_values_and_resets_unreported_ones() {
        let _g = crate::tests::serial_only();
        std::thread::spawn(|| {
            assert_eq!(finish(CMPL, None, Some(7)), CMPL);
            assert_eq!(
                thread(),
                Values {
                    sta: CMPL,
                    err: 0,
                    cntl: 7
                }
            );
            finish(ERR | CMPL, Some(EARG), None);
            assert_eq!(
                thread(),
                Values {
                    sta: ERR | CMPL,
                    err: EARG,
                    cntl: 0
                },
                "no count reported: 0"
            );
            // A later success has iberr 0 and, with no count, ibcnt 0 (libgpib resets
            // both on entry to every call).
            finish(CMPL | END, None, None);
            assert_eq!(thread().err, 0);
            assert_eq!(thread().cntl, 0);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn threads_have_their_own_status() {
        let _g = crate::tests::serial_only();
        let a = std::thread::spawn(|| {
            finish(ERR, Some(EABO), Some(1));
            thread()
        });
        let b = std::thread::spawn(|| {
            finish(CMPL, None, Some(2));
            thread()
        });
        assert_eq!(a.join().unwrap().err, EABO);
        let b = b.join().unwrap();
        assert_eq!((b.sta, b.err, b.cntl), (CMPL, 0, 2));
    }

    #[test]
    fn ibcnt_is_ibcntl_truncated() {
        let _g = crate::tests::serial_only();
        std::thread::spawn(|| {
            finish(CMPL, None, Some(0x1_0000_0005));
            // Other tests may run in between; check the pair in this thread's values.
            assert_eq!(thread().cntl as i32, 5);
        })
        .join()
        .unwrap();
    }
}
