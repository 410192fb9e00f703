//! Support for the workspace's examples and integration tests (not published).
#![forbid(unsafe_code)]
