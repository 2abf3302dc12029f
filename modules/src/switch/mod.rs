//! The L2 switch of seed 003, block by block: the crossbar allocators behind a small contract
//! (`allocator`: `islip`, `pim`, `fifo`), the Dynamic Threshold rule of a shared buffer (`dt`), the REQ / RSP weighted share of an output (`wrr`),
//! the input-queued cell switch that uses them with its DT-managed shared buffer (`voq_switch`), an egress port with strict priority, WRR and ECN RED
//! marking (`egress`, `ecn`), synthetic cell traffic (`source`), and the frame switch that
//! carries the chips' traffic in star, leaf/spine and custom topologies (`l2_switch`: ECMP,
//! cut-through, PFC). Ingress parsing by frame format is not built yet (docs/modules.md).

pub mod allocator;
pub mod dt;
pub mod ecn;
pub mod egress;
pub mod fifo;
pub mod islip;
pub mod l2_switch;
pub mod pim;
pub mod source;
pub mod voq_switch;
pub mod wrr;
