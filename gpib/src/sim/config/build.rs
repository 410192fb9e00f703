//! Building the simulated host a configuration describes: boards, devices, instruments,
//! discs and contention sources, in the order the file gives them.

use super::*;

impl Config {
    /// Builds the host this configuration describes (reading its gpib.conf first, if it
    /// names one that was not read yet, relative to the working folder).
    pub fn build(&self) -> Result<SimHost> {
        if self.gpib_conf.is_some() || !self.instruments.is_empty() {
            let mut expanded = self.clone();
            expanded.expand_gpib_conf(None)?;
            return expanded.build();
        }
        if self.boards.is_empty() {
            return Err(Error::Config(format!(
                "host {:?} has no [[board]]",
                self.name
            )));
        }
        for (i, b) in self.boards.iter().enumerate() {
            if self.boards[..i].iter().any(|o| o.name == b.name) {
                return Err(Error::Config(format!(
                    "two boards named {:?}: board names must be unique",
                    b.name
                )));
            }
        }
        let mut names: Vec<&str> = Vec::new();
        for b in &self.boards {
            for dev in &b.devices {
                let Some(name) = &dev.name else { continue };
                if name.trim().is_empty() {
                    return Err(Error::Config(format!(
                        "device {} on board {}: name must not be empty",
                        dev.address, b.name
                    )));
                }
                if names.contains(&name.as_str()) {
                    return Err(Error::Config(format!(
                        "two devices named {name:?}: device names must be unique"
                    )));
                }
                if self.boards.iter().any(|o| o.name == *name) {
                    return Err(Error::Config(format!(
                        "device name {name:?} is also a board's name: names must be unique"
                    )));
                }
                names.push(name);
            }
        }
        let cpus = match self.cpus {
            None => 1,
            Some(n @ 1..=MAX_CPUS) => n as usize,
            Some(n) => {
                return Err(Error::Config(format!(
                    "host {:?}: cpus = {n} is out of range: 1 to {MAX_CPUS}",
                    self.name
                )))
            }
        };
        let host = SimHost::with_cpus(self.name.clone(), cpus);
        for b in &self.boards {
            let on = format!("board {}", b.name);
            let on = on.as_str();
            let d = BoardTiming::default();
            let timing = BoardTiming {
                mode: b.transfer.unwrap_or(d.mode),
                call_overhead: us_field(
                    b.call_overhead_us,
                    d.call_overhead,
                    "call_overhead_us",
                    MAX_CALL_US,
                    on,
                )?,
                read_call_overhead: own_overhead(b.read_call_overhead_us, "read", on)?,
                write_call_overhead: own_overhead(b.write_call_overhead_us, "write", on)?,
                command_byte: us_field(
                    b.command_byte_us,
                    d.command_byte,
                    "command_byte_us",
                    MAX_CALL_US,
                    on,
                )?,
                pio_read_byte_ns: ns_field(
                    b.pio_read_byte_ns,
                    d.pio_read_byte_ns,
                    "pio_read_byte_ns",
                    on,
                )?,
                pio_write_byte_ns: ns_field(
                    b.pio_write_byte_ns,
                    d.pio_write_byte_ns,
                    "pio_write_byte_ns",
                    on,
                )?,
                dma_byte_ns: ns_field(b.dma_byte_ns, d.dma_byte_ns, "dma_byte_ns", on)?,
                dma_setup: us_field(b.dma_setup_us, d.dma_setup, "dma_setup_us", MAX_CALL_US, on)?,
                dma_block: int_field(
                    b.dma_block_bytes,
                    d.dma_block,
                    "dma_block_bytes",
                    MAX_DMA_BLOCK_BYTES,
                    "bytes",
                    on,
                )?
                .max(1),
                interrupt_cpu: us_field(
                    b.interrupt_us,
                    d.interrupt_cpu,
                    "interrupt_us",
                    MAX_CALL_US,
                    on,
                )?,
                t1_ns: ns_field(b.t1_ns, d.t1_ns, "t1_ns", on)?,
                accept_ns: ns_field(b.accept_ns, d.accept_ns, "accept_ns", on)?,
                hs488: b.hs488,
                polled: b.polled,
                poll_cost: us_field(b.poll_us, d.poll_cost, "poll_us", MAX_CALL_US, on)?,
            };
            check_t1(timing.t1_ns, &b.name)?;
            let timeout = timeout_field(
                b.timeout_s,
                Timeout::After(Duration::from_secs(10)),
                "timeout_s",
                MAX_TIMEOUT_S,
                on,
            )?;
            let address = PrimaryAddress::try_from(b.address)
                .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
            let index = host.add_board(b.name.clone(), address, timing, timeout);
            let cable_m = match b.cable_m {
                None => None,
                Some(m) if m.is_finite() && (0.0..=MAX_CABLE_M).contains(&m) => Some(m),
                Some(m) => {
                    return Err(Error::Config(format!(
                        "{on}: cable_m = {m:?} is out of range: 0 to {MAX_CABLE_M} m"
                    )))
                }
            };
            host.set_board_behaviour(
                index,
                BoardBehaviour {
                    autopoll: b.autopoll,
                    addressing: b.addressing.unwrap_or_default(),
                    cable_m,
                    ..Default::default()
                },
            )?;
            for dev in &b.devices {
                let addr = Address::new(dev.address, dev.secondary)
                    .map_err(|e| Error::Config(format!("board {}: {e}", b.name)))?;
                let on = format!("device {addr} on board {}", b.name);
                let on = on.as_str();
                let dd = DeviceTiming::default();
                let timing = DeviceTiming {
                    t1_ns: ns_field(dev.t1_ns, dd.t1_ns, "t1_ns", on)?,
                    accept_ns: ns_field(dev.accept_ns, dd.accept_ns, "accept_ns", on)?,
                    response_latency: us_field(
                        dev.response_latency_us,
                        dd.response_latency,
                        "response_latency_us",
                        MAX_RESPONSE_LATENCY_US,
                        on,
                    )?,
                    holdoff_recovery_talk_ns: ns_field(
                        dev.holdoff_recovery_talk_ns,
                        dd.holdoff_recovery_talk_ns,
                        "holdoff_recovery_talk_ns",
                        on,
                    )?,
                    holdoff_recovery_listen_ns: ns_field(
                        dev.holdoff_recovery_listen_ns,
                        dd.holdoff_recovery_listen_ns,
                        "holdoff_recovery_listen_ns",
                        on,
                    )?,
                };
                check_t1(timing.t1_ns, &format!("device {addr} on {}", b.name))?;
                pyvisa_sim::check_fields(dev, on)?;
                let instrument: Box<dyn Instrument> = match dev.model.to_ascii_lowercase().as_str()
                {
                    "scpi" => Box::new(
                        match &dev.idn {
                            Some(i) => ScpiInstrument::new(i.clone()),
                            None => ScpiInstrument::default(),
                        }
                        .with_measurement_time(secs_field(
                            dev.measurement_time_s,
                            Duration::ZERO,
                            "measurement_time_s",
                            crate::sim::instruments::scpi::MAX_MEASUREMENT_S,
                            on,
                        )?),
                    ),
                    "hp3565" => Box::new(Hp3565::new()),
                    "terminal" => Box::new(Terminal::new()),
                    "replay" => {
                        let Some(file) = &dev.file else {
                            return Err(Error::Config(format!(
                                "{on}: a replay device needs file = \"...\" (a trace recorded with gpib-diag trace record)"
                            )));
                        };
                        let path = match &self.base_dir {
                            Some(dir) if std::path::Path::new(file).is_relative() => dir.join(file),
                            _ => std::path::PathBuf::from(file),
                        };
                        Box::new(Replay::open(&path, addr.primary.get())?)
                    }
                    "pyvisa-sim" => pyvisa_sim::device_instrument(dev, self.base_dir.as_deref(), on)?,
                    "disc" => {
                        Box::new(Disc::new(dev.disc.clone().unwrap_or_else(|| "disc".into())))
                    }
                    other => {
                        return Err(Error::Config(format!(
                        "device {addr} on {}: unknown model {other:?} (known: scpi, hp3565, terminal, disc, pyvisa-sim, replay)",
                        b.name
                    )))
                    }
                };
                let at = host.attach(index, addr, instrument, timing)?;
                let srq_every = match dev.srq_every_us {
                    None => None,
                    Some(us) if us.is_finite() && (1.0..=MAX_RESPONSE_LATENCY_US).contains(&us) => {
                        Some(Duration::from_secs_f64(us / 1e6))
                    }
                    Some(us) => {
                        return Err(Error::Config(format!(
                            "{on}: srq_every_us = {us:?} is out of range: 1 to {MAX_RESPONSE_LATENCY_US} us (1000 s)"
                        )))
                    }
                };
                let behaviour = DeviceBehaviour {
                    listen_only: dev.listen_only,
                    nrfd_hold: us_field(
                        dev.nrfd_hold_us,
                        Duration::ZERO,
                        "nrfd_hold_us",
                        MAX_CALL_US,
                        on,
                    )?,
                    srq_every,
                    activity_bytes_per_s: int_field(
                        dev.activity_bytes_per_s,
                        0,
                        "activity_bytes_per_s",
                        MAX_ACTIVITY_BYTES_PER_S,
                        "bytes a second",
                        on,
                    )?,
                };
                if !behaviour.is_quiet() {
                    host.set_device_behaviour(index, addr, behaviour)?;
                }
                match &dev.name {
                    Some(name) => host.add_named_device(NamedDevice {
                        name: name.clone(),
                        board: index,
                        address: addr,
                        settings: DeviceSettings {
                            timeout: match dev.timeout_s {
                                None => None,
                                t => Some(timeout_field(
                                    t,
                                    Timeout::Never,
                                    "timeout_s",
                                    MAX_TIMEOUT_S,
                                    on,
                                )?),
                            },
                            ..dev.descriptor()
                        },
                    })?,
                    None if dev.has_named_settings() => {
                        return Err(Error::Config(format!(
                            "{on}: timeout_s, eos, set_reos, set_bin, set_xeos and eot apply \
                             only to a named device (add name = \"...\")"
                        )))
                    }
                    None => {}
                }
                if let Some(m) = &dev.mount {
                    host.set_mount_point(at, m, dev.mounted.unwrap_or(true))?;
                }
                for f in &dev.faults {
                    let fault: crate::sim::fault::Fault = f.parse().map_err(|e| match e {
                        Error::Config(m) => Error::Config(format!("{on}: faults: {m}")),
                        e => e,
                    })?;
                    host.inject(index, addr, fault)?;
                }
            }
            if let Some(p) = &b.pyvisa_sim {
                let base = self.base_dir.as_deref();
                for (addr, inst) in pyvisa_sim::board_devices(p, index, base, on)? {
                    host.attach(index, addr, inst, DeviceTiming::default())?;
                }
            }
        }
        Ok(host)
    }
}

fn check_t1(t1: u64, what: &str) -> Result<()> {
    if t1 < MIN_T1_NS {
        return Err(Error::Config(format!(
            "{what}: T1 of {t1} ns is below IEEE 488.1's minimum of {MIN_T1_NS} ns"
        )));
    }
    Ok(())
}
