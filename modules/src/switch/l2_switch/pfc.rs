//! The L2 switch's PFC controller as a node (`switch_pfc`; seed 003 «PFC», «PFC 风险»; PFC and
//! CBFC are exclusive modes, and in PFC mode the switch takes part): per port, the pause the
//! downstream neighbour asked for, with its watchdog, and the XOFF / XON the switch sends to the
//! upstream one from its ingress accounting.
//!
//! ```text
//!                             +-------------------------------------------+
//!  e{k}_pfc_in      ==(4)==>    | process 0: XOFF / XON received, per     | ==(comb)==> paused{k} : signal<UInt<8>>
//!  stream<PfcFrame>             |   priority; the watchdog ignores a      |             (priorities; to the core, process 0)
//!                               |   pause older than `watchdog`           |
//!  ingress_bytes{k}_p{q} =comb=>| process 1: per lossless priority q,     | ==> e{k}_pfc_out : stream<PfcFrame>
//!  signal<UInt<48>>             |   above `xoff` an XOFF, at or below     | --> pfc{k} : bit 0 XOFF sent, bit 1 paused
//!  (from the core, process 1)   |   `xon` the XON (hysteresis)            |             (any priority)
//!                               +-----------------------------------------+
//! ```
//!
//! **One cycle** n: process 0 takes the PFC frames that arrived (visible at n; a frame names
//! any of the 8 priorities, each paused or resumed on its own) and the watchdog, and shows on
//! `paused{k}` the priorities port k may not start data frames of at n (bit p = priority p);
//! the core reads it in its process 0 (enqueue, the crossbar's free outputs) and its egress,
//! and pauses those priorities' VOQ levels. After the core's process 1 (departures) shows each
//! port's ingress bytes per lossless priority q (`priorities`: the data of priority q held in
//! the switch that came in on port k), process 1 compares them with the levels: an XOFF when
//! they pass `xoff`, the XON when they fall to `xon` (one frame per crossing; the priorities
//! crossing in one cycle share one frame per direction), pushed at n (at the neighbour at n+1,
//! through its link). A frame that finds its stream full is tried again next cycle. The
//! watchdog (`watchdog` ns, 0 = off) fires exactly `watchdog` ns after the XOFF that began a
//! priority's pause and ignores that pause until its XON; its wake-up is this node's.
//!
//! **Counters** (in the switch's scope): `pfc_xoff_sent`, `pfc_xon_sent`,
//! `pfc_pauses_received` (pauses begun, one per priority), `pfc_watchdog_fired`, per port
//! `p{k}_pfc_xoff` (frames) and `p{k}_pfc_paused_cycles` (counted at each XON, summed over the
//! priorities). Without PFC mode (`pfc: false`) the node has no ports and keeps the counters at
//! 0.
//!
//! **Deviations.** The XOFF and XON levels are measured on each ingress's bytes, not on the
//! egress queue seed 003 names (docs/spec-findings.md finding 15). The 802.1Qbb pause time per
//! priority is not modelled: an XOFF holds until its XON.

use hwsim_hw::{
    Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, In, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{PfcFrame, PfcPause, UInt, MAX_SWITCH_PORTS};
use serde::{Deserialize, Serialize};

/// The counters this node registers (in the switch's scope).
pub const COUNTERS: &[CounterDecl] = &[
    CounterDecl::new(
        "pfc_xoff_sent",
        "frames",
        "PFC XOFF frames sent upstream, all ports (ingress bytes above `pfc_xoff`)",
    ),
    CounterDecl::new(
        "pfc_xon_sent",
        "frames",
        "PFC XON frames sent upstream, all ports (ingress bytes back at `pfc_xon`)",
    ),
    CounterDecl::new(
        "pfc_pauses_received",
        "events",
        "PFC pauses begun by XOFFs received (one per port and priority)",
    ),
    CounterDecl::new(
        "pfc_watchdog_fired",
        "events",
        "pauses ignored by the PFC watchdog after `pfc_watchdog` ns in force",
    ),
    CounterDecl::new("p*_pfc_xoff", "frames", "PFC XOFF frames sent out of port *"),
    CounterDecl::new(
        "p*_pfc_paused_cycles",
        "ns",
        "cycles port * was paused by PFC, counted at each XON",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters (the switch fills them in from its own: `pfc`, `pfc_priorities`, the levels in
/// bytes, `pfc_watchdog`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports, 1..=64.
    pub ports: u32,
    /// PFC mode: without it the node has no ports.
    pub pfc: bool,
    /// The lossless priorities: per port one `ingress_bytes{k}_p{q}` each, XOFF / XON for each.
    pub priorities: Vec<u8>,
    /// XOFF level, bytes: an XOFF when a port's ingress bytes of a lossless priority pass it.
    pub xoff: u64,
    /// XON level, bytes (≤ `xoff`): the XON when they fall to it.
    pub xon: u64,
    /// Watchdog, ns (0 = off).
    pub watchdog: u64,
}

impl Default for Params {
    fn default() -> Self {
        Params::of(&super::Params {
            pfc: true,
            ..super::Params::default()
        })
    }
}

impl Params {
    /// The PFC controller's part of a switch's parameters.
    pub fn of(s: &super::Params) -> Params {
        Params {
            ports: s.ports,
            pfc: s.pfc,
            priorities: s.pfc_priorities.clone(),
            xoff: s.xoff_bytes(),
            xon: s.xon_bytes(),
            watchdog: s.pfc_watchdog,
        }
    }
}

/// Refuses out-of-range parameters naming the parameter.
pub fn check(p: &Params) -> Result<(), String> {
    if p.ports == 0 || p.ports as usize > MAX_SWITCH_PORTS {
        return Err(format!("ports = {}: must be in 1..=64", p.ports));
    }
    if p.priorities.is_empty() || p.priorities.iter().any(|&q| q > 7) {
        return Err(format!("priorities = {:?}: 1 to 8 of 0..=7", p.priorities));
    }
    if let Some((_, q)) = p
        .priorities
        .iter()
        .enumerate()
        .find(|(i, q)| p.priorities[..*i].contains(q))
    {
        return Err(format!("priorities = {:?}: {q} named twice", p.priorities));
    }
    if p.xon > p.xoff {
        return Err(format!("xon = {}: must be at most xoff ({})", p.xon, p.xoff));
    }
    if p.watchdog > 1_000_000_000 {
        return Err(format!("watchdog = {}: must be in 0..=1000000000 ns", p.watchdog));
    }
    Ok(())
}

/// The switch's PFC ports of port `k` (the composite exports them under these names).
pub fn outer_ports(k: u32) -> Vec<PortDecl> {
    vec![
        PortDecl::stream_in::<PfcFrame>(&format!("e{k}_pfc_in"), 4)
            .optional()
            .doc("PFC frames from the neighbour on port k (PFC mode)"),
        PortDecl::stream_out::<PfcFrame>(&format!("e{k}_pfc_out"))
            .process(1)
            .doc("PFC frames to the neighbour on port k (PFC mode)"),
        PortDecl::output::<UInt<2>>(&format!("pfc{k}"))
            .process(1)
            .doc("PFC on port k: bit 0 XOFF sent upstream, bit 1 paused by downstream"),
    ]
}

/// The name of the core's ingress accounting of port `k` for lossless priority `q`.
pub fn held_name(k: u32, q: u8) -> String {
    format!("ingress_bytes{k}_p{q}")
}

/// The core's side of the node's wiring for port `k`: the paused priorities it reads in its
/// process 0, the ingress bytes per lossless priority (`priorities`) it shows after its
/// process 1.
pub fn core_side(k: u32, priorities: &[u8]) -> Vec<PortDecl> {
    let mut v = vec![PortDecl::comb_input::<UInt<8>>(&format!("paused{k}")).doc(
        "the priorities port k may not start data frames of this cycle (bit p = priority p; PFC), from the PFC node",
    )];
    for &q in priorities {
        v.push(
            PortDecl::comb_output::<UInt<48>>(&held_name(k, q))
                .process(1)
                .level()
                .doc("data bytes of lossless priority q held in the switch that came in on port k (PFC's accounting)"),
        );
    }
    v
}

/// Port list: with PFC mode, per port the switch's PFC ports, the pause out (process 0) and the
/// ingress bytes in (process 1); none without.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = Vec::new();
    if !p.pfc {
        return v;
    }
    for k in 0..p.ports.min(MAX_SWITCH_PORTS as u32) {
        v.extend(outer_ports(k));
        v.push(
            PortDecl::comb_output::<UInt<8>>(&format!("paused{k}"))
                .doc("the priorities port k is paused for this cycle (bit p = priority p: an XOFF in force, the watchdog not fired)"),
        );
        for &q in &p.priorities {
            v.push(
                PortDecl::comb_input::<UInt<48>>(&held_name(k, q))
                    .process(1)
                    .doc("data bytes of lossless priority q held in the switch that came in on port k, from the core"),
            );
        }
    }
    v
}

/// One port's PFC state and ports.
struct Port {
    pfc_in: StreamIn<PfcFrame>,
    pfc_out: StreamOut<PfcFrame>,
    wave: Out<UInt<2>>,
    paused_out: CombOut<UInt<8>>,
    /// Per lossless priority (in `priorities` order): the data of it held from this port.
    held: Vec<In<UInt<48>>>,
    /// The priorities an XOFF we sent upstream on this port is in force for.
    xoff_sent: u8,
    /// Paused by the downstream neighbour, per priority (and since when).
    pause: PfcPause,
    /// The priorities whose pause the watchdog fired for: ignored until their XON.
    watchdog_fired: u8,
    /// When the watchdog would fire.
    wake: Option<u64>,
    c_xoff: CounterId,
    c_paused: CounterId,
}

/// The node.
pub struct Pfc {
    p: Params,
    ports: Vec<Port>,
    c_xoff: CounterId,
    c_xon: CounterId,
    c_pauses_rx: CounterId,
    c_watchdog: CounterId,
}

/// Binds ports and counters; refuses out-of-range parameters naming the parameter.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    check(p)?;
    let mut ports = Vec::new();
    // The per-port counters exist in every switch (0 without PFC), as the reports list them.
    let per_port: Vec<(CounterId, CounterId)> = (0..p.ports)
        .map(|k| {
            (
                b.counter(&format!("p{k}_pfc_xoff")),
                b.counter(&format!("p{k}_pfc_paused_cycles")),
            )
        })
        .collect();
    if p.pfc {
        for (k, &(c_xoff, c_paused)) in per_port.iter().enumerate() {
            ports.push(Port {
                pfc_in: b.stream_in(&format!("e{k}_pfc_in"))?,
                pfc_out: b.stream_out(&format!("e{k}_pfc_out"))?,
                wave: b.output(&format!("pfc{k}"))?,
                paused_out: b.comb_output(&format!("paused{k}"))?,
                held: p
                    .priorities
                    .iter()
                    .map(|&q| b.input(&held_name(k as u32, q)))
                    .collect::<Result<_, _>>()?,
                xoff_sent: 0,
                pause: PfcPause::default(),
                watchdog_fired: 0,
                wake: None,
                c_xoff,
                c_paused,
            });
        }
    }
    Ok(Box::new(Pfc {
        p: p.clone(),
        ports,
        c_xoff: b.counter("pfc_xoff_sent"),
        c_xon: b.counter("pfc_xon_sent"),
        c_pauses_rx: b.counter("pfc_pauses_received"),
        c_watchdog: b.counter("pfc_watchdog_fired"),
    }))
}

impl Pfc {
    /// The PFC frames from the neighbour on port `k` this cycle, then the watchdog: together
    /// they decide which priorities the port is paused for this cycle (and when the watchdog
    /// would fire).
    fn receive(&mut self, ctx: &mut Ctx<'_>, k: usize, now: u64) {
        let port = &mut self.ports[k];
        // PFC from the neighbour on this port: XOFF / XON of the priorities each frame names.
        while let Some(f) = port.pfc_in.pop() {
            let c = port.pause.receive(f, now);
            if c.paused != 0 {
                ctx.count(self.c_pauses_rx, c.paused.count_ones() as u64);
            }
            if c.resumed != 0 {
                port.watchdog_fired &= !c.resumed;
                ctx.count(port.c_paused, c.resumed_cycles);
            }
        }
        port.wake = None;
        if self.p.watchdog > 0 {
            for (q, since) in port.pause.since.iter().enumerate() {
                let Some(t) = *since else { continue };
                if port.watchdog_fired & 1 << q != 0 {
                    continue;
                }
                if now >= t + self.p.watchdog {
                    port.watchdog_fired |= 1 << q;
                    ctx.count(self.c_watchdog, 1);
                } else {
                    let w = t + self.p.watchdog;
                    port.wake = Some(port.wake.map_or(w, |x| x.min(w)));
                }
            }
        }
        let paused = port.pause.mask() & !port.watchdog_fired;
        port.paused_out.set(UInt::wrap(paused as u64));
    }

    /// The XOFF / XON frames to the neighbours this cycle: per port one XOFF naming the lossless
    /// priorities whose bytes passed `xoff`, one XON naming those back at `xon`. True if one
    /// could not be sent (its stream full): it is tried again next cycle.
    fn send(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut retry = false;
        let (xoff, xon) = (self.p.xoff, self.p.xon);
        for (k, port) in self.ports.iter_mut().enumerate() {
            let (mut up, mut down) = (0u8, 0u8);
            for (held, &q) in port.held.iter().zip(&self.p.priorities) {
                let (held, bit) = (held.get().0, 1u8 << q);
                if port.xoff_sent & bit == 0 && held > xoff {
                    up |= bit;
                } else if port.xoff_sent & bit != 0 && held <= xon {
                    down |= bit;
                }
            }
            for (prio_mask, pause) in [(up, true), (down, false)] {
                if prio_mask == 0 {
                    continue;
                }
                if !port.pfc_out.can_push() {
                    retry = true;
                    continue;
                }
                port.pfc_out.push(PfcFrame { prio_mask, pause });
                if ctx.logs() {
                    ctx.log(
                        "pfc",
                        format_args!(
                            "{} port={k} priorities={prio_mask:#04x} (sent upstream)",
                            if pause { "xoff" } else { "xon" }
                        ),
                    );
                }
                if pause {
                    port.xoff_sent |= prio_mask;
                    ctx.count(self.c_xoff, 1);
                    ctx.count(port.c_xoff, 1);
                } else {
                    port.xoff_sent &= !prio_mask;
                    ctx.count(self.c_xon, 1);
                }
            }
            // The state on the waves: bit 0 XOFF sent upstream, bit 1 paused by downstream
            // (for any priority).
            let v = (port.xoff_sent != 0) as u64 | (port.pause.is_paused() as u64) << 1;
            port.wave.update(UInt::wrap(v));
        }
        retry
    }
}

impl Component for Pfc {
    /// Process 0: the pauses received and the watchdog, shown to the core.
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        for k in 0..self.ports.len() {
            self.receive(ctx, k, now);
        }
        // Process 1 follows in this cycle (it exists in PFC mode, with ports); the watchdogs'
        // deadlines stand as this one's hint.
        if self.p.pfc && self.p.ports > 0 {
            ctx.run_process(1);
        }
        Wake::earliest(self.ports.iter().filter_map(|p| p.wake))
    }

    /// Process 1: XOFF / XON from the ingress bytes the core shows after its departures; a
    /// frame still to send runs the block again next cycle, from process 0.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        let more = self.send(ctx);
        ctx.run_process_on(0, Wake::next_cycle_if(more));
        Wake::OnInput
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    fn bench(watchdog: u64) -> Harness {
        bench_with(watchdog, vec![PfcFrame::REQ_DATA_PRIO])
    }

    fn bench_with(watchdog: u64, priorities: Vec<u8>) -> Harness {
        let p = Params {
            ports: 2,
            pfc: true,
            priorities,
            xoff: 1000,
            xon: 500,
            watchdog,
        };
        Harness::new("switch_pfc", ports(&p), Box::new(move |b| build(&p, b)), 1, 8).unwrap()
    }

    fn frame(pause: bool) -> PfcFrame {
        PfcFrame {
            prio_mask: 1 << PfcFrame::REQ_DATA_PRIO,
            pause,
        }
    }

    #[test]
    fn a_received_xoff_pauses_its_port_until_the_xon_or_the_watchdog() {
        let mut h = bench(10);
        assert!(h.push("e1_pfc_in", frame(true)));
        h.step().unwrap(); // pushed at 0, taken at 1
        h.step().unwrap();
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 1 << 2);
        assert_eq!(h.peek::<UInt<8>>("paused0").0, 0, "only the port it came in on");
        h.steps(9).unwrap(); // cycle 10 done: 9 ns into the pause
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 1 << 2);
        h.step().unwrap(); // cycle 11: 10 ns since the XOFF of 1
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 0, "the watchdog ignores the pause");
        assert_eq!(h.sim().counter("dut.pfc_watchdog_fired"), Some(1));
        assert!(h.push("e1_pfc_in", frame(false)));
        h.steps(2).unwrap();
        assert_eq!(
            h.sim().counter("dut.p1_pfc_paused_cycles"),
            Some(12),
            "XOFF at 1, XON at 13"
        );
        assert_eq!(h.sim().counter("dut.pfc_pauses_received"), Some(1));
    }

    #[test]
    fn ingress_bytes_send_one_xoff_per_crossing_and_the_xon_at_the_lower_level() {
        let mut h = bench(0);
        let mut sent = Vec::new();
        for (at, bytes) in [(0, 900), (2, 1001), (4, 1500), (6, 700), (8, 500), (10, 2000)] {
            while h.now() < at {
                h.step().unwrap();
                while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
                    sent.push((h.now(), f.pause));
                }
            }
            h.poke("ingress_bytes0_p2", UInt::<48>::wrap(bytes));
        }
        h.steps(2).unwrap();
        while let Some(f) = h.pop::<PfcFrame>("e0_pfc_out") {
            sent.push((h.now(), f.pause));
        }
        let pauses: Vec<bool> = sent.iter().map(|s| s.1).collect();
        assert_eq!(pauses, [true, false, true], "{sent:?}");
        assert_eq!(h.sim().counter("dut.pfc_xoff_sent"), Some(2));
        assert_eq!(h.sim().counter("dut.pfc_xon_sent"), Some(1));
        assert_eq!(h.sim().counter("dut.p0_pfc_xoff"), Some(2));
    }

    #[test]
    fn each_priority_pauses_and_is_paused_on_its_own() {
        let mut h = bench_with(0, vec![3, 4]);
        // Received: an XOFF for priority 3 pauses 3 only; one naming 3 and 5 adds 5.
        let f = |prio_mask, pause| PfcFrame { prio_mask, pause };
        assert!(h.push("e1_pfc_in", f(1 << 3, true)));
        h.steps(2).unwrap();
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 1 << 3);
        assert!(h.push("e1_pfc_in", f(1 << 3 | 1 << 5, true)));
        h.steps(2).unwrap();
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 1 << 3 | 1 << 5);
        assert!(h.push("e1_pfc_in", f(1 << 3, false)));
        h.steps(2).unwrap();
        assert_eq!(h.peek::<UInt<8>>("paused1").0, 1 << 5, "priority 5 stays paused");
        assert_eq!(h.sim().counter("dut.pfc_pauses_received"), Some(2));
        // Sent: each lossless priority's bytes against the levels, one frame per direction.
        h.poke("ingress_bytes0_p3", UInt::<48>::wrap(1500));
        h.poke("ingress_bytes0_p4", UInt::<48>::wrap(900));
        h.step().unwrap();
        let x = h.pop::<PfcFrame>("e0_pfc_out");
        h.poke("ingress_bytes0_p4", UInt::<48>::wrap(1200));
        h.steps(2).unwrap();
        let y = h.pop::<PfcFrame>("e0_pfc_out");
        h.poke("ingress_bytes0_p3", UInt::<48>::wrap(400));
        h.steps(2).unwrap();
        let z = h.pop::<PfcFrame>("e0_pfc_out");
        assert_eq!(
            [x, y, z],
            [Some(f(1 << 3, true)), Some(f(1 << 4, true)), Some(f(1 << 3, false))]
        );
        assert_eq!(h.sim().counter("dut.p0_pfc_xoff"), Some(2));
    }
}
