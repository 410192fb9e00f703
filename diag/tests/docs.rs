//! Every command and output block of README.md, compat/README.md, bench/README.md and docs/*.md is
//! checked here, so a figure or a command in the documentation that drifts from what
//! the program does fails the tests.
//!
//! Each fenced block is claimed by one check, by its language and first line:
//!
//! | block | check |
//! |---|---|
//! | `text` whose first line is `$ COMMAND` | a transcript: each command runs (`gpib-diag ...`, `cargo run ... -p gpib-diag -- ...`), and every line shown under it must appear in its output, in order (lines may be left out, none changed); a `gpib-diag serve` runs until the block's end, its first line shown is its ports line, and the lines shown after it must appear, in order, among what it printed on stderr by then (client ports `127.0.0.1:N` may differ); the ports a serve line shows stand for its real ones in the commands after it and in what they print |
//! | `text` of `gpib-diag SUB ...` lines | a synopsis: the subcommand exists and takes every `--option` shown |
//! | `sh` | each command: gpib-diag runs and succeeds; `cargo test` names a package, test target, feature and test that exist; `cargo run --example` an example that exists and is run (when built) with those arguments; scripts exist and take the targets named; the rest is run verbatim by a CI script (`.ci/run`, `compat/ci.sh`) that this test finds it in |
//! | `toml` | a simulator configuration: loads, and `gpib-diag scan` lists its instruments |
//! | `rust` | compiled (and, unless `no_run`, run) as gpib's doc tests (`gpib/src/lib.rs` includes README.md, docs/library.md and docs/network.md) |
//! | marked `<!-- compat/ci.sh runs this block -->` (compat/README.md's set-up, C and Python blocks) | run as written by `compat/ci.sh` (through `compat/scripts/readme_blocks.py`), which compares what they print with what the block shows; this test checks that the script does so |
//! | `text` of lines that each start with a path | a file layout: every path named exists |
//! | `ini` whose first line is `[Unit]` | a systemd unit: its `ExecStart=` runs gpib-diag (a path ending in `/gpib-diag`) with a subcommand and options it takes, as a synopsis |
//!
//! A block no check claims fails the test, so a new kind of block needs a check.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The repository's root (diag's parent).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The documents whose blocks are checked.
fn documents() -> Vec<PathBuf> {
    let r = root();
    let mut docs = vec![
        r.join("README.md"),
        r.join("compat/README.md"),
        r.join("bench/README.md"),
    ];
    let mut more: Vec<PathBuf> = std::fs::read_dir(r.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// One fenced block: where it starts, its language tag, its lines.
#[derive(Debug, Clone)]
struct Block {
    file: String,
    line: usize,
    lang: String,
    body: Vec<String>,
    /// The line before the fence is [`RUN_BY_COMPAT_CI`].
    marked: bool,
    /// The line before the fence is [`HARDWARE_TRANSCRIPT`].
    hardware: bool,
}

/// The mark of a compat/README.md block that compat/ci.sh runs as written
/// (compat/scripts/readme_blocks.py extracts them).
const RUN_BY_COMPAT_CI: &str = "<!-- compat/ci.sh runs this block -->";

/// The mark of a transcript on the hardware path (the linux-gpib build over compat's
/// libgpib.so.0 in real time), which compat/ci.sh runs through
/// compat/scripts/hardware_transcripts.py with the figures compared as numbers.
const HARDWARE_TRANSCRIPT: &str = "<!-- compat/ci.sh runs this transcript on the hardware path -->";

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

fn blocks_of(path: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    let mut prev = "";
    while let Some((i, l)) = lines.next() {
        let t = l.trim_start();
        if !t.starts_with("```") && !t.is_empty() {
            prev = t;
        }
        if let Some(lang) = t.strip_prefix("```") {
            let indent = l.len() - t.len();
            let mut body = Vec::new();
            for (_, b) in lines.by_ref() {
                if b.trim() == "```" {
                    break;
                }
                body.push(b.get(indent..).unwrap_or(b.trim_start()).to_string());
            }
            out.push(Block {
                file: name.clone(),
                line: i + 1,
                lang: lang.trim().to_string(),
                body,
                marked: prev == RUN_BY_COMPAT_CI,
                hardware: prev == HARDWARE_TRANSCRIPT,
            });
            prev = "";
        }
    }
    out
}

fn all_blocks() -> Vec<Block> {
    documents().iter().flat_map(|d| blocks_of(d)).collect()
}

/// What checks a block.
#[derive(Debug, PartialEq)]
enum Kind {
    RunByCompatCi,
    HardwareTranscript,
    Transcript,
    Synopsis,
    Shell,
    Toml,
    Rust,
    Python,
    Layout,
    SystemdUnit,
}

fn kind(b: &Block) -> Option<Kind> {
    let first = b.body.iter().find(|l| !l.trim().is_empty())?;
    let lang = b.lang.split(',').next().unwrap_or("");
    if b.marked {
        return Some(Kind::RunByCompatCi);
    }
    if b.hardware {
        return Some(Kind::HardwareTranscript);
    }
    match lang {
        "text" if first.starts_with("$ ") => Some(Kind::Transcript),
        "text"
            if b.body.iter().all(|l| {
                l.trim().is_empty() || l.split_whitespace().next().is_some_and(|w| w.contains('/'))
            }) =>
        {
            Some(Kind::Layout)
        }
        "text"
            if b.body
                .iter()
                .all(|l| l.trim().is_empty() || l.starts_with("gpib-diag ")) =>
        {
            Some(Kind::Synopsis)
        }
        "sh" => Some(Kind::Shell),
        "toml" => Some(Kind::Toml),
        "rust" => Some(Kind::Rust),
        "python" => Some(Kind::Python),
        "ini" if first.trim() == "[Unit]" => Some(Kind::SystemdUnit),
        _ => None,
    }
}

/// Splits a command line as a POSIX shell would for these documents: words, single and
/// double quotes, a trailing `# comment`.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    in_word = true;
                }
                '#' if !in_word => break,
                c if c.is_whitespace() => {
                    if in_word {
                        out.push(std::mem::take(&mut cur));
                        in_word = false;
                    }
                }
                c => {
                    cur.push(c);
                    in_word = true;
                }
            },
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// The shell commands of a block: continuation lines joined, comments and blank lines
/// dropped; each with the comment lines (`# ...`) that follow it.
fn commands(body: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut pending = String::new();
    for l in body {
        let t = l.trim();
        if pending.is_empty() && t.starts_with('#') {
            if let Some(last) = out.last_mut() {
                last.1.push(t.trim_start_matches('#').trim().to_string());
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(t);
        out.push((std::mem::take(&mut pending), Vec::new()));
    }
    out
}

/// `VAR=value` words before the program.
fn split_env(w: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let n = w
        .iter()
        .take_while(|x| {
            x.split_once('=').is_some_and(|(k, _)| {
                !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            })
        })
        .count();
    let env = w[..n]
        .iter()
        .map(|x| {
            let (k, v) = x.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect();
    (env, w[n..].to_vec())
}

/// The gpib-diag arguments of a command line that runs gpib-diag (`gpib-diag ARGS` or
/// `cargo run [--release] [-q] -p gpib-diag -- ARGS`), or `None`.
fn diag_args(w: &[String]) -> Option<Vec<String>> {
    match w.first().map(String::as_str) {
        Some("gpib-diag") => Some(w[1..].to_vec()),
        Some("cargo") if w.get(1).map(String::as_str) == Some("run") => {
            let dash = w.iter().position(|x| x == "--")?;
            let opts = &w[2..dash];
            let pkg = opts
                .windows(2)
                .find(|p| p[0] == "-p")
                .map(|p| p[1].as_str());
            (pkg == Some("gpib-diag") && !opts.iter().any(|o| o.starts_with("--features")))
                .then(|| w[dash + 1..].to_vec())
        }
        _ => None,
    }
}

/// A working directory for the documents' commands: the repository's folders reached
/// through links, files the commands write kept out of the repository.
fn scratch() -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("gpib-docs-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in [
        "gpib", "compat", "docs", "diag", "tests", "examples", "net", "fuzz",
    ] {
        let link = dir.join(entry);
        if !link.exists() {
            std::os::unix::fs::symlink(root().join(entry), &link).unwrap();
        }
    }
    dir
}

fn gpib_diag(cwd: &Path, env: &[(String, String)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gpib-diag"));
    c.current_dir(cwd).env_remove("GPIB_SIM_CONFIG");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Runs gpib-diag with a hang detector; returns (exit code, stdout, stderr).
fn run_diag(cwd: &Path, env: &[(String, String)], args: &[String]) -> (i32, String, String) {
    let mut c = gpib_diag(cwd, env);
    c.args(args);
    run_watched(c, &format!("gpib-diag {args:?}"))
}

/// Runs `c` with a hang detector; returns (exit code, stdout, stderr).
fn run_watched(mut c: Command, what: &str) -> (i32, String, String) {
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            child.kill().ok();
            panic!("{what} still running after 120 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `127.0.0.1:PORT` in a line, each port replaced by `{}`, with the ports.
fn ports(line: &str) -> (String, Vec<String>) {
    let mut shape = String::new();
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("127.0.0.1:") {
        let (head, tail) = rest.split_at(i + "127.0.0.1:".len());
        shape.push_str(head);
        let n = tail.chars().take_while(char::is_ascii_digit).count();
        found.push(tail[..n].to_string());
        shape.push_str("{}");
        rest = &tail[n..];
    }
    shape.push_str(rest);
    (shape, found)
}

/// Checks that every line of `shown` appears in `actual`, in order; returns the first
/// line that does not, with where it was looked for.
fn shown_in(shown: &[String], actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let mut at = 0;
    for s in shown.iter().map(|s| s.trim_end()).filter(|s| !s.is_empty()) {
        match actual[at..].iter().position(|a| *a == s) {
            Some(i) => at += i + 1,
            None => {
                return Err(format!(
                    "line not in the output (in order):\n  {s}\noutput:\n{}",
                    actual.join("\n")
                ))
            }
        }
    }
    Ok(())
}

/// Exit codes a documented command may end with: 0, and doctor's 3 ("a problem found").
fn exit_ok(args: &[String], code: i32) -> bool {
    code == 0 || (code == 3 && args.first().is_some_and(|a| a == "doctor"))
}

fn check_transcript(b: &Block, cwd: &Path) -> Result<(), String> {
    // Commands and the lines shown under each.
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    for l in &b.body {
        match l.strip_prefix("$ ") {
            Some(cmd) => steps.push((cmd.to_string(), Vec::new())),
            None => steps.last_mut().unwrap().1.push(l.clone()),
        }
    }
    // A server started by the block, the stderr lines shown for it, and its
    // documented ports -> the real ones.
    let mut server: Option<(Child, Vec<String>)> = None;
    let mut port_map: HashMap<String, String> = HashMap::new();
    let result = (|| {
        for (cmd, shown) in &steps {
            let mut cmd = cmd.clone();
            for (doc, real) in &port_map {
                cmd = cmd.replace(&format!("127.0.0.1:{doc}"), &format!("127.0.0.1:{real}"));
                cmd = cmd.replace(&format!("127.0.0.1,{doc}"), &format!("127.0.0.1,{real}"));
                // A HiSLIP port, after the sub-address: `hislip0,4880::INSTR`.
                cmd = cmd.replace(&format!(",{doc}::"), &format!(",{real}::"));
                // A Prologix port in a device string: `PRLGX-TCPIP::host::1234::22::INSTR`.
                cmd = cmd.replace(&format!("::{doc}::"), &format!("::{real}::"));
            }
            // The server's documented ports in what a client prints (a resource string
            // `discover` found, or an example was given) are its real ones.
            let shown: Vec<String> = shown
                .iter()
                .map(|l| {
                    port_map.iter().fold(l.clone(), |l, (doc, real)| {
                        l.replace(&format!("127.0.0.1:{doc}"), &format!("127.0.0.1:{real}"))
                            .replace(&format!("127.0.0.1,{doc}"), &format!("127.0.0.1,{real}"))
                            .replace(&format!("::{doc}::"), &format!("::{real}::"))
                    })
                })
                .collect();
            let (env, w) = split_env(&words(&cmd));
            if let Some((name, args)) = example_args(&w)? {
                // An example program, as built beside this test (not built: the step
                // cannot be run here, as `sh` blocks' examples are not).
                let Some(exe) = example(&name) else {
                    continue;
                };
                let mut c = Command::new(exe);
                c.args(&args).current_dir(cwd).env_remove("GPIB_SIM_CONFIG");
                for (k, v) in &env {
                    c.env(k, v);
                }
                let (code, out, err) = run_watched(c, &format!("example {name} {args:?}"));
                if code != 0 {
                    return Err(format!("`{cmd}` exited {code}: {err}"));
                }
                shown_in(&shown, &out).map_err(|e| format!("`{cmd}`: {e}"))?;
                continue;
            }
            let args = diag_args(&w)
                .ok_or_else(|| format!("`{cmd}` runs neither gpib-diag nor an example"))?;
            if args.first().is_some_and(|a| a == "serve") {
                // Runs until stopped: its first line names the ports.
                let want = shown.first().ok_or("serve shows no line")?;
                let mut child = gpib_diag(cwd, &env)
                    .args(&args)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                let mut first = String::new();
                BufReader::new(child.stdout.take().unwrap())
                    .read_line(&mut first)
                    .unwrap();
                server = Some((child, shown[1..].to_vec()));
                let (want_shape, doc_ports) = ports(want);
                let (got_shape, real_ports) = ports(first.trim_end());
                if want_shape != got_shape {
                    return Err(format!("`{cmd}` printed\n  {first}not\n  {want}"));
                }
                port_map.extend(doc_ports.into_iter().zip(real_ports));
                continue;
            }
            let (code, out, err) = run_diag(cwd, &env, &args);
            if !exit_ok(&args, code) {
                return Err(format!("`{cmd}` exited {code}: {err}"));
            }
            shown_in(&shown, &out).map_err(|e| format!("`{cmd}`: {e}"))?;
        }
        Ok(())
    })();
    if let Some((mut s, shown)) = server {
        s.kill().ok();
        let out = s.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // Client ports differ from run to run: lines compare with each port as `{}`.
        let shape = |l: &str| ports(l).0;
        let shown: Vec<String> = shown.iter().map(|l| shape(l)).collect();
        let actual: String = err.lines().map(|l| shape(l) + "\n").collect();
        if result.is_ok() {
            return shown_in(&shown, &actual).map_err(|e| format!("the server's stderr: {e}"));
        }
    }
    result
}

/// A systemd unit: `ExecStart=/path/to/gpib-diag SUB --options` checked as a synopsis.
fn check_unit(b: &Block) -> Result<(), String> {
    let exec = b
        .body
        .iter()
        .find_map(|l| l.trim().strip_prefix("ExecStart="))
        .ok_or("no ExecStart=")?;
    let (prog, rest) = exec.split_once(' ').unwrap_or((exec, ""));
    if !prog.ends_with("/gpib-diag") {
        return Err(format!("ExecStart runs {prog}, not gpib-diag"));
    }
    check_synopsis(&Block {
        body: vec![format!("gpib-diag {rest}")],
        ..b.clone()
    })
}

fn help_of(sub: &[String]) -> String {
    let out = gpib_diag(&root(), &[])
        .args(sub)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "gpib-diag {sub:?} --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The subcommand words of a synopsis line (`gpib-diag trace record ...` -> trace,
/// record), its options (`--bus`, `-o`), and whether the subcommand path is known.
fn check_synopsis(b: &Block) -> Result<(), String> {
    for l in b.body.iter().filter(|l| !l.trim().is_empty()) {
        let w = words(l);
        let mut sub: Vec<String> = Vec::new();
        for x in &w[1..] {
            if x.starts_with('-') || x.starts_with('[') || x.starts_with('<') {
                break;
            }
            // Subcommands are lower-case words that --help of the parent lists.
            let parent = help_of(&sub);
            let listed = parent
                .lines()
                .any(|h| h.split_whitespace().next() == Some(x.as_str()));
            if !listed {
                break;
            }
            sub.push(x.clone());
        }
        if sub.is_empty() {
            return Err(format!("`{l}`: no subcommand gpib-diag knows"));
        }
        let help = help_of(&sub);
        for x in &w {
            let opt = x.trim_start_matches('[').trim_end_matches(']');
            let opt = opt.split(['=', ']']).next().unwrap_or("");
            let is_opt = (opt.starts_with("--") && opt.len() > 2)
                || (opt.len() == 2 && opt.starts_with('-') && opt != "--");
            if is_opt
                && !help
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .any(|h| h == opt)
            {
                return Err(format!("`{l}`: gpib-diag {} takes no {opt}", sub.join(" ")));
            }
        }
    }
    Ok(())
}

/// Where each package of the workspace lives, by name.
fn packages() -> HashMap<String, PathBuf> {
    let mut out = HashMap::new();
    for dir in ["", "gpib", "diag", "compat"] {
        let manifest = root().join(dir).join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let doc: toml::Table = text.parse().unwrap();
        let name = doc["package"]["name"].as_str().unwrap().to_string();
        out.insert(name, root().join(dir));
    }
    out
}

/// Rust sources under `dir` (not target dirs), concatenated; each file opens with a
/// line `fn STEM(` (a test's module path names its file, and a filter selects by path).
fn sources(dir: &Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                let skip = name.starts_with("target") || name == "fuzz" || name == ".git";
                // The root package's sources are tests/ and examples/ only.
                if !skip && (d != root() || ["tests", "examples"].contains(&name.as_str())) {
                    stack.push(p);
                }
            } else if let Some(stem) = name.strip_suffix(".rs") {
                out.push_str(&format!("fn {stem}(\n"));
                out.push_str(&std::fs::read_to_string(&p).unwrap());
                out.push('\n');
            }
        }
    }
    out
}

/// `cargo test [--release] [--workspace | -p PKG] [--test T] [--features F] [FILTER]
/// [-- ...]`: the package, test target, feature and a test the filter selects exist.
fn check_cargo_test(w: &[String]) -> Result<(), String> {
    let pkgs = packages();
    let end = w.iter().position(|x| x == "--").unwrap_or(w.len());
    let mut pkg = "gpib-suite".to_string();
    let (mut test, mut features, mut filter) = (None, None, None);
    let mut i = 2;
    while i < end {
        match w[i].as_str() {
            "--release" | "-q" => {}
            "--workspace" => {
                let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
                if !ci.contains("cargo test --workspace") {
                    return Err(".ci/run does not run cargo test --workspace".into());
                }
            }
            "-p" => {
                i += 1;
                pkg = w[i].clone();
            }
            "--test" => {
                i += 1;
                test = Some(w[i].clone());
            }
            "--features" => {
                i += 1;
                features = Some(w[i].clone());
            }
            "--lib" => {}
            f if !f.starts_with('-') => filter = Some(f.to_string()),
            f => return Err(format!("option {f} not understood by this check")),
        }
        i += 1;
    }
    let dir = pkgs
        .get(&pkg)
        .ok_or_else(|| format!("no package {pkg} in the workspace"))?;
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    if let Some(t) = &test {
        let declared = manifest.contains(&format!("name = \"{t}\""))
            || dir.join("tests").join(format!("{t}.rs")).exists();
        if !declared {
            return Err(format!("package {pkg} has no test target {t}"));
        }
    }
    if let Some(f) = &features {
        let doc: toml::Table = manifest.parse().unwrap();
        let has = doc
            .get("features")
            .and_then(|x| x.as_table())
            .is_some_and(|t| t.contains_key(f));
        if !has {
            return Err(format!("package {pkg} has no feature {f}"));
        }
    }
    if let Some(f) = &filter {
        let src = sources(dir);
        let last = f.rsplit("::").next().unwrap();
        // A filter selects tests by path: a function's or a module's name.
        let selects = src.lines().any(|l| {
            let l = l.trim_start();
            let name = l
                .strip_prefix("fn ")
                .or_else(|| l.strip_prefix("mod "))
                .or_else(|| l.strip_prefix("pub mod "));
            name.is_some_and(|rest| {
                rest.split(['(', ' ', '{', ';'])
                    .next()
                    .unwrap_or("")
                    .contains(last)
            })
        });
        if !selects {
            return Err(format!("no test of package {pkg} is selected by {f}"));
        }
    }
    Ok(())
}

/// The built example `name` (cargo builds the root package's examples before the tests
/// of `cargo test --workspace`), if it is there.
fn example(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let profile_dir = exe.parent()?.parent()?;
    let p = profile_dir.join("examples").join(name);
    p.exists().then_some(p)
}

/// The example and its arguments of a command line that runs one (`cargo run [-q]
/// [--release] --example NAME [-- ARGS]`), or `None`. An example built with other
/// features than the tests' is not run here: an error.
fn example_args(w: &[String]) -> Result<Option<(String, Vec<String>)>, String> {
    if !(w.first().is_some_and(|x| x == "cargo")
        && w.get(1).is_some_and(|x| x == "run")
        && w.iter().any(|x| x == "--example"))
    {
        return Ok(None);
    }
    let dash = w.iter().position(|x| x == "--").unwrap_or(w.len());
    let opts = &w[2..dash];
    if let Some(o) = opts
        .iter()
        .find(|o| o.starts_with("--features") || *o == "-F")
    {
        return Err(format!(
            "{o}: an example built with other features is not run here"
        ));
    }
    let i = opts.iter().position(|x| x == "--example").unwrap();
    let name = opts.get(i + 1).ok_or("--example names no example")?.clone();
    if !root().join("examples").join(format!("{name}.rs")).exists() {
        return Err(format!("no example {name}"));
    }
    Ok(Some((name, w.get(dash + 1..).unwrap_or(&[]).to_vec())))
}

/// The CI scripts' text, which runs the commands this test does not run itself.
fn ci_text() -> String {
    [
        "\n.ci/run",
        "compat/ci.sh",
        "vboard/ci.sh",
        "net/pyvisa_test.sh",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(root().join(f.trim())).unwrap_or_default())
    .collect::<Vec<_>>()
    .join("\n")
}

fn check_shell(b: &Block, cwd: &Path) -> Result<(), String> {
    for (cmd, _) in commands(&b.body) {
        let (env, w) = split_env(&words(&cmd));
        let at = |e: String| format!("`{cmd}`: {e}");
        let prog = w.first().map(String::as_str).unwrap_or("");
        if let Some(args) = diag_args(&w) {
            let (code, _, err) = run_diag(cwd, &env, &args);
            if !exit_ok(&args, code) {
                return Err(at(format!("exited {code}: {err}")));
            }
        } else if prog == "cargo" && w.get(1).is_some_and(|x| x == "test") {
            check_cargo_test(&w).map_err(at)?;
        } else if prog == "cargo"
            && w.get(1).is_some_and(|x| x == "run")
            && w.contains(&"--example".to_string())
        {
            let i = w.iter().position(|x| x == "--example").unwrap();
            let name = &w[i + 1];
            let src = root().join("examples").join(format!("{name}.rs"));
            if !src.exists() {
                return Err(at(format!("no example {name}")));
            }
            let dash = w.iter().position(|x| x == "--");
            let args = dash.map_or(&[][..], |d| &w[d + 1..]);
            if let Some(exe) = example(name) {
                let out = Command::new(exe)
                    .args(args)
                    .current_dir(cwd)
                    .output()
                    .unwrap();
                if !out.status.success() {
                    return Err(at(format!("exited {:?}", out.status.code())));
                }
            }
        } else if prog.ends_with(".sh") {
            let script = root().join(prog);
            if !script.exists() {
                return Err(at("no such script".into()));
            }
            if prog == "fuzz/run.sh" {
                for t in w.iter().skip(2) {
                    if !root()
                        .join("fuzz/fuzz_targets")
                        .join(format!("{t}.rs"))
                        .exists()
                    {
                        return Err(at(format!("no fuzz target {t}")));
                    }
                }
            }
        } else {
            let ci = ci_text();
            let core: Vec<&String> = w.iter().filter(|x| !x.contains('=')).collect();
            let needle = core
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            if !ci.contains(&needle) {
                return Err(at("neither run here nor by a CI script".into()));
            }
        }
    }
    Ok(())
}

fn check_toml(b: &Block, cwd: &Path) -> Result<(), String> {
    let file = cwd.join(format!("block-{}.toml", b.line));
    std::fs::write(&file, b.body.join("\n")).unwrap();
    // Files it names are relative to the configuration: the examples' folder.
    for e in std::fs::read_dir(root().join("gpib/configs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "yaml") {
            std::fs::copy(&p, cwd.join(p.file_name().unwrap())).unwrap();
        }
    }
    let (code, out, err) = run_diag(
        cwd,
        &[],
        &[
            "scan".into(),
            "--bus".into(),
            file.to_string_lossy().into_owned(),
        ],
    );
    if code != 0 || out.lines().count() < 2 {
        return Err(format!("does not load as a configuration: {err}{out}"));
    }
    Ok(())
}

fn check_layout(b: &Block) -> Result<(), String> {
    for l in b.body.iter().filter(|l| !l.trim().is_empty()) {
        let path = l.split_whitespace().next().unwrap();
        // `a/{x,y}.rs` names several files; `a/, b/` several folders.
        let paths: Vec<String> = match (path.find('{'), path.find('}')) {
            (Some(i), Some(j)) => path[i + 1..j]
                .split(',')
                .map(|x| format!("{}{x}{}", &path[..i], &path[j + 1..]))
                .collect(),
            _ => path
                .split(',')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect(),
        };
        for p in paths {
            if !root().join(&p).exists() {
                return Err(format!("`{l}`: {p} does not exist"));
            }
        }
    }
    Ok(())
}

fn check(b: &Block, cwd: &Path) -> Result<(), String> {
    match kind(b) {
        Some(Kind::Transcript) => check_transcript(b, cwd),
        Some(Kind::Synopsis) => check_synopsis(b),
        Some(Kind::Shell) => check_shell(b, cwd),
        Some(Kind::Toml) => check_toml(b, cwd),
        Some(Kind::Rust) => {
            let lib = std::fs::read_to_string(root().join("gpib/src/lib.rs")).unwrap();
            if !lib.contains(&format!("include_str!(\"../../{}\")", b.file)) {
                return Err("no doc test compiles this Rust block (gpib/src/lib.rs includes the documents whose Rust blocks are doc tests)".into());
            }
            Ok(())
        }
        Some(Kind::RunByCompatCi) => {
            let ci = std::fs::read_to_string(root().join("compat/ci.sh")).unwrap();
            let runs = ci.contains("compat/scripts/readme_blocks.py")
                && ci.contains("compat/README.md")
                && b.file == "compat/README.md";
            if !runs {
                return Err("marked as run by compat/ci.sh, which does not run it".into());
            }
            Ok(())
        }
        Some(Kind::HardwareTranscript) => {
            let ci = std::fs::read_to_string(root().join("compat/ci.sh")).unwrap();
            let line = ci
                .lines()
                .find(|l| l.contains("compat/scripts/hardware_transcripts.py"))
                .unwrap_or("");
            if !(line.contains(&b.file)
                || line.contains("docs/*.md") && b.file.starts_with("docs/"))
            {
                return Err(format!(
                    "marked as a hardware-path transcript, but compat/ci.sh does not run hardware_transcripts.py on {}",
                    b.file
                ));
            }
            if !(b.lang == "text" && b.body.first().is_some_and(|l| l.starts_with("$ "))) {
                return Err(
                    "a hardware-path transcript is a `text` block of `$ gpib-diag ...`".into(),
                );
            }
            Ok(())
        }
        Some(Kind::Python) => Err("a Python block nothing runs (mark it for compat/ci.sh)".into()),
        Some(Kind::Layout) => check_layout(b),
        Some(Kind::SystemdUnit) => check_unit(b),
        None => Err(format!("a `{}` block no check claims", b.lang)),
    }
}

/// Runs the checks of the blocks of `file` (or all with `None`), collecting failures.
fn check_all(file: Option<&str>) {
    let cwd = scratch();
    let mut failures = Vec::new();
    let mut n = 0;
    for b in all_blocks()
        .iter()
        .filter(|b| file.is_none_or(|f| b.file == f))
    {
        n += 1;
        if let Err(e) = check(b, &cwd) {
            failures.push(format!("{}: {e}", b.at()));
        }
    }
    std::fs::remove_dir_all(&cwd).ok();
    assert!(n > 0, "no blocks in {file:?}");
    assert!(
        failures.is_empty(),
        "{} of {n} blocks fail:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn readme_commands_and_outputs_are_what_the_program_does() {
    check_all(Some("README.md"));
}

#[test]
fn compat_readme_commands_are_checked() {
    check_all(Some("compat/README.md"));
}

#[test]
fn docs_commands_are_what_the_program_does() {
    let cwd = scratch();
    let mut failures = Vec::new();
    for b in all_blocks()
        .iter()
        .filter(|b| b.file.starts_with("docs/") || b.file == "bench/README.md")
    {
        if let Err(e) = check(b, &cwd) {
            failures.push(format!("{}: {e}", b.at()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The README's first program is examples/idn.rs's: its lines (the hidden `# ` ones
/// aside) are the example's, in order, so the program the tests run on every backend
/// (tests/examples.rs) is the one the README shows.
#[test]
fn the_readme_first_program_is_the_idn_example() {
    let first = all_blocks()
        .into_iter()
        .find(|b| b.file == "README.md" && b.lang.split(',').next() == Some("rust"))
        .expect("a Rust block in README.md");
    let example = std::fs::read_to_string(root().join("examples/idn.rs")).unwrap();
    let lines: Vec<&str> = example.lines().map(str::trim).collect();
    let mut at = 0;
    for l in first
        .body
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with("# "))
    {
        match lines[at..].iter().position(|e| *e == l) {
            Some(i) => at += i + 1,
            None => panic!(
                "{}: `{l}` is not the next line of examples/idn.rs (the README's first \
                 program is that example's)",
                first.at()
            ),
        }
    }
}

// The harness itself: a changed figure, a line out of order and an unknown option fail.
#[test]
fn the_checks_fail_on_drift() {
    let out = "a 1\nb 922.0\nc 3\n";
    assert!(shown_in(&["a 1".into(), "c 3".into()], out).is_ok());
    assert!(shown_in(&["b 923.0".into()], out).is_err());
    assert!(shown_in(&["c 3".into(), "a 1".into()], out).is_err());
    let synopsis = |l: &str| Block {
        file: "x".into(),
        line: 1,
        lang: "text".into(),
        body: vec![l.into()],
        marked: false,
        hardware: false,
    };
    assert!(check_synopsis(&synopsis("gpib-diag scan [--bus bench]")).is_ok());
    assert!(check_synopsis(&synopsis("gpib-diag scan [--gremlins 3]")).is_err());
    assert!(check_synopsis(&synopsis("gpib-diag frobnicate")).is_err());
    assert!(check_cargo_test(&words(
        "cargo test -p gpib-suite --test tests no_such_test_anywhere"
    ))
    .is_err());
    assert!(check_cargo_test(&words("cargo test -p gpib-suite --test tests stress")).is_ok());
    assert_eq!(
        words("io-test --resource 'TCPIP::h::gpib0,22::INSTR' 1 # note"),
        ["io-test", "--resource", "TCPIP::h::gpib0,22::INSTR", "1"]
    );
}

/// Repository paths a document names: relative link targets, and `code` spans that
/// start with a top-level folder of the repository.
fn named_paths(doc: &Path) -> Vec<(usize, String, PathBuf)> {
    let text = std::fs::read_to_string(doc).unwrap();
    let base = doc.parent().unwrap();
    let tops = [
        "gpib/",
        "diag/",
        "compat/",
        "docs/",
        "tests/",
        "examples/",
        "fuzz/",
        "net/",
        "bench/",
        ".ci/",
    ];
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        // Links: ](target) with a relative target.
        let mut rest = line;
        while let Some(j) = rest.find("](") {
            let tail = &rest[j + 2..];
            let end = tail.find(')').unwrap_or(tail.len());
            let target = tail[..end].split('#').next().unwrap_or("");
            if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                out.push((i + 1, target.to_string(), base.join(target)));
            }
            rest = &tail[end..];
        }
        // Code spans naming a file or folder of the repository.
        for (k, span) in line.split('`').enumerate() {
            let candidate = span.split_whitespace().next().unwrap_or("");
            let candidate = candidate.trim_end_matches([',', ':', ')']);
            if k % 2 == 1
                && tops.iter().any(|t| candidate.starts_with(t))
                && !candidate.contains(['*', '<', '{', '$'])
                && candidate.len() == span.trim().len()
                // A C header is named by its include path (`gpib/ib.h`).
                && !candidate.ends_with(".h")
            {
                // Relative to the repository, or to the document's folder.
                let at_doc = base.join(candidate);
                let p = if at_doc.exists() {
                    at_doc
                } else {
                    root().join(candidate)
                };
                out.push((i + 1, candidate.to_string(), p));
            }
        }
    }
    out
}

// compat/README.md once named `gpib/src/sim/config.rs` after it had moved to config/.
#[test]
fn paths_named_in_the_documents_exist() {
    let mut missing = Vec::new();
    for doc in documents() {
        for (line, named, path) in named_paths(&doc) {
            if !path.exists() {
                let name = doc.strip_prefix(root()).unwrap().display().to_string();
                missing.push(format!("{name}:{line}: {named}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "paths that do not exist:\n{}",
        missing.join("\n")
    );
}

/// The README's Layout block is the tree's: every folder at the top of the repository
/// is listed (build output `target*` and hidden folders aside, `.ci/` listed too),
/// every workspace crate is, and every path listed exists ([`check_layout`]).
#[test]
fn the_readme_layout_lists_every_top_level_folder_and_crate() {
    let layout = readme_layout();
    check_layout(&layout).unwrap_or_else(|e| panic!("{}: {e}", layout.at()));
    let listed = layout_tops(&layout);
    let mut unlisted = Vec::new();
    for e in std::fs::read_dir(root()).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        if !e.file_type().unwrap().is_dir() || name.starts_with('.') || name.starts_with("target") {
            continue;
        }
        if !listed.contains(&name) {
            unlisted.push(name);
        }
    }
    assert!(
        unlisted.is_empty(),
        "{}: top-level folders the Layout does not list: {unlisted:?}",
        layout.at()
    );
    assert!(
        listed.contains(".ci"),
        "{}: .ci/ is not listed",
        layout.at()
    );
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = "))
        .expect("the workspace's members line");
    for m in members.trim_matches(['[', ']']).split(',') {
        let m = m.trim().trim_matches('"');
        assert!(
            listed.contains(m),
            "{}: the workspace crate {m}/ is not listed",
            layout.at()
        );
    }
}

/// The `text` block of the README's `## Layout` section.
fn readme_layout() -> Block {
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let at = text
        .lines()
        .position(|l| l == "## Layout")
        .expect("README.md has a `## Layout` section")
        + 1;
    blocks_of(&root().join("README.md"))
        .into_iter()
        .find(|b| b.line > at)
        .filter(|b| kind(b) == Some(Kind::Layout))
        .expect("the Layout section's first block is a layout (lines that start with a path)")
}

/// The top-level folders a layout block names (the first component of each line's path).
fn layout_tops(b: &Block) -> std::collections::HashSet<String> {
    b.body
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .filter_map(|p| p.split('/').next())
        .map(String::from)
        .collect()
}

// The layout check itself: a folder missing from the tree, or a tree folder missing
// from the list, fails.
#[test]
fn the_layout_check_fails_on_drift() {
    let block = |lines: &[&str]| Block {
        file: "README.md".into(),
        line: 1,
        lang: "text".into(),
        body: lines.iter().map(|l| l.to_string()).collect(),
        marked: false,
        hardware: false,
    };
    assert!(check_layout(&block(&["gpib/src/     the library"])).is_ok());
    assert!(check_layout(&block(&["no-such-crate/   gone"])).is_err());
    let tops = layout_tops(&block(&["gpib/src/bus.rs   x", "diag/   y"]));
    assert!(tops.contains("gpib") && tops.contains("diag") && !tops.contains("compat"));
}

/// The Performance table of bench/README.md as `bench/lib/line.py markdown` writes it:
/// its rows, then one line that counts them. Returns what is wrong, if anything.
fn check_performance_table(text: &str) -> Result<(), String> {
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("| target | figure |"))
        .ok_or("no Performance table (a header `| target | figure | ...`)")?;
    let rows: Vec<&str> = lines[head + 2..]
        .iter()
        .take_while(|l| l.starts_with('|'))
        .copied()
        .collect();
    let verdict = |r: &str| {
        r.trim_end_matches('|')
            .rsplit('|')
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let met = rows.iter().filter(|r| verdict(r) == "met").count();
    let goals = rows.iter().filter(|r| verdict(r) != "no goal").count();
    let counts: Vec<(usize, &str)> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("figures meet their goal; medians"))
        .map(|(i, l)| (i + 1, *l))
        .collect();
    let want = format!(
        "{met} of {goals} figures meet their goal; medians, with the runs' range in brackets."
    );
    match counts.as_slice() {
        [(_, l)] if *l == want => Ok(()),
        [(n, l)] => Err(format!("line {n}: {l:?}; the table's rows make {want:?}")),
        _ => Err(format!(
            "{} count lines (lines {:?}); line.py writes one after the table",
            counts.len(),
            counts.iter().map(|c| c.0).collect::<Vec<_>>()
        )),
    }
}

#[test]
fn the_performance_table_is_counted_once_and_right() {
    let text = std::fs::read_to_string(root().join("bench/README.md")).unwrap();
    if let Err(e) = check_performance_table(&text) {
        panic!("bench/README.md: {e}");
    }
    // The check itself: a repeated or a wrong count fails.
    let table = "| target | figure | ours | peer, same run | ratio | goal | |\n\
                 |---|---|---|---|---|---|---|\n\
                 | 1.1 | a | 1 |  |  | <= 2 | met |\n\
                 | 1.2 | b | 1 |  |  | >= 2 | NOT MET |\n\
                 | 4.2 | c | 1 |  |  | none | no goal |\n\n";
    let count = "1 of 2 figures meet their goal; medians, with the runs' range in brackets.\n";
    assert!(check_performance_table(&format!("{table}{count}")).is_ok());
    assert!(check_performance_table(&format!("{table}{count}\n{count}")).is_err());
    assert!(check_performance_table(&format!("{table}{}", count.replace("1 of", "2 of"))).is_err());
    assert!(check_performance_table(table).is_err());
}
