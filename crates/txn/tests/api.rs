//! The API's contract on one thread: bad input gets a clear error, user aborts keep nothing,
//! a transaction reads its own writes, stamps order commits, stats count what happened.

mod common;

use ordo::Clock;
use ordo_txn::{Abort, Config, ConfigError, Db, MAX_KEYS, MAX_SESSIONS, Mvcc, Occ, Scheme, SessionError};

#[test]
fn bad_configurations_are_refused_with_a_message_naming_the_value() {
    let e = Db::<Occ, _>::new(common::logical(), 0).unwrap_err();
    assert_eq!(e, ConfigError::NoKeys);
    assert_eq!(e.to_string(), "a transactional store needs at least one key (keys = 0)");
    let e = Db::<Mvcc, _>::new(common::logical(), MAX_KEYS + 1).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("a transactional store holds at most {MAX_KEYS} keys; {} were asked for", MAX_KEYS + 1)
    );
    for n in [0, MAX_SESSIONS + 1] {
        let e = Db::<Mvcc, _>::with_config(common::logical(), &Config::new(4).max_sessions(n)).unwrap_err();
        assert_eq!(e, ConfigError::Sessions { max_sessions: n });
        assert!(e.to_string().contains(&format!("{n} was asked for")), "{e}");
    }
}

#[test]
fn sessions_beyond_the_maximum_are_refused_until_one_closes() {
    let db = Db::<Mvcc, _>::with_config(common::logical(), &Config::new(4).max_sessions(2)).unwrap();
    let a = db.session();
    let b = db.session();
    let e = db.try_session().unwrap_err();
    assert_eq!(e, SessionError::Exhausted { max: 2 });
    assert!(e.to_string().starts_with("all 2 sessions of this store are open"), "{e}");
    drop(a);
    let c = db.try_session().expect("a closed session's slot is free again");
    drop((b, c));
    // OCC keeps no per-session state in the store: no limit applies.
    let occ = Db::<Occ, _>::with_config(common::logical(), &Config::new(4).max_sessions(1)).unwrap();
    let _sessions: Vec<_> = (0..3).map(|_| occ.session()).collect();
}

fn single_thread_semantics<S: Scheme, C: Clock>(name: &str, clock: fn() -> C) {
    let db = Db::<S, C>::with_config(clock(), &Config::new(8).initial(5)).unwrap();
    assert_eq!(db.keys(), 8);
    let mut s = db.session();
    // Reads of own writes, and repeated reads.
    let seen = s.transaction(|tx| {
        let a = tx.get(0)?;
        tx.put(0, a + 1)?;
        tx.put(0, a + 2)?;
        Ok((a, tx.get(0)?, tx.get(1)?, tx.get(1)?))
    });
    assert_eq!(seen, (5, 7, 5, 5), "{name}");
    let first = s.last_stamp();
    // A user abort keeps nothing and returns the error.
    let r: Result<(), &str> = s.try_transaction(|tx| {
        tx.put(1, 50)?;
        tx.put(2, 60)?;
        Err(Abort::User("changed my mind"))
    });
    assert_eq!(r, Err("changed my mind"), "{name}");
    assert_eq!(s.last_stamp(), first, "{name}: an abort is not a commit");
    assert_eq!(s.read(|tx| Ok((tx.get(0)?, tx.get(1)?, tx.get(2)?))), (7, 5, 5), "{name}");
    // Commits are stamped in order; a read after a commit sees it.
    s.transaction(|tx| tx.put(3, 9));
    let second = s.last_stamp();
    assert_eq!(db.clock().cmp_time(first, second), ordo::TimeOrder::Before, "{name}");
    assert_eq!(db.read(|tx| tx.get(3)), 9, "{name}");
    let stats = s.stats();
    assert_eq!((stats.commits, stats.conflicts, stats.user_aborts), (3, 0, 1), "{name}: {stats:?}");
    // One start per transaction, one commit timestamp per transaction that wrote.
    assert!(stats.timestamps >= 6, "{name}: {stats:?}");
    assert_eq!(stats.abort_rate(), 0.0);
    let debug = format!("{db:?}");
    assert!(debug.contains("keys: 8"), "{debug}");
}

#[test]
fn single_thread_semantics_on_every_setup() {
    every_setup!(single_thread_semantics);
}
