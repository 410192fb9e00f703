//! Integration tests on the simulated bus. Each module is one area; the shared bodies
//! in `on_every_backend!` run once per backend compiled in.

mod addressing;
mod blocks;
mod clock;
mod faults;
mod queries;
mod regressions;
mod robustness;
mod seed;
mod srq;
mod stress;
mod threads;
mod timeline;
