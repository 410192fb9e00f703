//! ONC RPC (RFC 5531) over TCP, as VXI-11 uses it: record marking, XDR (RFC 4506),
//! call and reply headers. Small on purpose: what VXI-11 and the portmapper need,
//! with every length read from the network bounded (see [`record::Limits`]).
//!
//! Decoders never panic and never allocate more than what has arrived: a fragment
//! header claiming 2 GiB, or an XDR length claiming 4 GiB, is an error, not an
//! allocation.

pub mod msg;
pub mod record;
pub mod reply;
pub mod xdr;

pub use msg::{AcceptStat, CallHeader, RpcError};
pub use record::{Limits, RecordError};
pub use reply::{await_reply, Reply, ReplyError};
pub use xdr::{XdrError, XdrReader, XdrWriter};
