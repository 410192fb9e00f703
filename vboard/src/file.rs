//! One open file of `/dev/gpibN` (`gpib_file_private_t`): its descriptors, whether it
//! holds the board's user lock, whether it asked for automatic serial polling.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::abi::MAX_DESCRIPTORS;

/// A descriptor (`gpib_descriptor_t`): the address it talks to, whether it is the
/// board's own, and whether an I/O is in progress on it (which clears CMPL).
#[derive(Debug, Default)]
pub struct Descriptor {
    pad: AtomicU32,
    sad: AtomicI32,
    /// The board descriptor (handle 0, or one opened with `is_board`).
    pub is_board: bool,
    io_in_progress: AtomicBool,
    /// This file counts among the board's autopollers (only handle 0 does).
    pub autopoll_enabled: AtomicBool,
}

impl Descriptor {
    /// A descriptor for `pad`/`sad`.
    pub fn new(pad: u32, sad: i32, is_board: bool) -> Self {
        Self {
            pad: AtomicU32::new(pad),
            sad: AtomicI32::new(sad),
            is_board,
            ..Self::default()
        }
    }

    /// Its address.
    pub fn address(&self) -> (u32, i32) {
        (
            self.pad.load(Ordering::Relaxed),
            self.sad.load(Ordering::Relaxed),
        )
    }

    /// Gives it a new primary address.
    pub fn set_pad(&self, pad: u32) {
        self.pad.store(pad, Ordering::Relaxed);
    }

    /// Gives it a new secondary address.
    pub fn set_sad(&self, sad: i32) {
        self.sad.store(sad, Ordering::Relaxed);
    }

    /// Whether an I/O is in progress.
    pub fn io(&self) -> bool {
        self.io_in_progress.load(Ordering::SeqCst)
    }

    /// Marks an I/O as started or finished.
    pub fn set_io(&self, on: bool) {
        self.io_in_progress.store(on, Ordering::SeqCst);
    }
}

/// What one open file keeps.
pub struct Files {
    /// Its descriptors by handle; handle 0 is the board's, made at open.
    pub descriptors: Vec<Option<Arc<Descriptor>>>,
    /// It holds the board's user lock (`IBMUTEX`).
    pub holding_mutex: bool,
}

/// One open file.
pub struct OpenFile {
    /// The board's minor number.
    pub minor: usize,
    inner: Mutex<Files>,
}

impl OpenFile {
    /// A file just opened on board `minor`: handle 0 is the board's descriptor.
    pub fn new(minor: usize) -> Self {
        let mut descriptors = vec![None; MAX_DESCRIPTORS];
        descriptors[0] = Some(Arc::new(Descriptor::new(0, -1, true)));
        Self {
            minor,
            inner: Mutex::new(Files {
                descriptors,
                holding_mutex: false,
            }),
        }
    }

    /// Its descriptors (`descriptors_mutex`).
    pub fn lock(&self) -> MutexGuard<'_, Files> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The descriptor of `handle`, or EINVAL (`handle_to_descriptor`).
    pub fn descriptor(&self, handle: i64) -> Result<Arc<Descriptor>, i32> {
        let i = usize::try_from(handle).map_err(|_| libc::EINVAL)?;
        self.lock()
            .descriptors
            .get(i)
            .and_then(Clone::clone)
            .ok_or(libc::EINVAL)
    }
}
