//! PFC mode (`pfc: true`; seed 003: PFC and CBFC are exclusive, in PFC mode the switch takes
//! part): an XOFF / XON received on a port pauses / resumes its REQ data (the watchdog ignores a
//! pause in force longer than `pfc_watchdog`), the ingress accounting sends XOFF above
//! the XOFF level and XON at the XON level (`Params::xoff_bytes`, `xon_bytes`) to the neighbour feeding the port; the `pfc{k}` waves.

use hwsim_hw::{Ctx, Cycle};
use hwsim_ports::{PfcChange, PfcFrame, UInt};

use super::port::Port;
use super::L2Switch;

impl Port {
    /// The PFC state on the waves: bit 0 XOFF sent upstream, bit 1 paused by downstream.
    pub(super) fn show_pfc(&mut self) {
        let v = self.xoff_sent as u64 | (self.pause.is_paused() as u64) << 1;
        if let Some((_, _, sig)) = self.pfc_io.as_mut() {
            sig.update(UInt::wrap(v));
        }
    }
}

impl L2Switch {
    /// The PFC frames from the neighbour on port `o` this cycle, then the watchdog: together
    /// they decide whether the port is paused this cycle (and when the watchdog would fire).
    pub(super) fn pfc_receive(&mut self, ctx: &mut Ctx<'_>, o: usize, now: Cycle) {
        let port = &mut self.ports[o];
        // PFC from the neighbour on this port: XOFF / XON of the REQ data priority.
        while let Some(f) = port.pfc_io.as_mut().and_then(|io| io.0.pop()) {
            match port.pause.receive(f, now) {
                PfcChange::Paused => ctx.count(self.c_pauses_rx, 1),
                PfcChange::Resumed(cycles) => {
                    port.watchdog_fired = false;
                    ctx.count(port.c_paused, cycles);
                }
                PfcChange::None => {}
            }
        }
        port.pfc_wake = None;
        if let Some(t) = port.pause.since {
            if self.p.pfc_watchdog > 0 && !port.watchdog_fired {
                if now >= t + self.p.pfc_watchdog {
                    port.watchdog_fired = true;
                    ctx.count(self.c_watchdog, 1);
                } else {
                    port.pfc_wake = Some(t + self.p.pfc_watchdog);
                }
            }
        }
        port.paused = port.pause.is_paused() && !port.watchdog_fired;
    }

    /// The XOFF / XON frames to the neighbours this cycle (PFC mode). True if one could not be
    /// sent (its stream full): it is tried again next cycle.
    pub(super) fn pfc_send(&mut self, ctx: &mut Ctx<'_>) -> bool {
        let mut retry = false;
        let mask = 1 << PfcFrame::REQ_DATA_PRIO;
        let (xoff, xon) = (self.p.xoff_bytes(), self.p.xon_bytes());
        for k in 0..self.ports.len() {
            let held = self.ingress[k];
            let port = &mut self.ports[k];
            let want = if !port.xoff_sent && held > xoff {
                Some(true)
            } else if port.xoff_sent && held <= xon {
                Some(false)
            } else {
                None
            };
            let Some((_, out, _)) = port.pfc_io.as_mut() else {
                continue;
            };
            if let Some(pause) = want {
                if out.can_push() {
                    out.push(PfcFrame { prio_mask: mask, pause });
                    port.xoff_sent = pause;
                    if pause {
                        ctx.count(self.c_xoff, 1);
                        ctx.count(port.c_xoff, 1);
                    } else {
                        ctx.count(self.c_xon, 1);
                    }
                    port.show_pfc();
                } else {
                    retry = true;
                }
            }
        }
        retry
    }
}
