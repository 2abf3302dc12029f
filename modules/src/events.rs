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
