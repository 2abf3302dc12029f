//! Framing of the RC Link TX (seed 000 «报文格式», «打包延迟与 MAC Credit»; seed 003 «报文格式»): the
//! one place a granted frame becomes the `DataFrame` the MAC sends. The slot FIFO (TYPE1: PSN,
//! Go-Back-N) and the TYPE2 path (multicast: no PSN) both hand what they decided — which packets,
//! to whom, under which header — to [`Framer::frame`], so the rules that are the link's and not
//! the sender's live here once: the origin fields (`src`, `lg`, `pkt_ovhd`, `max_payload`), the
//! ECN codepoint (ECT(0) only where the header format carries an IP header and the sender is
//! ECN-capable), and the grant stamps (`sent_at` = the grant cycle, which the MAC restamps when
//! the frame leaves; the RH timestamp `ts` in ns, which the ACK echoes for the round trip).
//!
//! No ports and no timing of its own: a pure function of its arguments.

use hwsim_ports::{ChipId, DataFrame, Ecn, HeaderTags, LgId, PaxiFlit, Psn, QpId, Rh};

/// What the sender decided about one frame (or run of its packets) it was granted.
#[derive(Clone, Copy, Debug)]
pub struct Granted {
    /// Destination chip or multicast group address.
    pub dst: ChipId,
    /// Queue pair.
    pub qp: QpId,
    /// PSN of the first packet sent (TYPE2: zero, it has no PSN).
    pub first_psn: Psn,
    /// Index of that packet within the frame.
    pub first_idx: u8,
    /// Packets sent.
    pub npkts: u8,
    /// Payload bytes of the whole frame.
    pub frame_bytes: u32,
    /// Transaction id (what `FrameDone` names).
    pub txn: u64,
    /// Frame index within the transaction.
    pub frame_seq: u32,
    /// The header fields (format, PCP, DSCP) of this traffic class.
    pub hdr: HeaderTags,
    /// Whether a switch may mark it (TYPE1 under DCQCN; TYPE2 has its own rate control).
    pub ecn_capable: bool,
    /// The PAXI flit it carries.
    pub paxi: PaxiFlit,
}

/// The link's part of every frame: who sends and how packets are cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Framer {
    /// This chip.
    pub src: ChipId,
    /// This link group.
    pub lg: LgId,
    /// Per-packet header overhead, bytes.
    pub pkt_ovhd: u16,
    /// Largest packet payload, bytes.
    pub max_payload: u16,
}

impl Framer {
    /// The wire frame of a grant at cycle `now`.
    pub fn frame(&self, g: &Granted, now: u64) -> DataFrame {
        DataFrame {
            src: self.src,
            dst: g.dst,
            lg: self.lg,
            qp: g.qp,
            first_psn: g.first_psn,
            first_idx: g.first_idx,
            npkts: g.npkts,
            frame_bytes: g.frame_bytes,
            max_payload: self.max_payload,
            pkt_ovhd: self.pkt_ovhd,
            txn: g.txn,
            frame_seq: g.frame_seq,
            ecn: if g.ecn_capable && g.hdr.format.carries_ecn() {
                Ecn::Ect0
            } else {
                Ecn::NotEct
            },
            sent_at: now,
            ts: Rh::timestamp_from_ns(now),
            lost: 0,
            hdr: g.hdr,
            paxi: g.paxi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hwsim_ports::{FrameFormat, FrameLayout};

    fn granted(format: FrameFormat, ecn_capable: bool) -> Granted {
        Granted {
            dst: 3,
            qp: QpId::new(5).unwrap(),
            first_psn: Psn::new(7).unwrap(),
            first_idx: 2,
            npkts: 1,
            frame_bytes: 4096,
            txn: 9,
            frame_seq: 1,
            hdr: HeaderTags::for_layout(FrameLayout::new(format, false, false).unwrap(), 2),
            ecn_capable,
            paxi: PaxiFlit::default(),
        }
    }

    #[test]
    fn only_an_ecn_capable_frame_with_an_ip_header_is_ect0_and_grants_are_stamped() {
        let fr = Framer {
            src: 1,
            lg: 4,
            pkt_ovhd: 50,
            max_payload: 1344,
        };
        let f = fr.frame(&granted(FrameFormat::Standard, true), 1000);
        assert_eq!(f.ecn, Ecn::Ect0);
        assert_eq!((f.src, f.lg, f.pkt_ovhd, f.max_payload), (1, 4, 50, 1344));
        assert_eq!((f.first_psn, f.first_idx, f.sent_at), (Psn::new(7).unwrap(), 2, 1000));
        assert_eq!(f.ts, Rh::timestamp_from_ns(1000));
        assert_eq!(fr.frame(&granted(FrameFormat::Standard, false), 0).ecn, Ecn::NotEct);
        assert_eq!(fr.frame(&granted(FrameFormat::AfhGen1, true), 0).ecn, Ecn::NotEct);
    }
}
