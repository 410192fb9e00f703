use super::*;

#[test]
fn header_round_trips_and_checks_the_prologue() {
    let h = Header::new(kind::ASYNC_LOCK, 1, 3000, 4);
    let b = h.encode();
    assert_eq!(
        b,
        *b"HS\x04\x01\x00\x00\x0b\xb8\x00\x00\x00\x00\x00\x00\x00\x04"
    );
    assert_eq!(Header::decode(&b), Ok(h));
    let mut bad = b;
    bad[0] = b'X';
    assert_eq!(Header::decode(&bad), Err([b'X', b'S']));
}

#[test]
fn message_types_have_their_names() {
    assert_eq!(kind_name(kind::ASYNC_STATUS_QUERY), "AsyncStatusQuery");
    assert_eq!(
        kind_name(kind::ASYNC_LOCK_INFO_RESPONSE),
        "AsyncLockInfoResponse"
    );
    assert_eq!(kind_name(60), "Reserved");
    assert_eq!(kind_name(200), "VendorSpecific");
}

#[test]
fn a_message_reads_back() {
    let bytes = encode(kind::DATA_END, 1, FIRST_MESSAGE_ID, b"*IDN?\n");
    let m = read_message(&mut &bytes[..], 100).unwrap();
    assert_eq!(
        m.header,
        Header::new(kind::DATA_END, 1, FIRST_MESSAGE_ID, 6)
    );
    assert_eq!(m.payload, b"*IDN?\n");
}

#[test]
fn hostile_and_short_input_is_an_error_without_allocation() {
    // A header claiming 2^64-1 bytes: refused by the limit, nothing allocated.
    let h = Header::new(kind::DATA, 0, 0, u64::MAX).encode();
    match read_message(&mut &h[..], 1 << 20) {
        Err(ReadError::TooLarge { len, header, .. }) => {
            assert_eq!(len, u64::MAX);
            assert_eq!(header.kind, kind::DATA);
        }
        other => panic!("{other:?}"),
    }
    // Within the limit but the stream ends: truncated, with what arrived.
    let mut b = Header::new(kind::DATA, 0, 0, 1000).encode().to_vec();
    b.extend_from_slice(&[1, 2, 3]);
    assert!(matches!(
        read_message(&mut &b[..], 1 << 20),
        Err(ReadError::Truncated { got: 3, .. })
    ));
    assert!(matches!(
        read_message(&mut &b"GET / HTTP/1.0\r\n\r\n"[..], 10),
        Err(ReadError::BadPrologue([b'G', b'E']))
    ));
    assert!(matches!(
        read_message(&mut &b"HS\x00"[..], 10),
        Err(ReadError::Truncated { got: 3, .. })
    ));
    assert!(matches!(
        read_message(&mut &b""[..], 10),
        Err(ReadError::Closed)
    ));
    assert!(matches!(
        discard(&mut &[0u8; 10][..], 11),
        Err(ReadError::Truncated { got: 10, .. })
    ));
}

#[test]
fn initialize_parameter_packs_version_and_vendor() {
    assert_eq!(initialize_param(VERSION, *b"GD"), 0x0100_4744);
}

// Issue 28 item 11: a bad prologue was shown as `[3a, 3a]` (hex without `0x`, read as
// decimal); it is shown as text and in hex, with what was expected.
#[test]
fn a_bad_prologue_is_shown_as_text_and_hex() {
    let e = read_message(&mut &b"::\x00\x00not a header"[..], 10).unwrap_err();
    assert_eq!(
        e.to_string(),
        r#"not a HiSLIP header: it starts with "::" (0x3a 0x3a), expected "HS""#
    );
    let e = read_message(&mut &[0u8, 0xff, 1, 2][..], 10).unwrap_err();
    assert!(e.to_string().contains(r#""\x00\xff" (0x00 0xff)"#), "{e}");
}
