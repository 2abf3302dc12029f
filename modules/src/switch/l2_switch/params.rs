//! The L2 switch's parameters (`hwsim explain l2_switch` lists them with their defaults): the
//! ports and routes, forwarding, PFC, the ingress pipeline, the port rate and buffer, ECN RED,
//! the fabric and allocator, DT, classification and the WRR (see the parent module's header
//! for what each part does).

use hwsim_ports::ByteRate;
use serde::{Deserialize, Serialize};

use super::super::allocator::AllocatorKind;

/// Parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports, 1..=64.
    pub ports: u32,
    /// Output per destination chip (index = chip id): a port, a list of equal-cost ports (ECMP:
    /// a flow is hashed onto one of them), or `null` = unreachable.
    pub routes: Vec<Option<Route>>,
    /// Salt of the ECMP hash (the system builder gives each switch its own, so that two levels
    /// of a fabric do not split flows alike).
    pub ecmp_salt: u64,
    /// Multicast table by group id (TYPE2 frames to `MCAST_BIT | group`): the ports a copy
    /// leaves on (the group's tree from its source), each port once. Filled by the system
    /// builder.
    pub mcast: Vec<Vec<u32>>,
    /// `store_and_forward` (the ingress `latency`, then queue and serialize) or `cut_through`
    /// (a frame finds its egress idle: it leaves `cut_through_latency` ns after it arrived,
    /// whatever its size; else it queues as store-and-forward).
    pub forwarding: Forwarding,
    /// Cut-through latency, ns (seed 003: a fixed 300–500 ns).
    pub cut_through_latency: u64,
    /// PFC mode (seed 003: PFC and CBFC are exclusive; in PFC mode the switch takes part).
    pub pfc: bool,
    /// The lossless priorities (PFC mode), each 0..=7, at least one: per port and per priority
    /// the switch accounts the data it holds, sends XOFF / XON for it, and honours the pauses
    /// its neighbours send for it. [2] (the REQ data class of seed 003's VOQ mapping); seed
    /// 003's PFC table puts REQ data at PCP 3~4: configs/seed003_pfc_priorities.yaml.
    pub pfc_priorities: Vec<u8>,
    /// PFC XOFF threshold, bytes: data of one lossless priority held in the switch that came in
    /// on one port; above it an XOFF for that priority goes to the neighbour feeding the port.
    /// Unset (the default): `pfc_threshold` × `port_buffer`.
    pub pfc_xoff: Option<u64>,
    /// PFC XON threshold, bytes: at or below it, the XON. Unset: `pfc_xon_threshold` ×
    /// `port_buffer`.
    pub pfc_xon: Option<u64>,
    /// XOFF as a fraction of the queue depth `port_buffer` (seed 003 `pfc_threshold`: 85 % of
    /// the queue depth, the depth its ECN 50 % / 80 % rows are fractions of), 0 < x ≤ 1.
    pub pfc_threshold: f64,
    /// XON as a fraction of `port_buffer`, 0 < x ≤ `pfc_threshold`: 0.5, seed 002's «depth/2»
    /// (seed 003 gives no XON level; seed 002's pair is XON depth/2, XOFF depth·3/4:
    /// configs/seed002_pfc.yaml).
    pub pfc_xon_threshold: f64,
    /// PFC watchdog, ns (0 = off): a port paused longer than this ignores the pause until the
    /// XON (deadlock / storm recovery, seed 003 «PFC 风险»). Off by default: hwsim's choice, the
    /// seed names the watchdog («PFC Watchdog 超时恢复») but gives no timeout.
    pub pfc_watchdog: u64,
    /// Ingress pipeline (parse, classify, lookup), ns: seed 003 gives 50–200.
    pub latency: u64,
    /// Crossbar traversal of a data frame, ns, added to `latency` in store-and-forward (seed
    /// 003 «交换机延迟组成» T_crossbar: 10–50 ns). 0 by default (hwsim's: the crossing is the
    /// egress serialization, as before the term existed); the seed-003 presets
    /// (configs/seed003_switch_{100g,200g,400g}.yaml) set 30. Cut-through's fixed latency
    /// covers it.
    pub crossbar_latency: u64,
    /// Port rate, bytes/ns. 400 is seed 000's edge bandwidth (every edge, inside a switch too; a
    /// chip's 8 LGs × 50 B/ns, so a switch port never limits one chip), not seed 003's: its
    /// parameter table has `port_bandwidth_gbps` 100 / 200 / 400 (12.5 / 25 / 50 B/ns).
    pub rate: ByteRate,
    /// Data buffer per output port, bytes. 4 MiB is hwsim's default, not a seed figure (seed 003
    /// «缓冲需求估算» sizes one egress port at 1.75 MB for 8 → 1 at 200 Gb/s over 10 µs and the
    /// whole switch at 16–64 MB); it is also the scale of the ECN and PFC fractions (`ecn_kmin`,
    /// `pfc_threshold`).
    pub port_buffer: u64,
    /// ECN marking on (Standard format).
    pub ecn: bool,
    /// ECN RED Kmin, fraction of the port buffer held for the output (0.3, seed 000; seed 003:
    /// 0.5, configs/seed003_switch.yaml).
    pub ecn_kmin: f64,
    /// ECN RED Kmax (0.8, both seeds).
    pub ecn_kmax: f64,
    /// `voq` (seed 003: VOQ per (input, output) in a shared buffer, a crossbar matched by
    /// `allocator`) or `output_queued` (an output queue of `port_buffer` bytes per port, as if
    /// the crossbar had full speedup).
    pub fabric: Fabric,
    /// Crossbar allocator (`voq`): `islip`, `pim`, or `fifo` (one queue per input: the
    /// head-of-line baseline).
    pub allocator: AllocatorKind,
    /// Allocator iterations per cycle, 1..=4 (seed 003: 2 recommended).
    pub iterations: u32,
    /// Shared buffer, bytes (`voq`; seed 003: 16–64 MB).
    pub buffer: u64,
    /// Dynamic Threshold α (`voq`): a VOQ may grow while its bytes < α × the free buffer
    /// (seed 003: 0.5, 1, 2; 4–8 for all-reduce bursts), 1/64..=64.
    pub dt_alpha: f64,
    /// Bytes each VOQ may always hold (static reserve, inside the buffer). 0 by default: hwsim's
    /// choice, seed 003's DT («共享缓冲池与 DT 算法») gives no static reserve.
    pub reserve: u64,
    /// Which header field classifies a data frame (seed 003 «优先级分类»): `pcp` (the VLAN
    /// tag's PCP) or `dscp` (the IP DSCP's class selector, DSCP >> 3; Standard only). A frame
    /// without that field (untagged; an AFH format under `dscp` falls back to its PCP) gets
    /// `default_priority`.
    pub trust: Trust,
    /// The port default priority, 0..=7 (2: the REQ data class, so untagged chip data lands
    /// where seed 003's mapping puts it).
    pub default_priority: u8,
    /// Priority → traffic class: the VOQ level (0..=3) of each priority 0..7 (seed 003 «PFC 优先级
    /// 映射»: VLAN PCP → switch QoS priority → PFC channel). [0, 1, 2, 3, 3, 3, 3, 3]: priorities
    /// 0–3 are levels 0–3 (seed 003's VOQ mapping: 3 ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3),
    /// 4–7 join level 3. Seed 003's PFC table (REQ PCP 3~4, ACK+CNP 5~6, TYPE2 2, TYPE3 0)
    /// wants [0, 1, 0, 2, 2, 3, 3, 3]: configs/seed003_pfc_priorities.yaml.
    pub tc_map: [u8; 8],
    /// WRR weight of the REQ data level (2) against the RSP level (1) at each output, 1..=65535
    /// (`voq`): while both hold frames for an output they share it in bytes in the ratio
    /// `wrr_req` : `wrr_rsp` (8 : 8, seed 002's channel-weight reset value: an even split).
    pub wrr_req: u32,
    /// WRR weight of the RSP level (1), 1..=65535 (see `wrr_req`).
    pub wrr_rsp: u32,
}

/// The header field a switch classifies on (shared with the chips' routers, in the ports).
pub use hwsim_ports::Trust;

/// The switch fabric (seed 003 «VOQ 架构»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fabric {
    /// VOQs per (input, output) in a shared DT buffer, an allocator-matched crossbar.
    #[default]
    Voq,
    /// An output queue per port (full crossbar speedup).
    OutputQueued,
}

impl Params {
    /// The lossless priorities as a mask (bit p = priority p).
    pub fn pfc_mask(&self) -> u8 {
        self.pfc_priorities
            .iter()
            .fold(0, |m, &p| m | 1u8.checked_shl(p as u32).unwrap_or(0))
    }
    /// The VOQ levels paused by the priorities in `mask` (bit l = level l).
    pub fn levels_of(&self, mut mask: u8) -> u8 {
        let mut levels = 0;
        while mask != 0 {
            let p = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            levels |= 1 << self.tc_map[p];
        }
        levels
    }
    /// The XOFF level in bytes: `pfc_xoff`, or `pfc_threshold` × `port_buffer`.
    pub fn xoff_bytes(&self) -> u64 {
        self.pfc_xoff
            .unwrap_or((self.pfc_threshold * self.port_buffer as f64) as u64)
    }
    /// The XON level in bytes: `pfc_xon`, or `pfc_xon_threshold` × `port_buffer`.
    pub fn xon_bytes(&self) -> u64 {
        self.pfc_xon
            .unwrap_or((self.pfc_xon_threshold * self.port_buffer as f64) as u64)
    }
}

impl Default for Params {
    fn default() -> Self {
        Params {
            ports: 2,
            routes: vec![Some(Route::One(0)), Some(Route::One(1))],
            ecmp_salt: 0,
            forwarding: Forwarding::StoreAndForward,
            cut_through_latency: 300,
            pfc: false,
            pfc_priorities: vec![hwsim_ports::PfcFrame::REQ_DATA_PRIO],
            pfc_xoff: None,
            pfc_xon: None,
            pfc_threshold: 0.85,
            pfc_xon_threshold: 0.5,
            pfc_watchdog: 0,
            latency: 100,
            crossbar_latency: 0,
            rate: ByteRate::new(400, 1).expect("400 B/ns"),
            port_buffer: 4 << 20,
            ecn: true,
            ecn_kmin: 0.3,
            ecn_kmax: 0.8,
            fabric: Fabric::Voq,
            allocator: AllocatorKind::Islip,
            iterations: 2,
            buffer: 16 << 20,
            dt_alpha: 1.0,
            reserve: 0,
            trust: Trust::Pcp,
            default_priority: 2,
            tc_map: [0, 1, 2, 3, 3, 3, 3, 3],
            mcast: Vec::new(),
            wrr_req: 8,
            wrr_rsp: 8,
        }
    }
}

/// A route: one port or several equal-cost ports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Route {
    /// One output port.
    One(u32),
    /// Equal-cost output ports; a flow's hash picks one.
    Many(Vec<u32>),
}

impl Route {
    pub(super) fn ports(&self) -> &[u32] {
        match self {
            Route::One(p) => std::slice::from_ref(p),
            Route::Many(v) => v,
        }
    }
}

/// Forwarding mode (seed 003 «转发模式»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Forwarding {
    /// Whole frame in, ingress latency, queue, serialize.
    #[default]
    StoreAndForward,
    /// Fixed latency when the egress is idle; store-and-forward when it is busy.
    CutThrough,
}
