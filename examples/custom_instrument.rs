//! Write your own simulated instrument and test your app against it, with no hardware.
//!
//! The instrument here is a programmable power supply that understands `VOLT <v>`,
//! `VOLT?`, `OUTP ON|OFF`, `OUTP?` and `*IDN?`.

use gpib::sim::timing::{BoardTiming, DeviceTiming};
use gpib::sim::{DeviceIo, Instrument, SimHost};
use gpib::{Address, Bus, PrimaryAddress};

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
                self.on = s.eq_ignore_ascii_case("ON");
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

fn main() -> Result<(), gpib::Error> {
    env_logger::init();
    // A host with one board at address 0 and the power supply at 5.
    let host = SimHost::new("my-rack");
    let board = host.add_board(
        "gpib0",
        PrimaryAddress::try_from(0u8)?,
        BoardTiming::default(),
        std::time::Duration::from_secs(3),
    );
    let psu_address = Address::try_from(5u8)?;
    let timing = DeviceTiming {
        response_latency: std::time::Duration::from_millis(2),
        ..Default::default()
    };
    host.attach(board, psu_address, Box::new(PowerSupply::default()), timing)?;

    // The app code: exactly what it would be on real hardware.
    let bus = Bus::new(host.board(board)?);
    let psu = bus.device(psu_address)?;
    println!("{}", psu.query("*IDN?")?);
    psu.write_str("VOLT 12.5;OUTP ON")?;
    println!(
        "set {} V, output {}",
        psu.query("VOLT?")?,
        psu.query("OUTP?")?
    );
    assert_eq!(psu.query("VOLT?")?, "12.500");
    Ok(())
}
