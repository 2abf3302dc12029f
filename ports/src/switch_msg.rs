//! Values of the L2 switch model (seed 003): the cell that crosses the crossbar.

use hwsim_hw::{Trace, TraceField, TraceValue};
use serde::{Deserialize, Serialize};

/// A switch port number (up to 64 ports).
pub type PortId = u8;

/// Most switch ports: requests and matches are 64-bit masks.
pub const MAX_SWITCH_PORTS: usize = 64;

/// A fixed-size cell in a switch study (one crossbar slot): from input `src` to output `dst`,
/// born (arrived at the input) at cycle `born`.
///
/// Packed (17 bytes, no padding): a cell is copied as one 16-byte move and a byte. With the 7
/// bytes of padding of an aligned layout the compiler copied them too, as two overlapping
/// 4-byte moves, and the second load of every such copy through the stack could not be
/// forwarded from the two stores before it: a stall of some 15 cycles on every push, pop and
/// move of a cell (W1's profile: half of a stream commit's time, and the top of the switch's).
/// Fields are read by value (`{ cell.born }` where a reference would be taken).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[repr(C, packed)]
pub struct Cell {
    /// Cycle it arrived at the input (for the delay).
    pub born: u64,
    /// Per-input sequence number (order checks).
    pub seq: u32,
    /// Input port it arrived on.
    pub src: PortId,
    /// Output port it is for.
    pub dst: PortId,
    /// Priority class 0..=3 (3 = ACK/CNP, 2 = REQ data, 1 = RSP, 0 = other, seed 003).
    pub prio: u8,
    /// ECN-capable transport (the Standard format carries ECN; AFH formats do not, seed 003).
    pub ect: bool,
    /// Congestion experienced: marked by a switch egress (ECN RED).
    pub ce: bool,
}

impl Trace for Cell {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 6] = [
            TraceField::bits("src", 6),
            TraceField::bits("dst", 6),
            TraceField::bits("prio", 2),
            TraceField::bits("seq", 32),
            TraceField::bits("ect", 1),
            TraceField::bits("ce", 1),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.src as u64 & 63);
        out[1] = TraceValue::Bits(self.dst as u64 & 63);
        out[2] = TraceValue::Bits(self.prio as u64 & 3);
        out[3] = TraceValue::Bits(self.seq as u64);
        out[4] = TraceValue::Bits(self.ect as u64);
        out[5] = TraceValue::Bits(self.ce as u64);
    }
}

/// A PFC frame (IEEE 802.1Qbb, seed 003 «PFC 模式»): hop-by-hop, from a receiver to the
/// neighbour feeding it, pausing (XOFF) or resuming (XON) the priorities in `prio_mask`.
///
/// The model's simplification: an XOFF holds until the matching XON (the 802.1Qbb pause quanta
/// and their refresh are not modelled; a lost XON is what the receiver's PFC watchdog is for).
/// On the wire it is a 64 B MAC control frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcFrame {
    /// Priorities addressed (bit p = priority p; 8 priorities).
    pub prio_mask: u8,
    /// true = XOFF (pause), false = XON (resume).
    pub pause: bool,
}

impl PfcFrame {
    /// The priority the chips' data (TYPE1 REQ) travels at by default, the one priority PFC
    /// pauses unless a switch's `pfc_priorities` say otherwise: seed 003's VOQ mapping (ACK+CNP
    /// 3, REQ data 2, RSP 1, other 0; its PFC table gives REQ PCP 3~4 instead, finding 16).
    pub const REQ_DATA_PRIO: u8 = 2;
}

impl Trace for PfcFrame {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("prio_mask", 8), TraceField::bits("pause", 1)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.prio_mask as u64);
        out[1] = TraceValue::Bits(self.pause as u64);
    }
}

/// The receiving side of PFC, per priority: which priorities a pause is in force for, and
/// since when. The chips' routers and the switches both keep one per edge.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcPause {
    /// Per priority p, `since[p]`: paused since this cycle (an XOFF naming p arrived then and
    /// no XON naming p since).
    pub since: [Option<u64>; 8],
}

/// What a received PFC frame changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PfcChange {
    /// The priorities whose pause began (bit p = priority p).
    pub paused: u8,
    /// The priorities whose pause ended.
    pub resumed: u8,
    /// The cycles the ended pauses lasted, summed over their priorities.
    pub resumed_cycles: u64,
}

impl PfcPause {
    /// Applies a PFC frame received at `now` to each priority it names: an XOFF begins a pause
    /// not already in force, an XON ends one in force; a repeated XOFF or an XON while not
    /// paused changes nothing.
    pub fn receive(&mut self, f: PfcFrame, now: u64) -> PfcChange {
        let mut c = PfcChange::default();
        let mut m = f.prio_mask;
        while m != 0 {
            let p = m.trailing_zeros() as usize;
            m &= m - 1;
            match (f.pause, self.since[p]) {
                (true, None) => {
                    self.since[p] = Some(now);
                    c.paused |= 1 << p;
                }
                (false, Some(t)) => {
                    self.since[p] = None;
                    c.resumed |= 1 << p;
                    c.resumed_cycles += now - t;
                }
                _ => {}
            }
        }
        c
    }
    /// The priorities a pause is in force for (bit p = priority p).
    pub fn mask(&self) -> u8 {
        self.since
            .iter()
            .enumerate()
            .fold(0, |m, (p, s)| m | (s.is_some() as u8) << p)
    }
    /// Whether a pause is in force for any priority.
    pub fn is_paused(&self) -> bool {
        self.since.iter().any(Option::is_some)
    }
}

/// The header field a switch classifies a data frame on (seed 003 «QoS 分类»).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// VLAN PCP.
    #[default]
    Pcp,
    /// IP DSCP (Standard format only).
    Dscp,
}

/// A data frame's priority 0..=7 as a switch classifies it (seed 003 «QoS 分类»): the header
/// field it trusts (`Pcp`: the VLAN tag's PCP; `Dscp`: the DSCP's class selector, DSCP >> 3,
/// on Standard frames only, the AFH formats having no IP header and falling back to their PCP),
/// else the port's `default_priority`. The switch's ingress and the chips' routers (which pause
/// a frame by the priority their switch gives it) share it.
pub fn frame_priority(trust: Trust, default_priority: u8, f: &crate::DataFrame) -> u8 {
    let h = f.hdr;
    match (trust, h.pcp) {
        (Trust::Dscp, _) if h.format.carries_ecn() => (h.dscp.0 >> 3) as u8 & 7,
        (_, Some(pcp)) => pcp.0 as u8 & 7,
        _ => default_priority & 7,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(prio_mask: u8, pause: bool) -> PfcFrame {
        PfcFrame { prio_mask, pause }
    }

    #[test]
    fn a_pause_lasts_from_its_xoff_to_its_xon_per_priority() {
        let data = 1 << PfcFrame::REQ_DATA_PRIO;
        let mut p = PfcPause::default();
        let none = PfcChange::default();
        assert_eq!(p.receive(frame(data, false), 6), none, "an XON while not paused");
        assert_eq!(p.receive(frame(data, true), 10), PfcChange { paused: data, ..none });
        assert_eq!(p.receive(frame(data, true), 20), none, "a repeated XOFF");
        assert_eq!(p.mask(), data);
        // Another priority pauses on its own; one frame may name several.
        assert_eq!(
            p.receive(frame(1 << 3 | data, true), 22),
            PfcChange { paused: 1 << 3, ..none }
        );
        assert_eq!(p.mask(), 1 << 3 | data);
        assert_eq!(
            p.receive(frame(data, false), 35),
            PfcChange {
                resumed: data,
                resumed_cycles: 25,
                ..none
            }
        );
        assert_eq!(p.mask(), 1 << 3, "priority 3 stays paused");
        assert!(p.is_paused());
        assert_eq!(p.receive(frame(1 << 3, false), 40).resumed_cycles, 18);
        assert!(!p.is_paused());
    }

    #[test]
    fn a_frame_takes_the_trusted_field_else_the_port_default() {
        use crate::{DataFrame, FrameFormat, HeaderTags};
        let f = |format, pcp: Option<u64>, dscp| DataFrame {
            hdr: HeaderTags {
                format,
                pcp: pcp.map(crate::UInt::wrap),
                dscp: crate::UInt::wrap(dscp),
            },
            ..DataFrame::default()
        };
        let std_tagged = f(FrameFormat::Standard, Some(5), 1 << 3);
        assert_eq!(frame_priority(Trust::Pcp, 2, &std_tagged), 5);
        assert_eq!(frame_priority(Trust::Dscp, 2, &std_tagged), 1);
        let untagged = f(FrameFormat::Standard, None, 0);
        assert_eq!(frame_priority(Trust::Pcp, 2, &untagged), 2);
        assert_eq!(frame_priority(Trust::Pcp, 6, &untagged), 6);
    }
}

/// One input's crossbar request of a cycle (seed 003 «iSLIP 调度», «优先级感知调度»): per
/// priority level (the VOQ level: 3 ACK+CNP, 2 REQ data, 1 RSP, 0 TYPE2/3), the outputs the
/// input holds frames for, one bit per output. The switch pushes it, to its allocator, for each
/// input free to start a transfer that holds a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XbarRequest {
    /// Outputs requested at level l, `levels[l]`.
    pub levels: [u64; 4],
}

impl Trace for XbarRequest {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 4] = [
            TraceField::bits("l0", 64),
            TraceField::bits("l1", 64),
            TraceField::bits("l2", 64),
            TraceField::bits("l3", 64),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        for (o, m) in out.iter_mut().zip(self.levels) {
            *o = TraceValue::Bits(m);
        }
    }
}

/// The outputs' side of a cycle's crossbar requests, pushed with them: the outputs free to
/// start a frame (`free`), those PFC pauses per level (`paused[l]`: a pause in force for a
/// priority the switch's `tc_map` puts at level l), and the outputs where RSP matches before
/// REQ data this cycle (`rsp_first`, the egress WRR's turn), one bit per output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XbarOutputs {
    /// Outputs free to start a frame this cycle (serializer free within it, fewer than two
    /// frames on the wire).
    pub free: u64,
    /// Per level, the outputs PFC-paused for it.
    pub paused: [u64; 4],
    /// Outputs where level 1 (RSP) matches before level 2 (REQ data).
    pub rsp_first: u64,
}

impl XbarOutputs {
    /// The outputs level `l` may use: free and not paused for it.
    pub fn free_for(&self, l: usize) -> u64 {
        self.free & !self.paused[l]
    }
}

impl Trace for XbarOutputs {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 6] = [
            TraceField::bits("free", 64),
            TraceField::bits("paused_l0", 64),
            TraceField::bits("paused_l1", 64),
            TraceField::bits("paused_l2", 64),
            TraceField::bits("paused_l3", 64),
            TraceField::bits("rsp_first", 64),
        ];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.free);
        for (o, m) in out[1..5].iter_mut().zip(self.paused) {
            *o = TraceValue::Bits(m);
        }
        out[5] = TraceValue::Bits(self.rsp_first);
    }
}

/// A crossbar grant to one input: the output it is matched to and the level of the VOQ whose
/// head frame crosses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct XbarGrant {
    /// Output port.
    pub out: PortId,
    /// VOQ level 0..=3.
    pub level: u8,
}

impl Trace for XbarGrant {
    fn fields() -> &'static [TraceField] {
        const F: [TraceField; 2] = [TraceField::bits("out", 6), TraceField::bits("level", 2)];
        &F
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.out as u64 & 63);
        out[1] = TraceValue::Bits(self.level as u64 & 3);
    }
}

/// `head` then `T`'s own fields, built once: the trace of a message that carries a `T` and a
/// few fields of its own (a switch's forwarding decision around the frame it decides on).
fn around<T: Trace>(cell: &'static std::sync::OnceLock<Vec<TraceField>>, head: &[TraceField]) -> &'static [TraceField] {
    cell.get_or_init(|| head.iter().chain(T::fields()).copied().collect())
}

/// A data frame as the switch's ingress hands it to the buffer (seed 003 «入口处理»: parse,
/// classify, lookup): the outputs it goes to, one bit per output (one for a unicast frame,
/// the group's ports for a multicast one), its priority 0..=7 (from the trusted header field,
/// what PFC pauses and accounts by) and its VOQ level (the priority's traffic class, through
/// the switch's `tc_map`), then the frame unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutedFrame {
    /// The outputs a copy of the frame goes to.
    pub outs: u64,
    /// VOQ level 0..=3.
    pub level: u8,
    /// Priority 0..=7.
    pub prio: u8,
    /// The frame as it arrived.
    pub frame: crate::DataFrame,
}

impl Trace for RoutedFrame {
    fn fields() -> &'static [TraceField] {
        static F: std::sync::OnceLock<Vec<TraceField>> = std::sync::OnceLock::new();
        around::<crate::DataFrame>(
            &F,
            &[
                TraceField::bits("outs", 64),
                TraceField::bits("level", 2),
                TraceField::bits("prio", 3),
            ],
        )
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.outs);
        out[1] = TraceValue::Bits(self.level as u64 & 3);
        out[2] = TraceValue::Bits(self.prio as u64 & 7);
        self.frame.sample(&mut out[3..]);
    }
}

/// A control message (ACK/NAK/CNP) as the switch's ingress hands it on: the output its route
/// names, then the message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutedCtrl {
    /// Output port.
    pub out: PortId,
    /// The message as it arrived.
    pub msg: crate::Ctrl,
}

impl Trace for RoutedCtrl {
    fn fields() -> &'static [TraceField] {
        static F: std::sync::OnceLock<Vec<TraceField>> = std::sync::OnceLock::new();
        around::<crate::Ctrl>(&F, &[TraceField::bits("out", 6)])
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.out as u64 & 63);
        self.msg.sample(&mut out[1..]);
    }
}

/// A CBFC credit return as the switch's ingress hands it on: the output its route names, then
/// the message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RoutedCredit {
    /// Output port.
    pub out: PortId,
    /// The message as it arrived.
    pub msg: crate::CreditMsg,
}

impl Trace for RoutedCredit {
    fn fields() -> &'static [TraceField] {
        static F: std::sync::OnceLock<Vec<TraceField>> = std::sync::OnceLock::new();
        around::<crate::CreditMsg>(&F, &[TraceField::bits("out", 6)])
    }
    fn sample(&self, out: &mut [TraceValue]) {
        out[0] = TraceValue::Bits(self.out as u64 & 63);
        self.msg.sample(&mut out[1..]);
    }
}
