//! Domains: a family of OpLog objects sharing per-core log caches and a configuration.
//!
//! 001 ch. 7 keeps one log cache per type ("one for objects of type rmap"); a [`Domain`]
//! is that unit. All objects of a domain share, on each core, one direct-mapped table of
//! log slots, the table of pending (evicted) logs, the clock, and the limits below.

use crate::backlog::Backlogs;
use crate::cache_stats::{CacheCounters, CacheStats};
use crate::log::LogKind;
use crate::object::{ObjectSlab, Solo, Thresholds};
use crate::readers::Readers;

use crate::object::SlotData;
use crate::percore::{CoreMode, Layout, LayoutError, MAX_CPUS, MAX_THREADS, PerCore};
use ordo::Clock;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as StdOrdering};
use std::sync::{Arc, OnceLock};

/// How an object holds its updates (000 §2: switching between OpLog and a traditional
/// implementation by the observed mix, as K42's online reconfiguration does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Representation {
    /// The default: each object moves between [`Representation::Logged`] and
    /// [`Representation::Direct`] by its own observed mix of reads and updates. The policy,
    /// kept in the object's word (no per-object write on the logged update path):
    ///
    /// * **To direct**: 4 reads in a row that each find little logged since the one before
    ///   (fewer than 16 operations where taking another core's slot sends a barrier, 2
    ///   where it takes a lock), or only the reader's own core's log, unless local
    ///   absorption shrank what was logged (logging then did a direct update's work); or
    ///   logs evicted from the log cache, time after time, before they took 8 operations
    ///   (the object keeps losing its slot); or full logs flushed by one core alone (one
    ///   thread updates it).
    /// * **Back to logged**: 2 reads in a row that each find a weight of 8 (with a lock: 4)
    ///   or more since the read before: changes of updating thread, estimated from sampled
    ///   direct updates, and updates that found the lock taken and logged themselves; or,
    ///   between reads, a count of changes of updater that reaches its top (31), unless the
    ///   calling core's cache slot holds another object's log (and, in a domain whose hot
    ///   objects outgrew the cache, only for an object that became hot again).
    /// * **A switch** costs what the read or update that decides it already holds: the
    ///   object lock, and for a switch to direct the gather of what is logged (none for
    ///   kinds whose logs may be applied alone: see the crate docs, "Barriers").
    ///
    /// [`OpLog::representation`](crate::OpLog::representation) says where an object is;
    /// the `object` module's docs (in the source) give the measurements behind each number.
    Adaptive,
    /// Updates are appended to per-core logs and applied when the object is read: cheap,
    /// scalable updates; reads pay a synchronize.
    Logged,
    /// Updates are applied in place under the object lock, like a mutex around the type:
    /// for read-heavy or single-core phases. An update that finds the lock taken spins
    /// briefly, as a mutex does before it sleeps, then logs itself instead of waiting
    /// longer (applied first by the next synchronize or direct update).
    Direct,
}

/// Default log-length limit: 001 ch. 7 ("a maximum length of 128 entries").
pub const DEFAULT_MAX_LOG_LEN: usize = 128;
/// Default number of slots in each core's log cache, for kinds that do not set their own
/// ([`LogKind::CACHE_SLOTS`]: a counter's is 1,024).
pub const DEFAULT_CACHE_SLOTS: usize = 256;

const MAX_CACHE_SLOTS: usize = 1 << 20;

/// Logs an object's backlog may hold before it is applied ([`Domain::backlog_limit`]) in a
/// domain of `cpus` CPUs: two per CPU, of at least 4 and at most 64 CPUs; under loom 2,
/// so that a model fills a backlog in two hand-offs.
fn backlog_limit(cpus: usize) -> usize {
    if cfg!(loom) { 2 } else { 2 * cpus.clamp(4, 64) }
}

/// The most a domain's log caches may hold when it is built: 1 GiB (per-CPU domains
/// allocate every CPU's cache then; per-thread domains one cache, each further thread's on
/// its first update). Far above any sensible configuration (the default is 256 slots of
/// 128 bytes per core, 32 KiB; a counter's 1,024, 128 KiB), and low enough that a product
/// of in-range settings (65,536 CPUs × 2²⁰ slots) is refused with an error instead of
/// aborting the process on allocation, or taking seconds to zero gigabytes it will not use.
pub const MAX_CACHE_BYTES: usize = 1 << 30;

/// Settings for a [`Domain`]; build with [`Config::per_cpu`] or [`Config::per_thread`]
/// and the setters, then [`Domain::new`].
#[derive(Clone)]
pub struct Config {
    layout: Layout,
    /// `None`: the kind's [`LogKind::CACHE_SLOTS`].
    cache_slots: Option<usize>,
    max_log_len: usize,
    clock: Option<Arc<dyn Clock>>,
    rseq: bool,
    representation: Representation,
    commit_wait: bool,
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("layout", &self.layout)
            .field("cache_slots", &self.cache_slots)
            .field("max_log_len", &self.max_log_len)
            .field("clock", &self.clock.as_ref().map(|c| c.name()))
            .field("rseq", &self.rseq)
            .field("representation", &self.representation)
            .field("commit_wait", &self.commit_wait)
            .finish()
    }
}

impl Config {
    /// Per-CPU slots (see [`CoreMode::PerCpu`]) with the default limits and clock.
    pub fn per_cpu() -> Self {
        Self {
            layout: Layout::per_cpu(),
            cache_slots: None,
            max_log_len: DEFAULT_MAX_LOG_LEN,
            clock: None,
            rseq: true,
            representation: Representation::Adaptive,
            commit_wait: false,
        }
    }

    /// Per-thread slots (see [`CoreMode::PerThread`]) with the default limits and clock.
    pub fn per_thread() -> Self {
        Self { layout: Layout::per_thread(), ..Self::per_cpu() }
    }

    /// Slots in each core's log cache: a power of two from 1 to 2²⁰ (default: the kind's
    /// [`LogKind::CACHE_SLOTS`], 256 for kinds that log operations and 1,024 for the
    /// counter, whose log is one integer). The caches a domain allocates up front (every
    /// CPU's, or one for per-thread domains) may hold at most [`MAX_CACHE_BYTES`]
    /// ([`ConfigError::CacheTooLarge`]).
    pub fn cache_slots(mut self, n: usize) -> Self {
        self.cache_slots = Some(n);
        self
    }

    /// Entries a core's log may hold before the update that fills it synchronizes the
    /// object: at least 1 (default 128).
    pub fn max_log_len(mut self, n: usize) -> Self {
        self.max_log_len = n;
        self
    }

    /// Per-thread domains: how many live threads get a log cache of their own (default
    /// 1024); further threads share one locked cache. From 1 to 65,535.
    pub fn max_threads(mut self, n: usize) -> Self {
        self.layout = self.layout.max_threads(n);
        self
    }

    /// Per-CPU domains: the number of per-CPU caches (default: the CPUs the OS may
    /// report). CPU `c` uses cache `c % n`. From 1 to 65,536. Fewer caches than CPUs keep
    /// every slot on its spin lock ([`Config::rseq`]`(false)`): a restartable sequence
    /// enters only its own CPU's cache.
    pub fn cpus(mut self, n: usize) -> Self {
        self.layout = self.layout.cpus(n);
        self
    }

    /// Per-CPU domains: whether to enter slots with a restartable sequence where the
    /// platform supports it (default true); false keeps the texts' spin lock per slot.
    ///
    /// With the restartable sequence an update takes its slot without an atomic
    /// instruction, and a synchronize that must take a slot its owners entered so pays one
    /// `membarrier` (an interrupt on every CPU running the process: microseconds). Such a
    /// slot (another CPU's: the reader's own needs no barrier) then stays in *spin mode* (see [`percore::OwnerLock`](crate::percore::OwnerLock)):
    /// its owners take its spin lock, and the next synchronizes take it without a barrier,
    /// until the owners have entered it [`SPIN_MODE_ENTRIES`](crate::percore::SPIN_MODE_ENTRIES)
    /// times with no synchronize taking it. So a slot read often costs what a spin-locked
    /// slot costs, and one read rarely pays a barrier per few thousand updates at most.
    /// Kinds whose logs are not applied alone ([`Update::APPLY_ALONE`](crate::Update::APPLY_ALONE))
    /// keep their slots in spin mode for good, so that no update sends a barrier (crate
    /// docs, "Barriers").
    /// Turning this off keeps every slot on the spin lock (no barrier ever); the `read-mix`
    /// experiment measures both beside the default (`oplog-rseq`, `oplog-spinlock`).
    pub fn rseq(mut self, on: bool) -> Self {
        self.rseq = on;
        self
    }

    /// How the domain's objects hold their updates (default
    /// [`Representation::Adaptive`]); pin [`Representation::Logged`] or
    /// [`Representation::Direct`] to turn the adaptation off.
    pub fn representation(mut self, r: Representation) -> Self {
        self.representation = r;
        self
    }

    /// The clock that stamps ordered logs (default: the process-wide [`ordo::global`]).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Ordered kinds: whether every update waits out the clock's uncertainty window before
    /// returning even where the clock's raw order respects communication (default false:
    /// the wait is on exactly where it does not, see [`Domain::commit_wait`]). 003 §6.3
    /// measures such a domain (OplogORDO, Figure 10) beside one taking raw stamps; forcing
    /// the wait costs about a window per update and changes nothing a read observes.
    pub fn commit_wait(mut self, on: bool) -> Self {
        self.commit_wait = on;
        self
    }
}

/// Why a [`Config`] was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `cache_slots` is not a power of two in range.
    CacheSlots(usize),
    /// `max_log_len` is 0.
    MaxLogLen(usize),
    /// `max_threads` is 0 or too large ([`LayoutError::MaxThreads`]).
    MaxThreads(usize),
    /// `cpus` is 0 or too large ([`LayoutError::Cpus`]).
    Cpus(usize),
    /// The log caches allocated up front would hold more than [`MAX_CACHE_BYTES`].
    CacheTooLarge {
        /// Caches allocated up front (CPUs, or 1 for per-thread domains).
        cores: usize,
        /// Slots per core.
        cache_slots: usize,
        /// Bytes they would hold.
        bytes: usize,
    },
    /// The default clock could not be built (malformed `ORDO_*` environment variable).
    Clock(ordo::ConfigError),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::CacheSlots(n) => {
                write!(f, "cache_slots = {n}: a log cache needs a power of two from 1 to {MAX_CACHE_SLOTS} slots")
            }
            ConfigError::MaxLogLen(n) => write!(f, "max_log_len = {n}: a log must be allowed at least 1 entry"),
            ConfigError::MaxThreads(n) => write!(f, "max_threads = {n}: expected 1 to {MAX_THREADS} threads"),
            ConfigError::Cpus(n) => write!(f, "cpus = {n}: expected 1 to {MAX_CPUS} per-CPU caches"),
            ConfigError::CacheTooLarge { cores, cache_slots, bytes } => write!(
                f,
                "{cores} log caches x cache_slots = {cache_slots}: they would hold {bytes} bytes, more than \
                 the {MAX_CACHE_BYTES} a domain may allocate up front (lower cache_slots or cpus)"
            ),
            ConfigError::Clock(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<LayoutError> for ConfigError {
    fn from(e: LayoutError) -> Self {
        match e {
            LayoutError::Cpus(n) => ConfigError::Cpus(n),
            LayoutError::MaxThreads(n) => ConfigError::MaxThreads(n),
        }
    }
}

/// Source of unique domain ids. Process-wide and never part of a modelled interleaving,
/// so a plain std atomic (see [`primitive`](crate::primitive)).
static NEXT_DOMAIN_ID: AtomicU64 = AtomicU64::new(1);

/// A family of OpLog objects sharing per-core log caches (see the module docs).
pub struct Domain<L: LogKind> {
    pub(crate) id: u64,
    pub(crate) slot_mask: usize,
    pub(crate) max_log_len: usize,
    /// Evicted and handed-off logs an object may accumulate before installing it again, or
    /// the hand-off that reaches it, applies its backlog.
    pub(crate) backlog_limit: usize,
    /// Whether an ordered update must wait out the clock's window before returning
    /// (the clock's raw order does not respect communication).
    pub(crate) commit_wait: bool,
    /// How objects hold their updates.
    pub(crate) representation: Representation,
    /// The adaptive policy's thresholds for this domain's slots.
    pub(crate) thresholds: Thresholds,
    /// Whether a counter that one core alone updates costs less logged than direct here
    /// (kinds with a lock-free direct log; measured on first use, `object::solo`).
    pub(crate) solo: Solo,
    /// Whether the kind has no global absorption, so that its logs may be applied alone
    /// though it does not declare it, as the domain's first object showed
    /// ([`LogKind::absorbs_nothing_globally`]) or an apply
    /// ([`LogKind::applied_without_global_absorption`]; `object`'s `Obj::applies_alone`).
    /// Set once, never cleared: a property of the kind. (A plain std atomic: a cache of
    /// what the kind showed, never part of a modelled interleaving; it decides how
    /// updates enter their slots, both ways correct, `Obj::enters_locked`.)
    no_global_absorption: AtomicBool,
    /// Whether an object's creation ran the kind's global absorption on no operations
    /// ([`LogKind::absorbs_nothing_globally`]): once per domain.
    absorption_checked: AtomicBool,
    pub(crate) clock: Arc<dyn Clock>,
    /// The log caches: `cache_slots` slots per core (see `object::log_cache`).
    pub(crate) slots: PerCore<SlotData<L>>,
    pub(crate) backlogs: Backlogs<L>,
    /// Where concurrent reads announce themselves (see `readers`).
    pub(crate) readers: Readers,
    /// Where this domain's objects live (see `slab`).
    pub(crate) slab: ObjectSlab<L>,
    /// What the log caches did (see `cache_stats`).
    pub(crate) stats: CacheCounters,
}

impl<L: LogKind> fmt::Debug for Domain<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Domain")
            .field("id", &self.id)
            .field("mode", &self.mode())
            .field("cache_slots", &(self.slot_mask + 1))
            .field("max_log_len", &self.max_log_len)
            .field("cores", &self.cores())
            .field("clock", &self.clock.name())
            .field("commit_wait", &self.commit_wait)
            .finish()
    }
}

impl<L: LogKind> Domain<L> {
    /// Builds a domain.
    ///
    /// # Errors
    /// When a limit is out of range, or no clock was given and the process-wide clock's
    /// configuration is malformed.
    pub fn new(config: Config) -> Result<Arc<Self>, ConfigError> {
        let Config { layout, cache_slots, max_log_len, clock, rseq, representation, commit_wait } = config;
        let cache_slots = cache_slots.unwrap_or(L::CACHE_SLOTS);
        if !cache_slots.is_power_of_two() || cache_slots > MAX_CACHE_SLOTS {
            return Err(ConfigError::CacheSlots(cache_slots));
        }
        if max_log_len == 0 {
            return Err(ConfigError::MaxLogLen(max_log_len));
        }
        layout.validate()?;
        // The CPUs (per-CPU cores) whatever the mode: the backlog limits scale with them.
        let ncpus = layout.with_mode(CoreMode::PerCpu).cores();
        let clock: Arc<dyn Clock> = match clock {
            Some(c) => c,
            None if L::ORDERED => ordo::try_global().map_err(|e| ConfigError::Clock(e.clone()))?.clone(),
            // Unordered kinds never read the clock: do not calibrate one for them.
            None => Arc::new(ordo::Ordo::monotonic()),
        };
        let eager = if layout.mode() == CoreMode::PerCpu { ncpus } else { 1 };
        let bytes = eager
            .checked_mul(cache_slots)
            .and_then(|n| n.checked_mul(PerCore::<SlotData<L>>::SLOT_BYTES))
            .unwrap_or(usize::MAX);
        if bytes > MAX_CACHE_BYTES {
            return Err(ConfigError::CacheTooLarge { cores: eager, cache_slots, bytes });
        }
        let slots = PerCore::new(layout, cache_slots, rseq, |_, _| SlotData::default());
        let thresholds = Thresholds::new(slots.owner_fast_path());
        Ok(Arc::new(Domain {
            id: NEXT_DOMAIN_ID.fetch_add(1, StdOrdering::Relaxed),
            slot_mask: cache_slots - 1,
            max_log_len,
            backlog_limit: backlog_limit(ncpus),
            commit_wait: L::ORDERED && (commit_wait || !clock.raw_order_is_causal()),
            representation,
            thresholds,
            solo: Solo::new(cache_slots, representation == Representation::Direct),
            no_global_absorption: AtomicBool::new(false),
            absorption_checked: AtomicBool::new(false),
            clock,
            slots,
            backlogs: Backlogs::new(4 * ncpus.clamp(4, 1024)),
            readers: Readers::new(ordo::cpu::possible()),
            slab: ObjectSlab::new(),
            stats: CacheCounters::new(layout.cores()),
        }))
    }

    /// Whether the domain learned that the kind has no global absorption (the field's docs).
    #[inline(always)]
    pub(crate) fn no_global_absorption(&self) -> bool {
        self.no_global_absorption.load(StdOrdering::Relaxed)
    }

    /// At an object's creation, from its instance: learns whether the kind has no global
    /// absorption ([`LogKind::absorbs_nothing_globally`]), the first time only (the
    /// kind's absorption runs once per domain).
    pub(crate) fn check_global_absorption(&self, state: &L::State) {
        if L::APPLY_ALONE
            || self.absorption_checked.load(StdOrdering::Relaxed)
            || self.absorption_checked.swap(true, StdOrdering::Relaxed)
        {
            return;
        }
        if L::absorbs_nothing_globally(state) {
            self.learn_no_global_absorption();
        }
    }

    /// Records that the kind has no global absorption; writes the flag's line only the
    /// first time.
    pub(crate) fn learn_no_global_absorption(&self) {
        if !self.no_global_absorption() {
            self.no_global_absorption.store(true, StdOrdering::Relaxed);
        }
    }

    /// The process-wide per-CPU domain for log kind `L`, built on first use with
    /// [`Config::per_cpu`].
    ///
    /// # Panics
    /// When the process-wide clock's configuration is malformed (see
    /// [`ordo::try_global`]); [`Domain::new`] reports that as an error instead.
    pub fn global() -> Arc<Self> {
        static DOMAINS: OnceLock<std::sync::Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>> = OnceLock::new();
        let mut map = DOMAINS.get_or_init(Default::default).lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let any = map
            .entry(TypeId::of::<L>())
            .or_insert_with(|| {
                Domain::<L>::new(Config::per_cpu()).unwrap_or_else(|e| panic!("{e}")) as Arc<dyn Any + Send + Sync>
            })
            .clone();
        any.downcast::<Self>().expect("the global domain map is keyed by log kind")
    }

    /// Where updates are logged.
    pub fn mode(&self) -> CoreMode {
        self.slots.mode()
    }

    /// How the domain's objects hold their updates ([`Config::representation`]).
    pub fn representation(&self) -> Representation {
        self.representation
    }

    /// The clock stamping ordered logs.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Whether ordered updates wait out the clock's uncertainty window before returning
    /// (see the crate docs, "What a read observes"): where the clock's raw order does not
    /// respect communication, or where [`Config::commit_wait`] forced it.
    pub fn commit_wait(&self) -> bool {
        self.commit_wait
    }

    /// Slots per core log cache.
    pub fn cache_slots(&self) -> usize {
        self.slot_mask + 1
    }

    /// The log-length limit.
    pub fn max_log_len(&self) -> usize {
        self.max_log_len
    }

    /// Number of core indices (per-CPU caches, or per-thread indices plus the shared one).
    pub fn cores(&self) -> usize {
        self.slots.cores()
    }

    /// Whether updates enter their slot without any atomic read-modify-write: per-thread
    /// domains where `membarrier` exists, per-CPU domains on the rseq path.
    pub fn owner_fast_path(&self) -> bool {
        self.slots.owner_fast_path()
    }

    /// Bytes held by the log caches allocated so far: the domain's fixed cost, which does
    /// not grow with the number of objects (logs' heap storage not included).
    pub fn cache_footprint(&self) -> usize {
        self.slots.footprint() + self.readers.footprint()
    }

    /// Number of live objects in this domain.
    pub fn objects(&self) -> usize {
        self.slab.live()
    }

    /// Bytes held by the objects' shared parts (the slab), beside their 8-byte handles.
    pub fn object_footprint(&self) -> usize {
        self.slab.footprint()
    }

    /// Number of objects with a backlog: logs or operations waiting outside the log cache.
    pub fn backlogged_objects(&self) -> usize {
        self.backlogs.len()
    }

    /// Number of logs in backlogs (evicted from the log caches, or handed off full by their
    /// owner, and not yet applied), over all objects.
    pub fn backlogged_logs(&self) -> usize {
        self.backlogs.evicted_logs()
    }

    /// What the log caches did so far: updates logged, misses, evictions, hand-offs, and the
    /// barriers synchronizes sent (see [`CacheStats`]; counted off the update fast path).
    pub fn cache_stats(&self) -> CacheStats {
        CacheStats { barriers: self.slots.barriers(), ..self.stats.snapshot() }
    }

    /// Evicted logs one object may accumulate before it is synchronized on its next
    /// log-cache miss (see the crate docs, "Memory bound").
    pub fn backlog_limit(&self) -> usize {
        self.backlog_limit
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::log::CounterLog;

    #[test]
    fn a_domain_reports_its_configuration() {
        let d = Domain::<CounterLog>::new(Config::per_cpu().cache_slots(8).max_log_len(4).cpus(3)).unwrap();
        assert_eq!((d.mode(), d.cache_slots(), d.max_log_len(), d.cores()), (CoreMode::PerCpu, 8, 4, 3));
        assert!(d.cache_footprint() >= 3 * 8 * 64);
        assert!(!d.commit_wait());
        let t = Domain::<CounterLog>::new(Config::per_thread().max_threads(2)).unwrap();
        assert_eq!((t.mode(), t.cores()), (CoreMode::PerThread, 3));
    }

    /// A domain whose configuration leaves the cache's size unset takes its kind's: 1,024
    /// slots for a counter, 256 for a kind that logs operations; a size set wins.
    #[test]
    fn the_cache_size_is_the_kinds_unless_set() {
        struct Add(u64);
        impl crate::Update for Add {
            type Target = u64;
            fn exec(self, v: &mut u64) {
                *v += self.0;
            }
        }
        let config = Config::per_thread().max_threads(1);
        assert_eq!(Domain::<CounterLog>::new(config.clone()).unwrap().cache_slots(), 1024);
        assert_eq!(Domain::<crate::Unordered<Add>>::new(config.clone()).unwrap().cache_slots(), DEFAULT_CACHE_SLOTS);
        assert_eq!(Domain::<CounterLog>::new(config.cache_slots(64)).unwrap().cache_slots(), 64);
    }

    #[test]
    fn the_commit_wait_is_forced_on_ordered_kinds_only() {
        struct Push(u64);
        impl crate::Update for Push {
            type Target = Vec<u64>;
            fn exec(self, v: &mut Vec<u64>) {
                v.push(self.0);
            }
        }
        // The logical clock's raw order respects communication: no wait unless forced.
        let logical = || -> Arc<dyn Clock> { Arc::new(ordo::LogicalClock::new()) };
        let ordered = |config: Config| Domain::<crate::Ordered<Push>>::new(config.clock(logical())).unwrap();
        assert!(!ordered(Config::per_cpu()).commit_wait());
        let forced = ordered(Config::per_cpu().commit_wait(true));
        assert!(forced.commit_wait());
        let o = crate::OpLog::with_domain(&forced, Vec::new());
        (0..3).for_each(|i| o.update(Push(i)));
        assert_eq!(o.read(|v| v.clone()), [0, 1, 2], "a forced wait changes nothing a read observes");
        // An unordered kind never waits: it reads no clock.
        assert!(!Domain::<CounterLog>::new(Config::per_cpu().commit_wait(true)).unwrap().commit_wait());
    }

    #[test]
    fn the_global_domain_is_one_per_log_kind() {
        let a = Domain::<CounterLog>::global();
        let b = Domain::<CounterLog>::global();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
