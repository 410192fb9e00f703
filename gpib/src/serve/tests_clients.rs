//! Gateway clients' own call sequences, replayed on loopback with the arguments they
//! send: EPICS asyn's drvVxi11 (asyn/vxi11/drvVxi11.c) connecting to a `gpib0` port
//! and using it, and the `device_docmd` shapes the other clients send (IFC with no
//! data, as asyn sends it, and with `datasize` 1 and no data, as python-vxi11's
//! `InterfaceDevice.send_ifc` sends it). python-vxi11 itself runs against the served
//! gateway in net/python_vxi11_test.py.

use std::io::Read as _;
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::time::Duration;

use super::tests::{create_link, Rpc};
use super::{ServeOptions, Server};
use crate::backend::vxi11::getport_call;
use crate::backend::vxi11::proto::{self, docmd, err, flags, procs, reason};
use crate::rpc::msg;
use crate::rpc::record::{self, Limits};
use crate::rpc::XdrReader;
use crate::Bus;

/// drvVxi11's `DEFAULT_RPC_TIMEOUT` (4 s): the port's `defTimeout` when
/// `vxi11Configure` is given 0, used for the bus status calls at connect and for the
/// command bytes of `vxiWriteAddressed`, in ms.
const DEF_TIMEOUT_MS: u32 = 4000;
/// A record's timeout (asynUser->timeout, 1 s), which `getIoTimeout` gives in ms.
const USER_TIMEOUT_MS: u32 = 1000;
/// `(long) pvxiPort->rpcClient`, the client id asyn sends (a pointer of a 32-bit IOC).
const ASYN_CLIENT_ID: i32 = 0x0808_4c20;

fn served() -> Server {
    let bus = Bus::new(crate::sim::bench().board(0).unwrap());
    Server::start(
        bus,
        ServeOptions {
            portmap_port: Some(0),
            ..ServeOptions::ephemeral()
        },
    )
    .unwrap()
}

/// `vxiCreateDeviceLink`: `create_link` with the client id, `lockDevice` as the port's
/// `FLAG_LOCK_DEVICES` says and `lock_timeout` 0 ("if device is locked, forget it").
fn asyn_create_link(c: &mut Rpc, name: &str, lock: bool) -> proto::CreateLinkResp {
    let r = c.call(
        procs::CREATE_LINK,
        &proto::CreateLink {
            client_id: ASYN_CLIENT_ID,
            lock_device: lock,
            lock_timeout: 0,
            device: name.as_bytes().to_vec(),
        }
        .encode(),
    );
    proto::CreateLinkResp::decode(&r).unwrap()
}

/// A `device_docmd` as drvVxi11 fills it: flags 0 ("no timeout on a locked
/// gateway"), `lock_timeout` 0, `network_order` true.
fn asyn_docmd(
    c: &mut Rpc,
    lid: u32,
    io_timeout: u32,
    cmd: i32,
    size: i32,
    data: &[u8],
) -> (u32, Vec<u8>) {
    let p = proto::Docmd {
        lid,
        flags: 0,
        io_timeout,
        lock_timeout: 0,
        cmd,
        network_order: true,
        datasize: size,
        data_in: data,
    };
    proto::decode_docmd_resp(&c.call(procs::DEVICE_DOCMD, &p.encode()), 4096).unwrap()
}

/// `vxiBusStatus(request)`: one item, 2 bytes in network order; asyn reads the
/// answer as an unsigned short without looking at its length, so it must be 2 bytes.
fn asyn_bus_status(c: &mut Rpc, lid: u32, item: u16) -> u16 {
    let (code, data) = asyn_docmd(
        c,
        lid,
        DEF_TIMEOUT_MS,
        docmd::BUS_STATUS,
        2,
        &item.to_be_bytes(),
    );
    assert_eq!(code, err::NONE, "vxiBusStatus({item}) would fail");
    assert_eq!(data.len(), 2, "vxiBusStatus({item}): {data:?}");
    u16::from_be_bytes([data[0], data[1]])
}

/// `vxiWriteAddressed`: command bytes with ATN (`VXI_CMD_SEND`, `datasize` 1); asyn
/// takes the length of `data_out` as the count sent and fails a short one.
fn asyn_write_cmd(c: &mut Rpc, lid: u32, bytes: &[u8]) {
    let (code, data) = asyn_docmd(c, lid, DEF_TIMEOUT_MS, docmd::SEND_COMMAND, 1, bytes);
    assert_eq!(code, err::NONE, "command bytes {bytes:02x?}");
    assert_eq!(data.len(), bytes.len(), "vxiWriteAddressed counts data_out");
}

/// `vxiWrite`: one `device_write` with END (`VXI_ENDW`) when the message fits in
/// maxRecvSize, the record's timeout, `lock_timeout` 0.
fn asyn_write(c: &mut Rpc, lid: u32, data: &[u8]) {
    let w = proto::Write {
        lid,
        io_timeout: USER_TIMEOUT_MS,
        lock_timeout: 0,
        flags: flags::END,
        data,
    };
    let r = c.call(procs::DEVICE_WRITE, &w.encode());
    assert_eq!(
        proto::decode_error_value(&r).unwrap(),
        (err::NONE, data.len() as u32)
    );
}

/// `vxiRead` with the port's EOS set ("\n"): `device_read`s with `VXI_TERMCHRSET`
/// until one gives a reason; returns the bytes and the last reason.
fn asyn_read(c: &mut Rpc, lid: u32, max: u32) -> (Vec<u8>, u32) {
    let mut out = Vec::new();
    loop {
        let p = proto::Read {
            lid,
            request_size: max - out.len() as u32,
            io_timeout: USER_TIMEOUT_MS,
            lock_timeout: 0,
            flags: flags::TERMCHRSET,
            term_char: b'\n',
        };
        let r = c.call(procs::DEVICE_READ, &p.encode());
        let (code, why, data) = proto::decode_read_resp(&r, 1 << 20).unwrap();
        assert_eq!(code, err::NONE, "vxiRead");
        out.extend_from_slice(data);
        if why != 0 || data.is_empty() {
            return (out, why);
        }
    }
}

/// `vxiSerialPoll`: `device_readstb` on the device's link, flags 0.
fn asyn_serial_poll(c: &mut Rpc, lid: u32) -> u8 {
    let g = proto::Generic {
        lid,
        flags: 0,
        lock_timeout: 0,
        io_timeout: USER_TIMEOUT_MS,
    };
    let r = c.call(procs::DEVICE_READSTB, &g.encode());
    let (code, stb) = proto::decode_error_value(&r).unwrap();
    assert_eq!(code, err::NONE, "vxiSerialPoll");
    stb as u8
}

fn asyn_error_only(c: &mut Rpc, proc_: u32, args: &[u8], what: &str) {
    let r = c.call(proc_, args);
    assert_eq!(proto::decode_error(&r).unwrap(), err::NONE, "{what}");
}

/// One `device_intr_srq` call read from the interrupt channel: its handle.
fn intr_srq_handle(s: &mut std::net::TcpStream) -> Vec<u8> {
    let limits = Limits {
        max_record: 4096,
        max_fragments: 4,
    };
    let mut rec = Vec::new();
    record::read_record(s, limits, &mut rec).unwrap();
    let (h, args) = msg::decode_call(&rec).unwrap();
    assert_eq!(
        (h.prog, h.vers, h.proc_),
        (proto::DEVICE_INTR, proto::VERSION, procs::DEVICE_INTR_SRQ)
    );
    XdrReader::new(args)
        .opaque(proto::MAX_SRQ_HANDLE)
        .unwrap()
        .to_vec()
}

/// EPICS asyn's drvVxi11 connecting to the gateway and using it, call for call, as
/// `vxi11Configure("L0", host, flags, "0", "gpib0", 0, 0)` makes it (asyn master
/// after R4-45, 66bafcde,
/// asyn/vxi11/drvVxi11.c). Every reply is checked for what drvVxi11 does with it; an
/// error at connect makes asyn give up the port ("initialization aborted").
///
/// Connect (`vxiConnectPort`):
/// 1. `clnttcp_create(port 0)`: the portmapper's GETPORT for DEVICE_CORE v1 TCP
///    (glibc's `pmap_getport`, over UDP).
/// 2. `vxiCreateDeviceLink("gpib0")`: `create_link`; error 0, `maxRecvSize` and
///    `abortPort` kept for later links.
/// 3. `vxiBusStatus(VXI_BSTAT_BUS_ADDRESS)` (8): the answer indexes `primary[]`,
///    so 0 to 30.
/// 4. `vxiBusStatus(VXI_BSTAT_SYSTEM_CONTROLLER)` (4); were it 0,
///    `vxiBusStatus(VXI_BSTAT_CONTROLLER_IN_CHARGE)` (5); both 0 aborts the connect.
/// 5. Unless `FLAG_NO_SRQ`: `vxiCreateIrqChannel`: `create_intr_chan` naming a
///    listening socket (DEVICE_INTR v1, `DEVICE_TCP`), then `vxiSrqEnable(1)`:
///    `device_enable_srq` on the `gpib0` link with the handle `"%p"` and its NUL.
///
/// Then, per address a record uses (`vxiConnect` → `vxiCreateDevLink`):
/// `create_link("gpib0,22")`, the same `maxRecvSize` and `abortPort` (asyn reports a
/// change as an error). The port's operations: `vxiWrite`, `vxiRead` (EOS "\n"),
/// `vxiSrqStatus` (bus status 2), `vxiSerialPoll` (`device_readstb`),
/// `vxiAddressedCmd` (LAD, the command, then "_?": UNT UNL, each a send command on
/// the `gpib0` link), `vxiUniversalCmd` (one byte), `vxiIfc` (IFC, `datasize` 0),
/// `vxiRen` (REN, 2 bytes); an SRQ arrives as `device_intr_srq` on the channel.
///
/// Disconnect (`vxiDisconnectPort`): `destroy_link` of each device link,
/// `vxiDestroyIrqChannel` (`destroy_intr_chan`), `destroy_link` of `gpib0`.
fn asyn_sequence(lock_devices: bool) {
    let srv = served();
    // 1. The portmapper, over UDP as glibc's pmap_getport asks.
    let pm = UdpSocket::bind("127.0.0.1:0").unwrap();
    pm.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    pm.send_to(&getport_call(77), srv.portmap_udp_addr().unwrap())
        .unwrap();
    let mut buf = [0u8; 512];
    let n = pm.recv(&mut buf).unwrap();
    let port = XdrReader::new(msg::decode_reply(&buf[..n], 77).unwrap())
        .u32()
        .unwrap();
    let core = SocketAddr::new(srv.vxi11_addr().unwrap().ip(), port as u16);
    assert_eq!(core, srv.vxi11_addr().unwrap());
    let mut c = Rpc::connect(core, proto::DEVICE_CORE);

    // 2. The interface link.
    let gw = asyn_create_link(&mut c, "gpib0", lock_devices);
    assert_eq!(gw.error, err::NONE, "vxiCreateDeviceLink(gpib0)");
    assert_ne!(gw.abort_port, 0);
    assert!(gw.max_recv_size > 0);
    let lid = gw.lid;

    // 3, 4. The controller's address, then whether the gateway controls the bus.
    let ctrl = asyn_bus_status(&mut c, lid, docmd::STATUS_ADDRESS);
    assert!(ctrl <= 30, "ctrlAddr {ctrl} indexes primary[31]");
    assert_eq!(ctrl, 0, "the bench board's address");
    assert_eq!(
        asyn_bus_status(&mut c, lid, docmd::STATUS_SYSTEM_CONTROLLER),
        1
    );
    assert_eq!(asyn_bus_status(&mut c, lid, docmd::STATUS_CIC), 1);

    // 5. The interrupt channel and SRQ enabled on the interface link.
    let srq_sock = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = srq_sock.local_addr().unwrap();
    let f = proto::RemoteFunc {
        host_addr: u32::from(std::net::Ipv4Addr::LOCALHOST),
        host_port: at.port(),
        prog: proto::DEVICE_INTR,
        vers: proto::VERSION,
        family: 0,
    };
    asyn_error_only(
        &mut c,
        procs::CREATE_INTR_CHAN,
        &f.encode(),
        "create_intr_chan",
    );
    let (mut intr, _) = srq_sock.accept().unwrap();
    intr.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let handle = b"0x55d4c3a0b2c0\0";
    asyn_error_only(
        &mut c,
        procs::DEVICE_ENABLE_SRQ,
        &proto::encode_enable_srq(lid, true, handle),
        "vxiSrqEnable(1)",
    );

    // A device link, as a record on address 22 connects.
    let dev = asyn_create_link(&mut c, "gpib0,22", lock_devices);
    assert_eq!(dev.error, err::NONE, "vxiCreateDevLink(22)");
    assert_eq!(
        (dev.max_recv_size, dev.abort_port),
        (gw.max_recv_size, gw.abort_port)
    );
    let dl = dev.lid;

    // vxiWrite, vxiRead.
    asyn_write(&mut c, dl, b"*IDN?\n");
    let (idn, why) = asyn_read(&mut c, dl, 100);
    assert_eq!(idn, b"SIMULATED,SCPI-DMM,0,1.0\n");
    assert_ne!(why & (reason::CHR | reason::END), 0);

    // An SRQ: the interrupt channel carries the handle; asyn's srqHappened then asks
    // vxiSrqStatus and serial polls.
    assert_eq!(asyn_bus_status(&mut c, lid, docmd::STATUS_SRQ), 0);
    asyn_write(&mut c, dl, b"*SRE 16\n");
    asyn_write(&mut c, dl, b"*IDN?\n");
    assert_eq!(intr_srq_handle(&mut intr), handle);
    assert_eq!(
        asyn_bus_status(&mut c, lid, docmd::STATUS_SRQ),
        1,
        "vxiSrqStatus"
    );
    let stb = asyn_serial_poll(&mut c, dl);
    assert_ne!(stb & 0x40, 0, "RQS in the polled byte {stb:#x}");
    assert_ne!(stb & 0x10, 0, "MAV in the polled byte {stb:#x}");

    // vxiAddressedCmd(SDC): LAD 22, SDC, UNT UNL on the gpib0 link clears the answer.
    asyn_write_cmd(&mut c, lid, &[0x20 | 22]);
    asyn_write_cmd(&mut c, lid, &[0x04]);
    asyn_write_cmd(&mut c, lid, b"_?");
    assert_eq!(
        asyn_serial_poll(&mut c, dl) & 0x10,
        0,
        "SDC cleared the answer"
    );
    asyn_write(&mut c, dl, b"*SRE 0\n");

    // vxiUniversalCmd(DCL).
    asyn_write_cmd(&mut c, lid, &[0x14]);
    // vxiRen(1), then vxiIfc: no data asked, only the error.
    let (code, _) = asyn_docmd(
        &mut c,
        lid,
        USER_TIMEOUT_MS,
        docmd::REN_CONTROL,
        2,
        &1u16.to_be_bytes(),
    );
    assert_eq!(code, err::NONE, "vxiRen(1)");
    assert_eq!(asyn_bus_status(&mut c, lid, docmd::STATUS_REMOTE), 1);
    let (code, _) = asyn_docmd(&mut c, lid, USER_TIMEOUT_MS, docmd::IFC_CONTROL, 0, &[]);
    assert_eq!(code, err::NONE, "vxiIfc");
    assert_eq!(
        asyn_bus_status(&mut c, lid, docmd::STATUS_CIC),
        1,
        "still in charge after IFC"
    );
    // The device answers after all that.
    asyn_write(&mut c, dl, b"*IDN?\n");
    assert_eq!(asyn_read(&mut c, dl, 100).0, b"SIMULATED,SCPI-DMM,0,1.0\n");

    // vxiDisconnectPort.
    asyn_error_only(
        &mut c,
        procs::DESTROY_LINK,
        &dl.to_be_bytes(),
        "destroy_link(22)",
    );
    asyn_error_only(&mut c, procs::DESTROY_INTR_CHAN, &[], "destroy_intr_chan");
    asyn_error_only(
        &mut c,
        procs::DESTROY_LINK,
        &lid.to_be_bytes(),
        "destroy_link(gpib0)",
    );
    // The gateway closed the interrupt channel.
    match intr.read(&mut [0u8; 16]) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        r => panic!("the interrupt channel is still open: {r:?}"),
    }
    srv.stop();
}

#[test]
fn serve_vxi11_epics_asyn_connect_sequence() {
    asyn_sequence(false);
}

// vxi11Configure's FLAG_LOCK_DEVICES (2): every link is created with lockDevice set;
// the gpib0 link's lock (the interface) and a device link's (the device) are taken by
// the same client and do not exclude each other.
#[test]
fn serve_vxi11_epics_asyn_connect_sequence_locking_devices() {
    asyn_sequence(true);
}

fn status(c: &mut Rpc, lid: u32, item: u16) -> u16 {
    asyn_bus_status(c, lid, item)
}

// IFC control (0x020010) answers no data, however the client sizes its (empty)
// argument: asyn sends datasize 0, python-vxi11's `send_ifc` datasize 1. IFC leaves the
// board unaddressed and the gateway in charge.
#[test]
fn serve_vxi11_ifc_control_answers_no_data_and_unaddresses() {
    let srv = served();
    let mut c = Rpc::connect(srv.vxi11_addr().unwrap(), proto::DEVICE_CORE);
    let r = create_link(&mut c, "gpib0");
    assert_eq!(r.error, err::NONE);
    let lid = r.lid;
    for size in [0, 1] {
        // UNL, UNT, the board talks, 22 listens.
        asyn_write_cmd(&mut c, lid, &[0x3F, 0x5F, 0x40, 0x20 | 22]);
        assert_eq!(
            status(&mut c, lid, docmd::STATUS_TALKER),
            1,
            "addressed to talk"
        );
        let (code, data) = asyn_docmd(&mut c, lid, 2000, docmd::IFC_CONTROL, size, &[]);
        assert_eq!((code, data), (err::NONE, vec![]), "datasize {size}");
        assert_eq!(
            status(&mut c, lid, docmd::STATUS_TALKER),
            0,
            "IFC unaddresses"
        );
        assert_eq!(status(&mut c, lid, docmd::STATUS_LISTENER), 0);
        assert_eq!(status(&mut c, lid, docmd::STATUS_CIC), 1);
    }
    srv.stop();
}

// device_docmd's commands on a device link (gpib0,22): the spec's interface commands
// are the interface link's; a device link answers error 8 and the link stays usable.
#[test]
fn serve_vxi11_docmd_on_a_device_link_is_not_supported() {
    let srv = served();
    let mut c = Rpc::connect(srv.vxi11_addr().unwrap(), proto::DEVICE_CORE);
    let r = create_link(&mut c, "gpib0,22");
    assert_eq!(r.error, err::NONE);
    let (code, data) = asyn_docmd(
        &mut c,
        r.lid,
        2000,
        docmd::BUS_STATUS,
        2,
        &4u16.to_be_bytes(),
    );
    assert_eq!((code, data), (err::NOT_SUPPORTED, vec![]));
    asyn_write(&mut c, r.lid, b"*IDN?\n");
    assert_eq!(
        asyn_read(&mut c, r.lid, 100).0,
        b"SIMULATED,SCPI-DMM,0,1.0\n"
    );
    srv.stop();
}
