//! No library code: this package holds a benchmark (`benches/linux_gpib_overhead.rs`)
//! and a test (`tests/high_level_api.rs`) that put the `gpib` crate's linux-gpib
//! backend beside linux-gpib-rs on the same libgpib.
