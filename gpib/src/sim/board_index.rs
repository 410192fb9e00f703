//! What every bus operation asks of a board's devices, kept up to date where they
//! change (a device attached, a fault injected or cleared, a behaviour set, NRFD held)
//! instead of found by scanning every device on every operation.

use crate::address::Address;
use crate::sim::slot::Slot;

/// The slot of the present device with a given primary address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AtPrimary {
    /// No present device has it.
    None,
    /// Exactly one present device has it (with or without a secondary address).
    One(u16),
    /// Several (secondary addresses): scan.
    Many,
}

/// One board's devices, indexed.
#[derive(Debug, Clone)]
pub(crate) struct BoardIndex {
    /// Present device by primary address.
    at: [AtPrimary; 32],
    /// Number of present devices.
    present: usize,
    /// The present listen-only devices, in slot order.
    listen_only: Vec<usize>,
    /// When the last present device releases NRFD (after holding it past a message), ns.
    nrfd_released_at: u64,
    /// Present devices with the holds-NRFD fault.
    nrfd_holders: usize,
    /// Present devices with the second-talker fault, in slot order.
    dio_drivers: Vec<usize>,
    /// Bit `p` set for each present device's primary address `p`.
    present_mask: u32,
    /// The slowest acceptance time of a present device, ns (`None`: none present).
    slowest_accept_ns: Option<u64>,
}

impl Default for BoardIndex {
    fn default() -> Self {
        Self {
            at: [AtPrimary::None; 32],
            present: 0,
            listen_only: Vec::new(),
            nrfd_released_at: 0,
            nrfd_holders: 0,
            dio_drivers: Vec::new(),
            present_mask: 0,
            slowest_accept_ns: None,
        }
    }
}

impl BoardIndex {
    /// The index of `devices`.
    pub(crate) fn of(devices: &[Slot]) -> Self {
        let mut x = Self::default();
        for (i, d) in devices.iter().enumerate().filter(|(_, d)| d.present()) {
            let at = &mut x.at[usize::from(d.address.primary.get()) & 31];
            *at = match (*at, u16::try_from(i)) {
                (AtPrimary::None, Ok(i)) => AtPrimary::One(i),
                _ => AtPrimary::Many,
            };
            x.present += 1;
            x.present_mask |= 1 << (d.address.primary.get() & 31);
            x.slowest_accept_ns = x.slowest_accept_ns.max(Some(d.timing.accept_ns));
            if d.behaviour.listen_only {
                x.listen_only.push(i);
            }
            x.nrfd_released_at = x.nrfd_released_at.max(d.nrfd_until);
            if d.faults().holds_nrfd() {
                x.nrfd_holders += 1;
            }
            if d.faults().drives_dio() {
                x.dio_drivers.push(i);
            }
        }
        x
    }

    /// The present device at exactly `a`.
    #[inline(always)]
    pub(crate) fn slot_at(&self, devices: &[Slot], a: Address) -> Option<usize> {
        match self.at[usize::from(a.primary.get()) & 31] {
            AtPrimary::None => None,
            AtPrimary::One(i) => {
                let i = usize::from(i);
                (devices[i].address == a).then_some(i)
            }
            AtPrimary::Many => devices.iter().position(|d| d.present() && d.address == a),
        }
    }

    /// Whether any device is present.
    pub(crate) fn any_present(&self) -> bool {
        self.present > 0
    }

    /// How many devices are present.
    pub(crate) fn present(&self) -> usize {
        self.present
    }

    /// The present devices' primary addresses, bit `p` for address `p` (a trace
    /// record's listeners in an ATN command: every device takes part).
    pub(crate) fn present_mask(&self) -> u32 {
        self.present_mask
    }

    /// The slowest acceptance time of a present device, ns (`None`: none present).
    pub(crate) fn slowest_present_accept_ns(&self) -> Option<u64> {
        self.slowest_accept_ns
    }

    /// The present listen-only devices, in slot order.
    pub(crate) fn listen_only(&self) -> &[usize] {
        &self.listen_only
    }

    /// When every present device has released NRFD, ns.
    pub(crate) fn nrfd_released_at(&self) -> u64 {
        self.nrfd_released_at
    }

    /// A present device (which received a message) holds NRFD until `until` ns.
    pub(crate) fn nrfd_held_until(&mut self, until: u64) {
        self.nrfd_released_at = self.nrfd_released_at.max(until);
    }

    /// Whether a present device has the holds-NRFD fault.
    pub(crate) fn nrfd_held_by_fault(&self) -> bool {
        self.nrfd_holders > 0
    }

    /// The present devices that drive DIO whoever talks, in slot order.
    pub(crate) fn dio_drivers(&self) -> &[usize] {
        &self.dio_drivers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::fault::Fault;
    use crate::sim::instruments::ScpiInstrument;
    use crate::sim::timing::DeviceTiming;

    fn at(p: u8, s: Option<u8>) -> Address {
        Address::new(p, s).unwrap()
    }

    fn slot(p: u8, s: Option<u8>) -> Slot {
        Slot::new(
            at(p, s),
            Box::new(ScpiInstrument::default()),
            DeviceTiming::default(),
        )
    }

    #[test]
    fn the_index_answers_what_a_scan_of_the_present_devices_would() {
        let mut d = vec![
            slot(5, None),
            slot(9, Some(1)),
            slot(9, Some(2)),
            slot(12, None),
            slot(14, None),
        ];
        d[0].faults_mut().insert(Fault::HoldsNrfd);
        d[1].faults_mut().insert(Fault::SecondTalker);
        d[2].behaviour.listen_only = true;
        d[2].nrfd_until = 3_000_000;
        d[3].faults_mut().insert(Fault::Absent);
        d[3].faults_mut().insert(Fault::HoldsNrfd);
        d[3].nrfd_until = 9_000_000;
        d[4].faults_mut().insert(Fault::NeverTalks);
        let mut x = BoardIndex::of(&d);
        assert_eq!(x.slot_at(&d, at(5, None)), Some(0));
        assert_eq!(x.slot_at(&d, at(5, Some(1))), None);
        assert_eq!(x.slot_at(&d, at(9, Some(2))), Some(2));
        assert_eq!(x.slot_at(&d, at(9, None)), None);
        assert_eq!(x.slot_at(&d, at(12, None)), None, "absent");
        assert_eq!(x.slot_at(&d, at(14, None)), Some(4));
        assert_eq!(x.slot_at(&d, at(30, None)), None);
        assert!(x.any_present());
        assert_eq!(x.present(), 4);
        assert!(x.nrfd_held_by_fault());
        assert_eq!(x.dio_drivers(), [1]);
        assert_eq!(x.listen_only(), [2]);
        assert_eq!(x.present_mask(), 1 << 5 | 1 << 9 | 1 << 14, "12 is absent");
        d[4].timing.accept_ns = 7_000;
        d[3].timing.accept_ns = 9_000; // absent: not counted
        assert_eq!(BoardIndex::of(&d).slowest_present_accept_ns(), Some(7_000));
        assert_eq!(BoardIndex::of(&[]).slowest_present_accept_ns(), None);
        assert_eq!(BoardIndex::of(&[]).present_mask(), 0);
        assert_eq!(
            x.nrfd_released_at(),
            3_000_000,
            "an absent device holds nothing"
        );
        x.nrfd_held_until(4_000_000);
        assert_eq!(x.nrfd_released_at(), 4_000_000);
        d[0].faults_mut().clear();
        assert!(!BoardIndex::of(&d).nrfd_held_by_fault());
        assert!(!BoardIndex::of(&[]).any_present());
    }
}
