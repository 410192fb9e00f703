//! IEEE 488.1 interface messages: the bytes a controller sends with ATN asserted.
//!
//! Encoding is [`InterfaceMessage::byte`]; decoding a byte seen with ATN is
//! [`InterfaceMessage::decode`], or [`CommandDecoder`] when a whole stream is
//! decoded (the meaning of 0x60..=0x7F depends on whether PPC came before).

use std::fmt;

use crate::address::{PrimaryAddress, SecondaryAddress};

/// The byte values of the IEEE 488.1 interface messages, in one place.
pub mod codes {
    /// Go To Local (addressed command).
    pub const GTL: u8 = 0x01;
    /// Selected Device Clear (addressed command).
    pub const SDC: u8 = 0x04;
    /// Parallel Poll Configure (addressed command).
    pub const PPC: u8 = 0x05;
    /// Group Execute Trigger (addressed command).
    pub const GET: u8 = 0x08;
    /// Take Control (addressed command).
    pub const TCT: u8 = 0x09;
    /// Local Lockout (universal command).
    pub const LLO: u8 = 0x11;
    /// Device Clear (universal command).
    pub const DCL: u8 = 0x14;
    /// Parallel Poll Unconfigure (universal command).
    pub const PPU: u8 = 0x15;
    /// Serial Poll Enable (universal command).
    pub const SPE: u8 = 0x18;
    /// Serial Poll Disable (universal command).
    pub const SPD: u8 = 0x19;
    /// Configure Enable (universal command, IEEE 488.1-2003): the HS488 cable length
    /// follows as a secondary.
    pub const CFE: u8 = 0x1F;
    /// Base of My Listen Address (listen address group 0x20..=0x3E).
    pub const LISTEN_BASE: u8 = 0x20;
    /// Unlisten.
    pub const UNL: u8 = 0x3F;
    /// Base of My Talk Address (talk address group 0x40..=0x5E).
    pub const TALK_BASE: u8 = 0x40;
    /// Untalk.
    pub const UNT: u8 = 0x5F;
    /// Base of the secondary command group (0x60..=0x7E as MSA).
    pub const SECONDARY_BASE: u8 = 0x60;
    /// Parallel Poll Enable base (0x60..=0x6F after PPC).
    pub const PPE_BASE: u8 = 0x60;
    /// Parallel Poll Disable (0x70..=0x7F after PPC; 0x70 is the usual one).
    pub const PPD: u8 = 0x70;
}

/// One IEEE 488.1 interface message, as sent with ATN asserted.
///
/// ```
/// use gpib::{InterfaceMessage::*, PrimaryAddress};
/// let dev = PrimaryAddress::try_from(11u8).unwrap();
/// let me = PrimaryAddress::try_from(21u8).unwrap();
/// // The 1988 io_test program's `listencmd`: {63, 64 + 11, 32 + 21}
/// let bytes: Vec<u8> = [Unlisten, Talk(dev), Listen(me)].iter().map(|m| m.byte()).collect();
/// assert_eq!(bytes, [63, 75, 53]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InterfaceMessage {
    /// GTL: addressed listeners go to local.
    GoToLocal,
    /// SDC: addressed listeners clear.
    SelectedDeviceClear,
    /// PPC: addressed listeners take the next secondary as a parallel-poll configuration.
    ParallelPollConfigure,
    /// GET: addressed listeners trigger.
    GroupExecuteTrigger,
    /// TCT: the addressed talker becomes controller-in-charge.
    TakeControl,
    /// LLO: every device disables its local (front-panel) controls.
    LocalLockout,
    /// DCL: every device clears.
    DeviceClear,
    /// PPU: every device forgets its parallel-poll configuration.
    ParallelPollUnconfigure,
    /// SPE: the talker answers with its status byte instead of data.
    SerialPollEnable,
    /// SPD: serial poll mode ends.
    SerialPollDisable,
    /// MLA: the device at this address becomes a listener.
    Listen(PrimaryAddress),
    /// UNL: every listener stops listening.
    Unlisten,
    /// MTA: the device at this address becomes the talker (any other talker stops).
    Talk(PrimaryAddress),
    /// UNT: the talker stops talking.
    Untalk,
    /// MSA: a secondary address following a talk or listen address.
    Secondary(SecondaryAddress),
    /// PPE (after PPC): respond to parallel poll. `sense` is bit 3; `line` is DIO1..=8 as 0..=7.
    ParallelPollEnable {
        /// The sense bit (respond when `ist` equals it).
        sense: bool,
        /// The DIO line to respond on, 0..=7 for DIO1..=DIO8.
        line: u8,
    },
    /// PPD (after PPC): stop responding to parallel poll.
    ParallelPollDisable,
    /// A byte with no meaning in IEEE 488.1 (an undefined command code).
    Undefined(u8),
}

/// Every command byte (parity stripped) decoded outside (`[0]`) and after (`[1]`) a
/// PPC, with whether a PPC is in force after it ([`CommandDecoder`]), at compile time.
static DECODED: [[(InterfaceMessage, bool); 128]; 2] = {
    let mut t = [[(InterfaceMessage::Unlisten, false); 128]; 2];
    let mut i = 0;
    while i < 128 {
        let outside = InterfaceMessage::decode_computed(i as u8, false);
        let after = InterfaceMessage::decode_computed(i as u8, true);
        t[0][i] = (outside, CommandDecoder::after_ppc_then(outside, false));
        t[1][i] = (after, CommandDecoder::after_ppc_then(after, true));
        i += 1;
    }
    t
};

impl InterfaceMessage {
    /// The byte sent on DIO1..DIO8 (without parity) for this message.
    pub const fn byte(self) -> u8 {
        use codes::*;
        match self {
            Self::GoToLocal => GTL,
            Self::SelectedDeviceClear => SDC,
            Self::ParallelPollConfigure => PPC,
            Self::GroupExecuteTrigger => GET,
            Self::TakeControl => TCT,
            Self::LocalLockout => LLO,
            Self::DeviceClear => DCL,
            Self::ParallelPollUnconfigure => PPU,
            Self::SerialPollEnable => SPE,
            Self::SerialPollDisable => SPD,
            Self::Listen(a) => LISTEN_BASE + a.get(),
            Self::Unlisten => UNL,
            Self::Talk(a) => TALK_BASE + a.get(),
            Self::Untalk => UNT,
            Self::Secondary(s) => SECONDARY_BASE + s.get(),
            Self::ParallelPollEnable { sense, line } => {
                PPE_BASE | ((sense as u8) << 3) | (line & 0x07)
            }
            Self::ParallelPollDisable => PPD,
            Self::Undefined(b) => b,
        }
    }

    /// Decodes a byte seen with ATN, outside a parallel-poll configuration.
    ///
    /// Bit 7 (parity) is ignored. 0x60..=0x7E decode as [`Self::Secondary`];
    /// use [`CommandDecoder`] to decode PPE/PPD after PPC.
    pub fn decode(byte: u8) -> Self {
        Self::decode_with(byte, false)
    }

    /// Decodes a byte seen with ATN; `after_ppc` says a PPC preceded it, which turns
    /// the secondary group into PPE/PPD.
    #[inline]
    pub fn decode_with(byte: u8, after_ppc: bool) -> Self {
        // One load: every command byte is decoded at compile time (`DECODED`).
        DECODED[after_ppc as usize][(byte & 0x7F) as usize].0
    }

    /// What [`InterfaceMessage::decode_with`] returns, worked out (for `DECODED`).
    const fn decode_computed(byte: u8, after_ppc: bool) -> Self {
        use codes::*;
        let b = byte & 0x7F;
        match b {
            GTL => Self::GoToLocal,
            SDC => Self::SelectedDeviceClear,
            PPC => Self::ParallelPollConfigure,
            GET => Self::GroupExecuteTrigger,
            TCT => Self::TakeControl,
            LLO => Self::LocalLockout,
            DCL => Self::DeviceClear,
            PPU => Self::ParallelPollUnconfigure,
            SPE => Self::SerialPollEnable,
            SPD => Self::SerialPollDisable,
            UNL => Self::Unlisten,
            UNT => Self::Untalk,
            0x20..=0x3E => Self::Listen(PrimaryAddress::new_const(b - LISTEN_BASE)),
            0x40..=0x5E => Self::Talk(PrimaryAddress::new_const(b - TALK_BASE)),
            0x60..=0x6F if after_ppc => Self::ParallelPollEnable {
                sense: b & 0x08 != 0,
                line: b & 0x07,
            },
            0x70..=0x7F if after_ppc => Self::ParallelPollDisable,
            0x60..=0x7E => Self::Secondary(SecondaryAddress::new_const(b - SECONDARY_BASE)),
            _ => Self::Undefined(b),
        }
    }

    /// The IEEE 488.1 mnemonic (`"UNL"`, `"MTA"`...).
    pub const fn mnemonic(self) -> &'static str {
        match self {
            Self::GoToLocal => "GTL",
            Self::SelectedDeviceClear => "SDC",
            Self::ParallelPollConfigure => "PPC",
            Self::GroupExecuteTrigger => "GET",
            Self::TakeControl => "TCT",
            Self::LocalLockout => "LLO",
            Self::DeviceClear => "DCL",
            Self::ParallelPollUnconfigure => "PPU",
            Self::SerialPollEnable => "SPE",
            Self::SerialPollDisable => "SPD",
            Self::Listen(_) => "MLA",
            Self::Unlisten => "UNL",
            Self::Talk(_) => "MTA",
            Self::Untalk => "UNT",
            Self::Secondary(_) => "MSA",
            Self::ParallelPollEnable { .. } => "PPE",
            Self::ParallelPollDisable => "PPD",
            Self::Undefined(_) => "???",
        }
    }
}

impl fmt::Display for InterfaceMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Listen(a) => write!(f, "MLA{a}"),
            Self::Talk(a) => write!(f, "MTA{a}"),
            Self::Secondary(s) => write!(f, "MSA{s}"),
            Self::ParallelPollEnable { sense, line } => {
                write!(f, "PPE(S={},DIO{})", *sense as u8, line + 1)
            }
            Self::Undefined(b) => write!(f, "0x{b:02X}"),
            m => f.write_str(m.mnemonic()),
        }
    }
}

impl From<InterfaceMessage> for u8 {
    fn from(m: InterfaceMessage) -> u8 {
        m.byte()
    }
}

/// Decodes a stream of command bytes, tracking PPC so that PPE/PPD decode correctly.
#[derive(Debug, Clone, Default)]
pub struct CommandDecoder {
    after_ppc: bool,
}

impl CommandDecoder {
    /// A decoder with no PPC pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes the next command byte.
    #[inline]
    pub fn next_message(&mut self, byte: u8) -> InterfaceMessage {
        let (m, after_ppc) = DECODED[self.after_ppc as usize][(byte & 0x7F) as usize];
        self.after_ppc = after_ppc;
        m
    }

    /// Decodes the next command byte when it is in the listen or talk address group
    /// (MLA, UNL, MTA, UNT: the bytes of every addressing sequence), as
    /// [`CommandDecoder::next_message`] would; `None`, with nothing consumed, for any
    /// other byte.
    #[cfg(feature = "sim")]
    #[inline(always)]
    pub(crate) fn next_address(&mut self, byte: u8) -> Option<InterfaceMessage> {
        use codes::{LISTEN_BASE, TALK_BASE, UNL, UNT};
        let b = byte & 0x7F;
        let m = match b {
            UNL => InterfaceMessage::Unlisten,
            UNT => InterfaceMessage::Untalk,
            LISTEN_BASE..UNL => {
                InterfaceMessage::Listen(PrimaryAddress::new_const(b - LISTEN_BASE))
            }
            TALK_BASE..UNT => InterfaceMessage::Talk(PrimaryAddress::new_const(b - TALK_BASE)),
            _ => return None,
        };
        // A primary command ends PPC's configuration mode.
        self.after_ppc = false;
        Some(m)
    }

    /// Whether a PPC is in force after `m`, when `before` says whether it was before.
    const fn after_ppc_then(m: InterfaceMessage, before: bool) -> bool {
        match m {
            InterfaceMessage::ParallelPollConfigure => true,
            // Secondary-group bytes keep the configuration mode; any primary command ends it.
            InterfaceMessage::ParallelPollEnable { .. } | InterfaceMessage::ParallelPollDisable => {
                before
            }
            _ => false,
        }
    }
}

/// Writes command bytes for a sequence of messages into a buffer, returning the filled
/// part.
///
/// Used on hot paths: up to 8 messages (every addressing sequence) cost no allocation.
#[derive(Debug, Clone)]
pub struct CommandBuf {
    bytes: [u8; 8],
    len: usize,
    /// Where the bytes live once there are more than 8 (no addressing sequence needs
    /// that many; a group trigger of many devices does).
    more: Vec<u8>,
}

impl CommandBuf {
    /// An empty buffer.
    #[inline]
    pub const fn new() -> Self {
        Self {
            bytes: [0; 8],
            len: 0,
            more: Vec::new(),
        }
    }

    /// Appends one message. The first 8 need no allocation.
    #[inline]
    pub fn push(&mut self, m: InterfaceMessage) -> &mut Self {
        if self.more.is_empty() && self.len < self.bytes.len() {
            self.bytes[self.len] = m.byte();
            self.len += 1;
        } else {
            if self.more.is_empty() {
                self.more.extend_from_slice(&self.bytes[..self.len]);
            }
            self.more.push(m.byte());
        }
        self
    }

    /// The bytes pushed so far.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        if self.more.is_empty() {
            &self.bytes[..self.len]
        } else {
            &self.more
        }
    }
}

/// The addressing sequences, built in one place for every path that addresses the
/// bus (the controller layer, serial polls, the libgpib-compatible library). Each
/// starts with UNL, so that only the devices named listen.
pub mod addressing {
    use super::codes::{LISTEN_BASE, TALK_BASE, UNL};
    use super::{CommandBuf, InterfaceMessage as M};
    use crate::address::{Address, PrimaryAddress};

    fn listen(cmd: &mut CommandBuf, a: Address) {
        cmd.push(M::Listen(a.primary));
        if let Some(s) = a.secondary {
            cmd.push(M::Secondary(s));
        }
    }

    fn talk(cmd: &mut CommandBuf, a: Address) {
        cmd.push(M::Talk(a.primary));
        if let Some(s) = a.secondary {
            cmd.push(M::Secondary(s));
        }
    }

    /// A buffer of at most 8 bytes, built with no per-message dispatch (every device
    /// query sends two such addressing sequences).
    fn small(bytes: &[u8]) -> CommandBuf {
        let mut cmd = CommandBuf::new();
        cmd.bytes[..bytes.len()].copy_from_slice(bytes);
        cmd.len = bytes.len();
        cmd
    }

    /// UNL, MTA board, MLA \[MSA\] of each device: the board talks to `devices`.
    pub fn to_devices(board: PrimaryAddress, devices: &[Address]) -> CommandBuf {
        if let [one] = devices {
            let (talk, listen) = (TALK_BASE + board.get(), LISTEN_BASE + one.primary.get());
            return match one.secondary {
                None => small(&[UNL, talk, listen]),
                Some(s) => small(&[UNL, talk, listen, M::Secondary(s).byte()]),
            };
        }
        let mut cmd = CommandBuf::new();
        cmd.push(M::Unlisten).push(M::Talk(board));
        for &d in devices {
            listen(&mut cmd, d);
        }
        cmd
    }

    /// UNL, MTA device \[MSA\], MLA board: `device` talks to the board (the 1988
    /// io_test program's `listencmd`).
    pub fn from_device(board: PrimaryAddress, device: Address) -> CommandBuf {
        let (talk, listen) = (TALK_BASE + device.primary.get(), LISTEN_BASE + board.get());
        match device.secondary {
            None => small(&[UNL, talk, listen]),
            Some(s) => small(&[UNL, talk, M::Secondary(s).byte(), listen]),
        }
    }

    /// MTA board, UNL, MLA \[MSA\] of each device: the board talks to `devices`, in
    /// linux-gpib's order (lib/ibCmd.c, `create_send_setup`), which its programs put on
    /// the bus.
    pub fn linux_gpib_send_setup(board: PrimaryAddress, devices: &[Address]) -> CommandBuf {
        let mut cmd = CommandBuf::new();
        cmd.push(M::Talk(board)).push(M::Unlisten);
        for &d in devices {
            listen(&mut cmd, d);
        }
        cmd
    }

    /// UNL, MLA board, MTA device \[MSA\]: `device` talks to the board, in linux-gpib's
    /// order (lib/ibRd.c, `InternalReceiveSetup`).
    pub fn linux_gpib_receive_setup(board: PrimaryAddress, device: Address) -> CommandBuf {
        let mut cmd = CommandBuf::new();
        cmd.push(M::Unlisten).push(M::Listen(board));
        talk(&mut cmd, device);
        cmd
    }

    /// UNL, UNT: nobody addressed (linux-gpib's `IbcUnAddr` after each device I/O, in
    /// its order).
    pub fn unaddress() -> CommandBuf {
        let mut cmd = CommandBuf::new();
        cmd.push(M::Unlisten).push(M::Untalk);
        cmd
    }

    /// UNL, MLA board, SPE, MTA device \[MSA\]: the start of a serial poll.
    pub fn serial_poll(board: PrimaryAddress, device: Address) -> CommandBuf {
        let mut cmd = CommandBuf::new();
        cmd.push(M::Unlisten)
            .push(M::Listen(board))
            .push(M::SerialPollEnable);
        talk(&mut cmd, device);
        cmd
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::message::codes;

        #[test]
        fn every_sequence_starts_with_unl() {
            let me = PrimaryAddress::new_const(0);
            let a = Address::new(22, None).unwrap();
            let b = Address::new(9, Some(3)).unwrap();
            assert_eq!(
                to_devices(me, &[a, b]).as_bytes(),
                [
                    codes::UNL,
                    codes::TALK_BASE,
                    codes::LISTEN_BASE + 22,
                    codes::LISTEN_BASE + 9,
                    codes::SECONDARY_BASE + 3
                ]
            );
            assert_eq!(
                from_device(me, b).as_bytes(),
                [
                    codes::UNL,
                    codes::TALK_BASE + 9,
                    codes::SECONDARY_BASE + 3,
                    codes::LISTEN_BASE
                ]
            );
            // One device: the short sequences every query sends.
            let board = PrimaryAddress::new_const(5);
            assert_eq!(
                to_devices(board, &[a]).as_bytes(),
                [codes::UNL, codes::TALK_BASE + 5, codes::LISTEN_BASE + 22]
            );
            assert_eq!(
                to_devices(board, &[b]).as_bytes(),
                [
                    codes::UNL,
                    codes::TALK_BASE + 5,
                    codes::LISTEN_BASE + 9,
                    codes::SECONDARY_BASE + 3
                ]
            );
            assert_eq!(
                from_device(board, a).as_bytes(),
                [codes::UNL, codes::TALK_BASE + 22, codes::LISTEN_BASE + 5]
            );
            assert_eq!(
                serial_poll(me, a).as_bytes(),
                [
                    codes::UNL,
                    codes::LISTEN_BASE,
                    codes::SPE,
                    codes::TALK_BASE + 22
                ]
            );
        }
    }
}

impl Default for CommandBuf {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::InterfaceMessage::*;
    use super::*;

    #[test]
    fn command_buffers_grow_past_eight() {
        // It panicked past 8 messages.
        let mut c = CommandBuf::new();
        for _ in 0..20 {
            c.push(Unlisten);
        }
        c.push(Untalk);
        assert_eq!(c.as_bytes().len(), 21);
        assert_eq!(c.as_bytes()[0], Unlisten.byte());
        assert_eq!(c.as_bytes()[20], Untalk.byte());
    }

    fn pa(n: u8) -> PrimaryAddress {
        PrimaryAddress::try_from(n).unwrap()
    }

    #[cfg(feature = "sim")]
    #[test]
    fn the_address_groups_decode_as_the_table_does_and_no_other_byte_does() {
        for after_ppc in [false, true] {
            for byte in 0..=u8::MAX {
                let (mut quick, mut table) =
                    (CommandDecoder { after_ppc }, CommandDecoder { after_ppc });
                let m = table.next_message(byte);
                match quick.next_address(byte) {
                    Some(q) => {
                        assert_eq!(q, m, "byte {byte:#04X}");
                        assert!(matches!(m, Listen(_) | Unlisten | Talk(_) | Untalk));
                        assert_eq!(quick.after_ppc, table.after_ppc, "byte {byte:#04X}");
                    }
                    None => {
                        assert!(!matches!(m, Listen(_) | Unlisten | Talk(_) | Untalk));
                        assert_eq!(quick.after_ppc, after_ppc, "byte {byte:#04X} consumed");
                    }
                }
            }
        }
    }

    #[test]
    fn every_fixed_code_both_ways() {
        let table = [
            (GoToLocal, 0x01),
            (SelectedDeviceClear, 0x04),
            (ParallelPollConfigure, 0x05),
            (GroupExecuteTrigger, 0x08),
            (TakeControl, 0x09),
            (LocalLockout, 0x11),
            (DeviceClear, 0x14),
            (ParallelPollUnconfigure, 0x15),
            (SerialPollEnable, 0x18),
            (SerialPollDisable, 0x19),
            (Unlisten, 0x3F),
            (Untalk, 0x5F),
            (ParallelPollDisable, 0x70),
        ];
        for (m, b) in table {
            assert_eq!(m.byte(), b, "{m}");
            assert_eq!(
                InterfaceMessage::decode_with(b, m == ParallelPollDisable),
                m
            );
            // Parity bit ignored.
            assert_eq!(
                InterfaceMessage::decode_with(b | 0x80, m == ParallelPollDisable),
                m
            );
        }
    }

    #[test]
    fn addresses_both_ways() {
        for a in PrimaryAddress::all() {
            assert_eq!(Listen(a).byte(), 0x20 + a.get());
            assert_eq!(Talk(a).byte(), 0x40 + a.get());
            assert_eq!(InterfaceMessage::decode(0x20 + a.get()), Listen(a));
            assert_eq!(InterfaceMessage::decode(0x40 + a.get()), Talk(a));
            let s = SecondaryAddress::try_from(a.get()).unwrap();
            assert_eq!(Secondary(s).byte(), 0x60 + a.get());
            assert_eq!(InterfaceMessage::decode(0x60 + a.get()), Secondary(s));
        }
    }

    #[test]
    fn every_byte_round_trips() {
        for b in 0u8..=0x7F {
            for ppc in [false, true] {
                let m = InterfaceMessage::decode_with(b, ppc);
                if !matches!(m, ParallelPollDisable) {
                    assert_eq!(m.byte(), b, "byte 0x{b:02X} ppc={ppc} -> {m}");
                }
            }
        }
        assert_eq!(InterfaceMessage::decode(0x7F), Undefined(0x7F));
        assert_eq!(InterfaceMessage::decode(0x00), Undefined(0x00));
        assert_eq!(InterfaceMessage::decode(0x10), Undefined(0x10));
    }

    #[test]
    fn parallel_poll_configuration_stream() {
        let mut d = CommandDecoder::new();
        assert_eq!(d.next_message(0x25), Listen(pa(5)));
        assert_eq!(d.next_message(0x05), ParallelPollConfigure);
        assert_eq!(
            d.next_message(0x6B),
            ParallelPollEnable {
                sense: true,
                line: 3
            }
        );
        assert_eq!(d.next_message(0x3F), Unlisten);
        assert!(matches!(d.next_message(0x6B), Secondary(_)));
        assert_eq!(
            ParallelPollEnable {
                sense: false,
                line: 7
            }
            .byte(),
            0x67
        );
    }

    #[test]
    fn io_test_1988_addressing_sequences() {
        // talkcmd {63, MTA, 32+11}: controller talks, HP3565 at 11 listens.
        let mut cmd = CommandBuf::new();
        cmd.push(Unlisten).push(Talk(pa(21))).push(Listen(pa(11)));
        assert_eq!(cmd.as_bytes(), [63, 64 + 21, 32 + 11]);
        assert_eq!(Talk(pa(21)).to_string(), "MTA21");
        assert_eq!(Unlisten.to_string(), "UNL");
    }
}
