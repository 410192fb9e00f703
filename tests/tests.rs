//! Integration tests on the simulated bus. Each module is one area; the shared bodies
//! in `on_every_backend!` run once per backend compiled in.

mod addressing;
mod aio;
mod blocks;
mod clock;
mod examples;
mod faults;
mod gpib_conf;
mod hostile_hislip;
mod hostile_peers;
mod hp9000_350_1988;
mod linux_gpib_rs;
mod open;
mod pyvisa_sim;
mod queries;
mod regressions;
mod replay;
mod robustness;
mod sources;
mod srq;
mod stress;
mod threads;
mod timeline;
mod tracing;
