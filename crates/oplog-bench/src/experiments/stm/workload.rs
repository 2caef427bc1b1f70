//! The `stm` experiment's workloads, written once over word memory ([`Words`]) so that the
//! STM versions (one `TVar<u64>` per word, inside a transaction) and the mutex baseline (a
//! plain `[u64]` under one lock) run exactly the same sequential code.
//!
//! - [`Workload::Set`]: a hash set of 1024 keys in 2048 slots, open addressing with linear
//!   probing and backward-shift deletion (Knuth's Algorithm R, so no tombstones); half the
//!   keys present at the start; 80 % lookups, 10 % inserts, 10 % removes, one transaction
//!   each. Short transactions, rare conflicts.
//! - [`Workload::Bank`]: the contended mix: 16 accounts, 90 % transfers between two random
//!   accounts (two reads, two writes), 10 % audits reading every account and checking the
//!   total. Audits conflict with almost every transfer.
//! - [`Workload::Kmeans`]: in the spirit of STAMP's kmeans (003 Figure 15), its
//!   assignment phase: 16 fixed centers in 4 dimensions over 4096 integer points; a thread
//!   takes a chunk of 64 points with a transaction on the shared next-chunk index, finds
//!   each point's nearest center outside any transaction, and adds the point to that
//!   center's accumulators (a count and 4 sums) in one transaction per point. Unlike
//!   STAMP, centers are not recomputed between passes (the recomputation is sequential
//!   in STAMP too, outside transactions), and the point set wraps around. One operation
//!   is one point.
//!
//! Every workload checks its structure after each repetition (see [`Workload::verify`]).

use ordo_stm::{Retry, TVar, Tx, TxClock};

/// Word memory an operation runs on.
pub trait Words {
    /// The word at `i`.
    ///
    /// # Errors
    /// A transactional conflict (the STM version only).
    fn get(&mut self, i: usize) -> Result<u64, Retry>;
    /// Sets the word at `i`.
    fn set(&mut self, i: usize, value: u64);
}

impl Words for [u64] {
    #[inline]
    fn get(&mut self, i: usize) -> Result<u64, Retry> {
        Ok(self[i])
    }
    #[inline]
    fn set(&mut self, i: usize, value: u64) {
        self[i] = value;
    }
}

/// The words of a transaction: one `TVar<u64>` each.
pub struct TxWords<'a, 'env, C: TxClock> {
    /// The transaction.
    pub tx: &'a mut Tx<'env, C>,
    /// The variables, one per word.
    pub vars: &'env [TVar<u64>],
}

impl<C: TxClock> Words for TxWords<'_, '_, C> {
    #[inline]
    fn get(&mut self, i: usize) -> Result<u64, Retry> {
        self.tx.read(&self.vars[i])
    }
    #[inline]
    fn set(&mut self, i: usize, value: u64) {
        self.tx.write(&self.vars[i], value);
    }
}

/// Keys of the set workload.
pub const SET_KEYS: u64 = 1024;
/// Slots of the set (a power of two).
const SET_SLOTS: usize = 2048;
/// Accounts of the bank workload.
pub const ACCOUNTS: usize = 16;
/// Each account's starting balance.
const BALANCE: u64 = 1_000;
/// Kmeans: points, dimensions, centers, points per chunk.
const POINTS: usize = 4096;
const DIMS: usize = 4;
const CENTERS: usize = 16;
const CHUNK: u64 = 64;

/// A workload: the shared structure and its operation mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Hash set, 20 % updates.
    Set,
    /// Bank, transfers and audits (the contended mix).
    Bank,
    /// Kmeans assignment, in the spirit of STAMP.
    Kmeans,
}

/// One operation, as one transaction (or one critical section).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Set: is `key` present?
    Contains(u64),
    /// Set: add `key`; `true` if it was absent.
    Insert(u64),
    /// Set: remove `key`; `true` if it was present.
    Remove(u64),
    /// Bank: move `amount` from one account to another.
    Transfer {
        /// Paying account.
        from: usize,
        /// Receiving account.
        to: usize,
        /// Amount moved.
        amount: u64,
    },
    /// Bank: the sum of every account.
    Audit,
    /// Kmeans: take the next chunk; returns its first point's global index.
    Grab,
    /// Kmeans: add point `point` to center `center`'s accumulators.
    Assign {
        /// The nearest center.
        center: usize,
        /// The point's index.
        point: usize,
    },
}

/// The kmeans input: points and fixed centers.
#[derive(Debug)]
pub struct Points {
    coords: Vec<[u64; DIMS]>,
    nearest: Vec<usize>,
}

impl Points {
    /// Deterministic points in 16 loose clusters, and each one's nearest center.
    pub fn new() -> Self {
        let mut rng = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let centers: Vec<[u64; DIMS]> = (0..CENTERS).map(|_| std::array::from_fn(|_| next() % 1000)).collect();
        let coords: Vec<[u64; DIMS]> = (0..POINTS)
            .map(|_| {
                let c = &centers[(next() % CENTERS as u64) as usize];
                std::array::from_fn(|d| (c[d] + next() % 200).saturating_sub(100))
            })
            .collect();
        let distance =
            |p: &[u64; DIMS], c: &[u64; DIMS]| -> u64 { (0..DIMS).map(|d| p[d].abs_diff(c[d]).pow(2)).sum() };
        let nearest = coords
            .iter()
            .map(|p| (0..CENTERS).min_by_key(|&c| distance(p, &centers[c])).expect("there are centers"))
            .collect();
        Self { coords, nearest }
    }
}

impl Default for Points {
    fn default() -> Self {
        Self::new()
    }
}

/// What one thread generates and keeps track of.
#[derive(Debug, Default)]
pub struct ThreadState {
    rng: u64,
    /// Kmeans: the chunk being worked on (global index of its next point) and its end.
    chunk: Option<(u64, u64)>,
    /// Set: successful inserts.
    pub inserted: u64,
    /// Set: successful removes.
    pub removed: u64,
    /// Kmeans: first global index of every chunk taken.
    pub chunks: Vec<u64>,
}

impl ThreadState {
    /// A state seeded for `thread`.
    pub fn new(thread: usize) -> Self {
        Self { rng: 0x9e37_79b9_7f4a_7c15 ^ (thread as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9), ..Self::default() }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }
}

/// Kmeans word layout: the next-chunk index, then a count per center, then the sums.
const KM_NEXT: usize = 0;
const fn km_count(center: usize) -> usize {
    1 + center
}
const fn km_sum(center: usize, dim: usize) -> usize {
    1 + CENTERS + center * DIMS + dim
}

/// Home slot of a set key.
fn home(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SET_SLOTS.trailing_zeros())) as usize
}

impl Workload {
    /// Every workload, in table order.
    pub const ALL: [Workload; 3] = [Workload::Set, Workload::Bank, Workload::Kmeans];

    /// The number on the experiment's x axis.
    pub fn code(self) -> u32 {
        match self {
            Workload::Set => 1,
            Workload::Bank => 2,
            Workload::Kmeans => 3,
        }
    }

    /// Stable name (the `workload_name` field).
    pub fn name(self) -> &'static str {
        match self {
            Workload::Set => "set",
            Workload::Bank => "bank",
            Workload::Kmeans => "kmeans",
        }
    }

    /// The memory at the start.
    pub fn initial(self) -> Vec<u64> {
        match self {
            Workload::Set => {
                let mut words = vec![0; SET_SLOTS];
                for key in (0..SET_KEYS).step_by(2) {
                    assert!(Op::Insert(key).run(&Points::empty(), &mut words[..]).expect("plain memory") == 1);
                }
                words
            }
            Workload::Bank => vec![BALANCE; ACCOUNTS],
            Workload::Kmeans => vec![0; 1 + CENTERS + CENTERS * DIMS],
        }
    }

    /// The next operation of a thread.
    pub fn next_op(self, state: &mut ThreadState, points: &Points) -> Op {
        let r = state.next();
        match self {
            Workload::Set => {
                let key = (r >> 8) % SET_KEYS;
                match r % 10 {
                    0 => Op::Insert(key),
                    1 => Op::Remove(key),
                    _ => Op::Contains(key),
                }
            }
            Workload::Bank if r.is_multiple_of(10) => Op::Audit,
            Workload::Bank => {
                let from = ((r >> 8) % ACCOUNTS as u64) as usize;
                let to = (from + 1 + ((r >> 16) % (ACCOUNTS as u64 - 1)) as usize) % ACCOUNTS;
                Op::Transfer { from, to, amount: 1 + (r >> 24) % 50 }
            }
            Workload::Kmeans => match state.chunk {
                Some((next, end)) if next < end => {
                    state.chunk = Some((next + 1, end));
                    let point = (next % POINTS as u64) as usize;
                    Op::Assign { center: points.nearest[point], point }
                }
                _ => Op::Grab,
            },
        }
    }

    /// Records what a completed operation returned (for [`Workload::verify`]).
    pub fn completed(self, state: &mut ThreadState, op: Op, result: u64) {
        match op {
            Op::Insert(_) => state.inserted += result,
            Op::Remove(_) => state.removed += result,
            Op::Audit => assert_eq!(result, BALANCE * ACCOUNTS as u64, "an audit saw a total that no transfer makes"),
            Op::Grab => {
                state.chunks.push(result);
                state.chunk = Some((result, result + CHUNK));
            }
            Op::Contains(_) | Op::Transfer { .. } | Op::Assign { .. } => {}
        }
    }

    /// Whether an operation is counted in the throughput (kmeans counts points, not the
    /// chunk grabs between them).
    pub fn counts(op: Op) -> bool {
        op != Op::Grab
    }

    /// Panics unless `words` is what the threads' recorded results imply.
    pub fn verify(self, words: &[u64], states: &[ThreadState], points: &Points) {
        match self {
            Workload::Set => {
                let mut seen = vec![false; SET_KEYS as usize];
                let mut count = 0u64;
                for (slot, &w) in words.iter().enumerate() {
                    if w == 0 {
                        continue;
                    }
                    let key = w - 1;
                    assert!(key < SET_KEYS && !seen[key as usize], "key {key} is in the set twice, or is not a key");
                    seen[key as usize] = true;
                    count += 1;
                    let mut i = home(key);
                    while i != slot {
                        assert!(words[i] != 0, "key {key} at slot {slot} is unreachable from its home {}", home(key));
                        i = (i + 1) % SET_SLOTS;
                    }
                }
                let inserted: u64 = states.iter().map(|s| s.inserted).sum();
                let removed: u64 = states.iter().map(|s| s.removed).sum();
                assert_eq!(count + removed, SET_KEYS / 2 + inserted, "inserts and removes do not account for the set");
            }
            Workload::Bank => {
                let total = words.iter().fold(0u64, |a, &b| a.wrapping_add(b));
                assert_eq!(total, BALANCE * ACCOUNTS as u64, "transfers changed the total");
            }
            Workload::Kmeans => {
                // Chunks: taken once each, none skipped.
                let mut chunks: Vec<u64> = states.iter().flat_map(|s| s.chunks.iter().copied()).collect();
                chunks.sort_unstable();
                assert!(
                    chunks.iter().enumerate().all(|(i, &c)| c == i as u64 * CHUNK),
                    "a chunk was taken twice or skipped"
                );
                assert_eq!(words[KM_NEXT], chunks.len() as u64 * CHUNK, "the next-chunk index lost a grab");
                // Accumulators: every point assigned, once. A thread assigns its chunks'
                // points in order and every operation it began has completed, so it
                // assigned all of each chunk but the last, and of that one the points
                // before its next index.
                let mut expected = vec![0u64; words.len()];
                for s in states {
                    for (n, &c) in s.chunks.iter().enumerate() {
                        let end = match s.chunk {
                            Some((next, _)) if n + 1 == s.chunks.len() => next,
                            _ => c + CHUNK,
                        };
                        for g in c..end {
                            let p = (g % POINTS as u64) as usize;
                            let center = points.nearest[p];
                            expected[km_count(center)] += 1;
                            for d in 0..DIMS {
                                expected[km_sum(center, d)] += points.coords[p][d];
                            }
                        }
                    }
                }
                expected[KM_NEXT] = words[KM_NEXT];
                assert_eq!(words, &expected[..], "the accumulators do not match the points assigned");
            }
        }
    }
}

impl Points {
    /// No points (for the workloads that need none).
    pub fn empty() -> Self {
        Self { coords: Vec::new(), nearest: Vec::new() }
    }
}

impl Op {
    /// Runs the operation on `m`; returns its result word (a found / changed flag, the
    /// audit's total, the chunk taken, or 0).
    ///
    /// # Errors
    /// A transactional conflict from `m`.
    pub fn run<W: Words + ?Sized>(self, points: &Points, m: &mut W) -> Result<u64, Retry> {
        match self {
            Op::Contains(key) => Ok(u64::from(find(m, key)?.is_ok())),
            Op::Insert(key) => match find(m, key)? {
                Ok(_) => Ok(0),
                Err(empty) => {
                    m.set(empty, key + 1);
                    Ok(1)
                }
            },
            Op::Remove(key) => {
                let Ok(mut hole) = find(m, key)? else {
                    return Ok(0);
                };
                // Algorithm R: move back every later key of the run whose home is not
                // cyclically in (hole, j].
                let mut j = hole;
                loop {
                    j = (j + 1) % SET_SLOTS;
                    let w = m.get(j)?;
                    if w == 0 {
                        break;
                    }
                    let h = home(w - 1);
                    let stays = if hole <= j { hole < h && h <= j } else { hole < h || h <= j };
                    if !stays {
                        m.set(hole, w);
                        hole = j;
                    }
                }
                m.set(hole, 0);
                Ok(1)
            }
            Op::Transfer { from, to, amount } => {
                let a = m.get(from)?;
                m.set(from, a.wrapping_sub(amount));
                let b = m.get(to)?;
                m.set(to, b.wrapping_add(amount));
                Ok(0)
            }
            Op::Audit => {
                let mut total = 0u64;
                for i in 0..ACCOUNTS {
                    total = total.wrapping_add(m.get(i)?);
                }
                Ok(total)
            }
            Op::Grab => {
                let next = m.get(KM_NEXT)?;
                m.set(KM_NEXT, next + CHUNK);
                Ok(next)
            }
            Op::Assign { center, point } => {
                let n = m.get(km_count(center))?;
                m.set(km_count(center), n + 1);
                for d in 0..DIMS {
                    let s = m.get(km_sum(center, d))?;
                    m.set(km_sum(center, d), s + points.coords[point][d]);
                }
                Ok(0)
            }
        }
    }
}

/// Probes for `key`: `Ok(Ok(slot))` where it is, `Ok(Err(slot))` the empty slot ending its
/// probe sequence.
fn find<W: Words + ?Sized>(m: &mut W, key: u64) -> Result<Result<usize, usize>, Retry> {
    let mut i = home(key);
    loop {
        match m.get(i)? {
            0 => return Ok(Err(i)),
            w if w == key + 1 => return Ok(Ok(i)),
            _ => i = (i + 1) % SET_SLOTS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `ops` operations of `workload` on plain memory from `threads` interleaved
    /// generators, then verifies.
    fn sequential(workload: Workload, threads: usize, ops: usize) {
        let points = Points::new();
        let mut words = workload.initial();
        let mut states: Vec<ThreadState> = (0..threads).map(ThreadState::new).collect();
        for i in 0..ops {
            let s = &mut states[i % threads];
            let op = workload.next_op(s, &points);
            let r = op.run(&points, &mut words[..]).expect("plain memory");
            workload.completed(s, op, r);
        }
        workload.verify(&words, &states, &points);
    }

    #[test]
    fn every_workload_verifies_on_plain_memory() {
        for w in Workload::ALL {
            sequential(w, 3, 20_000);
        }
    }

    #[test]
    fn the_set_matches_a_model() {
        let points = Points::empty();
        let mut words = Workload::Set.initial();
        let mut model: std::collections::BTreeSet<u64> = (0..SET_KEYS).step_by(2).collect();
        let mut s = ThreadState::new(7);
        for _ in 0..50_000 {
            let op = Workload::Set.next_op(&mut s, &points);
            let r = op.run(&points, &mut words[..]).unwrap();
            let expected = match op {
                Op::Contains(k) => model.contains(&k),
                Op::Insert(k) => model.insert(k),
                Op::Remove(k) => model.remove(&k),
                _ => unreachable!(),
            };
            assert_eq!(r == 1, expected, "{op:?}");
        }
        let present: std::collections::BTreeSet<u64> = words.iter().filter(|&&w| w != 0).map(|w| w - 1).collect();
        assert_eq!(present, model);
    }

    #[test]
    #[should_panic(expected = "transfers changed the total")]
    fn a_lost_transfer_fails_verification() {
        let mut words = Workload::Bank.initial();
        words[0] -= 5;
        Workload::Bank.verify(&words, &[], &Points::empty());
    }

    #[test]
    #[should_panic(expected = "the accumulators do not match")]
    fn a_lost_assignment_fails_verification() {
        let points = Points::new();
        let mut words = Workload::Kmeans.initial();
        let mut s = ThreadState::new(0);
        for _ in 0..100 {
            let op = Workload::Kmeans.next_op(&mut s, &points);
            let r = op.run(&points, &mut words[..]).unwrap();
            Workload::Kmeans.completed(&mut s, op, r);
        }
        words[km_count(points.nearest[3])] -= 1;
        Workload::Kmeans.verify(&words, &[s], &points);
    }
}
