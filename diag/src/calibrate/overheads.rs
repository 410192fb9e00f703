//! The model's call overheads, solved on the model itself.
//!
//! A measured line's intercept is what one timed transfer costs before its first byte.
//! On the model a timed transfer may be several calls, each paying its board's overhead
//! (a SCPI block read is its header, its length and its body; a SCPI write is
//! addressed, then its header, body and terminator go out), and the bytes of a header
//! are in the intercept too. Taken as the overhead, the intercept is then paid several
//! times over: on a DMA bus that a slow listener holds to 25 us a byte, the model added
//! about 1 ms to every transfer. The model's intercepts are linear in its overheads, so
//! three replays of the swept sizes on it tell how many overheads of each kind a timed
//! read and a timed write pay, and which overheads give the measured intercepts.

use crate::error::Result;

/// A timed read's and a timed write's intercept (seconds before the first byte).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Intercepts {
    /// A read's, s.
    pub read: f64,
    /// A write's, s.
    pub write: f64,
}

/// A board's call overheads in seconds: a read call's, and a write call's (which
/// commands and polls pay too: the board talks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overheads {
    /// A read call's, s.
    pub read: f64,
    /// A write call's, s.
    pub write: f64,
}

/// The overhead the replays try, s: large beside a model's own per-call times, small
/// beside the configuration's 1 s limit.
const PROBE: f64 = 1e-3;

/// A timed transfer pays at least one overhead of its own direction; fewer than this
/// means the replays did not see the overhead at all.
const LEAST_CALLS: f64 = 0.5;

/// The overheads that make the model's intercepts `measured`, `replay` running the
/// model with given overheads and fitting its lines. None when the replays do not show
/// the overheads as a timed transfer must pay them (the model's own intercepts then
/// stand). An overhead that would have to be negative (the model's bytes alone take
/// longer than the measured intercept) is 0: the held-out sizes show the error.
pub fn solve(
    measured: Intercepts,
    mut replay: impl FnMut(Overheads) -> Result<Intercepts>,
) -> Result<Option<Overheads>> {
    let zero = replay(Overheads {
        read: 0.0,
        write: 0.0,
    })?;
    let reads = replay(Overheads {
        read: PROBE,
        write: 0.0,
    })?;
    let writes = replay(Overheads {
        read: 0.0,
        write: PROBE,
    })?;
    let probe = PROBE;
    // Overheads of each kind a timed read and a timed write pay.
    let read_in_read = (reads.read - zero.read) / probe;
    let write_in_read = (writes.read - zero.read) / probe;
    let write_in_write = (writes.write - zero.write) / probe;
    let read_in_write = (reads.write - zero.write) / probe;
    let det = read_in_read * write_in_write - write_in_read * read_in_write;
    let sane = [
        read_in_read,
        write_in_read,
        write_in_write,
        read_in_write,
        det,
    ]
    .iter()
    .all(|x| x.is_finite());
    if !sane
        || read_in_read < LEAST_CALLS
        || write_in_write < LEAST_CALLS
        || det < LEAST_CALLS * LEAST_CALLS
    {
        return Ok(None);
    }
    // What the overheads have to make up, each way.
    let (dr, dw) = (measured.read - zero.read, measured.write - zero.write);
    let mut read = (dr * write_in_write - write_in_read * dw) / det;
    let mut write = (read_in_read * dw - read_in_write * dr) / det;
    if read < 0.0 {
        read = 0.0;
        write = dw / write_in_write;
    } else if write < 0.0 {
        write = 0.0;
        read = dr / read_in_read;
    }
    Ok(Some(Overheads {
        read: read.max(0.0),
        write: write.max(0.0),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A model whose timed read is `reads` read calls and `commands` write-side calls
    /// plus `rest_r` s, and whose timed write is `writes` write calls plus `rest_w` s.
    fn model(
        reads: f64,
        commands: f64,
        writes: f64,
        rest_r: f64,
        rest_w: f64,
    ) -> impl FnMut(Overheads) -> Result<Intercepts> {
        move |o| {
            Ok(Intercepts {
                read: rest_r + reads * o.read + commands * o.write,
                write: rest_w + writes * o.write,
            })
        }
    }

    /// The overheads in µs to the nanosecond, as the configuration has them.
    fn in_us(o: Overheads) -> (f64, f64) {
        let us = |s: f64| (s * 1e9).round() / 1e3;
        (us(o.read), us(o.write))
    }

    #[test]
    fn several_calls_a_transfer_share_the_measured_intercept() {
        // A SCPI block on a slow-listener bus: 3 read calls, 4 write-side calls (the
        // address, header, body, terminator), 180 us and 310 us of header bytes.
        let measured = Intercepts {
            read: 180e-6 + 3.0 * 20e-6,
            write: 310e-6 + 4.0 * 20e-6,
        };
        let o = solve(measured, model(3.0, 0.0, 4.0, 180e-6, 310e-6))
            .unwrap()
            .unwrap();
        assert_eq!(in_us(o), (20.0, 20.0));
        // Reads and writes measured apart stay apart; a read addressed in its window
        // pays a command's (the write's) overhead too.
        let measured = Intercepts {
            read: 600e-6,
            write: 442.1e-6,
        };
        let o = solve(measured, model(1.0, 1.0, 1.0, 0.0, 0.0))
            .unwrap()
            .unwrap();
        assert_eq!(in_us(o), (157.9, 442.1));
    }

    #[test]
    fn an_intercept_the_model_cannot_reach_gives_a_zero_overhead_not_a_negative_one() {
        let measured = Intercepts {
            read: 100e-6,
            write: 500e-6,
        };
        let o = solve(measured, model(2.0, 0.0, 2.0, 300e-6, 100e-6))
            .unwrap()
            .unwrap();
        assert_eq!(in_us(o), (0.0, 200.0));
    }

    #[test]
    fn replays_that_do_not_show_the_overhead_leave_the_intercepts_alone() {
        let measured = Intercepts {
            read: 1e-3,
            write: 1e-3,
        };
        assert_eq!(
            solve(measured, model(0.0, 0.0, 1.0, 0.0, 0.0)).unwrap(),
            None
        );
        let nan = |_| {
            Ok(Intercepts {
                read: f64::NAN,
                write: 0.0,
            })
        };
        assert_eq!(solve(measured, nan).unwrap(), None);
        let failing = |_| Err(crate::error::DiagError::Usage("replay failed".into()));
        assert!(solve(measured, failing).is_err());
    }
}
