//! The PSN check core (seed 000 «PSN 校验与三种结果», «FACK», «credit 返还», «ECN 检测与 CNP
//! 生成»; seed 002 TYPE2): one arrival against its `(src, qp)` window — accept, NAK a gap, drop
//! a duplicate, FACK, the CE marks (for `cnp_gen`) — a TYPE2 copy's reassembly, and the credits
//! each arrival charges (for `credit_return`).

use std::collections::BTreeMap;

use hwsim_ports::{
    cbfc_cost, mcast_group, ChipId, DataFrame, Ecn, FlitKind, LgId, Psn, QpId, Rh, RxAccepted, TYPE2_VC,
};

use crate::rclink::rx_ctrl::{CtrlKind, CtrlQueue, RxSource};

use super::{Checked, Duplicate, Params, PsnCheck};

/// Why a frame cannot be checked, if it cannot.
fn malformed(f: &DataFrame, chip: ChipId, lg: LgId) -> Option<String> {
    // A TYPE2 copy keeps its group address: the routers delivered it here as a member.
    let member = f.paxi.kind == FlitKind::Mul && mcast_group(f.dst).is_some();
    if (f.dst != chip && !member) || f.lg != lg {
        return Some(format!(
            "frame for chip {} lg {} reached the RX of chip {chip} lg {lg}",
            f.dst, f.lg
        ));
    }
    if f.npkts == 0 {
        return Some("frame carries no packet".into());
    }
    if f.frame_bytes > 0 && f.max_payload == 0 {
        return Some("frame with payload has max_payload 0".into());
    }
    if u32::from(f.first_idx) + u32::from(f.npkts) > u32::from(f.frame_pkts()) {
        return Some(format!(
            "packets {}..{} beyond the frame's {}",
            f.first_idx,
            u32::from(f.first_idx) + u32::from(f.npkts),
            f.frame_pkts()
        ));
    }
    None
}

impl PsnCheck {
    /// A core with every window at EPSN 0; refuses `lg` above 7.
    pub fn new(p: &Params) -> Result<PsnCheck, String> {
        if p.lg > 7 {
            return Err(format!("lg {} out of range 0..=7", p.lg));
        }
        Ok(PsnCheck {
            src: RxSource { chip: p.chip, lg: p.lg },
            pkt_ovhd: p.pkt_ovhd,
            credit_size: p.credit_size,
            ack_bytes: p.ack_bytes,
            duplicate: p.duplicate,
            windows: BTreeMap::new(),
            type2: BTreeMap::new(),
            last: None,
        })
    }

    /// Checks every packet of the arriving frame `f`: NAK, FACK ACK and dup re-ACK go into
    /// `ctrl` in packet order, accepted CE-marked packets are counted in `ce`, the credits its
    /// data packets used in `credits`. A frame that cannot be checked (see [`malformed`]) is
    /// refused with the reason.
    pub fn receive(&mut self, f: &DataFrame, ctrl: &mut CtrlQueue) -> Result<Checked, String> {
        if let Some(why) = malformed(f, self.src.chip, self.src.lg) {
            return Err(format!("{why}: {f:?}"));
        }
        if f.paxi.kind == FlitKind::Mul {
            return Ok(self.receive_type2(f));
        }
        let key = (f.src, f.qp);
        let mut w = *self.windows.entry(key).or_default();
        let vc = f.qp.vc_bank().value();
        let mut c = Checked {
            credit_vc: vc,
            ..Checked::default()
        };
        let mut npkts = 0u8;
        let mut immediate_ack = false;
        let last = f.frame_pkts() - 1;
        for i in f.first_idx..f.first_idx + f.npkts {
            let psn = f.psn_of(i);
            let bytes = f.pkt_bytes(i);
            // `lost` has a bit for each of the first 8 packets carried; later ones are never lost.
            if f.lost
                .checked_shr(u32::from(i - f.first_idx))
                .is_some_and(|b| b & 1 != 0)
            {
                // Lost or corrupted on the wire: the MAC discards it (bad FCS), so the check
                // never sees it; it occupied the receive buffer, so its credit still returns.
                c.lost += 1;
                if bytes > 0 {
                    c.credits += cbfc_cost(bytes, self.pkt_ovhd, self.credit_size);
                }
                continue;
            }
            c.pkts += 1;
            if bytes == 0 {
                // FACK / tcredit: answered at once with a cumulative ACK, which also covers what
                // ACK MERGE holds; no credit (it used no data buffer), no CNP.
                if psn == w.epsn {
                    w.epsn = w.epsn.next();
                    c.delivered |= i == last;
                }
                immediate_ack = true;
                ctrl.push(
                    CtrlKind::Fack,
                    self.src
                        .ctrl(f.src, Rh::ack(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
                );
                continue;
            }
            c.credits += cbfc_cost(bytes, self.pkt_ovhd, self.credit_size);
            if psn == w.epsn {
                w.epsn = w.epsn.next();
                c.accepted_bytes += u64::from(bytes);
                npkts += 1;
                c.delivered |= i == last;
                // Congestion seen on data the receiver took in: a mark for the CNP generator.
                c.ce += u8::from(f.ecn == Ecn::Ce);
            } else if psn.after(w.epsn) {
                c.ooo += 1;
                if w.nak_for != Some(w.epsn) {
                    w.nak_for = Some(w.epsn);
                    ctrl.push(
                        CtrlKind::Nak,
                        self.src
                            .ctrl(f.src, Rh::nak(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
                    );
                }
            } else {
                c.dup += 1;
            }
        }
        if c.dup > 0 && self.duplicate == Duplicate::Ack {
            // The sender resent what we hold: its ACK was lost (or is late). Tell it where we are.
            immediate_ack = true;
            ctrl.push(
                CtrlKind::DupAck,
                self.src
                    .ctrl(f.src, Rh::ack(f.qp, w.epsn).with_timestamp(f.ts), self.ack_bytes),
            );
        }
        self.windows.insert(key, w);
        self.last = Some(key);
        c.accepted = (npkts > 0 || immediate_ack).then_some(RxAccepted {
            src: f.src,
            qp: f.qp,
            epsn: w.epsn,
            npkts,
            immediate_ack,
            ts: f.ts,
        });
        Ok(c)
    }

    /// A TYPE2 (multicast) frame (seed 002: «TYPE2 无 Go-Back-N 重传, 可靠性依赖 FEC»): no PSN,
    /// no window, no ACK, no CNP. Every packet returns its credit on the TYPE2 VC; the frame
    /// is delivered only whole — a lost packet loses the frame here (no retransmission), and
    /// the sender's multicast timeout reports it.
    fn receive_type2(&mut self, f: &DataFrame) -> Checked {
        let mut c = Checked {
            type2: true,
            credit_vc: TYPE2_VC,
            ..Checked::default()
        };
        let last = f.frame_pkts() - 1;
        let st = self.type2.entry(f.src).or_insert((0, true));
        for i in f.first_idx..f.first_idx + f.npkts {
            let bytes = f.pkt_bytes(i);
            let lost = f
                .lost
                .checked_shr(u32::from(i - f.first_idx))
                .is_some_and(|b| b & 1 != 0);
            c.credits += cbfc_cost(bytes, self.pkt_ovhd, self.credit_size) * u32::from(bytes > 0);
            if i == 0 {
                *st = (0, true);
            }
            // A packet missing before this one breaks the frame.
            st.1 &= i == st.0 && !lost;
            st.0 = i.saturating_add(1);
            if lost {
                c.lost += 1;
            } else {
                c.pkts += 1;
                c.accepted_bytes += u64::from(bytes);
            }
            c.delivered = i == last && st.1;
            c.type2_broken = i == last && !st.1;
        }
        c
    }

    /// EPSN of the window `(src, qp)` (0 for a window never seen).
    pub fn epsn(&self, src: ChipId, qp: QpId) -> Psn {
        self.windows.get(&(src, qp)).map_or(Psn::ZERO, |w| w.epsn)
    }

    /// The window the last arrival touched, its EPSN and whether a NAK for that EPSN is out.
    pub fn last_window(&self) -> Option<((ChipId, QpId), Psn, bool)> {
        let key = self.last?;
        let w = self.windows.get(&key)?;
        Some((key, w.epsn, w.nak_for == Some(w.epsn)))
    }
}
