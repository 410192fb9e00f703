//! A read that got bytes and then waited out its timeout: the device stopped talking
//! without ending its message with END (EOI). The doctor tries the same short query
//! again with reads also ending on a newline (the EOS byte: linux-gpib's REOS, a
//! Prologix adapter's `++read 10` instead of `++read eoi`, VXI-11's termChar), and
//! names the cause when that ends it.

use serde::Serialize;

use crate::measure::{Session, SessionOptions};
use crate::target::Target;

use super::advice::problem;
use super::{Cause, Finding};

/// The newline most instruments end their answers with.
const NEWLINE: gpib::Eos = gpib::Eos {
    byte: b'\n',
    eight_bit: false,
};

/// The short query tried with reads ending on a newline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReadEndTrial {
    /// Bytes the failed read got before it waited out its timeout.
    pub stalled_after: u64,
    /// Seconds the query took with reads ending on a newline, when it succeeded.
    pub with_newline_seconds: Option<f64>,
    /// Why it failed even so.
    pub failure: Option<String>,
}

/// Runs one short query of the device of `opts` with reads ending on a newline.
pub fn run(target: &Target, opts: &SessionOptions, stalled_after: u64) -> ReadEndTrial {
    let mut trial = ReadEndTrial {
        stalled_after,
        with_newline_seconds: None,
        failure: None,
    };
    let result = Session::open(target, opts, 16).and_then(|mut s| {
        s.end_reads_on(Some(NEWLINE));
        s.transactions(1)
    });
    match result {
        Ok(s) => trial.with_newline_seconds = Some(s.seconds),
        Err(e) => trial.failure = Some(e.to_string()),
    }
    trial
}

/// The finding when the query succeeded with reads ending on a newline.
pub fn finding(trial: &ReadEndTrial, device: Option<u8>, failure: &str) -> Option<Finding> {
    let seconds = trial.with_newline_seconds?;
    let who = device.map_or("the device".to_string(), |d| format!("device {d}"));
    Some(problem(
        Cause::NoEoi,
        format!(
            "{who} ends its answers without END (EOI): a read got {} B and then waited for \
             the end until its timeout; with reads ending on a newline too, a short query took \
             {seconds:.6} s",
            trial.stalled_after
        ),
        vec![format!("without it: {failure}")],
        "end reads on the newline as well as on END: ibconfig(ud, IbcEOSchar, 0x0a) and \
         ibconfig(ud, IbcEOSrd, 1) on linux-gpib (binary blocks are then read by their \
         length), `++read 10` instead of `++read eoi` on a Prologix adapter, \
         read_termination = '\\n' in VISA; or set the instrument to assert EOI with its last \
         byte",
    ))
}
