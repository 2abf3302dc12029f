//! The L2 switch of seed 003, block by block. For now: the crossbar allocators behind a small
//! contract (`allocator`: `islip`, `pim`, `fifo`), the input-queued cell switch that uses them
//! with its DT-managed shared buffer (`voq_switch`), an egress port with strict priority, WRR
//! and ECN RED marking (`egress`, `ecn`), and synthetic cell traffic (`source`). Ingress
//! parsing, frames, PFC and the switched topologies follow in the same shape (docs/modules.md).

pub mod allocator;
pub mod ecn;
pub mod egress;
pub mod fifo;
pub mod islip;
pub mod l2_switch;
pub mod pim;
pub mod source;
pub mod voq_switch;
