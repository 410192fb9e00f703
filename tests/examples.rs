//! The examples (`examples/*.rs`) run as a user runs them, one resource string per
//! backend, and print what they should: with no argument (the simulator), over VXI-11
//! and Prologix through an in-process server of `examples/rack.toml` in real time (what
//! `gpib-diag serve --bus examples/rack.toml --realtime` serves), and, with the
//! `linux-gpib` feature, on libgpib's board 0 (compat/ci.sh links the simulator's
//! compatibility library, whose default configuration is the bench; run in real time
//! with `GPIB_SIM_REALTIME=1`, as hardware would).
//!
//! The programs are the ones cargo built beside this test binary: `cargo test` builds a
//! package's examples, `cargo test --test tests` does not. Without them these tests say
//! so and pass, unless `GPIB_REQUIRE_EXAMPLES=1` (as in .ci/run and compat/ci.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a run reaches the instruments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    /// No argument: each example's own simulated default.
    Simulator,
    /// `TCPIP0::127.0.0.1,PORT::gpib0,N::INSTR`.
    Vxi11(u16),
    /// `PRLGX-TCPIP::127.0.0.1::PORT::N::INSTR`.
    Prologix(u16),
    /// `GPIB0::N::INSTR` through libgpib.
    #[cfg_attr(not(feature = "linux-gpib"), allow(dead_code))]
    LinuxGpib,
}

impl Via {
    fn resource(self, device: u8) -> Option<String> {
        match self {
            Via::Simulator => None,
            Via::Vxi11(port) => Some(format!("TCPIP0::127.0.0.1,{port}::gpib0,{device}::INSTR")),
            Via::Prologix(port) => Some(format!("PRLGX-TCPIP::127.0.0.1::{port}::{device}::INSTR")),
            Via::LinuxGpib => Some(format!("GPIB0::{device}::INSTR")),
        }
    }

    /// What the examples call the clock their times are on.
    fn clock(self) -> &'static str {
        if self == Via::Simulator {
            "virtual"
        } else {
            "wall-clock"
        }
    }

    /// What wait_srq prints about the listeners.
    fn listeners(self, device: u8) -> String {
        match self {
            Via::Simulator | Via::LinuxGpib => "listeners: 11, 22".into(),
            Via::Vxi11(_) => {
                format!("listeners: not available on the vxi11 backend; polling {device} only")
            }
            Via::Prologix(_) => {
                format!("listeners: not available on the prologix backend; polling {device} only")
            }
        }
    }
}

/// One example: its name, the address of its instrument (on the rack and the bench), the
/// arguments after the resource, and the lines it must print (in order; `*` stands for
/// any text, `{resource}` for the resource it was given).
struct Case {
    name: &'static str,
    device: u8,
    args: &'static [&'static str],
    lines: fn(Via) -> Vec<String>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "idn",
            device: 22,
            args: &[],
            lines: |_| {
                vec![
                    "{resource}: SIMULATED,SCPI-DMM,0,1.0".into(),
                    "reading: * V".into(),
                    "errors:  0,\"No error\"".into(),
                ]
            },
        },
        Case {
            name: "waveform",
            device: 22,
            args: &[],
            lines: |via| {
                vec![
                    "2000 points, min -1.0000, max 1.0000".into(),
                    format!("8000 bytes in * ms of {}* time (* kB/s)", via.clock()),
                ]
            },
        },
        Case {
            name: "wait_srq",
            device: 22,
            args: &[],
            lines: |via| {
                let mut l = vec![via.listeners(22)];
                for round in 1..=3 {
                    l.push(format!(
                        "round {round}: device 22 asked for service (status 0x50 RQS MAV): *E+00"
                    ));
                }
                l
            },
        },
        Case {
            name: "timed_measurement",
            device: 22,
            args: &[],
            lines: |via| {
                vec![
                    format!(
                        "device 22 requested service (status 0x60 RQS ESB) after * of {}*",
                        via.clock()
                    ),
                    "reading: +* V".into(),
                    "wall time: *".into(),
                ]
            },
        },
        Case {
            name: "custom_instrument",
            device: 5,
            args: &[],
            lines: |_| {
                vec![
                    "ACME,PSU-30,0001,1.0".into(),
                    "set 12.500 V, output 1".into(),
                ]
            },
        },
        Case {
            name: "io_test",
            device: 11,
            args: &["4000"],
            lines: |_| {
                let one = |what: &str| {
                    vec![
                        format!("{what} time: *.*"),
                        "transfer rate: *.*".into(),
                        "transfer size: 4000".into(),
                    ]
                };
                [one("read"), one("write")].concat()
            },
        },
    ]
}

/// `*` matches any run of characters (none included); the rest is literal.
fn matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, p) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(p);
        }
        match rest.find(p) {
            Some(at) => rest = &rest[at + p.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The example programs cargo built beside this test (`target/<profile>/examples`).
fn examples_dir() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("examples");
    cases()
        .iter()
        .all(|c| dir.join(c.name).exists())
        .then_some(dir)
}

fn required() -> bool {
    std::env::var_os("GPIB_REQUIRE_EXAMPLES").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Runs every example on `via`, except those named in `skip`; returns what failed.
fn run_all(via: Via, skip: &[&str]) -> Vec<String> {
    let Some(dir) = examples_dir() else {
        assert!(
            !required(),
            "GPIB_REQUIRE_EXAMPLES is set but the examples are not built beside this test \
             (cargo build --examples, with the same features)"
        );
        eprintln!("the examples are not built (cargo build --examples): not run on {via:?}");
        return Vec::new();
    };
    let mut failed = Vec::new();
    for case in cases().iter().filter(|c| !skip.contains(&c.name)) {
        if let Err(e) = run_one(&dir, case, via) {
            failed.push(format!("{} on {via:?}: {e}", case.name));
        }
    }
    failed
}

fn run_one(dir: &Path, case: &Case, via: Via) -> Result<(), String> {
    let resource = via.resource(case.device);
    let mut cmd = Command::new(dir.join(case.name));
    cmd.args(resource.iter())
        .args(case.args)
        // The resource alone says where the instrument is (GPIB_SIM_CONFIG would make
        // GPIB<n> the in-process simulator's).
        .env_remove("GPIB_SIM_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if via == Via::LinuxGpib {
        // The compatibility library behind libgpib in real time, as hardware: a
        // measurement's 200 ms pass while the program waits for its request.
        cmd.env("GPIB_SIM_REALTIME", "1");
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot run: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            return Err("still running after 60 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("exited {:?}: {stdout}{stderr}", out.status.code()));
    }
    let resource = resource.unwrap_or_else(|| "GPIB0::22::INSTR".into());
    let mut lines = stdout.lines();
    for want in (case.lines)(via) {
        let want = want.replace("{resource}", &resource);
        if !lines.any(|l| matches(&want, l)) {
            return Err(format!("no line `{want}` (in order) in:\n{stdout}{stderr}"));
        }
    }
    Ok(())
}

/// examples/rack.toml served in real time, as `gpib-diag serve --realtime` serves it: a
/// measurement's 200 ms pass while the client waits, as they would on an instrument.
fn serve_rack() -> (gpib::sim::SimHost, gpib::serve::Server) {
    let rack = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rack.toml");
    let host = gpib::sim::config::load(rack.to_str().unwrap()).unwrap();
    host.set_realtime(true);
    let server = gpib::serve::Server::start(
        gpib::Bus::new(host.board(0).unwrap()),
        gpib::serve::ServeOptions::ephemeral(),
    )
    .unwrap();
    (host, server)
}

#[test]
fn the_glob_of_the_expected_lines() {
    assert!(matches("a * b", "a x y b"));
    assert!(matches("a*", "a"));
    assert!(matches("*b", "ab"));
    assert!(matches("x*.*", "x0.5"));
    assert!(!matches("x*.*", "x05"));
    assert!(!matches("a*b", "a"));
    assert!(!matches("ab", "abc"));
    assert!(matches("ab", "ab"));
}

#[test]
fn examples_run_on_the_simulator_with_no_argument() {
    let failed = run_all(Via::Simulator, &[]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn examples_run_over_vxi11_with_a_tcpip_resource() {
    let (_host, server) = serve_rack();
    let failed = run_all(Via::Vxi11(server.vxi11_addr().unwrap().port()), &[]);
    server.stop();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn examples_run_over_prologix_with_a_prlgx_resource() {
    let (_host, server) = serve_rack();
    let failed = run_all(Via::Prologix(server.prologix_addr().unwrap().port()), &[]);
    server.stop();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// Through libgpib's board 0: the compatibility library's default bench (the HP3565 at
/// 11, the SCPI instrument at 22), in real time. custom_instrument's supply is on the rack only, which
/// the library would take from GPIB_SIM_CONFIG, and that makes the example's
/// `ResourceManager::from_env` the in-process simulator instead of linux-gpib.
#[cfg(feature = "linux-gpib")]
#[test]
fn examples_run_on_linux_gpib_with_a_gpib_resource() {
    let failed = run_all(Via::LinuxGpib, &["custom_instrument"]);
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
