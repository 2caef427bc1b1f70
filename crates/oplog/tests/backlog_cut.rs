//! An ordered object's full backlog is applied up to a stamp cut read from the slots' low
//! marks, taking no slot (`object` module docs, "The cut"): it must never apply an
//! operation before an older one that still waits in a slot.
//!
//! Threads take turns appending their turn's number to a list through the ordered log, so
//! the real-time order is the turn order, in logs of three that fill the backlog every few
//! dozen turns; every read must show exactly the numbers of the turns completed so far,
//! in order. A cut that ignored the slots' marks applies a handed-off log past an older
//! operation still in another core's slot, and the next read shows the two out of order
//! (checked: with the marks ignored, the first run fails at its first read).

mod common;

use common::{Rng, take_turns, with_watchdog};
use oplog::{Config, Domain, OpLog, Ordered, Representation, Update};
use std::time::Duration;

/// Turns per run (a few under Miri, which runs code ~100 times slower).
const TURNS: usize = if cfg!(miri) { 48 } else { 20_000 };

/// Appends its number to the list.
struct Append(usize);

impl Update for Append {
    type Target = Vec<usize>;
    fn exec(self, list: &mut Vec<usize>) {
        list.push(self.0);
    }
}

/// Runs `TURNS` appends over `threads` threads taking turns in a seeded random order;
/// every `read_every` turns the thread whose turn it is reads the list, which must be
/// every turn so far, in order. Returns the domain's count of hand-offs.
fn appends(config: Config, threads: usize, read_every: usize, seed: u64) -> u64 {
    let domain = Domain::<Ordered<Append>>::new(config.max_log_len(3)).unwrap();
    let list = OpLog::with_domain(&domain, Vec::new());
    let mut rng = Rng::with_seed(seed);
    let schedule: Vec<usize> = (0..TURNS).map(|_| rng.usize(..threads)).collect();
    take_turns(threads, &schedule, |t, me| {
        list.update(Append(t));
        if (t + 1) % read_every == 0 {
            list.read(|l| {
                if let Some(i) = l.iter().enumerate().position(|(i, &n)| i != n) {
                    panic!("after turn {t} (thread {me}): position {i} holds turn {}", l[i]);
                }
                assert_eq!(l.len(), t + 1, "after turn {t} (thread {me})");
            });
        }
    });
    assert_eq!(list.into_inner(), (0..TURNS).collect::<Vec<_>>());
    domain.cache_stats().hand_offs
}

#[test]
fn full_backlogs_apply_up_to_the_cut_in_order() {
    with_watchdog("backlog cut", Duration::from_secs(240), || {
        for (config, name) in [(Config::per_cpu(), "per-CPU"), (Config::per_thread(), "per-thread")] {
            for threads in 2..=4 {
                // Reads every 40 turns: the backlog (a limit of 8 logs or more, of 3 each)
                // fills between them. Logged throughout, then adaptive (the default).
                let seed = 10 * threads as u64;
                let logged = config.clone().representation(Representation::Logged);
                let hand_offs = appends(logged, threads, 40, seed);
                assert!(hand_offs as usize > TURNS / 6, "{name}, {threads} threads: {hand_offs} hand-offs");
                appends(config.clone(), threads, 40, seed + 1);
            }
        }
    });
}
