//! The linux-gpib hardware backend (feature `linux-gpib`). Work in progress.
