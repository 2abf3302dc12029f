//! The event classes blocks report to the event log (`hwsim --log`, `hw::Ctx::log`): the one
//! table `--log help` prints and `--log` checks a class name against.

/// `(class, who reports it and what)`.
pub const EVENT_CLASSES: &[(&str, &str)] = &[
    (
        "drop",
        "a frame or message lost: a PhyLink fault rule (data, ACK/NAK/CNP, credit), a switch buffer full, the PSN check discarding out-of-order or duplicate packets",
    ),
    (
        "nak",
        "a NAK sent by an RX (rx_ctrl), and the Go-Back-N it makes at the sender's slot FIFO (`rewind`)",
    ),
    (
        "timeout",
        "a retry timeout at the sender's slot FIFO, and the Go-Back-N it makes (`rewind`)",
    ),
    ("fatal", "a QP gone fatal at MAX_RETRY (the sender's slot FIFO)"),
    ("ack", "an ACK sent by an RX: cumulative (ACK MERGE), FACK, duplicate re-ACK"),
    (
        "cnp",
        "a CNP sent by an RX, and one received by a TX (CNP MERGE, the DCQCN rate cut)",
    ),
    ("ecn", "a data frame marked CE by a switch's RED at enqueue"),
    (
        "pfc",
        "a PFC XOFF / XON sent by a switch or a chip, or received by a chip's router",
    ),
];

/// Whether `class` is an event class.
pub fn is_class(class: &str) -> bool {
    EVENT_CLASSES.iter().any(|(c, _)| *c == class)
}

/// The event classes each kind of block reports, as pulses on the waves (`ev_<class>` beside
/// the block's ports, one cycle high where it decides one or more events of that class): the
/// classes the spec's story of a run turns on (a NAK and its Go-Back-N, a retry timeout, a CNP
/// and its rate cut, an ECN mark, a drop, PFC XOFF / XON). ACKs are left out: one per frame or
/// so, they would pulse through every busy stretch (the control stream's `valid` shows them).
pub const KIND_EVENTS: &[(&str, &[&str])] = &[
    ("slot_fifo", &["nak", "timeout", "fatal", "cnp"]),
    ("dcqcn", &["cnp"]),
    ("cc_window", &["cnp"]),
    ("psn_check", &["drop"]),
    ("rx_ctrl", &["nak", "cnp"]),
    ("phylink", &["drop"]),
    ("router", &["pfc"]),
    ("l2_switch_core", &["ecn", "drop"]),
    ("switch_pfc", &["pfc"]),
];

/// The classes blocks of `kind` report as wave pulses (none for most kinds).
pub fn kind_events(kind: &str) -> &'static [&'static str] {
    KIND_EVENTS.iter().find(|(k, _)| *k == kind).map_or(&[], |(_, c)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pulse_class_is_an_event_class_and_every_kind_is_named_once() {
        for (kind, classes) in KIND_EVENTS {
            for c in *classes {
                assert!(is_class(c), "{kind}: `{c}` is no event class");
            }
            assert_eq!(KIND_EVENTS.iter().filter(|(k, _)| k == kind).count(), 1, "{kind}");
        }
        assert_eq!(kind_events("psn_check"), ["drop"]);
        assert!(kind_events("fifo").is_empty());
    }
}
