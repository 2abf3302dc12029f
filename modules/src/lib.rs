//! hwsim-modules: the hardware blocks, one file (or folder) per block.
//!
//! Each block has a typed `Params` struct (serde, documented defaults), a `ports(&Params)`
//! declaration and a `build` function that binds its ports and returns the component.
//!
//! - [`kernel_examples`]: generic blocks that exercise the kernel (counter, register, producer,
//!   FIFO, consumer, timer). They model no part of the interconnect.
#![warn(missing_docs)]

pub mod events;
pub mod kernel_examples;
pub mod percentile;
pub mod rclink;
pub mod split;
pub mod switch;
