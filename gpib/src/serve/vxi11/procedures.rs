//! The core channel's procedures that act on links and the bus: `create_link`,
//! `device_lock`/`device_unlock`, `device_write`, `device_read` and `device_docmd`.

use super::*;

impl Gateway {
    pub(super) fn create_link(&self, conn: u64, args: &[u8]) -> Outcome {
        let Ok(p) = proto::CreateLink::decode(args) else {
            return Outcome::Garbage;
        };
        let resp = |error, lid| {
            Outcome::Reply(
                proto::CreateLinkResp {
                    error,
                    lid,
                    abort_port: self.abort_port.load(Ordering::Relaxed),
                    max_recv_size: self.max_recv as u32,
                }
                .encode(),
            )
        };
        let name = String::from_utf8_lossy(&p.device);
        let t = match proto::parse_link_name(&name, self.default) {
            Ok((b, _)) if !self.boards.contains_key(&b) => {
                log::info!("create_link: {name:?}: no board gpib{b} here");
                return resp(err::INVALID_ADDRESS, 0);
            }
            Ok((b, DeviceName::Interface)) => Target::Interface(b),
            Ok((b, DeviceName::Device(a))) => Target::Device(b, a),
            Err(why) => {
                log::info!("create_link: {why}");
                return resp(err::INVALID_ADDRESS, 0);
            }
        };
        let mut st = self.state();
        if st.links.values().filter(|l| l.conn == conn).count() >= MAX_LINKS_PER_CONN {
            return resp(err::OUT_OF_RESOURCES, 0);
        }
        let lid = st.next_lid;
        st.next_lid = st.next_lid.wrapping_add(1).max(1);
        st.links.insert(
            lid,
            LinkInfo {
                conn,
                target: t,
                srq: None,
                in_flight: false,
                aborted: false,
                mid_read: false,
                mid_write: false,
                scan: QueryScan::default(),
            },
        );
        drop(st);
        if p.lock_device {
            let code = self.lock(
                conn,
                proto::Lock {
                    lid,
                    flags: flags::WAITLOCK,
                    lock_timeout: p.lock_timeout,
                },
            );
            if code != err::NONE {
                self.state().links.remove(&lid);
                return resp(code, 0);
            }
        }
        resp(err::NONE, lid)
    }

    /// Takes the lock of `p.lid`'s target, waiting for another link's (WAITLOCK) in
    /// the same step: of waiters woken together, one takes it and the others wait on.
    pub(super) fn lock(&self, conn: u64, p: proto::Lock) -> u32 {
        let target = self
            .state()
            .links
            .get(&p.lid)
            .filter(|l| l.conn == conn)
            .map(|l| l.target);
        if let Some(Target::Device(b, a)) = target {
            // The shared table: a HiSLIP client's lock holds a VXI-11 client off too.
            let until = if p.flags & flags::WAITLOCK == 0 {
                Instant::now()
            } else {
                deadline_after(ms(p.lock_timeout))
            };
            let lid = p.lid;
            return match self
                .device_locks
                .lock((b, a), Owner::Link(lid), b"", until, &|| {
                    self.is_aborted(lid)
                }) {
                Wait::Done => err::NONE,
                Wait::Locked => err::LOCKED,
                Wait::Stopped => {
                    if let Some(l) = self.state().links.get_mut(&lid) {
                        l.aborted = false;
                    }
                    err::ABORT
                }
            };
        }
        match self.wait_access(self.state(), conn, p.lid, p.flags, p.lock_timeout) {
            (mut st, Ok(t)) => {
                st.locks.insert(t, p.lid);
                err::NONE
            }
            (_, Err(c)) => c,
        }
    }

    pub(super) fn unlock(&self, conn: u64, lid: u32) -> u32 {
        let mut st = self.state();
        let Some(t) = st
            .links
            .get(&lid)
            .filter(|l| l.conn == conn)
            .map(|l| l.target)
        else {
            return err::INVALID_LINK;
        };
        let code = if let Target::Device(b, a) = t {
            drop(st);
            match self.device_locks.release((b, a), Owner::Link(lid)) {
                Some(_) => err::NONE,
                None => err::NO_LOCK,
            }
        } else if st.locks.get(&t) == Some(&lid) {
            st.locks.remove(&t);
            drop(st);
            err::NONE
        } else {
            err::NO_LOCK
        };
        self.changed.notify_all();
        code
    }

    pub(super) fn write(&self, conn: u64, args: &[u8]) -> Outcome {
        let Ok(p) = proto::Write::decode(args, self.max_recv) else {
            return Outcome::Garbage;
        };
        let end = p.flags & flags::END != 0;
        let r = self
            .access(conn, p.lid, p.flags, p.lock_timeout)
            .and_then(|t| {
                let d = self.device(t, p.io_timeout)?;
                self.begin(p.lid, t, p.io_timeout)?;
                let res = if end {
                    d.write(p.data).map(|()| p.data.len())
                } else {
                    d.write_partial(p.data)
                };
                Ok((
                    t,
                    match res {
                        Ok(n) => (err::NONE, n),
                        Err(e) => (error_code(&e), e.transferred().unwrap_or(0)),
                    },
                ))
            });
        // Bytes that reached the device without END leave it holding part of a message;
        // a whole message that asks a query leaves its answer to read. Either way the
        // link keeps the device for its next call.
        let r = r.map(|(t, (code, n))| {
            let mut more = false;
            if let Some(l) = self.state().links.get_mut(&p.lid) {
                l.scan.feed(&p.data[..n.min(p.data.len())]);
                if end && code == err::NONE {
                    l.mid_write = false;
                    more = l.scan.is_query();
                    l.scan.reset();
                } else if n > 0 {
                    l.mid_write = true;
                    more = true;
                }
            }
            self.end(p.lid, t, more);
            (code, n)
        });
        Outcome::Reply(match r {
            Ok((code, n)) => proto::encode_error_value(code, n as u32),
            Err(c) => proto::encode_error_value(c, 0),
        })
    }

    pub(super) fn read(&self, conn: u64, args: &[u8]) -> Outcome {
        let Ok(p) = proto::Read::decode(args) else {
            return Outcome::Garbage;
        };
        let (t, mut dev) = match self
            .access(conn, p.lid, p.flags, p.lock_timeout)
            .and_then(|t| {
                let d = self.device(t, p.io_timeout)?;
                self.begin(p.lid, t, p.io_timeout)?;
                Ok((t, d))
            }) {
            Ok(d) => d,
            Err(c) => return Outcome::Reply(proto::encode_read_resp(c, 0, &[])),
        };
        if p.flags & flags::TERMCHRSET != 0 {
            dev.set_eos(Some(Eos {
                byte: p.term_char,
                eight_bit: true,
            }));
        }
        // At most what was asked for and what one reply may carry; memory grows with
        // what the device sends, a piece at a time.
        let want = (p.request_size as usize).min(self.max_recv);
        let mut data = Vec::new();
        let mut why = 0;
        let mut code = err::NONE;
        while data.len() < want {
            let start = data.len();
            let n = (want - start).min(PIECE);
            data.resize(start + n, 0);
            match dev.read(&mut data[start..]) {
                Ok(st) => {
                    data.truncate(start + st.count);
                    match st.end {
                        ReadEnd::Eoi => why |= reason::END,
                        ReadEnd::Eos => why |= reason::CHR,
                        ReadEnd::BufferFull => {}
                    }
                    if why != 0 {
                        break;
                    }
                }
                Err(e) => {
                    data.truncate(start + e.transferred().unwrap_or(0).min(n));
                    code = error_code(&e);
                    break;
                }
            }
        }
        if code == err::NONE && data.len() == p.request_size as usize {
            why |= reason::REQCNT;
        }
        let mid_read = code == err::NONE && why & (reason::END | reason::CHR) == 0;
        if let Some(l) = self.state().links.get_mut(&p.lid) {
            l.mid_read = mid_read;
        }
        // The rest of the answer is this link's too.
        self.end(p.lid, t, mid_read);
        Outcome::Reply(proto::encode_read_resp(code, why, &data))
    }

    pub(super) fn docmd(&self, conn: u64, args: &[u8]) -> Outcome {
        let Ok(p) = proto::Docmd::decode(args, 4096) else {
            return Outcome::Garbage;
        };
        let reply = |code: u32, data: &[u8]| Outcome::Reply(proto::encode_docmd_resp(code, data));
        let t = match self.access(conn, p.lid, p.flags, p.lock_timeout) {
            Ok(t) => t,
            Err(c) => return reply(c, &[]),
        };
        let Target::Interface(board) = t else {
            return reply(err::NOT_SUPPORTED, &[]);
        };
        let bus = match self.bus(board) {
            Ok(b) => b,
            Err(c) => return reply(c, &[]),
        };
        let word = |v: u16| -> Vec<u8> { v.to_be_bytes().to_vec() };
        let arg = p
            .data_in
            .get(..2)
            .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        // Pass control and bus address carry a 4-byte address.
        let long = p
            .data_in
            .get(..4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        let echo = || p.data_in.get(..2).map_or(vec![0, 0], <[u8]>::to_vec);
        let result = match p.cmd {
            proto::docmd::SEND_COMMAND => bus
                .transaction(|tx| tx.command(p.data_in))
                .map(|()| p.data_in.to_vec()),
            proto::docmd::BUS_STATUS => match arg {
                proto::docmd::STATUS_SRQ => bus.srq().map(|s| word(u16::from(s))),
                proto::docmd::STATUS_REMOTE => bus.lines().map(|l| word(u16::from(l.ren))),
                proto::docmd::STATUS_NDAC => bus.lines().map(|l| word(u16::from(l.ndac))),
                // The served board is the system controller: it never passes control.
                proto::docmd::STATUS_SYSTEM_CONTROLLER => Ok(word(1)),
                proto::docmd::STATUS_CIC => Ok(word(u16::from(
                    Self::board_status(bus).is_none_or(|s| s.controller_in_charge),
                ))),
                proto::docmd::STATUS_TALKER => Ok(word(u16::from(
                    Self::board_status(bus).is_some_and(|s| s.talker),
                ))),
                proto::docmd::STATUS_LISTENER => Ok(word(u16::from(
                    Self::board_status(bus).is_some_and(|s| s.listener),
                ))),
                proto::docmd::STATUS_ADDRESS => Ok(word(u16::from(self.bus_address(board, bus)))),
                _ => return reply(err::PARAMETER, &[]),
            },
            proto::docmd::ATN_CONTROL => bus
                .transaction(|tx| {
                    let b = tx.backend();
                    let r = if arg != 0 {
                        b.take_control()
                    } else {
                        b.go_to_standby()
                    };
                    // A board that cannot drive ATN alone asserts it with each
                    // command and releases it with each transfer: accepted.
                    match r {
                        Err(e) if e.kind() == ErrorKind::Unsupported => Ok(()),
                        r => r,
                    }
                })
                .map(|()| echo()),
            proto::docmd::REN_CONTROL => bus.remote_enable(arg != 0).map(|()| echo()),
            proto::docmd::PASS_CONTROL => match long {
                Some(a) if a <= 30 => return reply(err::NOT_SUPPORTED, &[]),
                _ => return reply(err::PARAMETER, &[]),
            },
            proto::docmd::BUS_ADDRESS => match long {
                Some(a) if a <= 30 => {
                    self.bus_address
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(board, a as u8);
                    Ok(a.to_be_bytes().to_vec())
                }
                _ => return reply(err::PARAMETER, &[]),
            },
            proto::docmd::IFC_CONTROL => bus.interface_clear().map(|()| Vec::new()),
            _ => return reply(err::NOT_SUPPORTED, &[]),
        };
        match result {
            Ok(d) => reply(err::NONE, &d),
            Err(e) => reply(error_code(&e), &[]),
        }
    }
}
