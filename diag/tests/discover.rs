//! `gpib-diag discover` against `gpib-diag serve`: on loopback (unicast to the
//! server's portmapper), and, where `unshare -rn` makes a user and network namespace,
//! a real broadcast on a veth pair to a server on the standard port 111 (root in the
//! namespace binds it), then `*IDN?` through the VISA-standard resource string it prints.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn gpib_diag() -> Command {
    Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
}

/// A server on free ports (and the portmapper on one), with its ports line.
fn serve(extra: &[&str]) -> (Child, String) {
    let mut child = gpib_diag()
        .args([
            "serve",
            "--port",
            "0",
            "--portmap-port",
            "0",
            "--hislip-port",
            "0",
        ])
        .args(["--default-device", "22"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (child, line.trim_end().to_string())
}

/// The port of `name=127.0.0.1:PORT` in a ports line.
fn port(line: &str, name: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=127.0.0.1:")))
        .unwrap_or_else(|| panic!("no {name}= in {line:?}"))
        .to_string()
}

#[test]
fn discover_finds_the_server_and_its_instrument_on_loopback() {
    let (mut srv, line) = serve(&[]);
    let (pm, core) = (port(&line, "portmap"), port(&line, "vxi11"));
    let out = gpib_diag()
        .args(["discover", "--broadcast", &format!("127.0.0.1:{pm}")])
        .args(["--timeout", "0.3", "--idn"])
        .output()
        .unwrap();
    srv.kill().ok();
    srv.wait().ok();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stdout,
        format!("TCPIP0::127.0.0.1,{core}::inst0::INSTR  SIMULATED,SCPI-DMM,0,1.0\n")
    );
    assert!(
        stderr.contains(&format!("1 host(s) answered the call to 127.0.0.1:{pm}")),
        "{stderr}"
    );
}

/// `serve --board 0,1`: each board on a Prologix port of its own (`prologix1=`).
#[test]
fn two_boards_have_two_prologix_ports() {
    let (mut srv, line) = serve(&["--bus", "three-adapters", "--board", "0,1"]);
    let idn = |name: &str| {
        let at = format!("127.0.0.1:{}", port(&line, name));
        let bus = gpib::Bus::new(gpib::backend::prologix::PrologixBoard::connect_tcp(&at).unwrap());
        bus.device(1).unwrap().query("*IDN?").unwrap()
    };
    let (first, second) = (idn("prologix"), idn("prologix1"));
    srv.kill().ok();
    srv.wait().ok();
    assert_eq!(first, "SIMULATED,STREAMING DIGITIZER,1,1.0");
    assert_eq!(second, "SIMULATED,STREAMING DIGITIZER,2,1.0");
}

#[test]
fn bad_discover_arguments_are_usage_errors() {
    let out = gpib_diag()
        .args(["discover", "--broadcast", "not-an-address"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ADDR:PORT"));
}

/// A host at `ip` that answers discovery (its UDP portmapper names a core port) and
/// whose core port accepts connections and never answers; the `--broadcast` address of
/// its portmapper.
fn silent_host(ip: [u8; 4]) -> String {
    let core = std::net::TcpListener::bind((std::net::Ipv4Addr::from(ip), 0)).unwrap();
    let core_port = core.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in core.incoming().flatten() {
            held.push(s);
        }
    });
    let pm = std::net::UdpSocket::bind((std::net::Ipv4Addr::from(ip), 0)).unwrap();
    let at = pm.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        while let Ok((n, from)) = pm.recv_from(&mut buf) {
            if n < 4 {
                continue;
            }
            // An accepted RPC reply to the call's xid: MSG_ACCEPTED, AUTH_NONE, SUCCESS,
            // then the port.
            let mut reply = buf[..4].to_vec();
            for w in [1u32, 0, 0, 0, 0, u32::from(core_port)] {
                reply.extend_from_slice(&w.to_be_bytes());
            }
            let _ = pm.send_to(&reply, from);
        }
    });
    at
}

/// `discover --idn` over `hosts` silent hosts (127.0.0.FIRST and on) with `extra`
/// options: its output and how long it took.
fn discover_silent(first: u8, hosts: u8, extra: &[&str]) -> (std::process::Output, Duration) {
    let list: Vec<String> = (first..first + hosts)
        .map(|k| silent_host([127, 0, 0, k]))
        .collect();
    let started = Instant::now();
    let out = assert_cmd::Command::new(env!("CARGO_BIN_EXE_gpib-diag"))
        .args([
            "discover",
            "--broadcast",
            &list.join(","),
            "--timeout",
            "0.1",
            "--idn",
        ])
        .args(extra)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    (out, started.elapsed())
}

/// Issue 28 item 6: hosts that accept and never answer are asked in parallel, so 24 of
/// them take about as long as one (they took 24 times as long, one after another).
#[test]
fn silent_hosts_are_asked_in_parallel() {
    let (one, t1) = discover_silent(40, 1, &["--idn-deadline", "100"]);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    let (many, tn) = discover_silent(50, 24, &["--idn-deadline", "100"]);
    let stdout = String::from_utf8_lossy(&many.stdout);
    assert!(
        many.status.success(),
        "{}",
        String::from_utf8_lossy(&many.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 24, "{stdout}");
    for (k, line) in (50..74).zip(&lines) {
        assert!(
            line.starts_with(&format!("TCPIP0::127.0.0.{k},")),
            "{stdout}"
        );
        assert!(line.contains("(no *IDN? answer"), "{stdout}");
    }
    eprintln!("one silent host: {t1:?}; 24: {tn:?}");
    // 24 broadcasts of 0.1 s each, then the queries: about one host's time, here given
    // three times it and 5 s.
    assert!(
        tn < t1 * 3 + Duration::from_secs(5),
        "24 silent hosts took {tn:?}, one took {t1:?}"
    );
}

/// Issue 28 item 6: the whole `--idn` phase ends at its deadline, each host not
/// answered by then saying so.
#[test]
fn the_idn_phase_ends_at_its_deadline() {
    let (out, took) = discover_silent(80, 40, &["--idn-deadline", "0.5"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stdout.lines().count(), 40, "{stdout}");
    assert!(
        stdout
            .lines()
            .all(|l| l.contains("(no *IDN? answer within the --idn-deadline of 0.5 s")),
        "{stdout}"
    );
    eprintln!("40 silent hosts, --idn-deadline 0.5: {took:?}");
    // 40 broadcasts of 0.1 s each (4 s), then 0.5 s: 20 s is a wide margin (one
    // after another, each host's query took seconds).
    assert!(took < Duration::from_secs(20), "took {took:?}");
}

/// Issue 28 item 11: a call that cannot be sent says why and to which address, not the
/// system's "Invalid argument (os error 22)" alone.
#[test]
fn an_address_nothing_can_be_sent_to_is_named() {
    let out = gpib_diag()
        .args(["discover", "--broadcast", "127.0.0.1:0", "--timeout", "0.1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("127.0.0.1:0") && stderr.contains("port 0"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Sets up a user and network namespace with a veth pair (10.9.0.1/24 on `v0`) and a
/// `gpib-diag serve --bind 0.0.0.0` on the standard ports (111 for the portmapper: root
/// in the namespace binds it), then runs `then` there (`$BIN` is gpib-diag). Its
/// output, or `None` (said on stderr) where user namespaces, veth or `ip` are missing.
fn in_namespace(then: &str) -> Option<std::process::Output> {
    let usable = Command::new("unshare")
        .args([
            "-rn", "ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !usable {
        eprintln!("skipped: no user and network namespace with veth here (unshare -rn, ip)");
        return None;
    }
    let dir = std::env::temp_dir().join(format!(
        "gpib-discover-{}-{}",
        std::process::id(),
        then.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        r#"
set -e
ip link set lo up
ip link add v0 type veth peer name v1
ip addr add 10.9.0.1/24 brd + dev v0
ip link set v0 up
ip link set v1 up
"$BIN" serve --bind 0.0.0.0 --default-device 22 > "$DIR/serve.out" 2> "$DIR/serve.err" &
pid=$!
i=0
while [ ! -s "$DIR/serve.out" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
cat "$DIR/serve.out" >&2
{then}
kill $pid
"#
    );
    let out = Command::new("unshare")
        .args(["-rn", "sh", "-c", &script])
        .env("BIN", env!("CARGO_BIN_EXE_gpib-diag"))
        .env("DIR", &dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    Some(out)
}

/// A real broadcast: `discover --broadcast 10.9.0.255 --idn` in a namespace, the
/// server on port 111, `*IDN?` through the VISA-standard resource string it prints.
#[test]
fn a_broadcast_in_a_network_namespace_finds_the_gateway_on_port_111() {
    let Some(out) = in_namespace(r#""$BIN" discover --broadcast 10.9.0.255 --timeout 0.5 --idn"#)
    else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("portmap=0.0.0.0:111"), "{stderr}");
    assert_eq!(
        stdout, "TCPIP0::10.9.0.1::inst0::INSTR  SIMULATED,SCPI-DMM,0,1.0\n",
        "{stderr}"
    );
}

/// lxi-tools' `lxi discover` (liblxi: a GETPORT broadcast on every interface, then
/// `*IDN?` over VXI-11 through the portmapper) finds the server in a namespace. Skipped
/// without `lxi` unless GPIB_REQUIRE_LXI=1 (CI installs lxi-tools).
#[test]
fn lxi_discover_finds_the_gateway() {
    let has_lxi = Command::new("lxi")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !has_lxi {
        assert!(
            std::env::var_os("GPIB_REQUIRE_LXI").is_none(),
            "GPIB_REQUIRE_LXI is set and lxi (lxi-tools) is missing"
        );
        eprintln!("skipped: no lxi (lxi-tools) here");
        return;
    }
    let Some(out) = in_namespace("timeout 30 lxi discover") else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(r#"Found "SIMULATED,SCPI-DMM,0,1.0" on address 10.9.0.1"#),
        "{stdout}{stderr}"
    );
}
