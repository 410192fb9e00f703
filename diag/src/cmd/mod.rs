//! One module per subcommand.

pub mod calibrate;
pub mod compare;
pub mod completions;
pub mod contention;
pub mod discover;
pub mod doctor;
pub mod instrument;
pub mod io_test;
pub mod manpage;
pub mod scan;
pub mod serve;
pub mod serve_boards;
pub mod shell;
pub mod sweep;
pub mod trace;
