//! Ingress (seed 003 «入口处理», «优先级分类»): each message that arrived is looked up
//! (`routes`, ECMP by a hash of its flow; a multicast frame replicated to its group's ports) and
//! enters its output's pipeline, ready `latency` ns later (data cut-through:
//! `cut_through_latency`); a data frame's VOQ level is the priority of the header field the
//! switch trusts.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{mcast_group, ChipId, DataFrame};

use super::{Forwarding, L2Switch, Route, Trust, LEVELS};

/// The ECMP hash of a flow key (splitmix64's finalizer): deterministic, well mixed.
fn flow_hash(salt: u64, key: u64) -> u64 {
    let mut z = key ^ salt.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl L2Switch {
    /// The output for a message to `dst` of the flow `key`: the route's port, or one of its
    /// equal-cost ports by the flow's hash (so a flow's frames keep their order).
    fn route(&self, ctx: &mut Ctx<'_>, dst: ChipId, key: u64, what: &str) -> Option<usize> {
        match self.p.routes.get(dst as usize).and_then(|r| r.as_ref()) {
            Some(Route::One(o)) => Some(*o as usize),
            Some(Route::Many(v)) => Some(v[(flow_hash(self.p.ecmp_salt, key) % v.len() as u64) as usize] as usize),
            None => {
                ctx.violation(format!("no route to chip {dst} for a {what}"));
                None
            }
        }
    }

    /// The ingress classification of a data frame: its priority from the header field the
    /// switch trusts, else the port default; the VOQ level is the priority, 4–7 at level 3.
    pub(super) fn level_of(&self, f: &DataFrame) -> usize {
        let h = f.hdr;
        let prio = match (self.p.trust, h.pcp) {
            (Trust::Dscp, _) if h.format.carries_ecn() => (h.dscp.0 >> 3) as u8 & 7,
            (_, Some(pcp)) => pcp.0 as u8 & 7,
            _ => self.p.default_priority,
        };
        (prio as usize).min(LEVELS - 1)
    }

    /// Everything that arrived this cycle on every port, into its output's pipeline (data) or
    /// its control or credit queue.
    pub(super) fn arrivals(&mut self, ctx: &mut Ctx<'_>, now: Cycle) {
        let cut = self.p.forwarding == Forwarding::CutThrough;
        let ready = now + self.p.latency;
        let data_ready = if cut { now + self.p.cut_through_latency } else { ready };
        // Ingress: everything that arrived, into its output's pipeline. The ECMP key is the
        // flow: (src, dst, LG, QP) for data and control, (src, dst, LG, VC) for credits.
        let key =
            |src: ChipId, dst: ChipId, lg: u8, x: u64| (src as u64) << 48 | (dst as u64) << 32 | (lg as u64) << 24 | x;
        for k in 0..self.ports.len() {
            if let Some(f) = self.ports[k].req_in.pop() {
                if let Some(g) = mcast_group(f.dst) {
                    // Multicast: the lookup gives the group's ports; a copy of the frame goes
                    // into each one's pipeline (each copy queued and counted on its own).
                    let n = self.p.mcast.get(g as usize).map_or(0, |v| v.len());
                    if n == 0 {
                        ctx.violation(format!("no multicast route for group {g}: {f:?}"));
                        continue;
                    }
                    ctx.count(self.c_mcast_copies, n as u64 - 1);
                    for j in 0..n {
                        let o = self.p.mcast[g as usize][j] as usize;
                        self.ingress[k] += f.wire_bytes() as u64;
                        self.ports[o].data_pipe.push_back((data_ready, now, k as u8, f));
                    }
                    if self.ingress[k] > ctx.counter(self.ports[k].c_ingress_peak) {
                        ctx.set_counter(self.ports[k].c_ingress_peak, self.ingress[k]);
                    }
                    continue;
                }
                let kf = key(f.src, f.dst, f.lg, f.qp.value() as u64);
                if let Some(o) = self.route(ctx, f.dst, kf, "data frame") {
                    self.ingress[k] += f.wire_bytes() as u64;
                    if self.ingress[k] > ctx.counter(self.ports[k].c_ingress_peak) {
                        ctx.set_counter(self.ports[k].c_ingress_peak, self.ingress[k]);
                    }
                    self.ports[o].data_pipe.push_back((data_ready, now, k as u8, f));
                }
            }
            while let Some(m) = self.ports[k].rsp_in.pop() {
                let km = key(m.src, m.dst, m.lg, m.rh.qp().value() as u64);
                if let Some(o) = self.route(ctx, m.dst, km, "control message") {
                    self.ports[o].rsp.push_back((ready, m));
                }
            }
            while let Some(m) = self.ports[k].cr_in.pop() {
                let km = key(m.src, m.dst, m.lg, m.vc as u64);
                if let Some(o) = self.route(ctx, m.dst, km, "credit return") {
                    self.ports[o].cr.push_back((ready, m));
                }
            }
        }
    }
}
