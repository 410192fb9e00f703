//! The IEEE 488.1 addressing state of one bus, as a pure type: command bytes in,
//! who talks and who listens out, and what each addressed command does to whom.
//!
//! It knows addresses, not devices: the host maps the listeners and the talker it
//! reports to the devices present at those addresses. A listener at a secondary
//! address is the primary's MLA followed by its MSA, as IEEE 488.1 extended listeners
//! see it; likewise for talkers.

use crate::address::{Address, PrimaryAddress, SecondaryAddress};
use crate::message::{CommandDecoder, InterfaceMessage};

/// What an interface message asks the addressed devices to do (the host applies it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Nothing beyond the addressing change.
    None,
    /// A listen address (MLA, or MLA then MSA for an extended listener), of the device
    /// [`Addressing::listened`] gives: with REN asserted, that device goes remote (IEEE
    /// 488.1 RL: LOCS to REMS on REN and its listen address, not on other bytes while
    /// it listens).
    Listen,
    /// SDC to the listeners (`all: false`) or DCL to every device (`all: true`).
    Clear { all: bool },
    /// GET to the listeners.
    Trigger,
    /// GTL to the listeners.
    GoToLocal,
    /// LLO: every device.
    LocalLockout,
    /// PPE to the listeners: respond on DIO `line + 1` when the status matches `sense`.
    ParallelPollEnable { sense: bool, line: u8 },
    /// PPD to the listeners.
    ParallelPollDisable,
    /// PPU: every device.
    ParallelPollUnconfigure,
}

/// The addressing state of one bus.
#[derive(Debug, Clone)]
pub(crate) struct Addressing {
    me: PrimaryAddress,
    decoder: CommandDecoder,
    /// Primary addresses addressed to listen (MLA), and the secondaries after them.
    listeners: Vec<Address>,
    /// The addressed talker, if any (may be the board itself).
    talker: Option<Address>,
    /// The last primary address seen, waiting for a possible MSA.
    pending: Pending,
    /// The address of the last listen address received (see [`Effect::Listen`]).
    listened: Address,
    /// SPE is in force.
    serial_poll: bool,
    /// ATN asserted by the board (set by command bytes, released by data transfers).
    atn: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    None,
    Listen(PrimaryAddress),
    Talk(PrimaryAddress),
}

impl Addressing {
    /// The board takes primary address `me` (what it answers MTA/MLA to from now on).
    pub(crate) fn set_me(&mut self, me: PrimaryAddress) {
        self.me = me;
    }

    /// A bus whose controller (the board) has primary address `me`, nobody addressed.
    pub(crate) fn new(me: PrimaryAddress) -> Self {
        Self {
            me,
            decoder: CommandDecoder::new(),
            listeners: Vec::new(),
            talker: None,
            pending: Pending::None,
            listened: Address::primary(me),
            serial_poll: false,
            atn: false,
        }
    }

    /// The board's own address.
    pub(crate) fn board_address(&self) -> Address {
        Address::primary(self.me)
    }

    /// IFC: everybody unaddressed, serial poll mode off, ATN released.
    pub(crate) fn interface_clear(&mut self) {
        *self = Self::new(self.me);
    }

    /// Command bytes sent with ATN, up to the first whose effect the devices must see
    /// (`ren`: REN is asserted, so a listen address is one): how many bytes that took,
    /// and the effect ([`Effect::None`] when every byte only addressed).
    #[inline(always)]
    pub(crate) fn commands_until_effect(&mut self, bytes: &[u8], ren: bool) -> (usize, Effect) {
        for (k, &byte) in bytes.iter().enumerate() {
            match self.command(byte) {
                Effect::None => {}
                Effect::Listen if !ren => {}
                effect => return (k + 1, effect),
            }
        }
        (bytes.len(), Effect::None)
    }

    /// A command byte sent with ATN: the addressing change it makes, and its effect.
    #[inline(always)]
    pub(crate) fn command(&mut self, byte: u8) -> Effect {
        use InterfaceMessage as M;
        self.atn = true;
        let m = match self.decoder.next_address(byte) {
            Some(m) => m,
            None => self.decoder.next_message(byte),
        };
        let pending = std::mem::replace(&mut self.pending, Pending::None);
        match m {
            M::Listen(p) => {
                let a = Address::primary(p);
                self.add_listener(a);
                self.listened = a;
                self.pending = Pending::Listen(p);
                Effect::Listen
            }
            M::Talk(p) => {
                self.talker = Some(Address::primary(p));
                self.pending = Pending::Talk(p);
                Effect::None
            }
            M::Secondary(s) => self.secondary(pending, s),
            M::Unlisten => {
                self.listeners.clear();
                Effect::None
            }
            M::Untalk => {
                self.talker = None;
                Effect::None
            }
            M::SelectedDeviceClear => Effect::Clear { all: false },
            M::DeviceClear => Effect::Clear { all: true },
            M::GroupExecuteTrigger => Effect::Trigger,
            M::GoToLocal => Effect::GoToLocal,
            M::LocalLockout => Effect::LocalLockout,
            M::SerialPollEnable => {
                self.serial_poll = true;
                Effect::None
            }
            M::SerialPollDisable => {
                self.serial_poll = false;
                Effect::None
            }
            M::ParallelPollEnable { sense, line } => Effect::ParallelPollEnable { sense, line },
            M::ParallelPollDisable => Effect::ParallelPollDisable,
            M::ParallelPollUnconfigure => Effect::ParallelPollUnconfigure,
            M::ParallelPollConfigure | M::TakeControl | M::Undefined(_) => Effect::None,
        }
    }

    fn add_listener(&mut self, a: Address) {
        if !self.listeners.contains(&a) {
            self.listeners.push(a);
        }
    }

    fn secondary(&mut self, pending: Pending, s: SecondaryAddress) -> Effect {
        match pending {
            Pending::Listen(p) => {
                // The primary alone does not listen when an MSA follows its MLA: the
                // extended listener at (p, s) does.
                self.listeners.retain(|l| *l != Address::primary(p));
                let a = Address {
                    primary: p,
                    secondary: Some(s),
                };
                self.add_listener(a);
                self.listened = a;
                Effect::Listen
            }
            Pending::Talk(p) => {
                self.talker = Some(Address {
                    primary: p,
                    secondary: Some(s),
                });
                Effect::None
            }
            Pending::None => Effect::None,
        }
    }

    /// A data byte moved: the board released ATN.
    pub(crate) fn data_transfer(&mut self) {
        self.atn = false;
    }

    /// ATN released without a transfer (linux-gpib's `ibgts`).
    pub(crate) fn release_atn(&mut self) {
        self.atn = false;
    }

    /// ATN asserted without command bytes (linux-gpib's `ibcac`).
    pub(crate) fn assert_atn(&mut self) {
        self.atn = true;
    }

    /// The address the last [`Effect::Listen`] was for.
    pub(crate) fn listened(&self) -> Address {
        self.listened
    }

    /// Whether ATN is asserted.
    pub(crate) fn atn(&self) -> bool {
        self.atn
    }

    /// Whether `a` is addressed to listen.
    pub(crate) fn listens(&self, a: Address) -> bool {
        self.listeners.contains(&a)
    }

    /// The addresses addressed to listen, the board's own included.
    pub(crate) fn listeners(&self) -> &[Address] {
        &self.listeners
    }

    /// The addressed talker.
    pub(crate) fn talker(&self) -> Option<Address> {
        self.talker
    }

    /// The board is addressed to talk (TACS).
    pub(crate) fn board_talks(&self) -> bool {
        self.talker == Some(self.board_address())
    }

    /// The board is addressed to listen (LACS).
    pub(crate) fn board_listens(&self) -> bool {
        self.listens(self.board_address())
    }

    /// Serial poll mode (SPE in force).
    pub(crate) fn serial_poll(&self) -> bool {
        self.serial_poll
    }

    /// Forgets `a`'s addressing: a device that was absent and comes back saw none of it.
    pub(crate) fn forget(&mut self, a: Address) {
        self.listeners.retain(|l| *l != a);
        if self.talker == Some(a) {
            self.talker = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::codes;

    fn bus() -> Addressing {
        Addressing::new(PrimaryAddress::new_const(0))
    }

    fn run(a: &mut Addressing, bytes: &[u8]) -> Vec<Effect> {
        bytes.iter().map(|&b| a.command(b)).collect()
    }

    fn at(p: u8, s: Option<u8>) -> Address {
        Address::new(p, s).unwrap()
    }

    #[test]
    fn unl_mta_mla_addresses_board_to_talk_device_to_listen() {
        let mut a = bus();
        run(
            &mut a,
            &[codes::UNL, codes::TALK_BASE, codes::LISTEN_BASE + 22],
        );
        assert!(a.board_talks() && !a.board_listens());
        assert!(a.listens(at(22, None)));
        assert_eq!(a.listeners(), [at(22, None)]);
        assert!(a.atn());
        a.data_transfer();
        assert!(!a.atn());
        run(
            &mut a,
            &[codes::UNL, codes::TALK_BASE + 11, codes::LISTEN_BASE],
        );
        assert_eq!(a.talker(), Some(at(11, None)));
        assert!(a.board_listens() && !a.listens(at(22, None)));
    }

    #[test]
    fn secondary_addresses_extend_the_last_primary() {
        let mut a = bus();
        run(
            &mut a,
            &[
                codes::UNL,
                codes::LISTEN_BASE + 9,
                codes::SECONDARY_BASE + 3,
            ],
        );
        assert_eq!(a.listeners(), [at(9, Some(3))]);
        run(&mut a, &[codes::TALK_BASE + 5, codes::SECONDARY_BASE + 7]);
        assert_eq!(a.talker(), Some(at(5, Some(7))));
        // An MSA after something else is ignored.
        run(&mut a, &[codes::UNT, codes::SECONDARY_BASE + 1]);
        assert_eq!(a.talker(), None);
        assert_eq!(a.listeners(), [at(9, Some(3))]);
    }

    #[test]
    fn addressed_commands_report_their_effect() {
        let mut a = bus();
        let e = run(
            &mut a,
            &[
                codes::UNL,
                codes::LISTEN_BASE + 1,
                codes::LISTEN_BASE + 2,
                codes::SDC,
                codes::GET,
                codes::GTL,
                codes::DCL,
                codes::LLO,
            ],
        );
        assert_eq!(
            e[3..],
            [
                Effect::Clear { all: false },
                Effect::Trigger,
                Effect::GoToLocal,
                Effect::Clear { all: true },
                Effect::LocalLockout
            ]
        );
        assert_eq!(a.listeners(), [at(1, None), at(2, None)]);
    }

    #[test]
    fn listen_addresses_report_the_listener_they_address() {
        let mut a = bus();
        let bytes = [
            codes::UNL,
            codes::TALK_BASE,
            codes::LISTEN_BASE + 5,
            codes::LISTEN_BASE + 9,
            codes::SECONDARY_BASE + 2,
            codes::TALK_BASE + 7,
            codes::SECONDARY_BASE + 1,
            codes::GTL,
        ];
        let seen: Vec<_> = bytes
            .iter()
            .map(|&b| match a.command(b) {
                Effect::Listen => (Effect::Listen, Some(a.listened())),
                e => (e, None),
            })
            .collect();
        assert_eq!(
            seen,
            [
                (Effect::None, None),
                (Effect::None, None),
                (Effect::Listen, Some(at(5, None))),
                (Effect::Listen, Some(at(9, None))),
                (Effect::Listen, Some(at(9, Some(2)))),
                (Effect::None, None),
                (Effect::None, None),
                (Effect::GoToLocal, None),
            ]
        );
    }

    #[test]
    fn parallel_poll_configuration_bytes_decode_after_ppc() {
        let mut a = bus();
        let e = run(
            &mut a,
            &[
                codes::LISTEN_BASE + 4,
                codes::PPC,
                codes::PPE_BASE | 0x08 | 2,
                codes::PPD,
            ],
        );
        assert_eq!(
            e[2],
            Effect::ParallelPollEnable {
                sense: true,
                line: 2
            }
        );
        assert_eq!(e[3], Effect::ParallelPollDisable);
        // Without PPC, 0x6A is an MSA.
        let mut b = bus();
        run(&mut b, &[codes::LISTEN_BASE + 4, 0x6A]);
        assert_eq!(b.listeners(), [at(4, Some(10))]);
        assert_eq!(
            run(&mut b, &[codes::PPU]),
            [Effect::ParallelPollUnconfigure]
        );
    }

    #[test]
    fn serial_poll_mode_and_ifc() {
        let mut a = bus();
        run(
            &mut a,
            &[codes::SPE, codes::TALK_BASE + 3, codes::LISTEN_BASE],
        );
        assert!(a.serial_poll());
        run(&mut a, &[codes::SPD]);
        assert!(!a.serial_poll());
        run(&mut a, &[codes::SPE]);
        a.interface_clear();
        assert!(!a.serial_poll() && a.talker().is_none() && a.listeners().is_empty());
        assert!(!a.atn());
    }

    #[test]
    fn a_device_that_comes_back_has_forgotten_its_addressing() {
        let mut a = bus();
        run(&mut a, &[codes::LISTEN_BASE + 7, codes::TALK_BASE + 7]);
        a.forget(at(7, None));
        assert!(!a.listens(at(7, None)) && a.talker().is_none());
    }
}
