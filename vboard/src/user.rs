//! Copying to and from the caller's memory as the kernel's `copy_from_user` and
//! `copy_to_user` do: an address that is not mapped (a null pointer, a buffer shorter
//! than the count says) is an `EFAULT`, never a crash. The copies go through
//! `process_vm_readv`/`process_vm_writev` on this very process, which check each page
//! and report a fault as an error.

use std::mem::{size_of, MaybeUninit};

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Once;

use libc::c_void;

/// This process's id, asked once (and again in a child after `fork`).
static PID: AtomicI32 = AtomicI32::new(0);

extern "C" fn forget_pid() {
    PID.store(0, Ordering::Relaxed);
}

fn pid() -> libc::pid_t {
    static AT_FORK: Once = Once::new();
    AT_FORK.call_once(|| {
        // SAFETY: registers a handler that only stores to an atomic.
        unsafe { libc::pthread_atfork(None, None, Some(forget_pid)) };
    });
    let p = PID.load(Ordering::Relaxed);
    if p != 0 {
        return p;
    }
    // SAFETY: getpid has no preconditions and cannot fail.
    let p = unsafe { libc::getpid() };
    PID.store(p, Ordering::Relaxed);
    p
}

/// An errno value.
pub type Errno = i32;

thread_local! {
    /// The top (highest address) of the calling thread's stack, once asked.
    static STACK_TOP: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn stack_top() -> usize {
    STACK_TOP.with(|top| {
        if top.get() == 0 {
            let mut attr = MaybeUninit::<libc::pthread_attr_t>::uninit();
            // SAFETY: pthread_getattr_np fills `attr` for the calling thread; it is
            // read only when that succeeded, and destroyed after.
            unsafe {
                if libc::pthread_getattr_np(libc::pthread_self(), attr.as_mut_ptr()) == 0 {
                    let mut base: *mut c_void = std::ptr::null_mut();
                    let mut size: usize = 0;
                    if libc::pthread_attr_getstack(attr.as_ptr(), &mut base, &mut size) == 0 {
                        top.set((base as usize).saturating_add(size));
                    }
                    libc::pthread_attr_destroy(attr.as_mut_ptr());
                }
            }
        }
        top.get()
    })
}

/// Whether `len` bytes at `at` lie in the calling thread's live stack: between this
/// function's own frame and the stack's top, the frames of the callers, which are
/// mapped and writable (an ioctl's argument is almost always one of them).
fn on_live_stack(at: usize, len: usize) -> bool {
    let here = 0u8;
    let sp = std::ptr::addr_of!(here) as usize;
    let top = stack_top();
    top != 0 && at > sp && at.checked_add(len).is_some_and(|end| end <= top)
}

/// Copies `len` bytes between `local` and the caller's `remote` without a check.
///
/// # Safety
/// Both must be valid for `len` bytes (the one written, writable).
unsafe fn direct(local: *mut c_void, remote: *mut c_void, len: usize, to_user: bool) {
    let (from, to) = if to_user {
        (local, remote)
    } else {
        (remote, local)
    };
    // SAFETY: the caller promises both ranges; they do not overlap (ours is our own).
    unsafe { std::ptr::copy_nonoverlapping(from as *const u8, to as *mut u8, len) }
}

fn copy(local: *mut c_void, remote: *mut c_void, len: usize, to_user: bool) -> Result<(), Errno> {
    if len == 0 {
        return Ok(());
    }
    if remote.is_null() {
        return Err(libc::EFAULT);
    }
    if on_live_stack(remote as usize, len) {
        // SAFETY: the caller's bytes are in a live frame of this thread's stack
        // (checked just now), mapped and writable; `local` has `len` bytes.
        unsafe { direct(local, remote, len, to_user) };
        return Ok(());
    }
    let liov = libc::iovec {
        iov_base: local,
        iov_len: len,
    };
    let riov = libc::iovec {
        iov_base: remote,
        iov_len: len,
    };
    // SAFETY: both iovecs describe `len` bytes; the local one is memory this module
    // owns (a buffer or a value of that size). The system call checks the remote one
    // and reports an unmapped page as EFAULT instead of touching it.
    let n = unsafe {
        if to_user {
            libc::process_vm_writev(pid(), &liov, 1, &riov, 1, 0)
        } else {
            libc::process_vm_readv(pid(), &liov, 1, &riov, 1, 0)
        }
    };
    if n < 0 {
        let e = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EFAULT);
        if e == libc::ENOSYS || e == libc::EPERM {
            // A sandbox without these calls: the caller's pointers are trusted as a
            // library call would trust them (null was refused above).
            // SAFETY: the caller gave this address and length for this ioctl.
            unsafe { direct(local, remote, len, to_user) };
            return Ok(());
        }
        return Err(libc::EFAULT);
    }
    if n as usize == len {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// Reads a `T` from the caller's address `at` (`copy_from_user`).
pub fn read_in<T: Copy>(at: usize) -> Result<T, Errno> {
    let mut v = MaybeUninit::<T>::uninit();
    copy(
        v.as_mut_ptr().cast(),
        at as *mut c_void,
        size_of::<T>(),
        false,
    )?;
    // SAFETY: `copy` filled all size_of::<T>() bytes; the `T`s read here are plain C
    // structs and integers, valid for any bit pattern.
    Ok(unsafe { v.assume_init() })
}

/// Writes `v` to the caller's address `at` (`copy_to_user`).
pub fn write_out<T: Copy>(at: usize, v: &T) -> Result<(), Errno> {
    copy(
        (v as *const T).cast_mut().cast(),
        at as *mut c_void,
        size_of::<T>(),
        true,
    )
}

/// Reads `out.len()` bytes from the caller's address `at`.
pub fn read_bytes(at: u64, out: &mut [u8]) -> Result<(), Errno> {
    let at = usize::try_from(at).map_err(|_| libc::EFAULT)?;
    copy(out.as_mut_ptr().cast(), at as *mut c_void, out.len(), false)
}

/// Writes `data` to the caller's address `at`.
pub fn write_bytes(at: u64, data: &[u8]) -> Result<(), Errno> {
    let at = usize::try_from(at).map_err(|_| libc::EFAULT)?;
    copy(
        data.as_ptr().cast_mut().cast(),
        at as *mut c_void,
        data.len(),
        true,
    )
}

/// Whether the caller's `len` bytes at `at` are all mapped and readable: one byte of
/// each page, read in one call (1,024 pages a call).
pub fn probe(at: u64, len: usize) -> Result<(), Errno> {
    const PAGE: u64 = 4096;
    if len == 0 {
        return Ok(());
    }
    let last = at.checked_add(len as u64 - 1).ok_or(libc::EFAULT)?;
    if at == 0 || usize::try_from(last).is_err() {
        return Err(libc::EFAULT);
    }
    if on_live_stack(at as usize, len) {
        return Ok(());
    }
    let mut pages = Vec::new();
    let mut p = at;
    loop {
        pages.push(p);
        if p / PAGE == last / PAGE {
            break;
        }
        p = (p / PAGE + 1) * PAGE;
    }
    let mut sink = vec![0u8; pages.len().min(1024)];
    for chunk in pages.chunks(1024) {
        let local = libc::iovec {
            iov_base: sink.as_mut_ptr().cast(),
            iov_len: chunk.len(),
        };
        let remote: Vec<libc::iovec> = chunk
            .iter()
            .map(|&a| libc::iovec {
                iov_base: a as usize as *mut c_void,
                iov_len: 1,
            })
            .collect();
        // SAFETY: the local iovec is `sink`, at least `chunk.len()` bytes; the remote
        // ones are checked by the system call, which reports an unmapped page as
        // EFAULT (or a short count) instead of touching it.
        let n = unsafe {
            libc::process_vm_readv(
                pid(),
                &local,
                1,
                remote.as_ptr(),
                remote.len() as libc::c_ulong,
                0,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EFAULT);
            if e == libc::ENOSYS || e == libc::EPERM {
                return Ok(()); // no such calls here: trusted, as `copy` does
            }
            return Err(libc::EFAULT);
        }
        if n as usize != chunk.len() {
            return Err(libc::EFAULT);
        }
    }
    Ok(())
}
