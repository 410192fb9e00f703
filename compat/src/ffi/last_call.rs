//! The status of the last call, per thread and of the last asynchronous one:
//! `ThreadIbsta` ... `AsyncIbcntl`.

use super::*;

// ---------------------------------------------------------------------------------
// Status of the last call.
// ---------------------------------------------------------------------------------

/// The calling thread's `ibsta`.
#[no_mangle]
pub extern "C" fn ThreadIbsta() -> c_int {
    status::thread().sta
}

/// The calling thread's `iberr`.
#[no_mangle]
pub extern "C" fn ThreadIberr() -> c_int {
    status::thread().err
}

/// The calling thread's `ibcnt`.
#[no_mangle]
pub extern "C" fn ThreadIbcnt() -> c_int {
    status::thread().cntl as c_int
}

/// The calling thread's `ibcntl`.
#[no_mangle]
pub extern "C" fn ThreadIbcntl() -> c_long {
    status::thread().cntl as c_long
}

/// `ibsta` of the last asynchronous I/O resynchronized in this thread.
#[no_mangle]
pub extern "C" fn AsyncIbsta() -> c_int {
    status::asynchronous().sta
}

/// `iberr` of the last asynchronous I/O resynchronized in this thread.
#[no_mangle]
pub extern "C" fn AsyncIberr() -> c_int {
    status::asynchronous().err
}

/// `ibcnt` of the last asynchronous I/O resynchronized in this thread.
#[no_mangle]
pub extern "C" fn AsyncIbcnt() -> c_int {
    status::asynchronous().cntl as c_int
}

/// `ibcntl` of the last asynchronous I/O resynchronized in this thread.
#[no_mangle]
pub extern "C" fn AsyncIbcntl() -> c_long {
    status::asynchronous().cntl as c_long
}
