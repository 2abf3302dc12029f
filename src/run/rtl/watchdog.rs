//! A bound on how long hwsim waits for the RTL simulator's answer: a Verilated model stuck in
//! its `eval` (a combinational loop Verilator let through, a `while` that never ends) would
//! otherwise hang the run without a word.
//!
//! The main thread marks each wait (a [`Guard`]: two atomic adds, no clock read per cycle); a thread looks every 50 ms and kills the child when one wait has lasted longer
//! than the limit. The read then ends (the pipe closes) and the caller reports the cycle, saying
//! the limit was hit ([`Watchdog::fired`]). The kill takes the simulator's whole process group,
//! so what it started (`$system`) cannot hold the pipes open.

use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

struct Shared {
    /// Odd while a wait is on; bumped on entering and on leaving.
    wait: AtomicU64,
    fired: AtomicBool,
    stop: AtomicBool,
    child: Mutex<Child>,
}

/// Owns the RTL simulator's process and kills it when an answer takes too long.
pub struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    limit: Duration,
}

impl Watchdog {
    /// Watches `child`; a wait longer than `limit` kills it.
    pub fn new(child: Child, limit: Duration) -> Watchdog {
        let shared = Arc::new(Shared {
            wait: AtomicU64::new(0),
            fired: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            child: Mutex::new(child),
        });
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            let mut seen = (0u64, Instant::now());
            while !s.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                let w = s.wait.load(Ordering::Relaxed);
                if w != seen.0 {
                    seen = (w, Instant::now());
                } else if w % 2 == 1 && seen.1.elapsed() > limit {
                    s.fired.store(true, Ordering::Relaxed);
                    if let Ok(mut c) = s.child.lock() {
                        kill_group(&mut c);
                    }
                    return;
                }
            }
        });
        Watchdog {
            shared,
            thread: Some(thread),
            limit,
        }
    }
    /// Marks a wait on the RTL (writing its inputs, reading its answers) until the guard drops.
    #[inline]
    pub fn guard(&self) -> Guard {
        self.shared.wait.fetch_add(1, Ordering::Relaxed);
        Guard(self.shared.clone())
    }
    /// Why a read failed, if the limit was the reason: `" (no answer within N s: …)"`.
    pub fn why(&self) -> String {
        if self.shared.fired.load(Ordering::Relaxed) {
            format!(
                " (no answer within {} s, so hwsim stopped it: `timeout_s` in the entry raises the limit)",
                self.limit.as_secs_f64()
            )
        } else {
            String::new()
        }
    }
}

/// Kills the RTL simulator and everything it started: it leads a process group of its own
/// (`launch` starts it so), and a child of it holding the pipes would keep a read waiting.
fn kill_group(c: &mut Child) {
    if let Ok(pid) = libc::pid_t::try_from(c.id()) {
        // SAFETY: a plain system call; `-pid` names the group the child leads (a group that is
        // gone already makes it fail harmlessly with ESRCH).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = c.kill();
}

/// A wait in progress (see [`Watchdog::guard`]).
pub struct Guard(Arc<Shared>);

impl Drop for Guard {
    #[inline]
    fn drop(&mut self) {
        self.0.wait.fetch_add(1, Ordering::Relaxed);
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Ok(mut c) = self.shared.child.lock() {
            kill_group(&mut c);
            let _ = c.wait();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
