//! The byte stream to a Prologix adapter: TCP (GPIB-ETHERNET) or, with the
//! `prologix-serial` feature, a serial port (GPIB-USB, AR488).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A byte stream to the adapter, with reads that wait at most a given time.
pub trait Port: Send {
    /// Reads what is available within `wait` (`Duration::ZERO`: only what has already
    /// arrived). `Ok(0)` is the end of the stream; nothing within `wait` is an error of
    /// kind `WouldBlock` or `TimedOut`.
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize>;
    /// Writes all of `data`.
    fn write_all_bytes(&mut self, data: &[u8]) -> io::Result<()>;
}

/// A TCP connection (GPIB-ETHERNET, port 1234).
pub struct TcpPort {
    stream: TcpStream,
    read_timeout: Option<Duration>,
    nonblocking: bool,
}

impl TcpPort {
    /// Wraps a connected stream (Nagle off: lines are small and wait for answers).
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_write_timeout(Some(Duration::from_secs(30)))?;
        Ok(Self {
            stream,
            read_timeout: None,
            nonblocking: false,
        })
    }
}

impl Port for TcpPort {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize> {
        if wait.is_zero() {
            if !self.nonblocking {
                self.stream.set_nonblocking(true)?;
                self.nonblocking = true;
            }
            return loop {
                match self.stream.read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    other => break other,
                }
            };
        }
        if self.nonblocking {
            self.stream.set_nonblocking(false)?;
            self.nonblocking = false;
        }
        // The socket's timeout is set again only when it must shorten, or is more than
        // a millisecond longer than `wait` (each set is a system call; a read's
        // remaining time shrinks a little every call).
        let keep = self
            .read_timeout
            .is_some_and(|t| t >= wait && t - wait <= Duration::from_millis(1));
        if !keep {
            self.stream.set_read_timeout(Some(wait))?;
            self.read_timeout = Some(wait);
        }
        loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }

    fn write_all_bytes(&mut self, data: &[u8]) -> io::Result<()> {
        if self.nonblocking {
            self.stream.set_nonblocking(false)?;
            self.nonblocking = false;
        }
        self.stream.write_all(data)
    }
}

/// A serial port (feature `prologix-serial`).
#[cfg(feature = "prologix-serial")]
pub struct SerialPort {
    port: Box<dyn serialport::SerialPort>,
    timeout: Duration,
}

#[cfg(feature = "prologix-serial")]
impl SerialPort {
    /// Opens `path` at 115200 baud, 8N1 (the USB adapters ignore the rate).
    pub fn open(path: &str) -> io::Result<Self> {
        let port = serialport::new(path, 115_200)
            .timeout(Duration::from_millis(100))
            .open()
            .map_err(io::Error::other)?;
        Ok(Self {
            port,
            timeout: Duration::from_millis(100),
        })
    }
}

#[cfg(feature = "prologix-serial")]
impl Port for SerialPort {
    fn read_within(&mut self, buf: &mut [u8], wait: Duration) -> io::Result<usize> {
        // A zero timeout on a serial port means "return what is there".
        let wait = wait.max(Duration::from_micros(1));
        if self.timeout != wait {
            self.port.set_timeout(wait).map_err(io::Error::other)?;
            self.timeout = wait;
        }
        match self.port.read(buf) {
            Ok(0) => Err(io::ErrorKind::TimedOut.into()),
            other => other,
        }
    }

    fn write_all_bytes(&mut self, data: &[u8]) -> io::Result<()> {
        self.port.write_all(data)?;
        self.port.flush()
    }
}
