//! The PSN check's ports around the core (seed 000 «RX 侧设计», «credit 返还», «ECN 检测与 CNP
//! 生成»): `data` in; what each arrival made out, in its cycle: `accepted` (to ACK MERGE), `ce`
//! (to the CNP generation) and `charge` (to the credit return); the counters of every arrival.

use hwsim_hw::{Binder, CounterId, Ctx, PortDecl, StreamIn, StreamOut};
use hwsim_ports::{CeMark, CreditMsg, DataFrame, RxAccepted};

use crate::rclink::credit_return::CREDIT_FIELD_MAX;
use crate::rclink::rx_ctrl::{CtrlQueue, CHECK_WRITES};

use super::PsnCheck;

/// The PSN check's counters.
struct Counters {
    rx_frames: CounterId,
    lost: CounterId,
    data_latency_max: CounterId,
    rx_pkts: CounterId,
    rx_payload: CounterId,
    dup: CounterId,
    ooo: CounterId,
    first_byte: CounterId,
    last_byte: CounterId,
    type2_frames: CounterId,
    type2_dropped: CounterId,
}

/// The PSN check's data input and per-arrival outputs with its counters.
pub struct PsnCheckIo {
    data: StreamIn<DataFrame>,
    accepted: StreamOut<RxAccepted>,
    ce: StreamOut<CeMark>,
    charge: StreamOut<CreditMsg>,
    counters: Counters,
}

impl PsnCheckIo {
    /// Port declarations of `data`, `accepted`, `ce` and `charge`.
    pub fn ports() -> Vec<PortDecl> {
        vec![
            PortDecl::stream_in::<DataFrame>("data", 8)
                .doc("received data frames (from the rx_cap), checked at arrival"),
            PortDecl::comb_stream_out::<RxAccepted>("accepted")
                .width(CHECK_WRITES)
                .doc("accepted packets and immediate ACKs, one per arrival, to ACK MERGE in the same cycle"),
            PortDecl::comb_stream_out::<CeMark>("ce").width(CHECK_WRITES).doc(
                "accepted data packets marked CE, one message per arrival, to the CNP generation in the same cycle",
            ),
            PortDecl::comb_stream_out::<CreditMsg>("charge")
                .width(CHECK_WRITES)
                .doc(
                "CBFC credits the arrival's data packets used, one per arrival, to the credit return in the same cycle",
            ),
        ]
    }

    /// Binds the ports and registers the counters.
    pub fn bind(b: &mut Binder) -> Result<PsnCheckIo, String> {
        Ok(PsnCheckIo {
            data: b.stream_in("data")?,
            accepted: b.stream_out("accepted")?,
            ce: b.stream_out("ce")?,
            charge: b.stream_out("charge")?,
            counters: Counters {
                rx_frames: b.counter("rx_frames"),
                lost: b.counter("lost_pkts"),
                data_latency_max: b.counter("data_latency_max"),
                rx_pkts: b.counter("rx_pkts"),
                rx_payload: b.counter("rx_payload_bytes"),
                dup: b.counter("dup_pkts"),
                ooo: b.counter("ooo_pkts"),
                first_byte: b.counter("first_byte_at"),
                last_byte: b.counter("last_byte_at"),
                type2_frames: b.counter("type2_frames"),
                type2_dropped: b.counter("type2_dropped"),
            },
        })
    }

    /// Checks every frame visible on `data` (each arrived now; a push wakes us the next cycle)
    /// and hands on what each arrival made: ACK MERGE's news on `accepted`, its accepted CE
    /// packets on `ce`, its credits on `charge`, the frame to `delivered` when
    /// whole. A malformed frame is a violation.
    pub fn receive(
        &mut self,
        ctx: &mut Ctx<'_>,
        core: &mut PsnCheck,
        ctrl: &mut CtrlQueue,
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
            let c = match core.receive(&f, ctrl) {
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
                self.accepted.push(m);
            }
            if c.ce > 0 {
                self.ce.push(CeMark {
                    src: f.src,
                    qp: f.qp,
                    pkts: c.ce,
                    ts: f.ts,
                });
            }
            // A charge fits the message's 15-bit field (in a system at most 255 packets of 44
            // credits, 1 344 + 50 bytes at 32 B a credit); a larger one goes in pieces.
            let mut left = c.credits;
            while left > 0 {
                let n = left.min(CREDIT_FIELD_MAX);
                left -= n;
                self.charge.push(CreditMsg {
                    src: core.src.chip,
                    dst: f.src,
                    lg: core.src.lg,
                    vc: c.credit_vc,
                    credits: n as u16,
                    sent_at: 0,
                });
            }
            if c.delivered {
                delivered(&f);
            }
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
