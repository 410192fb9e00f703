//! The IEEE 488.2 status registers an instrument model keeps: the standard event
//! status register and its enable, the service request enable and the latched RQS.
//!
//! The instrument says what it has pending (a message: MAV; an error queued: EAV,
//! SCPI's bit 2); these registers add ESB and RQS and decide when service is
//! requested (IEEE 488.2 §11.3.3: RQS is set when a reason for service appears and
//! reset by the serial poll).

use crate::status::StatusByte;

/// EAV: an error queue holds an error (SCPI's bit 2).
const STB_EAV: u8 = 0x04;

/// What the instrument has pending, besides its status registers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pending {
    /// A message waits in the output queue (MAV).
    pub(super) output: bool,
    /// The error queue holds an error (EAV).
    pub(super) error: bool,
}

/// The status registers of an IEEE 488.2 instrument.
#[derive(Debug, Default)]
pub(super) struct Status488 {
    /// Standard event status register (`*ESR?` reads and clears it).
    esr: u8,
    /// Standard event status enable (`*ESE`).
    ese: u8,
    /// Service request enable (`*SRE`), without the RQS bit.
    sre: u8,
    /// Service requested: latched until a serial poll (or `*CLS`).
    rqs: bool,
}

impl Status488 {
    /// The summary bits of the status byte: MAV, EAV and ESB (no RQS).
    pub(super) fn summary(&self, pending: Pending) -> u8 {
        let mut stb = 0;
        if pending.error {
            stb |= STB_EAV;
        }
        if pending.output {
            stb |= StatusByte::MAV;
        }
        if self.esr & self.ese != 0 {
            stb |= StatusByte::ESB;
        }
        stb
    }

    /// True when an enabled summary bit asks for service.
    pub(super) fn service_wanted(&self, pending: Pending) -> bool {
        self.summary(pending) & self.sre & !StatusByte::RQS != 0
    }

    /// Latches RQS when a reason for service appears: `before` is
    /// [`Status488::service_wanted`] before the event, `pending` what is pending now.
    pub(super) fn after(&mut self, before: bool, pending: Pending) {
        if !before && self.service_wanted(pending) {
            self.rqs = true;
        }
    }

    /// The status byte: the summary and the latched RQS.
    pub(super) fn status(&self, pending: Pending) -> StatusByte {
        let mut stb = self.summary(pending);
        if self.rqs {
            stb |= StatusByte::RQS;
        }
        StatusByte(stb)
    }

    /// A serial poll: the status byte, then RQS is reset.
    pub(super) fn serial_poll(&mut self, pending: Pending) -> StatusByte {
        let stb = self.status(pending);
        self.rqs = false;
        stb
    }

    /// `*STB?`: the summary with MSS (bit 6) where an enabled bit is set.
    pub(super) fn stb_query(&self, pending: Pending) -> u8 {
        let mut v = self.summary(pending);
        if v & self.sre != 0 {
            v |= StatusByte::RQS;
        }
        v
    }

    /// Sets bits of the standard event status register.
    pub(super) fn set_event(&mut self, bits: u8) {
        self.esr |= bits;
    }

    /// `*ESR?`: the standard event status register, which the read clears.
    pub(super) fn take_esr(&mut self) -> u8 {
        std::mem::take(&mut self.esr)
    }

    /// The standard event status enable (`*ESE?`).
    pub(super) fn ese(&self) -> u8 {
        self.ese
    }

    /// Sets the standard event status enable (`*ESE n`).
    pub(super) fn set_ese(&mut self, v: u8) {
        self.ese = v;
    }

    /// The service request enable (`*SRE?`).
    pub(super) fn sre(&self) -> u8 {
        self.sre
    }

    /// Sets the service request enable (`*SRE n`); the RQS bit cannot be enabled.
    pub(super) fn set_sre(&mut self, v: u8) {
        self.sre = v & !StatusByte::RQS;
    }

    /// `*CLS`: clears the event status register and the service request.
    pub(super) fn clear(&mut self) {
        self.esr = 0;
        self.rqs = false;
    }
}

#[cfg(test)]
mod tests {
    use super::{Pending, Status488};
    use crate::status::StatusByte;

    const NONE: Pending = Pending {
        output: false,
        error: false,
    };
    const MAV: Pending = Pending {
        output: true,
        error: false,
    };

    #[test]
    fn rqs_latches_when_an_enabled_reason_appears_and_a_poll_resets_it() {
        let mut s = Status488::default();
        s.set_sre(0xFF);
        assert_eq!(s.sre(), !StatusByte::RQS);
        let before = s.service_wanted(NONE);
        assert!(!before);
        s.after(before, MAV);
        assert_eq!(s.status(MAV), StatusByte(StatusByte::MAV | StatusByte::RQS));
        assert_eq!(s.serial_poll(MAV), StatusByte(0x50));
        // The reason stays, RQS does not: it is set again only by a new reason.
        assert_eq!(s.status(MAV), StatusByte(StatusByte::MAV));
        s.after(true, MAV);
        assert!(!s.status(MAV).rqs());
    }

    #[test]
    fn esb_follows_the_enabled_events_and_the_read_clears_them() {
        let mut s = Status488::default();
        s.set_event(0x01);
        assert_eq!(s.summary(NONE), 0);
        s.set_ese(0x01);
        assert_eq!(s.ese(), 0x01);
        assert_eq!(s.summary(NONE), StatusByte::ESB);
        s.set_sre(StatusByte::ESB);
        assert_eq!(s.stb_query(NONE), StatusByte::ESB | StatusByte::RQS);
        assert_eq!(s.take_esr(), 0x01);
        assert_eq!(s.summary(NONE), 0);
        let eav = Pending {
            output: false,
            error: true,
        };
        assert_eq!(s.summary(eav), 0x04);
    }

    #[test]
    fn clear_resets_events_and_the_request_but_not_the_enables() {
        let mut s = Status488::default();
        s.set_sre(StatusByte::MAV);
        s.set_ese(0x20);
        s.set_event(0x20);
        s.after(false, MAV);
        assert!(s.status(MAV).rqs());
        s.clear();
        assert_eq!(s.status(MAV), StatusByte(StatusByte::MAV));
        assert_eq!((s.sre(), s.ese(), s.take_esr()), (StatusByte::MAV, 0x20, 0));
    }
}
