//! `gpib-diag calibrate`: measures a bus and writes the simulator's model of it.

use std::io::Write;

use crate::calibrate::{self, Calibration, WITHIN};
use crate::cli::{CalibrateArgs, Format};
use crate::doctor;
use crate::error::{DiagError, Result};
use crate::measure::SessionOptions;
use crate::record::Backend;
use crate::sample::Direction;
use crate::target::Target;

/// A measurement whose transfers waited for a CPU this share of each byte's time was
/// disturbed by other work on the machine.
const DISTURBED_SHARE: f64 = 0.1;

/// Runs the command; `Ok(true)` when every held-out size was predicted within 5 %.
pub fn run(args: &CalibrateArgs) -> Result<bool> {
    let budget = crate::cli::budget(args.probe.budget)?;
    if args.probe.small == 0 || args.probe.large == Some(0) {
        return Err(DiagError::Usage(
            "--small and --large must be at least 1 byte".into(),
        ));
    }
    if !matches!(args.format, Format::Text | Format::Json) {
        return Err(DiagError::Usage("calibrate prints text or json".into()));
    }
    let spec = args.probe.bus.spec()?;
    let target = Target::open(args.probe.bus.backend, &spec)?;
    let config = (target.backend == Backend::Sim)
        .then(|| spec.config())
        .transpose()?;
    let hs = doctor::handshake(&target, config.as_ref());
    let opts = SessionOptions {
        device: args.probe.device(&target)?,
        protocol: args.probe.protocol.into(),
        timeout: None,
    };
    let c = calibrate::calibrate(
        &target,
        hs,
        &opts,
        args.probe.small,
        args.probe.large,
        budget,
    )?;
    let report = match args.format {
        Format::Json => {
            serde_json::to_string_pretty(&c).map_err(|e| DiagError::Output {
                path: "-".into(),
                source: e.into(),
            })? + "\n"
        }
        _ => text(&c, &args.output),
    };
    fn io(path: &str) -> impl FnOnce(std::io::Error) -> DiagError + '_ {
        move |source| DiagError::Output {
            path: path.into(),
            source,
        }
    }
    if args.output == "-" {
        if args.format == Format::Json {
            std::io::stdout()
                .write_all(report.as_bytes())
                .map_err(io("-"))?;
        } else {
            std::io::stdout()
                .write_all(c.config.as_bytes())
                .map_err(io("-"))?;
            std::io::stderr()
                .write_all(report.as_bytes())
                .map_err(io("-"))?;
        }
    } else {
        std::fs::write(&args.output, &c.config).map_err(io(&args.output))?;
        std::io::stdout()
            .write_all(report.as_bytes())
            .map_err(io("-"))?;
    }
    Ok(c.holds())
}

fn text(c: &Calibration, output: &str) -> String {
    let d = &c.device;
    let m = &c.model;
    let mut t = format!(
        "gpib-diag calibrate: {}, device {} ({})\n",
        c.target, d.costs.address, d.protocol
    );
    for (dir, f) in [
        (Direction::Read, d.sweep.read),
        (Direction::Write, d.sweep.write),
    ] {
        if let Some(f) = f {
            t += &format!("  {}\n", doctor::fit_line(dir, &f));
        }
    }
    let waited = [d.sweep.read, d.sweep.write]
        .iter()
        .flatten()
        .map(|f| f.waiting_share())
        .fold(0.0, f64::max);
    if waited >= DISTURBED_SHARE {
        t += &format!(
            "  warning: the transfers waited for a CPU {:.0} % of each byte's time: other work on this machine disturbed the measurement, and the model learns it as the bus's; calibrate on a quiet machine\n",
            100.0 * waited
        );
    }
    t += &format!(
        "  response latency {:.1} us beyond a query's two calls\n",
        d.costs.response_latency_s * 1e6
    );
    t += &format!(
        "  model: {} board, {:.1} us a read call and {:.1} us a write call, T1 {} ns{}; device {}: {}\n",
        if m.mode == calibrate::model::Mode::Pio {
            "programmed-I/O"
        } else {
            "DMA"
        },
        m.read_call_overhead_us,
        m.write_call_overhead_us,
        m.t1_ns,
        if m.mode == calibrate::model::Mode::Pio {
            format!(
                ", {} ns of CPU a byte read and {} ns written beyond the handshake",
                m.pio_read_byte_ns, m.pio_write_byte_ns
            )
        } else {
            String::new()
        },
        d.costs.address,
        m.devices.first().map_or(String::new(), |x| format!(
            "T1 {} ns, acceptance {} ns",
            x.t1_ns, x.accept_ns
        ))
    );
    if d.held_out.is_empty() {
        t += "  no size held out of the fit (a larger --budget or --large gives some)\n";
    } else {
        t += "  held out of the fit, measured against the model's prediction:\n";
        for h in &d.held_out {
            t += &format!(
                "    {:<5} {:>7} B  {:>10.6} s measured  {:>10.6} s predicted  {:+6.2} %\n",
                h.direction.as_str(),
                h.bytes,
                h.measured_seconds,
                h.predicted_seconds,
                100.0 * h.error()
            );
        }
        t += &if c.holds() {
            format!(
                "  the model holds within {:.0} % at every held-out size\n",
                100.0 * WITHIN
            )
        } else {
            format!(
                "  the model is more than {:.0} % off at some held-out size: its predictions are not to be trusted there\n",
                100.0 * WITHIN
            )
        };
    }
    if output != "-" {
        t += &format!("  wrote {output}: run it with --bus {output}\n");
    }
    t
}
