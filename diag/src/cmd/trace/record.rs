//! `gpib-diag trace record`: runs a workload with every backend call traced and, on
//! the simulator, every bus record streamed to the same file.

use clap::ValueEnum;
use gpib::trace::{Clock, Header, SharedSink, TraceSink, TraceWriter, TracedBackend};
use gpib::Address;

use super::counted::Counted;
use super::input::output;
use super::{RecordArgs, TraceWorkload};
use crate::error::{DiagError, Result};
use crate::measure::{ProtocolChoice, Session, SessionOptions};
use crate::record::Backend;
use crate::target::Target;

/// Runs the command.
pub fn run(a: &RecordArgs) -> Result<()> {
    let spec = a.bus.spec()?;
    let simulated = a.bus.backend == Backend::Sim && spec.resource.is_none();
    // The board's index on a simulated host, so that call and bus records agree.
    let board = if simulated {
        let host = gpib::sim::load(&spec.config)?;
        match &spec.board {
            None => 0,
            Some(b) => match b.parse::<usize>() {
                Ok(i) => i,
                Err(_) => host.board_named(b)?.index(),
            },
        }
    } else {
        0
    };
    let header = Header {
        clock: if simulated {
            Clock::Virtual
        } else {
            Clock::Wall
        },
        label: format!(
            "{} ({})",
            spec.label(),
            a.bus
                .backend
                .to_possible_value()
                .map_or_else(String::new, |v| v.get_name().to_string())
        ),
    };
    let file = std::fs::File::create(&a.output).map_err(|e| output(&a.output, e))?;
    // Written behind the workload, on a thread of its own: the workload pays for
    // copying its records into memory, not for the file system's work; the file's
    // space reserved ahead of the writes (given back when the writer is done).
    let mut writer = TraceWriter::behind(gpib::trace::TraceFile::new(file), &header)
        .map_err(|e| output(&a.output, e))?;
    // The header written out at once: a full disk or a read-only medium is found
    // before the workload runs, not after.
    writer.flush().map_err(|e| output(&a.output, e))?;
    let counted = Counted::new(writer);
    let tally = counted.tally.clone();
    let mut sink = SharedSink::new(counted);
    let traced = sink.clone();
    let wrap = move |b: Box<dyn gpib::Backend>| -> Box<dyn gpib::Backend> {
        Box::new(TracedBackend::new(b, traced.clone(), board as u16))
    };
    let target = Target::open_wrapped(a.bus.backend, &spec, &wrap)?;
    if let Some(h) = &target.host {
        h.trace_to(sink.clone());
    }
    let dev = device(a, &target)?;
    let kind = chosen_workload(a, &target, dev);
    let t0 = target.bus.now();
    // Each run's records are pushed to the file before the next: a write error (a
    // full disk) stops the recording there, not after every run.
    let result = (0..a.repeat).try_for_each(|_| {
        workload(a, kind, &target, dev)?;
        sink.flush().map_err(|e| output(&a.output, e))
    });
    let elapsed = target.bus.now().saturating_sub(t0);
    if let Some(h) = &target.host {
        h.stop_trace();
    }
    let flushed = sink.flush().map_err(|e| output(&a.output, e));
    result?;
    flushed?;
    let t = tally.get();
    eprintln!(
        "gpib-diag: traced {} x {} of device {dev} on {} ({:.6} s on the bus's {} clock) into {}: \
         {} records ({} calls, {} bus transfers moving {} bytes, {} other)",
        a.repeat,
        workload_name(a, kind),
        target.label,
        elapsed.as_secs_f64(),
        if simulated { "virtual" } else { "wall" },
        a.output.display(),
        t.records,
        t.calls,
        t.transfers,
        t.bytes,
        t.records - t.calls - t.transfers,
    );
    Ok(())
}

/// The workload asked for; else `query` with `--command`; else what the device
/// answers: `read` (io-test's) on an HP3565, which knows no `*IDN?`, `query` on the
/// others.
fn chosen_workload(a: &RecordArgs, target: &Target, dev: Address) -> TraceWorkload {
    if let Some(w) = a.workload {
        return w;
    }
    if a.command.is_some() {
        return TraceWorkload::Query;
    }
    let model = target
        .instruments()
        .into_iter()
        .find(|(addr, _)| *addr == dev)
        .map(|(_, m)| m);
    match model {
        Some(m) if m.eq_ignore_ascii_case("HP3565") => TraceWorkload::Read,
        _ => TraceWorkload::Query,
    }
}

fn workload_name(a: &RecordArgs, kind: TraceWorkload) -> String {
    match kind {
        TraceWorkload::Query => format!("query {:?}", query_text(a)),
        TraceWorkload::Read => format!("read of {} bytes", a.size),
        TraceWorkload::Write => format!("write of {} bytes", a.size),
        TraceWorkload::Block => format!("block read {:?}", block_text(a)),
    }
}

fn query_text(a: &RecordArgs) -> String {
    a.command.clone().unwrap_or_else(|| "*IDN?".into())
}

fn block_text(a: &RecordArgs) -> String {
    a.command
        .clone()
        .unwrap_or_else(|| format!("BLOCK? {}", a.size))
}

/// The device: given, the resource's, or the board's first instrument.
fn device(a: &RecordArgs, target: &Target) -> Result<Address> {
    if let Some(d) = &a.device {
        return Ok(Address::try_from(target.resolve_device(d)?)?);
    }
    if let Some(d) = target.device {
        return Ok(d);
    }
    target
        .instruments()
        .first()
        .map(|(a, _)| *a)
        .ok_or_else(|| {
            DiagError::Usage("give --device <ADDR>: no instrument found to trace".into())
        })
}

fn workload(a: &RecordArgs, kind: TraceWorkload, target: &Target, dev: Address) -> Result<()> {
    match kind {
        TraceWorkload::Query => {
            let dev = target.bus.device(dev)?;
            let answer = dev.query(&query_text(a))?;
            eprintln!("gpib-diag: {} answered {answer:?}", dev.address());
        }
        TraceWorkload::Block => {
            let dev = target.bus.device(dev)?;
            let block = dev.query_block(&block_text(a))?;
            eprintln!(
                "gpib-diag: {} sent a block of {} bytes",
                dev.address(),
                block.len()
            );
        }
        TraceWorkload::Read | TraceWorkload::Write => {
            let opts = SessionOptions {
                device: Some(dev.primary.get()),
                protocol: ProtocolChoice::Auto,
                timeout: None,
            };
            let mut session = Session::open(target, &opts, a.size)?;
            let sample = if kind == TraceWorkload::Read {
                session.read(a.size)?
            } else {
                session.write(a.size)?
            };
            eprintln!(
                "gpib-diag: {} bytes in {:.6} s ({:.0} bytes/s)",
                sample.bytes,
                sample.seconds,
                sample.bytes as f64 / sample.seconds.max(1e-12)
            );
        }
    }
    Ok(())
}
