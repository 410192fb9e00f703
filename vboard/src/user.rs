//! Copying to and from the caller's memory as the kernel's `copy_from_user` and
//! `copy_to_user` do: an address that is not mapped (a null pointer, a buffer shorter
//! than the count says) is an `EFAULT`, never a crash. The copies go through
//! `process_vm_readv`/`process_vm_writev` on this very process, which check each page
//! and report a fault as an error.

use std::mem::{size_of, MaybeUninit};

use libc::c_void;

/// An errno value.
pub type Errno = i32;

fn copy(local: *mut c_void, remote: *mut c_void, len: usize, to_user: bool) -> Result<(), Errno> {
    if len == 0 {
        return Ok(());
    }
    if remote.is_null() {
        return Err(libc::EFAULT);
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
            libc::process_vm_writev(libc::getpid(), &liov, 1, &riov, 1, 0)
        } else {
            libc::process_vm_readv(libc::getpid(), &liov, 1, &riov, 1, 0)
        }
    };
    if n < 0 {
        let e = std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EFAULT);
        return Err(if e == libc::ENOSYS || e == libc::EPERM {
            // A sandbox without these calls: the caller's pointers are trusted as a
            // library call would trust them (null was refused above).
            // SAFETY: the caller gave this address and length for this ioctl.
            unsafe {
                if to_user {
                    std::ptr::copy_nonoverlapping(local as *const u8, remote as *mut u8, len)
                } else {
                    std::ptr::copy_nonoverlapping(remote as *const u8, local as *mut u8, len)
                }
            }
            return Ok(());
        } else {
            libc::EFAULT
        });
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
