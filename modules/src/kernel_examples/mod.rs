//! Generic blocks that exercise the kernel: sources, a register, a FIFO, a sink, a timer.
//! They model no part of the interconnect; they are what the kernel's own testbenches and the W3
//! pipeline benchmark are built from.

pub mod add1;
pub mod consumer;
pub mod counter;
pub mod fifo;
pub mod pipe;
pub mod producer;
pub mod stage;
pub mod timer;
