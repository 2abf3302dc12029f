//! The input layer: what a user writes, read and placed. The YAML reader (every value keeps
//! its file, line and column), the testbench and config schema, `--set` overrides and the
//! `connect:` patterns. It uses nothing else of the crate: every other layer reads through it.

pub mod connect_pattern;
pub mod overrides;
pub mod schema;
pub mod yaml;
