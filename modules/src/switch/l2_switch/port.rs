//! One port of the switch: its streams in and out, the ingress pipeline toward it as an output,
//! its output queue (`fabric: output_queued`), its serializer at the port rate, its control and
//! credit queues, whether PFC pauses it and its counters. `build` binds one per port.

use std::collections::VecDeque;

use hwsim_hw::{Binder, CounterId, Cycle, In, Out, StreamIn, StreamOut};
use hwsim_ports::{CreditMsg, Ctrl, DataFrame, RoutedCredit, RoutedCtrl, RoutedFrame, SerializerClock, UInt};

use super::Params;

/// Where a data frame in the switch came from: its input port, and the priority and VOQ level
/// the ingress classified it into (what PFC accounts it by, and its counters at departure).
#[derive(Clone, Copy, Debug)]
pub(super) struct Tag {
    pub(super) inp: u8,
    pub(super) level: u8,
    pub(super) prio: u8,
}

impl Tag {
    /// Whether `paused_levels` (bit l = level l) holds this frame back.
    pub(super) fn held_by(&self, paused_levels: u8) -> bool {
        paused_levels & 1 << self.level != 0
    }
}

/// One output port.
pub(super) struct Port {
    /// Input k's forwarding decisions of this cycle, from the ingress node.
    pub(super) fwd: StreamIn<RoutedFrame>,
    pub(super) fwd_ctrl: StreamIn<RoutedCtrl>,
    pub(super) fwd_cr: StreamIn<RoutedCredit>,
    pub(super) req_out: StreamOut<DataFrame>,
    pub(super) rsp_out: StreamOut<Ctrl>,
    pub(super) cr_out: StreamOut<CreditMsg>,
    pub(super) q_sig: Out<UInt<32>>,
    /// PFC mode: the priorities the port may not start data frames of, from the PFC node
    /// (`paused{k}`, bit p = priority p).
    pub(super) paused_in: Option<In<UInt<8>>>,
    /// This cycle: the VOQ levels those priorities map to (bit l = level l; read in process 0).
    pub(super) paused_levels: u8,
    pub(super) c_ingress_peak: CounterId,
    /// Data through the ingress pipeline: (ready cycle, arrival cycle, origin, frame).
    pub(super) data_pipe: VecDeque<(Cycle, Cycle, Tag, DataFrame)>,
    /// Data queued for the link: (arrival cycle, origin, frame).
    pub(super) queue: VecDeque<(Cycle, Tag, DataFrame)>,
    /// Frames being / done serializing: (end cycle, arrival cycle, origin, frame).
    pub(super) on_wire: VecDeque<(Cycle, Cycle, Tag, DataFrame)>,
    pub(super) clock: SerializerClock,
    pub(super) queued_bytes: u64,
    pub(super) rsp: VecDeque<(Cycle, Ctrl)>,
    pub(super) cr: VecDeque<(Cycle, CreditMsg)>,
    /// Per-port counters: frames and payload bytes out, drops, ECN marks, peak queue bytes.
    pub(super) c_frames: CounterId,
    pub(super) c_bytes: CounterId,
    pub(super) c_drops: CounterId,
    pub(super) c_marks: CounterId,
    pub(super) c_peak: CounterId,
    pub(super) c_cut: CounterId,
    /// Every data frame's residence (arrival to departure, cycles) on this output, for its
    /// percentiles (one entry per departure, not per cycle), and their counters.
    pub(super) residences: Vec<u64>,
    pub(super) c_res_pct: [CounterId; 3],
}

impl Port {
    /// Binds port `k`'s streams, waves and counters.
    pub(super) fn bind(p: &Params, k: u32, b: &mut Binder) -> Result<Port, String> {
        Ok(Port {
            fwd: b.stream_in(&format!("fwd{k}"))?,
            fwd_ctrl: b.stream_in(&format!("fwd_ctrl{k}"))?,
            fwd_cr: b.stream_in(&format!("fwd_cr{k}"))?,
            req_out: b.stream_out(&format!("e{k}_req_out"))?,
            rsp_out: b.stream_out(&format!("e{k}_rsp_out"))?,
            cr_out: b.stream_out(&format!("e{k}_cr_out"))?,
            q_sig: b.output(&format!("q_bytes{k}"))?,
            paused_in: if p.pfc {
                Some(b.input(&format!("paused{k}"))?)
            } else {
                None
            },
            paused_levels: 0,
            c_ingress_peak: b.counter(&format!("p{k}_ingress_peak_bytes")),
            data_pipe: VecDeque::new(),
            queue: VecDeque::new(),
            on_wire: VecDeque::new(),
            clock: SerializerClock::new(p.rate),
            queued_bytes: 0,
            rsp: VecDeque::new(),
            cr: VecDeque::new(),
            c_frames: b.counter(&format!("p{k}_frames")),
            c_bytes: b.counter(&format!("p{k}_bytes")),
            c_drops: b.counter(&format!("p{k}_drops")),
            c_marks: b.counter(&format!("p{k}_ecn_marks")),
            c_peak: b.counter(&format!("p{k}_peak_bytes")),
            c_cut: b.counter(&format!("p{k}_cut_through")),
            residences: Vec::new(),
            c_res_pct: ["p50", "p99", "p999"].map(|q| b.counter(&format!("p{k}_residence_{q}"))),
        })
    }
}
