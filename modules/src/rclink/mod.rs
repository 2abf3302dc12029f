//! The RC Link transport and its neighbours (seed 000): per link group, the TX (`tx`, the
//! composition of `slot_fifo`, the bank arbiter (`vc_arbiter`), `cbfc` and `mac_credit`), the MAC serializer, the
//! RX cap and the RX (`rx`, the composition of `psn_check` — PSN check, FACK, credit return, CNP —
//! and `ack_merge`, which share the control output in `rx_ctrl`); per chip the PAXI core, the
//! CDMA traffic source and the router; per edge direction the PhyLink.

pub mod ack_cbfc;
pub mod ack_merge;
pub mod bank_arbiter;
pub mod bank_arbiter_block;
pub mod cbfc;
pub mod cc_window;
pub mod cdma;
pub mod cnp_gen;
pub mod cnp_merge;
pub mod credit_return;
pub mod dcqcn;
pub mod framing;
pub mod mac;
pub mod mac_credit;
pub mod monitor;
pub mod paxi;
pub mod paxi_pack;
pub mod phylink;
pub mod psn_check;
pub mod queue_feed;
pub mod router;
pub mod rx;
pub mod rx_cap;
pub mod rx_ctrl;
#[cfg(test)]
mod rx_test;
pub mod slot_fifo;
pub mod tx;
pub mod type2;
pub mod vc_arbiter;
pub mod vc_queues;
