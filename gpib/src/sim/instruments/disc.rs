//! A disc drive on an HP-IB (CS/80), as far as the bus sees it when idle.

use crate::sim::instrument::{DeviceIo, Instrument};
use crate::status::StatusByte;

/// A disc drive (HP 7914, 7958...), and whether it is mounted.
///
/// What a mounted disc costs the other interfaces is the host driver's polling (see
/// `timing` and [`crate::sim::SimHost::mount`]): the disc owns its mount state, the
/// host's poller asks it.
#[derive(Debug, Clone)]
pub struct Disc {
    model: String,
    received: u64,
    mount_point: Option<String>,
    mounted: bool,
}

impl Disc {
    /// A disc of the given model ("7958"), with no mount point.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            received: 0,
            mount_point: None,
            mounted: false,
        }
    }

    /// Bytes the disc has been sent (it accepts and discards them).
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Where it is mounted when it is.
    pub fn mount_point(&self) -> Option<&str> {
        self.mount_point.as_deref()
    }

    /// Whether it is mounted now.
    pub fn is_mounted(&self) -> bool {
        self.mount_point.is_some() && self.mounted
    }

    /// Gives it a mount point, mounted or not.
    pub fn set_mount_point(&mut self, mount_point: impl Into<String>, mounted: bool) {
        self.mount_point = Some(mount_point.into());
        self.mounted = mounted;
    }

    /// Mounts or unmounts it (no effect without a mount point).
    pub fn set_mounted(&mut self, mounted: bool) {
        self.mounted = mounted;
    }
}

impl Instrument for Disc {
    fn status_changes_with_time(&self) -> bool {
        false // its status follows its calls and its output queue
    }

    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        Some(self)
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn listen(&mut self, data: &[u8], _end: bool, _io: &mut DeviceIo<'_>) {
        self.received = self.received.saturating_add(data.len() as u64);
    }

    fn status(&mut self, _io: &DeviceIo<'_>) -> StatusByte {
        StatusByte(0)
    }
}
