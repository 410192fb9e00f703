//! Bus traces: one file with both layers on one time axis, the backend calls (as NI I/O
//! Trace shows them) and the bytes on the bus with their handshake timing (as a bus
//! analyzer shows them), on every backend.
//!
//! * [`format`](mod@format): the records ([`Record`]) and the file layout (`docs/trace-format.md`).
//! * [`TraceWriter`] streams records to a file ([`create_file`] makes one that writes
//!   behind the program, on a thread of its own); [`TraceReader`] reads one back and
//!   refuses a bad file with a [`TraceError`] that says where and what.
//! * [`TraceSink`]: where records go as they happen. The simulator streams its bus
//!   records to one (`gpib::sim::SimHost::trace_to`, feature `sim`); [`TracedBackend`] adds one call
//!   record per [`crate::Backend`] call, on hardware and network backends too.
//! * [`wave`] draws the 16 bus lines from the bus records (a full handshake per byte);
//!   [`vcd`] writes them as VCD (GTKWave, sigrok) and reads a logic analyzer's VCD;
//!   [`check`] finds handshake violations in either.
//!
//! The calls of any backend (here the core's fake board) written to a trace file and
//! read back:
//!
//! ```
//! use gpib::backend::fake::{FakeBoard, FakeInstrument};
//! use gpib::trace::{self, CallOp, Clock, Header, Record, SharedSink, TraceSink, TraceWriter, TracedBackend};
//! use gpib::Bus;
//!
//! let path = std::env::temp_dir().join(format!("doc-{}.trace", std::process::id()));
//! let header = Header { clock: Clock::Wall, label: "bench".into() };
//! let mut sink = SharedSink::new(TraceWriter::new(std::fs::File::create(&path)?, &header)?);
//! let fake = FakeBoard::new().with(22, FakeInstrument::new().answer("*IDN?", "ACME,DMM-1,0,1.0"))?;
//! let bus = Bus::new(TracedBackend::new(fake, sink.clone(), 0));
//! bus.device(22)?.query("*IDN?")?;
//! sink.flush()?; // the first write error, if any
//!
//! let (header, records) = trace::read_file(&path)?;
//! assert_eq!(header.label, "bench");
//! assert!(records.iter().any(|r| matches!(r, Record::Call(c) if c.op == CallOp::Read)));
//! # std::fs::remove_file(&path)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The simulator (feature `sim`) adds the bytes on the bus, with their handshake timing,
//! to the same file:
//!
//! ```
//! # #[cfg(feature = "sim")] {
//! use gpib::trace::{self, Clock, Header, Record, SharedSink, TraceSink, TraceWriter, TracedBackend};
//! use gpib::{Bus, sim};
//!
//! let path = std::env::temp_dir().join(format!("doc-sim-{}.trace", std::process::id()));
//! let host = sim::bench();
//! let header = Header { clock: Clock::Virtual, label: "bench".into() };
//! let mut sink = SharedSink::new(TraceWriter::new(std::fs::File::create(&path)?, &header)?);
//! host.trace_to(sink.clone());
//! let bus = Bus::new(TracedBackend::new(host.board(0)?, sink.clone(), 0));
//! bus.device(22)?.query("*IDN?")?;
//! host.stop_trace();
//! sink.flush()?;
//! let (_, records) = trace::read_file(&path)?;
//! assert!(records.iter().any(|r| matches!(r, Record::Transfer(t) if &t.bytes[..] == b"*IDN?\n")));
//! # std::fs::remove_file(&path)?;
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod check;
mod file;
pub mod format;
mod reader;
mod sink;
mod trace_file;
mod traced;
pub mod vcd;
pub mod wave;
mod write_behind;
mod writer;

pub use file::{create_file, open_file, open_regular, read_file};
pub use format::{BusError, Call, CallOp, Clock, Header, Line, LineChange, Record, Transfer};
pub use reader::{TraceError, TraceReader};
pub use sink::{MemorySink, SharedSink, TraceSink};
pub use trace_file::TraceFile;
pub use traced::TracedBackend;
pub use writer::TraceWriter;
#[cfg(test)]
mod forwarding_tests;
#[cfg(all(test, feature = "sim"))]
mod hostile_tests;
#[cfg(all(test, feature = "sim"))]
mod tests;
#[cfg(test)]
mod write_behind_tests;
