//! Test helpers shared by the RX modules' unit tests (psn_check, ack_merge, rx): frames, a
//! cycle-by-cycle driver and readers of the logged output streams.

use hwsim_hw::{Cycle, Harness, StreamNet, Value};
use hwsim_ports::{ChipId, CreditMsg, Ctrl, DataFrame, Psn, QpId, RxAccepted, RxCtrl};

pub fn qp(v: u16) -> QpId {
    QpId::new(v).unwrap()
}

pub fn psn(v: u16) -> Psn {
    Psn::new(v).unwrap()
}

/// A frame of `bytes` payload from `src` on `qp`, first PSN `first`, every packet carried.
pub fn frame(src: ChipId, q: u16, first: u16, bytes: u32) -> DataFrame {
    DataFrame {
        src,
        qp: qp(q),
        first_psn: psn(first),
        ..DataFrame::whole(bytes, 1344, 50)
    }
}

/// Drives `rows` (push cycle, message; cycles ascending, at most one per cycle) onto `port` and
/// steps one cycle at a time until `end`.
pub fn drive_port<T: Value>(h: &mut Harness, port: &str, rows: &[(Cycle, T)], end: Cycle) {
    let mut rows = rows.iter().peekable();
    while h.now() < end {
        if let Some((_, m)) = rows.next_if(|(c, _)| *c == h.now()) {
            assert!(h.push(port, m.clone()), "{port} full at {}", h.now());
        }
        h.step().unwrap();
    }
    assert!(rows.next().is_none(), "rows after the end");
}

/// [`drive_port`] on `data`.
pub fn drive(h: &mut Harness, rows: &[(Cycle, DataFrame)], end: Cycle) {
    drive_port(h, "data", rows, end);
}

/// The pushes logged on the DUT's stream `port`.
pub fn log<T: Value>(h: &Harness, port: &str) -> Vec<(Cycle, T)> {
    let net = h.sim().net(&format!("dut.{port}")).unwrap();
    let net = net.as_any().downcast_ref::<StreamNet<T>>().unwrap();
    let l = net.log();
    l.as_ref().unwrap().clone()
}

/// The control stream as (cycle, "ACK"/"NAK"/"CNP", qp, psn): the RX's `ctrl` stream, or a
/// PSN check's or ACK MERGE's writes into the control queue.
pub fn ctrls(h: &Harness) -> Vec<(Cycle, &'static str, u16, u16)> {
    let net = h.sim().net("dut.ctrl").unwrap();
    let msgs: Vec<(Cycle, Ctrl)> = if net.as_any().is::<StreamNet<RxCtrl>>() {
        log::<RxCtrl>(h, "ctrl").into_iter().map(|(c, m)| (c, m.ctrl)).collect()
    } else {
        log::<Ctrl>(h, "ctrl")
    };
    msgs.into_iter()
        .map(|(c, m)| {
            assert_eq!((m.src, m.lg), (0, 0));
            let kind = if m.is_nak() {
                "NAK"
            } else if m.is_ack() {
                "ACK"
            } else {
                assert!(m.is_cnp());
                "CNP"
            };
            (c, kind, m.rh.qp().value(), m.rh.psn().value())
        })
        .collect()
}

/// The credit stream as (cycle, dst, vc, credits).
pub fn credits(h: &Harness) -> Vec<(Cycle, ChipId, u8, u16)> {
    log::<CreditMsg>(h, "credit")
        .into_iter()
        .map(|(c, m)| {
            assert_eq!((m.src, m.lg), (0, 0));
            (c, m.dst, m.vc, m.credits)
        })
        .collect()
}

pub fn counter(h: &Harness, name: &str) -> u64 {
    h.sim().counter(&format!("dut.{name}")).unwrap()
}

/// Runs `f` with event skip on and off; both must see the same counters and the same pushes on
/// the logged streams `ports` (of `ctrl`, `credit`, `charge`, `accepted`).
pub fn both_modes(f: impl Fn(bool) -> Harness, ports: &[&str]) {
    let a = f(true);
    let b = f(false);
    for p in ports {
        match *p {
            "ctrl" => assert_eq!(ctrls(&a), ctrls(&b)),
            "credit" => assert_eq!(credits(&a), credits(&b)),
            "charge" => assert_eq!(log::<CreditMsg>(&a, p), log::<CreditMsg>(&b, p)),
            "accepted" => assert_eq!(log::<RxAccepted>(&a, p), log::<RxAccepted>(&b, p)),
            other => panic!("no reader for `{other}`"),
        }
    }
    let ca: Vec<_> = a.sim().counters().collect();
    let cb: Vec<_> = b.sim().counters().collect();
    assert_eq!(ca, cb);
}
