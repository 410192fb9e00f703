//! Write your own simulated instrument and test your app against it, with no hardware;
//! then run the same app code on the instrument itself.
//!
//! The instrument here is a programmable power supply that understands `VOLT <v>`,
//! `VOLT?`, `OUTP 1|0` (or `ON|OFF`), `OUTP?` and `*IDN?`.
//!
//! `cargo run --example custom_instrument` runs the app against it, at
//! `GPIB0::5::INSTR` of a simulated rack. `cargo run --example custom_instrument --
//! RESOURCE` runs the same app against the supply RESOURCE names (any resource string,
//! as for the `idn` example: `GPIB0::5::INSTR`, `TCPIP0::10.0.0.5::gpib0,5::INSTR`,
//! `PRLGX-TCPIP::10.0.0.6::1234::5::INSTR`). `examples/psu-30.yaml` describes the same
//! supply in pyvisa-sim's YAML: `gpib-diag serve --bus examples/rack.toml` serves it at
//! address 5 of a simulated rack, to try the app over VXI-11 or Prologix.

use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::{DeviceIo, Instrument, SimHost};
use gpib::{Address, Bus, Device, PrimaryAddress, ResourceManager};

#[derive(Default)]
struct PowerSupply {
    line: Vec<u8>,
    volts: f64,
    on: bool,
}

impl PowerSupply {
    fn execute(&mut self, command: &str, io: &mut DeviceIo<'_>) {
        let mut parts = command.split_whitespace();
        let answer = match (
            parts.next().map(str::to_ascii_uppercase).as_deref(),
            parts.next(),
        ) {
            (Some("*IDN?"), None) => Some("ACME,PSU-30,0001,1.0".to_string()),
            (Some("VOLT"), Some(v)) => {
                self.volts = v.parse().unwrap_or(self.volts).clamp(0.0, 30.0);
                None
            }
            (Some("VOLT?"), None) => Some(format!("{:.3}", self.volts)),
            (Some("OUTP"), Some(s)) => {
                self.on = s == "1" || s.eq_ignore_ascii_case("ON");
                None
            }
            (Some("OUTP?"), None) => Some(u8::from(self.on).to_string()),
            _ => None,
        };
        if let Some(a) = answer {
            io.output.push_str(&a);
            io.output.push(b"\n");
            io.output.finish_message();
        }
        io.executed();
    }
}

impl Instrument for PowerSupply {
    fn model(&self) -> &str {
        "PSU-30"
    }

    fn listen(&mut self, data: &[u8], end: bool, io: &mut DeviceIo<'_>) {
        for &b in data {
            if b == b'\n' || b == b';' {
                let cmd = String::from_utf8_lossy(&self.line).trim().to_string();
                self.line.clear();
                self.execute(&cmd, io);
            } else {
                self.line.push(b);
            }
        }
        if end && !self.line.is_empty() {
            let cmd = String::from_utf8_lossy(&self.line).trim().to_string();
            self.line.clear();
            self.execute(&cmd, io);
        }
    }

    fn clear(&mut self, io: &mut DeviceIo<'_>) {
        self.line.clear();
        io.output.clear();
    }
}

/// The app code: exactly what it is on real hardware, whatever the backend.
fn app(psu: &Device) -> Result<(), gpib::Error> {
    println!("{}", psu.query("*IDN?")?);
    psu.write_str("VOLT 12.5")?;
    psu.write_str("OUTP 1")?;
    let (volts, on) = (psu.query("VOLT?")?, psu.query("OUTP?")?);
    println!("set {volts} V, output {on}");
    assert_eq!(
        volts.parse::<f64>().ok(),
        Some(12.5),
        "the supply did not take 12.5 V"
    );
    Ok(())
}

fn run() -> Result<(), gpib::Error> {
    if let Some(resource) = std::env::args().nth(1) {
        return app(&ResourceManager::from_env()?.open(&resource)?);
    }

    // A host with one board at address 0 and the power supply at 5.
    let host = SimHost::new("my-rack");
    let board = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8)?,
        BoardTiming::default(),
        std::time::Duration::from_secs(3).into(),
    );
    let timing = DeviceTiming {
        response_latency: std::time::Duration::from_millis(2),
        ..Default::default()
    };
    host.attach(
        board,
        Address::try_from(5u8)?,
        Box::new(PowerSupply::default()),
        timing,
    )?;
    // The simulated board as GPIB0: the app opens the supply by its resource string.
    let mut rm = ResourceManager::new();
    rm.attach(0, Bus::new(host.board(board)?));
    app(&rm.open("GPIB0::5::INSTR")?)
}

fn main() -> std::process::ExitCode {
    env_logger::init();
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("custom_instrument: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
