//! The PSN check's ports towards the RX cap and the sender (seed 000 «credit 返还»): `data` in,
//! `credit` out, with the counters of every arrival; shared by the `psn_check` block and
//! `rclink_rx`.

use hwsim_hw::{Binder, CounterId, Ctx, Cycle, PortDecl, StreamIn, StreamOut};
use hwsim_ports::{CeMark, CreditMsg, DataFrame, RxAccepted};

use crate::rclink::rx_ctrl::CtrlQueue;

use super::PsnCheck;

/// The PSN check's counters (shared with `rclink_rx`, same names).
struct Counters {
    rx_frames: CounterId,
    lost: CounterId,
    data_latency_max: CounterId,
    rx_pkts: CounterId,
    rx_payload: CounterId,
    dup: CounterId,
    ooo: CounterId,
    credits: CounterId,
    first_byte: CounterId,
    last_byte: CounterId,
    type2_frames: CounterId,
    type2_dropped: CounterId,
}

/// The PSN check's data input and credit output with its counters, shared by the standalone
/// block and `rclink_rx`.
pub struct PsnCheckIo {
    data: StreamIn<DataFrame>,
    credit: StreamOut<CreditMsg>,
    counters: Counters,
    /// Whether `credit` had room at the last drive (for the wake-up).
    credit_free: bool,
}

impl PsnCheckIo {
    /// Port declarations of `data` and `credit`.
    pub fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::stream_in::<DataFrame>("data", 8)
                .doc("received data frames (from the rx_cap), checked at arrival"),
            PortDecl::stream_out::<CreditMsg>("credit").doc("CBFC credit returns per (src, vc) (MAC control path)"),
        ]
    }

    /// Binds `data` and `credit` and registers the counters.
    pub fn bind(b: &mut Binder) -> Result<PsnCheckIo, String> {
        Ok(PsnCheckIo {
            data: b.stream_in("data")?,
            credit: b.stream_out("credit")?,
            counters: Counters {
                rx_frames: b.counter("rx_frames"),
                lost: b.counter("lost_pkts"),
                data_latency_max: b.counter("data_latency_max"),
                rx_pkts: b.counter("rx_pkts"),
                rx_payload: b.counter("rx_payload_bytes"),
                dup: b.counter("dup_pkts"),
                ooo: b.counter("ooo_pkts"),
                credits: b.counter("credits_returned"),
                first_byte: b.counter("first_byte_at"),
                last_byte: b.counter("last_byte_at"),
                type2_frames: b.counter("type2_frames"),
                type2_dropped: b.counter("type2_dropped"),
            },
            credit_free: false,
        })
    }

    /// Checks every frame visible on `data` (each arrived now; a push wakes us the next cycle),
    /// hands what ACK MERGE must hear to `accepted` and its accepted CE packets to `ce`.
    /// A malformed frame is a violation.
    pub fn receive(
        &mut self,
        ctx: &mut Ctx<'_>,
        core: &mut PsnCheck,
        ctrl: &mut CtrlQueue,
        mut accepted: impl FnMut(RxAccepted),
        mut ce: impl FnMut(CeMark),
        mut delivered: impl FnMut(&DataFrame),
    ) {
        let now = ctx.now();
        let k = &self.counters;
        while let Some(f) = self.data.pop() {
            ctx.count(k.rx_frames, 1);
            // Data-path latency from the sender's MAC (0 = unstamped stimulus): with control
            // latency on the sender side it shows that control does not queue behind data.
            if f.sent_at != 0 && f.payload() > 0 {
                let lat = now.saturating_sub(f.sent_at);
                if lat > ctx.counter(k.data_latency_max) {
                    ctx.set_counter(k.data_latency_max, lat);
                }
            }
            let c = match core.receive(now, &f, ctrl) {
                Ok(c) => c,
                Err(why) => {
                    ctx.violation(why);
                    continue;
                }
            };
            ctx.count(k.lost, c.lost.into());
            if c.delivered && c.type2 {
                ctx.count(k.type2_frames, 1);
            }
            if c.type2_broken {
                ctx.count(k.type2_dropped, 1);
            }
            ctx.count(k.rx_pkts, c.pkts.into());
            ctx.count(k.dup, c.dup.into());
            ctx.count(k.ooo, c.ooo.into());
            if (c.dup > 0 || c.ooo > 0) && ctx.logs() {
                log_discard(ctx, &f, &c, core.epsn(f.src, f.qp));
            }
            if c.accepted_bytes > 0 {
                ctx.count(k.rx_payload, c.accepted_bytes);
                if ctx.counter(k.first_byte) == 0 {
                    ctx.set_counter(k.first_byte, now + 1);
                }
                ctx.set_counter(k.last_byte, now + 1);
            }
            if let Some(m) = c.accepted {
                accepted(m);
            }
            if c.ce > 0 {
                ce(CeMark {
                    src: f.src,
                    qp: f.qp,
                    pkts: c.ce,
                    ts: f.ts,
                });
            }
            if c.delivered {
                delivered(&f);
            }
        }
    }

    /// Pushes the oldest due credit return if `credit` has room.
    pub fn drive_credit(&mut self, ctx: &mut Ctx<'_>, core: &mut PsnCheck) {
        self.credit_free = self.credit.can_push();
        if !self.credit_free {
            return;
        }
        if let Some(mut m) = core.pop_credit(ctx.now()) {
            m.sent_at = ctx.now();
            self.credit.push(m);
            ctx.count(self.counters.credits, m.credits.into());
        }
    }

    /// When the credit output next needs a tick: the oldest return's due cycle, or next cycle
    /// if it is overdue and the stream had room (a full stream wakes us when it drains).
    pub fn next_due(&self, now: Cycle, core: &PsnCheck) -> Option<Cycle> {
        match core.next_credit_due() {
            Some(d) if d > now => Some(d),
            Some(_) if self.credit_free => Some(now + 1),
            _ => None,
        }
    }
}

/// The event log's line for packets the check discarded (out of line: off the arrival path).
#[cold]
#[inline(never)]
fn log_discard(ctx: &mut Ctx<'_>, f: &DataFrame, c: &super::Checked, epsn: hwsim_ports::Psn) {
    ctx.log(
        "drop",
        format_args!(
            "unit=data src={} qp={} psn={} out_of_order={} duplicate={} epsn={}",
            f.src,
            f.qp.value(),
            f.psn_of(f.first_idx).value(),
            c.ooo,
            c.dup,
            epsn.value()
        ),
    );
}
