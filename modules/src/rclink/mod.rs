//! The RC Link transport and its neighbours (seed 000): per link group, the TX (slot FIFO, PSN,
//! bank arbiter, CBFC, rate gate), the MAC serializer, the RX cap and the RX (`rx`, the
//! composition of `psn_check` — PSN check, FACK, credit return, CNP — and `ack_merge`, which
//! share the control output in `rx_ctrl`); per chip the PAXI core, the CDMA traffic source and
//! the router; per edge direction the PhyLink.

pub mod ack_merge;
pub mod cdma;
pub mod mac;
pub mod monitor;
pub mod paxi;
pub mod phylink;
pub mod psn_check;
pub mod router;
pub mod rx;
pub mod rx_cap;
pub mod rx_ctrl;
#[cfg(test)]
mod rx_test;
pub mod tx;
