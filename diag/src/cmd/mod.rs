//! One module per subcommand.

pub mod compare;
pub mod io_test;
pub mod scan;
pub mod serve;
pub mod sweep;
