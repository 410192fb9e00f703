//! The key groups several tables of a configuration share, declared once: the
//! descriptor keys of a board and a named device (`timeout_s`, then `eos`, `set_reos`,
//! `set_bin`, `set_xeos`, `eot`) and the timing keys of a device and an
//! `[[instrument]]` (`t1_ns` ... `holdoff_recovery_listen_ns`, `measurement_time_s`).
//!
//! [`config_struct!`] declares a table's struct with `@timeout`, `@eos`, `@timing` and
//! `@measurement` standing where a group's fields go. The fields stay the struct's
//! own (no `#[serde(flatten)]`), so `deny_unknown_fields` still lists every key in
//! order ("expected one of ...") and errors keep their line and column.

/// Declares a configuration table's struct, expanding the key-group markers (see the
/// module's documentation) into their fields in place.
macro_rules! config_struct {
    ($(#[$a:meta])* pub struct $name:ident { $($body:tt)* }) => {
        $crate::sim::config::keys::config_struct!(@munch [$(#[$a])*] $name [] $($body)*);
    };
    (@munch [$($a:tt)*] $name:ident [$($done:tt)*]) => {
        $($a)* pub struct $name { $($done)* }
    };
    (@munch $a:tt $name:ident [$($done:tt)*] @timeout, $($rest:tt)*) => {
        $crate::sim::config::keys::config_struct!(@munch $a $name [$($done)*
            /// The descriptor's I/O timeout in seconds, 0 to 1000; 0 = none (default: a
            /// board's 10, a named device's its board's).
            pub timeout_s: Option<f64>,
        ] $($rest)*);
    };
    (@munch $a:tt $name:ident [$($done:tt)*] @eos, $($rest:tt)*) => {
        $crate::sim::config::keys::config_struct!(@munch $a $name [$($done)*
            /// The descriptor's end-of-string byte (gpib.conf `eos`; default 0).
            pub eos: Option<u8>,
            /// Reads end on the EOS byte (gpib.conf `set-reos`; linux-gpib's REOS).
            #[serde(default, alias = "set-reos")]
            pub set_reos: bool,
            /// The EOS byte is compared on all 8 bits (gpib.conf `set-bin`; BIN).
            #[serde(default, alias = "set-bin")]
            pub set_bin: bool,
            /// EOI is sent with the EOS byte on writes (gpib.conf `set-xeos`; XEOS).
            #[serde(default, alias = "set-xeos")]
            pub set_xeos: bool,
            /// EOI with the last byte of writes (gpib.conf `set-eot`; default true).
            #[serde(alias = "set-eot")]
            pub eot: Option<bool>,
        ] $($rest)*);
    };
    (@munch $a:tt $name:ident [$($done:tt)*] @timing, $($rest:tt)*) => {
        $crate::sim::config::keys::config_struct!(@munch $a $name [$($done)*
            /// T1 settling time when the device talks, ns (350 ns to 1 s).
            pub t1_ns: Option<u64>,
            /// Acceptance time when the device listens, ns (at most 1 s).
            pub accept_ns: Option<u64>,
            /// Time after a command before the device talks or listens again, µs (at
            /// most 1000 s).
            pub response_latency_us: Option<f64>,
            /// Time the firmware needs to resume talking after a held-off handshake, ns
            /// (at most 1 s).
            pub holdoff_recovery_talk_ns: Option<u64>,
            /// Time the firmware needs to resume listening after a held-off handshake,
            /// ns (at most 1 s).
            pub holdoff_recovery_listen_ns: Option<u64>,
        ] $($rest)*);
    };
    (@munch $a:tt $name:ident [$($done:tt)*] @measurement, $($rest:tt)*) => {
        $crate::sim::config::keys::config_struct!(@munch $a $name [$($done)*
            /// Time a measurement of a SCPI instrument takes (`READ?`, `*TRG`, `INIT`), s
            /// (at most 1000 s; default 0: readings at once).
            pub measurement_time_s: Option<f64>,
        ] $($rest)*);
    };
    (@munch $a:tt $name:ident [$($done:tt)*] $(#[$m:meta])* pub $f:ident : $t:ty, $($rest:tt)*) => {
        $crate::sim::config::keys::config_struct!(@munch $a $name [$($done)* $(#[$m])* pub $f: $t,] $($rest)*);
    };
}
pub(crate) use config_struct;

/// The descriptor settings of a table with the `@eos` keys (a board's, a named
/// device's): its EOS mode and EOT.
macro_rules! descriptor_of {
    ($s:expr) => {
        $crate::sim::config::descriptor($s.eos, $s.set_reos, $s.set_bin, $s.set_xeos, $s.eot)
    };
}
pub(crate) use descriptor_of;

/// Copies the `@timing` and `@measurement` keys of one table into another.
macro_rules! copy_timing {
    ($from:expr => $to:expr) => {{
        $to.t1_ns = $from.t1_ns;
        $to.accept_ns = $from.accept_ns;
        $to.response_latency_us = $from.response_latency_us;
        $to.holdoff_recovery_talk_ns = $from.holdoff_recovery_talk_ns;
        $to.holdoff_recovery_listen_ns = $from.holdoff_recovery_listen_ns;
        $to.measurement_time_s = $from.measurement_time_s;
    }};
}
pub(crate) use copy_timing;
