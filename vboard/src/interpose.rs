//! The C library calls the virtual board takes over, loaded with `LD_PRELOAD` in
//! front of libc: `open` (and its variants) of `/dev/gpib0` ... `/dev/gpib15`, `close`
//! and `ioctl` of what those returned. Every other path and file descriptor goes to
//! the C library's own function, found with `dlsym(RTLD_NEXT, ...)`.
//!
//! A board's file is a real file descriptor (of `/dev/null`, opened with the caller's
//! flags), so that its number is the process's own and nothing else is given it.

use std::collections::HashMap;
use std::ffi::CStr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use libc::{c_char, c_int, c_ulong, c_void, mode_t};

use crate::abi::MAX_BOARDS;
use crate::board::Board;
use crate::file::OpenFile;

struct Boards {
    boards: Vec<Board>,
    files: Mutex<HashMap<c_int, Arc<OpenFile>>>,
}

static BOARDS: OnceLock<Boards> = OnceLock::new();

fn boards() -> &'static Boards {
    BOARDS.get_or_init(|| Boards {
        boards: (0..MAX_BOARDS).map(Board::new).collect(),
        files: Mutex::new(HashMap::new()),
    })
}

fn files() -> MutexGuard<'static, HashMap<c_int, Arc<OpenFile>>> {
    boards().files.lock().unwrap_or_else(|p| p.into_inner())
}

/// The minor number of a board's device file: `/dev/gpib<N>`, N below 16.
pub fn minor_of(path: &[u8]) -> Option<usize> {
    let digits = path.strip_prefix(b"/dev/gpib")?;
    if digits.is_empty() || digits.len() > 2 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: usize = std::str::from_utf8(digits).ok()?.parse().ok()?;
    (n < MAX_BOARDS).then_some(n)
}

fn set_errno(e: c_int) {
    // SAFETY: __errno_location returns the calling thread's errno, always valid.
    unsafe { *libc::__errno_location() = e };
}

macro_rules! next {
    ($name:literal, $ty:ty) => {{
        static F: OnceLock<usize> = OnceLock::new();
        let f = *F.get_or_init(|| {
            // SAFETY: the name is a NUL-terminated literal; RTLD_NEXT finds the
            // definition after this library's, the C library's own.
            unsafe { libc::dlsym(libc::RTLD_NEXT, concat!($name, "\0").as_ptr().cast()) as usize }
        });
        if f == 0 {
            None
        } else {
            // SAFETY: `f` is the C library's function of this name, whose type is `$ty`.
            Some(unsafe { std::mem::transmute::<usize, $ty>(f) })
        }
    }};
}

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, mode_t) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, mode_t) -> c_int;
type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type CloseFn = unsafe extern "C" fn(c_int) -> c_int;
type IoctlFn = unsafe extern "C" fn(c_int, c_ulong, *mut c_void) -> c_int;

/// Opens board `minor` for the caller: a descriptor of /dev/null stands for it.
fn open_board(minor: usize, flags: c_int) -> c_int {
    let Some(real) = next!("open", OpenFn) else {
        set_errno(libc::ENOSYS);
        return -1;
    };
    let flags = (flags & libc::O_CLOEXEC) | libc::O_RDWR;
    // SAFETY: a NUL-terminated path and plain flags.
    let fd = unsafe { real(c"/dev/null".as_ptr(), flags, 0) };
    if fd < 0 {
        return fd;
    }
    let b = &boards().boards[minor];
    {
        // The first open in this process reads what gpib_config left.
        let mut st = b.lock();
        if !st.loaded {
            st.loaded = true;
            st.p = crate::persist::Persisted::load(minor);
            st.saved = st.p.clone();
            if st.p.online && st.p.interface.is_some() {
                match crate::host::attach(minor, st.p.pad) {
                    Ok(mut sim) => {
                        // The bus as the last process left it: REN, and the T1 delay
                        // the driver was told.
                        use gpib_sim::Backend as _;
                        if st.p.ren {
                            let _ = sim.remote_enable(true);
                        }
                        let same_bus = st.p.bus == crate::host::describe();
                        if st.p.t1_ns != 0 && same_bus {
                            let t1 = gpib_sim::backend::tuning::T1Delay::from_nanos(u64::from(
                                st.p.t1_ns,
                            ));
                            if let Some(t) = sim.tuning() {
                                let _ = t.set_t1(t1);
                            }
                        } else {
                            // Another bus is other hardware: its driver's T1.
                            st.p.t1_ns = crate::ioctl::attached_t1(&mut sim);
                        }
                        st.sim = Some(sim);
                        // This process's files have not asked for automatic polling.
                        crate::ioctl::model_autopoll(&mut st);
                        // The bus as gpib_config left it, restored: not this program's.
                        crate::host::forget_events();
                    }
                    Err(_) => st.p.online = false,
                }
            }
        }
    }
    files().insert(fd, Arc::new(OpenFile::new(minor)));
    fd
}

/// `open(path, flags, mode)`: a board's file is served here.
///
/// # Safety
/// As the C library's `open`: `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    if !path.is_null() {
        // SAFETY: the caller passes a NUL-terminated path.
        if let Some(minor) = minor_of(unsafe { CStr::from_ptr(path) }.to_bytes()) {
            return guarded(-1, || open_board(minor, flags));
        }
    }
    match next!("open", OpenFn) {
        // SAFETY: the caller's arguments, passed on as they came.
        Some(f) => unsafe { f(path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// `open64`: as [`open`].
///
/// # Safety
/// As [`open`].
#[no_mangle]
pub unsafe extern "C" fn open64(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    if !path.is_null() {
        // SAFETY: the caller passes a NUL-terminated path.
        if let Some(minor) = minor_of(unsafe { CStr::from_ptr(path) }.to_bytes()) {
            return guarded(-1, || open_board(minor, flags));
        }
    }
    match next!("open64", OpenFn) {
        // SAFETY: the caller's arguments, passed on as they came.
        Some(f) => unsafe { f(path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// `__open_2`, what `open` becomes in a program built with `_FORTIFY_SOURCE`.
///
/// # Safety
/// As [`open`].
#[no_mangle]
pub unsafe extern "C" fn __open_2(path: *const c_char, flags: c_int) -> c_int {
    if !path.is_null() {
        // SAFETY: the caller passes a NUL-terminated path.
        if let Some(minor) = minor_of(unsafe { CStr::from_ptr(path) }.to_bytes()) {
            return guarded(-1, || open_board(minor, flags));
        }
    }
    match next!("__open_2", Open2Fn) {
        // SAFETY: the caller's arguments, passed on as they came.
        Some(f) => unsafe { f(path, flags) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// `openat(dirfd, path, flags, mode)`: an absolute board path is served here.
///
/// # Safety
/// As the C library's `openat`.
#[no_mangle]
pub unsafe extern "C" fn openat(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
) -> c_int {
    if !path.is_null() {
        // SAFETY: the caller passes a NUL-terminated path.
        if let Some(minor) = minor_of(unsafe { CStr::from_ptr(path) }.to_bytes()) {
            return guarded(-1, || open_board(minor, flags));
        }
    }
    match next!("openat", OpenatFn) {
        // SAFETY: the caller's arguments, passed on as they came.
        Some(f) => unsafe { f(dirfd, path, flags, mode) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// `close(fd)`: a board's file is closed as the driver closes it.
///
/// # Safety
/// As the C library's `close`.
#[no_mangle]
pub unsafe extern "C" fn close(fd: c_int) -> c_int {
    if let Some(file) = files().remove(&fd) {
        guarded(0, || {
            crate::ioctl::close(&file, &boards().boards[file.minor]);
            0
        });
    }
    match next!("close", CloseFn) {
        // SAFETY: the caller's descriptor, passed on.
        Some(f) => unsafe { f(fd) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// `ioctl(fd, request, arg)`: on a board's file, the driver's answer; anything else to
/// the C library. The third argument is read as the pointer-sized word every GPIB
/// request passes (a variadic argument in the same register as a fixed one on the
/// Linux ABIs this builds for).
///
/// # Safety
/// As the C library's `ioctl`.
#[no_mangle]
pub unsafe extern "C" fn ioctl(fd: c_int, request: c_ulong, arg: *mut c_void) -> c_int {
    let file = files().get(&fd).cloned();
    if let Some(file) = file {
        return guarded(-1, || {
            let board = &boards().boards[file.minor];
            #[allow(clippy::useless_conversion)] // c_ulong is u32 on 32-bit targets
            let r = crate::ioctl::ioctl(&file, board, u64::from(request), arg as usize);
            crate::host::print_events();
            match r {
                Ok(v) => v,
                Err(e) => {
                    set_errno(e);
                    -1
                }
            }
        });
    }
    match next!("ioctl", IoctlFn) {
        // SAFETY: the caller's arguments, passed on as they came.
        Some(f) => unsafe { f(fd, request, arg) },
        None => {
            set_errno(libc::ENOSYS);
            -1
        }
    }
}

/// Runs `f`; a panic (a bug of ours) becomes EIO and `failed`, never an unwind into C.
fn guarded(failed: c_int, f: impl FnOnce() -> c_int) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(_) => {
            eprintln!("gpib-vboard: internal error");
            set_errno(libc::EIO);
            failed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::minor_of;

    #[test]
    fn board_files_are_gpib0_to_gpib15() {
        assert_eq!(minor_of(b"/dev/gpib0"), Some(0));
        assert_eq!(minor_of(b"/dev/gpib15"), Some(15));
        assert_eq!(minor_of(b"/dev/gpib16"), None);
        assert_eq!(minor_of(b"/dev/gpib"), None);
        assert_eq!(minor_of(b"/dev/gpib0x"), None);
        assert_eq!(minor_of(b"/dev/gpib007"), None);
        assert_eq!(minor_of(b"/tmp/dev/gpib0"), None);
    }
}
