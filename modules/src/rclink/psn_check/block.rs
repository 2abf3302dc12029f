//! The standalone `psn_check` block (seed 000 «RX 侧设计»; appendix C «RX 参数»): the core with
//! its own `ctrl`, `accepted`, `ce`, `charge` (and `deliver`) ports, alone in a module testbench or as
//! `chip.lgK.rx.psn_check` in a system.

use std::collections::VecDeque;

use hwsim_hw::{Binder, BuildResult, Component, CounterId, Ctx, PortDecl, StreamOut, Wake};
use hwsim_ports::{DataFrame, RxCtrl};

use crate::rclink::rx_ctrl::{hand_over, CtrlQueue, CHECK_WRITES};

use super::{Params, PsnCheck, PsnCheckIo, PsnCheckView};

/// Port list: `data` in; the combinational `ctrl`, `accepted`, `ce` and `charge` (and `deliver`)
/// out; the state.
pub fn ports(p: &Params) -> Vec<PortDecl> {
    let mut v = PsnCheckIo::ports();
    v.push(
        PortDecl::comb_stream_out::<RxCtrl>("ctrl")
            .width(CHECK_WRITES)
            .doc("NAK / FACK ACK / dup re-ACK, every one made this cycle, to the control queue"),
    );
    if p.deliver {
        v.push(
            PortDecl::stream_out::<DataFrame>("deliver")
                .doc("whole frames accepted, in PSN order, to PAXI (with `deliver: true`)"),
        );
    }
    v.extend(PsnCheckView::ports(""));
    v
}

/// The `psn_check` block (alone in a module testbench, or `chip.lgK.rx.psn_check` in a system).
struct PsnCheckBlock {
    core: PsnCheck,
    io: PsnCheckIo,
    ctrl_q: CtrlQueue,
    ctrl: StreamOut<RxCtrl>,
    view: PsnCheckView,
    /// Frames delivered and not yet pushed on `deliver` (one push per cycle): the RC Link RX
    /// buffer (counter `deliver_peak`).
    deliver_q: VecDeque<DataFrame>,
    deliver: Option<StreamOut<DataFrame>>,
    /// The most frames waiting for `deliver` at once (0 without `deliver`).
    c_deliver_peak: CounterId,
}

/// Binds ports; refuses `lg` above 7.
pub fn build(p: &Params, b: &mut Binder) -> BuildResult {
    Ok(Box::new(PsnCheckBlock {
        core: PsnCheck::new(p)?,
        io: PsnCheckIo::bind(b)?,
        ctrl_q: CtrlQueue::default(),
        ctrl: b.stream_out("ctrl")?,
        view: PsnCheckView::bind("", b)?,
        deliver_q: VecDeque::new(),
        deliver: if p.deliver {
            Some(b.stream_out("deliver")?)
        } else {
            None
        },
        c_deliver_peak: b.counter("deliver_peak"),
    }))
}

impl Component for PsnCheckBlock {
    fn tick(&mut self, ctx: &mut Ctx<'_>) -> Wake {
        let now = ctx.now();
        // Every arrival through the check; what ACK MERGE must hear, the CE marks, the credit
        // charges and the control messages made go out in this cycle, in the order made (the
        // readers tick after us).
        let dq = &mut self.deliver_q;
        let delivering = self.deliver.is_some();
        self.io.receive(ctx, &mut self.core, &mut self.ctrl_q, |f| {
            if delivering {
                dq.push_back(*f);
            }
        });
        hand_over(&mut self.ctrl_q, &self.ctrl);
        let mut deliver_next = None;
        if let Some(d) = &self.deliver {
            let peak = self.c_deliver_peak;
            if self.deliver_q.len() as u64 > ctx.counter(peak) {
                ctx.set_counter(peak, self.deliver_q.len() as u64);
            }
            let mut pushed = false;
            if d.can_push() {
                if let Some(f) = self.deliver_q.pop_front() {
                    d.push(f);
                    pushed = true;
                }
            }
            // More next cycle if the stream keeps room; a full stream wakes us when it drains.
            if !self.deliver_q.is_empty() && d.space() > u32::from(pushed) {
                deliver_next = Some(now + 1);
            }
        }
        self.view.show(&self.core);
        Wake::earliest(deliver_next)
    }
}
