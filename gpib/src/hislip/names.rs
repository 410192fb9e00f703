//! HiSLIP sub-addresses (the name after the host in `TCPIP::host::hislip0::INSTR`):
//! `hislip<N>` names an instrument, and `hislip_gpib<B>_<PAD>` device PAD of board B
//! of a LAN/GPIB gateway (`gpib-diag serve`). VISA keeps the comma for a port
//! (`hislip0,4880`), and clients (pyvisa-py) take only names starting with `hislip`
//! for HiSLIP, so a gateway's device cannot be `gpib0,22` as on VXI-11.

use crate::address::Address;

/// The sub-address of device `pad` of board `board` on a gateway: `hislip_gpib0_22`.
pub fn gateway_sub_address(board: u16, pad: u8) -> String {
    format!("hislip_gpib{board}_{pad}")
}

fn number(t: &str) -> Option<u16> {
    (!t.is_empty() && t.len() <= 4 && t.bytes().all(|c| c.is_ascii_digit()))
        .then(|| t.parse().ok())
        .flatten()
}

/// What a sub-address names: `Ok(None)` for an instrument (`hislip0`, `hislip1`),
/// `Ok(Some((board, address)))` for a gateway's device (`hislip_gpib0_22`); an error
/// that says why for anything else. Case is ignored.
pub fn sub_address_target(name: &str) -> Result<Option<(u16, Address)>, String> {
    let lower = name.to_ascii_lowercase();
    let bad = || format!("{name:?} is not hislip<N> or hislip_gpib<board>_<address>");
    if let Some(n) = lower.strip_prefix("hislip_gpib") {
        let (b, a) = n.split_once('_').ok_or_else(bad)?;
        let board = number(b).ok_or_else(bad)?;
        let pad = number(a).ok_or_else(bad)?;
        let addr = u8::try_from(pad)
            .ok()
            .and_then(|p| Address::new(p, None).ok())
            .ok_or_else(|| format!("{name:?}: address {pad} is not 0 to 30"))?;
        return Ok(Some((board, addr)));
    }
    match lower.strip_prefix("hislip").and_then(number) {
        Some(_) => Ok(None),
        None => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_what_they_name() {
        assert_eq!(sub_address_target("hislip0"), Ok(None));
        assert_eq!(sub_address_target("HiSLIP3"), Ok(None));
        let (b, a) = sub_address_target("hislip_gpib1_22").unwrap().unwrap();
        assert_eq!((b, a.primary.get()), (1, 22));
        assert_eq!(gateway_sub_address(1, 22), "hislip_gpib1_22");
        for bad in [
            "inst0",
            "hislip",
            "hislipx",
            "hislip_gpib0",
            "hislip_gpib0_31",
            "hislip_gpib99999_1",
        ] {
            assert!(sub_address_target(bad).is_err(), "{bad}");
        }
    }
}
