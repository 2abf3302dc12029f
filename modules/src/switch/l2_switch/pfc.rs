//! The L2 switch's PFC controller as a node (`switch_pfc`; seed 003 «PFC», «PFC 风险»; PFC and
//! CBFC are exclusive modes, and in PFC mode the switch takes part): per port, the pause the
//! downstream neighbour asked for, with its watchdog, and the XOFF / XON the switch sends to the
//! upstream one from its ingress accounting.
//!
//! ```text
//!                             +-------------------------------------------+
//!  e{k}_pfc_in    ==(4)==>    | process 0: XOFF / XON of the REQ data     | ==(comb)==> paused{k} : signal<UInt<1>>
//!  stream<PfcFrame>           |   priority received; the watchdog         |             (to the core, process 0)
//!                             |   ignores a pause older than `watchdog`   |
//!  ingress_bytes{k} =(comb)=> | process 1: above `xoff` an XOFF, at or    | ==> e{k}_pfc_out : stream<PfcFrame>
//!  signal<UInt<48>>           |   below `xon` the XON (hysteresis)        | --> pfc{k} : bit 0 XOFF sent, bit 1 paused
//!  (from the core, process 1) +-------------------------------------------+
//! ```
//!
//! **One cycle** n: process 0 takes the PFC frames that arrived (visible at n) and the watchdog,
//! and shows on `paused{k}` whether port k may start REQ data frames at n; the core reads it in
//! its process 0 (enqueue, the crossbar's free outputs) and its egress. After the core's
//! process 1 (departures) shows each port's ingress bytes (the data held in the switch that came
//! in on port k), process 1 compares them with the levels: one XOFF when they pass `xoff`, one
//! XON when they fall to `xon` (one frame per crossing), pushed at n (at the neighbour at n+1,
//! through its link). A frame that finds its stream full is tried again next cycle. The
//! watchdog (`watchdog` ns, 0 = off) fires exactly `watchdog` ns after the XOFF that began a
//! pause and ignores the pause until its XON; its wake-up is this node's.
//!
//! **Counters** (in the switch's scope): `pfc_xoff_sent`, `pfc_xon_sent`,
//! `pfc_pauses_received`, `pfc_watchdog_fired`, per port `p{k}_pfc_xoff` and
//! `p{k}_pfc_paused_cycles` (counted at each XON). Without PFC mode (`pfc: false`) the node has
//! no ports and keeps the counters at 0.
//!
//! **Deviations.** The XOFF and XON levels are measured on each ingress's bytes, not on the
//! egress queue seed 003 names (docs/spec-findings.md finding 15); only the REQ data priority
//! (2) is paused and sent.

use hwsim_hw::{
    Binder, BuildResult, CombOut, Component, CounterDecl, CounterId, Ctx, In, Out, PortDecl, StreamIn, StreamOut, Wake,
};
use hwsim_ports::{PfcChange, PfcFrame, PfcPause, UInt, MAX_SWITCH_PORTS};
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
        "PFC XOFFs received that paused a port's REQ data",
    ),
    CounterDecl::new(
        "pfc_watchdog_fired",
        "events",
        "pauses ignored by the PFC watchdog after `pfc_watchdog` ns in force",
    ),
    CounterDecl::new("p*_pfc_xoff", "frames", "PFC XOFF frames sent out of port *"),
    CounterDecl::new(
        "p*_pfc_paused_cycles",
        "cycles",
        "cycles port * was paused by PFC, counted at each XON",
    ),
];

/// The tables that make up this kind's counters.
pub const COUNTER_TABLES: &[&[CounterDecl]] = &[COUNTERS];

/// Parameters (the switch fills them in from its own: `pfc`, the levels in bytes, `pfc_watchdog`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Ports, 1..=64.
    pub ports: u32,
    /// PFC mode: without it the node has no ports.
    pub pfc: bool,
    /// XOFF level, bytes: an XOFF when a port's ingress bytes pass it.
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
            xoff: s.xoff_bytes(),
            xon: s.xon_bytes(),
            watchdog: s.pfc_watchdog,
        }
    }
}

/// Refuses out-of-range parameters naming the parameter.
fn check(p: &Params) -> Result<(), String> {
    if p.ports == 0 || p.ports as usize > MAX_SWITCH_PORTS {
        return Err(format!("ports = {}: must be in 1..=64", p.ports));
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

/// The core's side of the node's wiring for port `k`: the pause it reads in its process 0, the
/// ingress bytes it shows after its process 1.
pub fn core_side(k: u32) -> Vec<PortDecl> {
    vec![
        PortDecl::comb_input::<UInt<1>>(&format!("paused{k}"))
            .doc("port k may not start REQ data frames this cycle (PFC), from the PFC node"),
        PortDecl::comb_output::<UInt<48>>(&format!("ingress_bytes{k}"))
            .process(1)
            .level()
            .doc("data bytes held in the switch that came in on port k (PFC's accounting)"),
    ]
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
            PortDecl::comb_output::<UInt<1>>(&format!("paused{k}"))
                .doc("port k is paused for REQ data this cycle (an XOFF in force, the watchdog not fired)"),
        );
        v.push(
            PortDecl::comb_input::<UInt<48>>(&format!("ingress_bytes{k}"))
                .process(1)
                .doc("data bytes held in the switch that came in on port k, from the core"),
        );
    }
    v
}

/// One port's PFC state and ports.
struct Port {
    pfc_in: StreamIn<PfcFrame>,
    pfc_out: StreamOut<PfcFrame>,
    wave: Out<UInt<2>>,
    paused_out: CombOut<UInt<1>>,
    held: In<UInt<48>>,
    /// An XOFF we sent upstream on this port is in force.
    xoff_sent: bool,
    /// Paused by the downstream neighbour (and since when).
    pause: PfcPause,
    /// The watchdog fired for the pause in force: ignored until the XON.
    watchdog_fired: bool,
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
                held: b.input(&format!("ingress_bytes{k}"))?,
                xoff_sent: false,
                pause: PfcPause::default(),
                watchdog_fired: false,
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
    /// they decide whether the port is paused this cycle (and when the watchdog would fire).
    fn receive(&mut self, ctx: &mut Ctx<'_>, k: usize, now: u64) {
        let port = &mut self.ports[k];
        // PFC from the neighbour on this port: XOFF / XON of the REQ data priority.
        while let Some(f) = port.pfc_in.pop() {
            match port.pause.receive(f, now) {
                PfcChange::Paused => ctx.count(self.c_pauses_rx, 1),
                PfcChange::Resumed(cycles) => {
                    port.watchdog_fired = false;
                    ctx.count(port.c_paused, cycles);
                }
                PfcChange::None => {}
            }
        }
        port.wake = None;
        if let Some(t) = port.pause.since {
            if self.p.watchdog > 0 && !port.watchdog_fired {
                if now >= t + self.p.watchdog {
                    port.watchdog_fired = true;
                    ctx.count(self.c_watchdog, 1);
                } else {
                    port.wake = Some(t + self.p.watchdog);
                }
            }
        }
        let paused = port.pause.is_paused() && !port.watchdog_fired;
        port.paused_out.set(UInt::wrap(paused as u64));
    }

    /// The XOFF / XON frames to the neighbours this cycle. True if one could not be sent (its
    /// stream full): it is tried again next cycle.
    fn send(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut retry = false;
        let mask = 1 << PfcFrame::REQ_DATA_PRIO;
        let (xoff, xon) = (self.p.xoff, self.p.xon);
        for port in &mut self.ports {
            let held = port.held.get().0;
            let want = if !port.xoff_sent && held > xoff {
                Some(true)
            } else if port.xoff_sent && held <= xon {
                Some(false)
            } else {
                None
            };
            if let Some(pause) = want {
                if port.pfc_out.can_push() {
                    port.pfc_out.push(PfcFrame { prio_mask: mask, pause });
                    port.xoff_sent = pause;
                    if pause {
                        ctx.count(self.c_xoff, 1);
                        ctx.count(port.c_xoff, 1);
                    } else {
                        ctx.count(self.c_xon, 1);
                    }
                } else {
                    retry = true;
                }
            }
            // The state on the waves: bit 0 XOFF sent upstream, bit 1 paused by downstream.
            let v = port.xoff_sent as u64 | (port.pause.is_paused() as u64) << 1;
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
        // Process 1 follows in this cycle; the watchdogs' deadlines stand as this one's hint.
        Wake::earliest(self.ports.iter().filter_map(|p| p.wake))
    }

    /// Process 1: XOFF / XON from the ingress bytes the core shows after its departures.
    fn process(&mut self, _p: u32, ctx: &mut Ctx<'_>) -> Wake {
        Wake::next_cycle_if(self.send(ctx))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_hw::Harness;

    fn bench(watchdog: u64) -> Harness {
        let p = Params {
            ports: 2,
            pfc: true,
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
        assert_eq!(h.peek::<UInt<1>>("paused1").0, 1);
        assert_eq!(h.peek::<UInt<1>>("paused0").0, 0, "only the port it came in on");
        h.steps(9).unwrap(); // cycle 10 done: 9 ns into the pause
        assert_eq!(h.peek::<UInt<1>>("paused1").0, 1);
        h.step().unwrap(); // cycle 11: 10 ns since the XOFF of 1
        assert_eq!(h.peek::<UInt<1>>("paused1").0, 0, "the watchdog ignores the pause");
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
            h.poke("ingress_bytes0", UInt::<48>::wrap(bytes));
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
}
