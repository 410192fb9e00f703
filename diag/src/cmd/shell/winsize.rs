//! The terminal's width, for the shell's line editor (TIOCGWINSZ on standard output).

#![allow(unsafe_code)] // one ioctl, below

use std::os::fd::AsRawFd;

nix::ioctl_read_bad!(tiocgwinsz, nix::libc::TIOCGWINSZ, nix::libc::winsize);

/// Columns of the terminal on standard output; 0 when it does not say.
pub fn columns() -> usize {
    let mut ws = nix::libc::winsize {
        ws_row: 0,
        ws_col: 0,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let fd = std::io::stdout().as_raw_fd();
    // SAFETY: TIOCGWINSZ writes one `winsize`, and `ws` is a valid, writable one that
    // outlives the call; `fd` is standard output's, open for the process's life.
    match unsafe { tiocgwinsz(fd, &mut ws) } {
        Ok(_) => usize::from(ws.ws_col),
        Err(_) => 0,
    }
}
