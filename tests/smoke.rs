use gpib::{sim, Bus};
#[test]
fn idn() {
    let bus = Bus::new(sim::bench().board(0).unwrap());
    let dmm = bus.device(22).unwrap();
    eprintln!("dev ok");
    dmm.write_str("*IDN?").unwrap();
    eprintln!("write ok");
    let mut b = [0u8; 100];
    let st = dmm.read(&mut b).unwrap();
    eprintln!("read {:?} {:?}", st, std::str::from_utf8(&b[..st.count]));
    assert!(dmm.query("*IDN?").unwrap().contains("SIMULATED"));
}
