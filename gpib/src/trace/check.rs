//! Handshake checks on a waveform (synthesised from a trace, or read from a logic
//! analyzer's VCD), the ones sigrok's decoder does not make (it never reads NRFD,
//! NDAC or SRQ):
//!
//! * **T1 settling**: DIO (and EOI) stable at least [`Limits::t1_ns`] before DAV is
//!   asserted (IEEE 488.1: 2 µs in general, 500 ns or 350 ns at best per byte), and the
//!   first byte after ATN changes at least [`Limits::first_t1_ns`] (2 µs) after it.
//! * **Handshake order**: DAV asserted only while NRFD is released (every listener
//!   ready); NDAC released only while DAV is asserted (during ATN, when every device
//!   is a listener); DAV released only after NDAC was released (the byte accepted).
//! * **Response to ATN**: a device asserts NDAC within [`Limits::t7_ns`] (T7, 200 ns)
//!   of ATN being asserted.

use crate::trace::wave::lines;

/// The limits checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Least settling from a DIO change to DAV asserted (default 350 ns, the standard's
    /// shortest; give 2000 for the conservative figure).
    pub t1_ns: u64,
    /// Least settling before the first byte after ATN changes (default 2 µs).
    pub first_t1_ns: u64,
    /// Longest time for the devices to assert NDAC after ATN (default 200 ns).
    pub t7_ns: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            t1_ns: crate::ieee488::MIN_T1_NS,
            first_t1_ns: 2000,
            t7_ns: 200,
        }
    }
}

/// Which rule was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// DIO not settled long enough before DAV.
    T1,
    /// The first byte after ATN changed was not settled long enough.
    FirstT1,
    /// DAV asserted while NRFD was asserted.
    DavWhileNotReady,
    /// NDAC released while DAV was not asserted (during ATN).
    NdacWithoutDav,
    /// DAV released before NDAC was released.
    DavBeforeAccept,
    /// No device asserted NDAC within T7 of ATN.
    AtnResponse,
}

impl Rule {
    /// A short name ("t1", "nrfd-order"...).
    pub fn name(self) -> &'static str {
        match self {
            Rule::T1 => "t1",
            Rule::FirstT1 => "first-t1",
            Rule::DavWhileNotReady => "dav-while-nrfd",
            Rule::NdacWithoutDav => "ndac-without-dav",
            Rule::DavBeforeAccept => "dav-before-ndac",
            Rule::AtnResponse => "atn-response",
        }
    }
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// When (picoseconds from the start of the waveform).
    pub at_ps: u64,
    /// Which rule.
    pub rule: Rule,
    /// What was seen.
    pub detail: String,
    /// The lines asserted then.
    pub lines: u16,
}

/// Names of the asserted lines: "DAV NRFD ATN".
pub fn line_names(state: u16) -> String {
    crate::trace::wave::LINE_NAMES
        .iter()
        .enumerate()
        .filter(|(i, _)| state & (1 << i) != 0 && *i >= 8)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

fn ns(ps: u64) -> f64 {
    ps as f64 / 1000.0
}

/// Checks a waveform: `changes` are `(time in ps, asserted lines)` with times never
/// decreasing. At most `max` violations are kept (the count of all is returned).
pub fn check(changes: &[(u64, u16)], limits: &Limits, max: usize) -> (Vec<Violation>, u64) {
    let mut c = Checker::new(*limits, max);
    for &(t, new) in changes {
        c.change(t, new);
    }
    c.finish()
}

/// The check one change at a time, in constant memory: for waveforms too long to hold
/// (a trace drawn record by record, a VCD read change by change).
#[derive(Debug, Clone)]
pub struct Checker {
    /// The limits in picoseconds (saturated: a limit past `u64::MAX` ps is never met).
    t1_ps: u64,
    first_t1_ps: u64,
    t7_ps: u64,
    limits: Limits,
    max: usize,
    found: Vec<Violation>,
    count: u64,
    changes: u64,
    state: u16,
    /// Last DIO/EOI change.
    dio_at: u64,
    /// Last ATN change, until the first DAV after it.
    atn_at: Option<u64>,
    atn_deadline: Option<u64>,
    /// NDAC released since DAV was asserted.
    accepted: bool,
}

impl Checker {
    /// A check against `limits` keeping at most `max` violations (all are counted).
    pub fn new(limits: Limits, max: usize) -> Self {
        Self {
            t1_ps: limits.t1_ns.saturating_mul(1000),
            first_t1_ps: limits.first_t1_ns.saturating_mul(1000),
            t7_ps: limits.t7_ns.saturating_mul(1000),
            limits,
            max,
            found: Vec::new(),
            count: 0,
            changes: 0,
            state: 0,
            dio_at: 0,
            atn_at: None,
            atn_deadline: None,
            accepted: false,
        }
    }

    /// Changes seen so far.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Violations found so far (all counted).
    pub fn count(&self) -> u64 {
        self.count
    }

    fn report(&mut self, v: Violation) {
        self.count += 1;
        if self.found.len() < self.max {
            self.found.push(v);
        }
    }

    /// The lines are `new` from `t` picoseconds on (never before the last change).
    pub fn change(&mut self, t: u64, new: u16) {
        self.changes += 1;
        let state = self.state;
        let limits = self.limits;
        if let Some(d) = self.atn_deadline {
            if t > d {
                self.report(Violation {
                    at_ps: d,
                    rule: Rule::AtnResponse,
                    detail: format!(
                        "no device asserted NDAC within {} ns of ATN (T7)",
                        limits.t7_ns
                    ),
                    lines: state,
                });
                self.atn_deadline = None;
            }
        }
        let changed = state ^ new;
        let ifc = (state | new) & lines::IFC != 0;
        if changed & (lines::DIO | lines::EOI) != 0 {
            self.dio_at = t;
        }
        if changed & lines::ATN != 0 {
            self.atn_at = Some(t);
            self.atn_deadline = if new & lines::ATN != 0 && new & lines::NDAC == 0 {
                Some(t.saturating_add(self.t7_ps))
            } else {
                None
            };
        }
        if new & lines::NDAC != 0 {
            self.atn_deadline = None;
        }
        let dav_on = changed & lines::DAV != 0 && new & lines::DAV != 0;
        let dav_off = changed & lines::DAV != 0 && new & lines::DAV == 0;
        if dav_on {
            self.accepted = false;
            if state & lines::NRFD != 0 && new & lines::NRFD != 0 {
                self.report(Violation {
                    at_ps: t,
                    rule: Rule::DavWhileNotReady,
                    detail:
                        "DAV asserted while NRFD is asserted (a listener was not ready for data)"
                            .into(),
                    lines: new,
                });
            }
            let settled = t.saturating_sub(self.dio_at);
            if changed & (lines::DIO | lines::EOI) != 0 {
                self.report(Violation {
                    at_ps: t,
                    rule: Rule::T1,
                    detail: "DIO changed together with DAV (no settling time)".into(),
                    lines: new,
                });
            } else if settled < self.t1_ps {
                self.report(Violation {
                    at_ps: t,
                    rule: Rule::T1,
                    detail: format!(
                        "DIO settled {:.0} ns before DAV, less than T1 = {} ns",
                        ns(settled),
                        limits.t1_ns
                    ),
                    lines: new,
                });
            }
            if let Some(a) = self.atn_at.take() {
                let since = t.saturating_sub(a.max(self.dio_at));
                if since < self.first_t1_ps {
                    self.report(Violation {
                        at_ps: t,
                        rule: Rule::FirstT1,
                        detail: format!(
                            "first byte after ATN changed settled {:.0} ns before DAV, less than {} ns",
                            ns(since),
                            limits.first_t1_ns
                        ),
                        lines: new,
                    });
                }
            }
        }
        if changed & lines::NDAC != 0 && new & lines::NDAC == 0 {
            if new & lines::DAV != 0 {
                self.accepted = true;
            } else if new & lines::ATN != 0 && !ifc {
                self.report(Violation {
                    at_ps: t,
                    rule: Rule::NdacWithoutDav,
                    detail: "NDAC released while DAV is not asserted, during ATN (a byte accepted that was not sent)"
                        .into(),
                    lines: new,
                });
            }
        }
        if dav_off && !self.accepted && !ifc {
            self.report(Violation {
                at_ps: t,
                rule: Rule::DavBeforeAccept,
                detail: "DAV released before NDAC was released (the byte was not accepted)".into(),
                lines: new,
            });
        }
        self.state = new;
    }

    /// The violations kept and the count of all.
    pub fn finish(self) -> (Vec<Violation>, u64) {
        (self.found, self.count)
    }
}
