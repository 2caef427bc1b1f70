//! Watchdogs: a test that deadlocks or livelocks fails, with a message naming it, instead
//! of hanging CI.
//!
//! A [`Watchdog`] is a thread that waits for progress reports; if none arrives within its
//! limit it prints what it was watching and the last progress seen, then aborts the process
//! (a hang cannot be unwound, and the test harness would wait forever for it).
//! [`with_watchdog`] watches one closure as a whole. Under Miri, which runs code about a
//! hundred times slower, every limit is multiplied by [`MIRI_SLOWDOWN`].

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// Factor applied to limits under Miri.
pub const MIRI_SLOWDOWN: u32 = 100;

enum Msg {
    Progress(String),
    Done,
}

/// Aborts the process if it is not told of progress often enough (see the module docs).
#[derive(Debug)]
pub struct Watchdog {
    tx: Sender<Msg>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Progress(p) => write!(f, "Progress({p:?})"),
            Msg::Done => f.write_str("Done"),
        }
    }
}

impl Watchdog {
    /// Starts watching `name`: from now on, at most `limit` may pass between two calls of
    /// [`Watchdog::progress`] (or before the watchdog is dropped).
    pub fn start(name: &str, limit: Duration) -> Self {
        let limit = if cfg!(miri) { limit * MIRI_SLOWDOWN } else { limit };
        let (tx, rx) = mpsc::channel();
        let name = name.to_owned();
        let thread = std::thread::spawn(move || {
            let mut last = String::from("started");
            loop {
                match rx.recv_timeout(limit) {
                    Ok(Msg::Progress(p)) => last = p,
                    Ok(Msg::Done) | Err(RecvTimeoutError::Disconnected) => return,
                    Err(RecvTimeoutError::Timeout) => {
                        eprintln!(
                            "watchdog: `{name}` made no progress within {limit:?} (last: {last}): deadlock or livelock"
                        );
                        std::process::abort();
                    }
                }
            }
        });
        Self { tx, thread: Some(thread) }
    }

    /// Reports progress (`note` is printed if the watchdog fires later) and restarts the
    /// timer.
    pub fn progress(&self, note: impl Into<String>) {
        let _ = self.tx.send(Msg::Progress(note.into()));
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let _ = self.tx.send(Msg::Done);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Runs `f`, aborting the process with a message naming `name` if it takes longer than
/// `limit`.
pub fn with_watchdog<R>(name: &str, limit: Duration, f: impl FnOnce() -> R) -> R {
    let watchdog = Watchdog::start(name, limit);
    let r = f();
    drop(watchdog);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watched_closure_that_finishes_returns_its_value() {
        assert_eq!(with_watchdog("quick", Duration::from_secs(30), || 6 * 7), 42);
    }

    #[test]
    fn progress_restarts_the_timer() {
        let w = Watchdog::start("steady", Duration::from_millis(300));
        for i in 0..5 {
            std::thread::sleep(Duration::from_millis(100));
            w.progress(format!("step {i}"));
        }
    }

    /// Run as a child process by the test below: hangs, so the watchdog must fire.
    #[test]
    #[ignore = "run in a child process by `a_hang_aborts_with_a_message`"]
    fn hang_for_the_watchdog() {
        with_watchdog("deliberate hang", Duration::from_millis(200), || std::thread::sleep(Duration::from_secs(60)));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri cannot spawn processes")]
    fn a_hang_aborts_with_a_message() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "testkit::watchdog::tests::hang_for_the_watchdog", "--nocapture"])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("watchdog: `deliberate hang` made no progress within 200ms"), "{stderr}");
    }
}
