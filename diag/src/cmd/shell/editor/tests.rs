//! The editor fed bytes as a terminal sends them: what it returns, what it draws.

use super::*;

/// Feeds `input` after a prompt on an 80-column terminal, a new prompt after each
/// line (as the shell does): the events and the output.
fn run(ed: &mut Editor, input: &[u8]) -> (Vec<Event>, Vec<u8>) {
    let mut out = Vec::new();
    ed.begin("> ", 80, &mut out);
    let mut events = Vec::new();
    for &b in input {
        if let Some(e) = ed.feed(b, &mut out) {
            events.push(e);
            ed.begin("> ", 80, &mut out);
        }
    }
    (events, out)
}

#[test]
fn a_line_is_the_bytes_typed() {
    let mut ed = Editor::new(Vec::new());
    let (ev, out) = run(&mut ed, b"*IDN?\r");
    assert_eq!(ev, [Event::Line(b"*IDN?".to_vec())]);
    assert_eq!(out, b"> *IDN?\r\n> ");
}

/// Issue 28 item 8: a byte that is not UTF-8 is part of the line (sent as typed) and
/// shown escaped; valid UTF-8 is shown as itself.
#[test]
fn bytes_that_are_not_utf8_are_kept_and_shown_escaped() {
    let mut ed = Editor::new(Vec::new());
    let (ev, out) = run(&mut ed, b"A\xffB\xc2\xb5C\xc2D\r");
    assert_eq!(ev, [Event::Line(b"A\xffB\xc2\xb5C\xc2D".to_vec())]);
    let shown = String::from_utf8_lossy(&out);
    assert!(shown.contains("A\\xffB\u{b5}C\\xc2D"), "{shown:?}");
}

/// Issue 28 item 8: typing at the end of a long line writes the byte typed, not the
/// line: 32 KiB typed is about 2.5 times that drawn (each keystroke redrew the whole
/// line, 7.3 MB for 32 KiB).
#[test]
fn a_long_line_is_not_redrawn_at_every_key() {
    let mut ed = Editor::new(Vec::new());
    let mut input = vec![b'x'; 32 << 10];
    input.push(b'\r');
    let (ev, out) = run(&mut ed, &input);
    assert_eq!(ev, [Event::Line(vec![b'x'; 32 << 10])]);
    assert!(out.len() < 4 * input.len(), "{} bytes drawn", out.len());
    // Backspace at the end is as cheap.
    let mut input = vec![b'y'; 8 << 10];
    input.extend(std::iter::repeat_n(0x7f, 8 << 10));
    input.push(b'\r');
    let (ev, out) = run(&mut ed, &input);
    assert_eq!(ev, [Event::Line(Vec::new())]);
    assert!(out.len() < 8 * input.len(), "{} bytes drawn", out.len());
}

/// Issue 28 item 8: a paste that never ends does not swallow Ctrl-C or Ctrl-D, and
/// ends at [`MAX_PASTE`], saying so.
#[test]
fn a_paste_without_its_end_is_bounded() {
    let mut ed = Editor::new(Vec::new());
    let (ev, _) = run(&mut ed, b"\x1b[200~abc\x03");
    assert_eq!(ev, [Event::Interrupted]);
    let (ev, _) = run(&mut ed, b"\x1b[200~\x04");
    assert_eq!(ev, [Event::Eof]);
    // Within a paste, control bytes are text and a newline ends the line.
    let (ev, _) = run(&mut ed, b"\x1b[200~a\x01b\nc\x1b[201~\r");
    assert_eq!(
        ev,
        [Event::Line(b"a\x01b".to_vec()), Event::Line(b"c".to_vec())]
    );
    let mut input = b"\x1b[200~".to_vec();
    input.extend(std::iter::repeat_n(b'p', MAX_PASTE + 10));
    // After the bound, the keys act again: Ctrl-A goes to the start.
    input.extend_from_slice(b"\x01Q\r");
    let (ev, out) = run(&mut ed, &input);
    let Event::Line(line) = &ev[0] else {
        panic!("{ev:?}")
    };
    assert_eq!(line.len(), MAX_PASTE + 11);
    assert_eq!(line[0], b'Q');
    assert!(
        String::from_utf8_lossy(&out).contains("a paste of more than 65536 bytes"),
        "the bound is said"
    );
}

#[test]
fn editing_and_history() {
    let mut ed = Editor::new(vec![b"first".to_vec()]);
    // Left twice, insert, Home, insert, End, Backspace.
    let (ev, _) = run(&mut ed, b"abc\x1b[D\x1b[DX\x01Y\x05\x7f\r");
    assert_eq!(ev, [Event::Line(b"YaXb".to_vec())]);
    let (ev, _) = run(&mut ed, b"\x1b[A\r");
    assert_eq!(ev, [Event::Line(b"first".to_vec())]);
    // Ctrl-D within a line deletes; on an empty line it ends the session.
    let (ev, _) = run(&mut ed, b"ab\x01\x04\r\x04");
    assert_eq!(ev, [Event::Line(b"b".to_vec()), Event::Eof]);
}

/// Any bytes at all, keys and escape sequences among them, on narrow and wide
/// terminals: no panic, and what is drawn stays in proportion to what is typed.
#[test]
fn any_bytes_are_taken() {
    let alphabet: &[u8] = b"ab \x1b[O~0123456789ABCDFH;\x01\x02\x03\x04\x05\x06\x08\x0b\x0c\x15\x7f\r\xff\xc2\xb5\xe2\x82\xac\xf0";
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for width in [0, 1, 9, 20, 80, 300] {
        let mut ed = Editor::new(vec![b"old".to_vec(), b"\xff\xfe".to_vec()]);
        let mut out = Vec::new();
        ed.begin("GPIB0::22::INSTR> ", width, &mut out);
        let n = 50_000;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let b = alphabet[(x % alphabet.len() as u64) as usize];
            if let Some(e) = ed.feed(b, &mut out) {
                if let Event::Line(l) = &e {
                    ed.add_history(l);
                }
                ed.begin("GPIB0::22::INSTR> ", width, &mut out);
            }
            assert!(ed.cursor <= ed.cells.len() && ed.start <= ed.cells.len());
        }
        assert!(
            out.len() < 200 * n,
            "width {width}: {} bytes drawn",
            out.len()
        );
    }
}
