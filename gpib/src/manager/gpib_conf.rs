//! The one way a gpib.conf device section becomes a device's settings: the section
//! looked up by name (an unusable one says why), and what it sets, for every opener of
//! a gpib.conf name ([`crate::ResourceManager::open`], [`GpibConf::open_device`],
//! `LinuxGpibBoard::open_named_device`).

use crate::error::{Error, Result};
use crate::gpibconf::{Device, GpibConf};
use crate::settings::DeviceSettings;

/// The device section `name` of `conf`; the error names the file's device sections, or
/// says why the section cannot be opened.
pub(super) fn section<'c>(conf: &'c GpibConf, name: &str) -> Result<&'c Device> {
    if let Some(why) = conf.unusable_device(name) {
        return Err(Error::InvalidArgument(format!(
            "the gpib.conf's device {name:?} cannot be opened: {why}"
        )));
    }
    conf.device(name).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{name:?} is no resource and no device section of the gpib.conf \
             ({}; names: {})",
            crate::gpibconf::default_path().display(),
            conf.names().join(", ")
        ))
    })
}

/// What a device of section `entry` opens with: every setting of the section, its EOS
/// only when it ends reads (a section's byte alone leaves the manager's).
pub(super) fn settings(entry: &Device) -> DeviceSettings {
    DeviceSettings {
        eos: entry.settings.device.eos.filter(|m| m.reos),
        ..entry.settings.device
    }
}
