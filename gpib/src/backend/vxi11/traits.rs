//! [`Backend`] and [`DeviceLevel`] for a [`Vxi11Board`]: each bus call as the core
//! channel's procedure (`device_write`, `device_read`, `device_docmd`, ...).

use super::*;

impl Backend for Vxi11Board {
    fn name(&self) -> &str {
        "vxi11"
    }

    fn board_address(&self) -> PrimaryAddress {
        PrimaryAddress::try_from(0u8).expect("0 is a valid address")
    }

    fn write(&mut self, _data: &[u8], _eoi: bool) -> Result<usize> {
        Err(Error::unsupported(
            "a data write without a device address",
            "vxi11",
        ))
    }

    fn read(&mut self, _buf: &mut [u8], _eos: Option<Eos>) -> Result<ReadStatus> {
        Err(Error::unsupported(
            "a data read without a device address",
            "vxi11",
        ))
    }

    fn interface_clear(&mut self) -> Result<()> {
        self.docmd(proto::docmd::IFC_CONTROL, &[]).map(drop)
    }

    fn remote_enable(&mut self, on: bool) -> Result<()> {
        self.docmd(proto::docmd::REN_CONTROL, &[0, u8::from(on)])
            .map(drop)
    }

    fn set_timeout(&mut self, timeout: Timeout) -> Result<Timeout> {
        let Timeout::After(timeout) = timeout else {
            self.timeout = Timeout::Never;
            return Ok(Timeout::Never);
        };
        // The protocol carries milliseconds: round up, never down.
        let mut t = Duration::from_millis(timeout.as_millis().min(u128::from(u32::MAX - 1)) as u64);
        if t < timeout {
            t += Duration::from_millis(1);
        }
        self.timeout = Timeout::After(t);
        Ok(self.timeout)
    }

    fn timeout(&self) -> Timeout {
        self.timeout
    }

    fn now(&self) -> Duration {
        self.start.elapsed()
    }

    fn serial_poll(&mut self, device: Address) -> Result<StatusByte> {
        let lid = self.link(device)?;
        let timeout = self.timeout;
        let res = self.generic("device_readstb", procs::DEVICE_READSTB, lid)?;
        let (code, stb) = decode("device_readstb", proto::decode_error_value(res))?;
        if code != err::NONE {
            return Err(device_error("serial poll", code, timeout, 0));
        }
        Ok(StatusByte(stb as u8))
    }

    fn srq(&mut self) -> Result<bool> {
        let out = self.docmd(
            proto::docmd::BUS_STATUS,
            &proto::docmd::STATUS_SRQ.to_be_bytes(),
        )?;
        Ok(out.iter().any(|&b| b != 0))
    }

    fn wait_srq(&mut self, timeout: Timeout) -> Result<bool> {
        let start = Instant::now();
        loop {
            if self.srq()? {
                return Ok(true);
            }
            let left = timeout
                .duration()
                .map_or(Duration::MAX, |t| t.saturating_sub(start.elapsed()));
            if left.is_zero() {
                return Ok(false);
            }
            let slice = left.min(Duration::from_millis(50));
            match &self.intr {
                // The interrupt channel wakes the wait at once; the line is read again.
                Some(i) => {
                    i.signals.wait(slice);
                }
                None => std::thread::sleep(slice.min(Duration::from_millis(1))),
            }
        }
    }

    fn wire_stats(&self) -> Option<WireStats> {
        Some(self.core.stats)
    }

    fn device_level(&mut self) -> Option<&mut dyn DeviceLevel> {
        Some(self)
    }
}

impl DeviceLevel for Vxi11Board {
    fn device_write(&mut self, device: Address, data: &[u8], eoi: bool) -> Result<usize> {
        let lid = self.link(device)?;
        let mut sent = 0usize;
        let mut chunks = data.chunks(self.max_recv_size).peekable();
        if data.is_empty() {
            chunks = [].chunks(1).peekable();
            if !eoi {
                return Ok(0);
            }
        }
        let mut first = true;
        while first || chunks.peek().is_some() {
            first = false;
            let c = chunks.next().unwrap_or(&[]);
            let last = chunks.peek().is_none();
            let p = proto::Write {
                lid,
                io_timeout: self.io_timeout_ms(),
                lock_timeout: ms(self.lock_wait()),
                flags: flags::WAITLOCK | if last && eoi { flags::END } else { 0 },
                data: c,
            };
            let wait = self.wait();
            let timeout = self.timeout;
            let res = self
                .core
                .call(procs::DEVICE_WRITE, &p.encode(), wait)
                .map_err(|e| e.offset_transferred(sent))?;
            let (code, size) = decode("device_write", proto::decode_error_value(res))?;
            let size = (size as usize).min(c.len());
            if code != err::NONE {
                return Err(device_error("write", code, timeout, sent + size));
            }
            sent += size;
            if size < c.len() {
                return Err(Error::Protocol(format!(
                    "VXI-11 device_write took {size} of {} bytes",
                    c.len()
                )));
            }
        }
        Ok(sent)
    }

    fn device_read(
        &mut self,
        device: Address,
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> Result<ReadStatus> {
        let lid = self.link(device)?;
        self.read_on(lid, buf, eos, 0, Instant::now())
    }

    /// A query with its two RPCs overlapped: `device_write` and `device_read` go out
    /// together (one segment) before the client waits for the first reply, so a query
    /// costs one round trip, not two. A write the device refuses comes back as the
    /// write's error at once; the read's reply is skipped when it comes.
    fn device_write_read(
        &mut self,
        device: Address,
        data: &[u8],
        buf: &mut [u8],
        eos: Option<Eos>,
    ) -> std::result::Result<ReadStatus, WriteReadError> {
        let lid = self.link(device).map_err(WriteReadError::Write)?;
        if data.is_empty() || data.len() > self.max_recv_size || buf.is_empty() {
            // Not one RPC each: the calls one after the other.
            self.device_write(device, data, true)
                .map_err(WriteReadError::Write)?;
            return self
                .read_on(lid, buf, eos, 0, Instant::now())
                .map_err(WriteReadError::Read);
        }
        let start = Instant::now();
        let write = proto::Write {
            lid,
            io_timeout: self.io_timeout_ms(),
            lock_timeout: ms(self.lock_wait()),
            flags: flags::WAITLOCK | flags::END,
            data,
        };
        let want = buf.len().min(MAX_READ);
        let read = self.read_args(lid, want, eos, start);
        let (wait, timeout) = (self.wait(), self.timeout);
        let w = WriteReadError::Write;
        let xw = self
            .core
            .send_call(procs::DEVICE_WRITE, &write.encode(), false)
            .map_err(w)?;
        let xr = self
            .core
            .send_call(procs::DEVICE_READ, &read.encode(), true)
            .map_err(w)?;
        let res = self.core.await_reply(xw, wait).map_err(w)?;
        let (code, size) = decode("device_write", proto::decode_error_value(res)).map_err(w)?;
        let size = (size as usize).min(data.len());
        if code != err::NONE {
            return Err(w(device_error("write", code, timeout, size)));
        }
        if size < data.len() {
            return Err(w(Error::Protocol(format!(
                "VXI-11 device_write took {size} of {} bytes",
                data.len()
            ))));
        }
        let r = WriteReadError::Read;
        let res = self.core.await_reply(xr, wait).map_err(r)?;
        match read_reply(res, want, buf, 0, timeout).map_err(r)? {
            (_, Some(status)) => Ok(status),
            (count, None) => self.read_on(lid, buf, eos, count, start).map_err(r),
        }
    }

    fn device_clear(&mut self, device: Address) -> Result<()> {
        self.generic_error("device_clear", procs::DEVICE_CLEAR, device)
    }

    fn device_trigger(&mut self, device: Address) -> Result<()> {
        self.generic_error("device_trigger", procs::DEVICE_TRIGGER, device)
    }

    fn device_remote(&mut self, device: Address) -> Result<()> {
        self.generic_error("device_remote", procs::DEVICE_REMOTE, device)
    }

    fn device_local(&mut self, device: Address) -> Result<()> {
        self.generic_error("device_local", procs::DEVICE_LOCAL, device)
    }
}
