//! The L2 switch of seed 003, block by block. For now: the crossbar allocators behind a small
//! contract (`allocator`: `islip`, `pim`, `fifo`), the input-queued cell switch that uses them
//! (`voq_switch`), and synthetic cell traffic (`source`). Ingress, the DT-managed shared buffer,
//! egress, ECN and PFC follow in the same shape (docs/modules.md).

pub mod allocator;
pub mod fifo;
pub mod islip;
pub mod pim;
pub mod source;
pub mod voq_switch;
