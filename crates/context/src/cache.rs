//! The object cache's replacement policies, by estimated bytes, and the format of the recorded
//! access stream that the offline simulator (`examples/cache_simulate.rs`) replays through them.
//!
//! Keys are pack offsets; values are whatever the caller keeps (the store keeps decoded objects,
//! the simulator nothing). Every policy holds at most its budget of estimated bytes plus the
//! object being inserted, and frees what it evicts on the insertion that evicts it (a few objects
//! per insertion, never a whole generation at once: a bulk free would stall one block), except
//! [`CachePolicy::TwoGenerations`], which keeps a retired generation and frees it a few objects
//! per insertion. A value taken for an update ([`ObjectCache::take`]) leaves the cache.
//!
//! Policies (see BENCHMARKS.md, "Session 5 (cache policy and RSS)", for the simulation that chose
//! the default):
//! - [`CachePolicy::TwoGenerations`]: the young generation fills to half the budget, then becomes
//!   the old one and the old one is retired; a hit in the old one moves the object back (a copy
//!   of it, where the value offers one: [`CachedValue::relocated`]).
//! - [`CachePolicy::Lru`]: least recently used, exact (a doubly linked list over a slab).
//! - [`CachePolicy::Clock`]: CLOCK (second chance): a ring of slots swept by a hand.
//! - [`CachePolicy::S3Fifo`]: S3-FIFO (Yang et al., SOSP 2023): a small FIFO for new objects
//!   (a tenth of the budget), a main FIFO with two-bit frequencies and reinsertion, and a ghost
//!   FIFO of the keys evicted from the small one, so one-hit objects leave early.
//!
//! Callers must give each key a size that does not change while it is cached.
//!
//! Trace format (docs/formats/cache-trace.md; one record per cache access, 16 bytes,
//! little-endian): offset `u64`, estimated size `u32` (0 where not known), event `u8`
//! ([`TraceEvent`]), three zero bytes.

use std::collections::hash_map::Entry as MapEntry;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// Bytes of one access-trace record.
pub const TRACE_RECORD_BYTES: usize = 16;

/// Evicted objects the two-generation policy frees per insertion (more than one, so the backlog
/// always drains before the next generation retires).
const RETIRED_FREED_PER_INSERT: usize = 4;

/// The small FIFO's share of an S3-FIFO cache, in percent: the paper's 10 %.
pub const S3FIFO_SMALL_PERCENT_DEFAULT: usize = 10;

/// The frequency an S3-FIFO object saturates at (two bits, as in the paper).
const S3FIFO_FREQUENCY_MAX: u8 = 3;

/// Ghost keys an S3-FIFO cache remembers at least (below, the main FIFO's object count rules).
const S3FIFO_GHOST_MIN_ENTRIES: usize = 1024;

/// Queue entries allowed per live object before stale entries (of taken objects) are swept: keeps
/// a queue's memory bounded when objects are taken faster than others are evicted.
const QUEUE_STALE_FACTOR: usize = 2;

/// What happened at one cache access, as recorded in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// A read found the object in the cache.
    Hit = 1,
    /// A read missed; the object was read from the pack and inserted.
    MissInserted = 2,
    /// An update took the object out of the cache.
    TakeHit = 3,
    /// An update read the object from the pack (it was not cached; not inserted).
    TakeMiss = 4,
    /// A commit ended a block (offset and size 0).
    Commit = 5,
    /// A written object was inserted when the retained tree was released.
    InsertWritten = 6,
}

impl TraceEvent {
    /// The event of a record's event byte, if valid.
    pub fn from_byte(byte: u8) -> Option<TraceEvent> {
        Some(match byte {
            1 => TraceEvent::Hit,
            2 => TraceEvent::MissInserted,
            3 => TraceEvent::TakeHit,
            4 => TraceEvent::TakeMiss,
            5 => TraceEvent::Commit,
            6 => TraceEvent::InsertWritten,
            _ => return None,
        })
    }
}

/// Encodes one trace record.
pub fn encode_trace_record(
    offset: u64,
    size_bytes: usize,
    event: TraceEvent,
) -> [u8; TRACE_RECORD_BYTES] {
    let mut record = [0u8; TRACE_RECORD_BYTES];
    record[..8].copy_from_slice(&offset.to_le_bytes());
    let size = u32::try_from(size_bytes).unwrap_or(u32::MAX);
    record[8..12].copy_from_slice(&size.to_le_bytes());
    record[12] = event as u8;
    record
}

/// Decodes one trace record: offset, size, event (`None` for an unknown event byte).
pub fn decode_trace_record(record: &[u8; TRACE_RECORD_BYTES]) -> Option<(u64, usize, TraceEvent)> {
    let mut offset = [0u8; 8];
    offset.copy_from_slice(&record[..8]);
    let mut size = [0u8; 4];
    size.copy_from_slice(&record[8..12]);
    Some((
        u64::from_le_bytes(offset),
        u32::from_le_bytes(size) as usize,
        TraceEvent::from_byte(record[12])?,
    ))
}

/// A fast hasher for keys that are already well mixed (pack offsets).
#[derive(Default)]
pub(crate) struct MixHasher(u64);

impl Hasher for MixHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

pub(crate) type MixMap<K, V> = HashMap<K, V, BuildHasherDefault<MixHasher>>;

/// A value an [`ObjectCache`] holds.
pub trait CachedValue: Clone {
    /// A copy of the value in allocations of its own, or `None` (the default) to keep the value
    /// itself. The two-generation policy copies a hit it moves from the old generation back to
    /// the young one: the old generation's memory is then freed as a whole when it retires,
    /// where a long-lived object moved from generation to generation would keep its allocator
    /// page resident beside the freed objects around it (BENCHMARKS.md, session 7).
    fn relocated(&self) -> Option<Self> {
        None
    }
}

impl CachedValue for () {}
impl CachedValue for u64 {}
impl<T> CachedValue for std::rc::Rc<T> {}

/// Which replacement policy an [`ObjectCache`] follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// Two generations of half the budget each (the policy up to session 4).
    TwoGenerations,
    /// Least recently used.
    Lru,
    /// FIFO with a referenced bit (second chance).
    Clock,
    /// S3-FIFO with a small FIFO of this many percent of the budget.
    S3Fifo {
        /// The small FIFO's share of the budget, in percent (1-90).
        small_percent: usize,
    },
}

/// What a cache holds, for the memory report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheOccupancy {
    /// Objects held (reachable by a lookup).
    pub objects: usize,
    /// Estimated bytes of the objects held.
    pub held_bytes: usize,
    /// Objects evicted but not freed yet (two generations only).
    pub retired_objects: usize,
    /// Estimated bytes of the retired objects.
    pub retired_bytes: usize,
}

/// A bounded cache of values by pack offset, sized by estimated bytes.
pub struct ObjectCache<V> {
    policy: Policy<V>,
}

enum Policy<V> {
    TwoGenerations(TwoGenerations<V>),
    Lru(Lru<V>),
    Clock(Clock<V>),
    S3Fifo(S3Fifo<V>),
}

impl<V: CachedValue> ObjectCache<V> {
    /// An empty cache of `budget_bytes` estimated bytes following `policy`.
    pub fn new(policy: CachePolicy, budget_bytes: usize) -> ObjectCache<V> {
        let policy = match policy {
            CachePolicy::TwoGenerations => Policy::TwoGenerations(TwoGenerations {
                young: MixMap::default(),
                old: MixMap::default(),
                young_bytes: 0,
                old_bytes: 0,
                budget_bytes,
                retired: Vec::new(),
                retired_bytes: 0,
            }),
            CachePolicy::Lru => Policy::Lru(Lru {
                map: MixMap::default(),
                slots: Vec::new(),
                free: Vec::new(),
                newest: NIL,
                oldest: NIL,
                held_bytes: 0,
                budget_bytes,
            }),
            CachePolicy::Clock => Policy::Clock(Clock {
                map: MixMap::default(),
                slots: Vec::new(),
                free: Vec::new(),
                hand: 0,
                held_bytes: 0,
                budget_bytes,
            }),
            CachePolicy::S3Fifo { small_percent } => Policy::S3Fifo(S3Fifo {
                map: MixMap::default(),
                small: VecDeque::new(),
                main: VecDeque::new(),
                ghost: MixMap::default(),
                ghost_queue: VecDeque::new(),
                next_sequence: 0,
                small_bytes: 0,
                main_bytes: 0,
                small_budget_bytes: budget_bytes.saturating_mul(small_percent.clamp(1, 90)) / 100,
                budget_bytes,
            }),
        };
        ObjectCache { policy }
    }

    /// The value at `key` and its size, if cached; counts as a use.
    pub fn get(&mut self, key: u64) -> Option<(V, usize)> {
        match &mut self.policy {
            Policy::TwoGenerations(cache) => cache.get(key),
            Policy::Lru(cache) => cache.get(key),
            Policy::Clock(cache) => cache.get(key),
            Policy::S3Fifo(cache) => cache.get(key),
        }
    }

    /// Whether `key` is cached (not counted as a use).
    pub fn contains(&self, key: u64) -> bool {
        match &self.policy {
            Policy::TwoGenerations(cache) => {
                cache.young.contains_key(&key) || cache.old.contains_key(&key)
            }
            Policy::Lru(cache) => cache.map.contains_key(&key),
            Policy::Clock(cache) => cache.map.contains_key(&key),
            Policy::S3Fifo(cache) => cache.map.contains_key(&key),
        }
    }

    /// The value at `key`, if cached, without counting as a use (a reader that wants something
    /// the value knows, not the value itself: an inode tree's decoder taking a child's hash).
    pub fn peek(&self, key: u64) -> Option<&V> {
        match &self.policy {
            Policy::TwoGenerations(cache) => cache
                .young
                .get(&key)
                .or_else(|| cache.old.get(&key))
                .map(|(value, _)| value),
            Policy::Lru(cache) => cache.slots[*cache.map.get(&key)? as usize].value.as_ref(),
            Policy::Clock(cache) => cache.slots[*cache.map.get(&key)? as usize].value.as_ref(),
            Policy::S3Fifo(cache) => cache.map.get(&key).map(|entry| &entry.value),
        }
    }

    /// Takes the value at `key` out of the cache (an update replaces it), with its size.
    pub fn take(&mut self, key: u64) -> Option<(V, usize)> {
        match &mut self.policy {
            Policy::TwoGenerations(cache) => cache.take(key),
            Policy::Lru(cache) => cache.take(key),
            Policy::Clock(cache) => cache.take(key),
            Policy::S3Fifo(cache) => cache.take(key),
        }
    }

    /// Inserts `value` of `size_bytes` at `key` (which must not be cached), evicting as needed.
    pub fn insert(&mut self, key: u64, value: V, size_bytes: usize) {
        match &mut self.policy {
            Policy::TwoGenerations(cache) => cache.insert(key, value, size_bytes),
            Policy::Lru(cache) => cache.insert(key, value, size_bytes),
            Policy::Clock(cache) => cache.insert(key, value, size_bytes),
            Policy::S3Fifo(cache) => cache.insert(key, value, size_bytes),
        }
    }

    /// Changes the budget. A smaller one is reached by the next insertions (each evicts until
    /// the cache is back under it), not at once, so a shrinking budget frees nothing here.
    pub fn set_budget_bytes(&mut self, budget_bytes: usize) {
        match &mut self.policy {
            Policy::TwoGenerations(cache) => cache.budget_bytes = budget_bytes,
            Policy::Lru(cache) => cache.budget_bytes = budget_bytes,
            Policy::Clock(cache) => cache.budget_bytes = budget_bytes,
            Policy::S3Fifo(cache) => {
                let small_percent =
                    cache.small_budget_bytes.saturating_mul(100) / cache.budget_bytes.max(1);
                cache.budget_bytes = budget_bytes;
                cache.small_budget_bytes = budget_bytes.saturating_mul(small_percent) / 100;
            }
        }
    }

    /// What the cache holds now.
    pub fn occupancy(&self) -> CacheOccupancy {
        match &self.policy {
            Policy::TwoGenerations(cache) => CacheOccupancy {
                objects: cache.young.len() + cache.old.len(),
                held_bytes: cache.young_bytes + cache.old_bytes,
                retired_objects: cache.retired.len(),
                retired_bytes: cache.retired_bytes,
            },
            Policy::Lru(cache) => CacheOccupancy {
                objects: cache.map.len(),
                held_bytes: cache.held_bytes,
                ..CacheOccupancy::default()
            },
            Policy::Clock(cache) => CacheOccupancy {
                objects: cache.map.len(),
                held_bytes: cache.held_bytes,
                ..CacheOccupancy::default()
            },
            Policy::S3Fifo(cache) => CacheOccupancy {
                objects: cache.map.len(),
                held_bytes: cache.small_bytes + cache.main_bytes,
                ..CacheOccupancy::default()
            },
        }
    }
}

/// Two generations by bytes; see the module documentation.
struct TwoGenerations<V> {
    young: MixMap<u64, (V, usize)>,
    old: MixMap<u64, (V, usize)>,
    young_bytes: usize,
    old_bytes: usize,
    budget_bytes: usize,
    /// Objects evicted but not yet freed: freeing a whole generation at once would stall one
    /// block for hundreds of milliseconds, so each insertion frees a few.
    retired: Vec<(V, usize)>,
    retired_bytes: usize,
}

impl<V: CachedValue> TwoGenerations<V> {
    fn get(&mut self, key: u64) -> Option<(V, usize)> {
        if let Some((value, size)) = self.young.get(&key) {
            return Some((value.clone(), *size));
        }
        let (value, size) = self.old.remove(&key)?;
        self.old_bytes -= size;
        let value = value.relocated().unwrap_or(value);
        self.insert(key, value.clone(), size);
        Some((value, size))
    }

    fn take(&mut self, key: u64) -> Option<(V, usize)> {
        if let Some((value, size)) = self.young.remove(&key) {
            self.young_bytes -= size;
            return Some((value, size));
        }
        let (value, size) = self.old.remove(&key)?;
        self.old_bytes -= size;
        Some((value, size))
    }

    fn insert(&mut self, key: u64, value: V, size_bytes: usize) {
        self.young_bytes += size_bytes;
        self.young.insert(key, (value, size_bytes));
        for _ in 0..RETIRED_FREED_PER_INSERT {
            match self.retired.pop() {
                Some((_, size)) => self.retired_bytes -= size,
                None => break,
            }
        }
        if self.young_bytes > self.budget_bytes / 2 {
            let old = std::mem::replace(&mut self.old, std::mem::take(&mut self.young));
            self.retired_bytes += self.old_bytes;
            self.retired.extend(old.into_values());
            self.old_bytes = self.young_bytes;
            self.young_bytes = 0;
        }
    }
}

/// The end of a linked list in [`Lru`].
const NIL: u32 = u32::MAX;

struct LruSlot<V> {
    key: u64,
    value: Option<V>,
    size_bytes: usize,
    newer: u32,
    older: u32,
}

/// Exact LRU: a doubly linked list over a slab of slots, newest first.
struct Lru<V> {
    map: MixMap<u64, u32>,
    slots: Vec<LruSlot<V>>,
    free: Vec<u32>,
    newest: u32,
    oldest: u32,
    held_bytes: usize,
    budget_bytes: usize,
}

impl<V: CachedValue> Lru<V> {
    fn unlink(&mut self, index: u32) {
        let (newer, older) = {
            let slot = &self.slots[index as usize];
            (slot.newer, slot.older)
        };
        match newer {
            NIL => self.newest = older,
            newer => self.slots[newer as usize].older = older,
        }
        match older {
            NIL => self.oldest = newer,
            older => self.slots[older as usize].newer = newer,
        }
    }

    fn push_newest(&mut self, index: u32) {
        let slot = &mut self.slots[index as usize];
        slot.newer = NIL;
        slot.older = self.newest;
        match self.newest {
            NIL => self.oldest = index,
            newest => self.slots[newest as usize].newer = index,
        }
        self.newest = index;
    }

    fn get(&mut self, key: u64) -> Option<(V, usize)> {
        let index = *self.map.get(&key)?;
        if self.newest != index {
            self.unlink(index);
            self.push_newest(index);
        }
        let slot = &self.slots[index as usize];
        Some((slot.value.clone()?, slot.size_bytes))
    }

    fn release(&mut self, index: u32) -> Option<(V, usize)> {
        self.unlink(index);
        self.free.push(index);
        let slot = &mut self.slots[index as usize];
        self.held_bytes -= slot.size_bytes;
        Some((slot.value.take()?, slot.size_bytes))
    }

    fn take(&mut self, key: u64) -> Option<(V, usize)> {
        let index = self.map.remove(&key)?;
        self.release(index)
    }

    fn insert(&mut self, key: u64, value: V, size_bytes: usize) {
        let slot = LruSlot {
            key,
            value: Some(value),
            size_bytes,
            newer: NIL,
            older: NIL,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index as usize] = slot;
                index
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        self.push_newest(index);
        self.held_bytes += size_bytes;
        if let Some(previous) = self.map.insert(key, index) {
            // Callers insert only missing keys; keep the accounting right if one does not.
            self.release(previous);
        }
        while self.held_bytes > self.budget_bytes && self.oldest != index {
            let oldest = self.oldest;
            self.map.remove(&self.slots[oldest as usize].key);
            self.release(oldest);
        }
    }
}

struct ClockSlot<V> {
    key: u64,
    /// `None`: a free slot (its index is in `free`).
    value: Option<V>,
    size_bytes: usize,
    referenced: bool,
}

/// CLOCK: the objects sit in a ring of slots swept by a hand; an object used since the hand last
/// passed is spared once (its referenced bit cleared), the first one not used is evicted, and a
/// new object takes a free slot (the last one freed, which is where the hand just passed). The
/// map holds only a slot index, so the bookkeeping is a 16-byte map entry and a 32-byte slot per
/// object.
struct Clock<V> {
    map: MixMap<u64, u32>,
    slots: Vec<ClockSlot<V>>,
    free: Vec<u32>,
    hand: usize,
    held_bytes: usize,
    budget_bytes: usize,
}

impl<V: CachedValue> Clock<V> {
    fn get(&mut self, key: u64) -> Option<(V, usize)> {
        let slot = &mut self.slots[*self.map.get(&key)? as usize];
        slot.referenced = true;
        Some((slot.value.clone()?, slot.size_bytes))
    }

    fn release(&mut self, index: u32) -> Option<(V, usize)> {
        let slot = &mut self.slots[index as usize];
        let value = slot.value.take()?;
        self.held_bytes -= slot.size_bytes;
        self.free.push(index);
        Some((value, slot.size_bytes))
    }

    fn take(&mut self, key: u64) -> Option<(V, usize)> {
        let index = self.map.remove(&key)?;
        self.release(index)
    }

    fn insert(&mut self, key: u64, value: V, size_bytes: usize) {
        if let Some(previous) = self.map.remove(&key) {
            // Callers insert only missing keys; keep the accounting right if one does not.
            self.release(previous);
        }
        let slot = ClockSlot {
            key,
            value: Some(value),
            size_bytes,
            referenced: false,
        };
        let index = match self.free.pop() {
            Some(index) => {
                self.slots[index as usize] = slot;
                index as usize
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.map.insert(key, index as u32);
        self.held_bytes += size_bytes;
        // Another live object exists while the map holds two, so the sweep ends within two turns
        // (the first clears every referenced bit).
        while self.held_bytes > self.budget_bytes && self.map.len() > 1 {
            if self.hand >= self.slots.len() {
                self.hand = 0;
            }
            let position = self.hand;
            self.hand += 1;
            let slot = &mut self.slots[position];
            if slot.value.is_none() || position == index {
                continue;
            }
            if slot.referenced {
                slot.referenced = false;
                continue;
            }
            let victim = slot.key;
            self.map.remove(&victim);
            self.release(position as u32);
        }
    }
}

struct S3Entry<V> {
    value: V,
    size_bytes: usize,
    frequency: u8,
    in_main: bool,
    sequence: u64,
}

/// S3-FIFO by bytes; see the module documentation.
struct S3Fifo<V> {
    map: MixMap<u64, S3Entry<V>>,
    small: VecDeque<(u64, u64)>,
    main: VecDeque<(u64, u64)>,
    /// Keys evicted from the small FIFO, by the sequence number of their ghost-queue entry.
    ghost: MixMap<u64, u64>,
    ghost_queue: VecDeque<(u64, u64)>,
    next_sequence: u64,
    small_bytes: usize,
    main_bytes: usize,
    small_budget_bytes: usize,
    budget_bytes: usize,
}

impl<V: CachedValue> S3Fifo<V> {
    fn get(&mut self, key: u64) -> Option<(V, usize)> {
        let entry = self.map.get_mut(&key)?;
        entry.frequency = (entry.frequency + 1).min(S3FIFO_FREQUENCY_MAX);
        Some((entry.value.clone(), entry.size_bytes))
    }

    fn take(&mut self, key: u64) -> Option<(V, usize)> {
        let entry = self.map.remove(&key)?;
        if entry.in_main {
            self.main_bytes -= entry.size_bytes;
        } else {
            self.small_bytes -= entry.size_bytes;
        }
        Some((entry.value, entry.size_bytes))
    }

    fn sequence(&mut self) -> u64 {
        self.next_sequence += 1;
        self.next_sequence
    }

    fn insert(&mut self, key: u64, value: V, size_bytes: usize) {
        if self.map.contains_key(&key) {
            // Callers insert only missing keys; keep the accounting right if one does not.
            self.take(key);
        }
        let sequence = self.sequence();
        let in_main = self.ghost.remove(&key).is_some();
        if in_main {
            self.main.push_back((key, sequence));
            self.main_bytes += size_bytes;
        } else {
            self.small.push_back((key, sequence));
            self.small_bytes += size_bytes;
        }
        self.map.insert(
            key,
            S3Entry {
                value,
                size_bytes,
                frequency: 0,
                in_main,
                sequence,
            },
        );
        while self.small_bytes + self.main_bytes > self.budget_bytes && self.map.len() > 1 {
            let evicted = if self.small_bytes > self.small_budget_bytes || self.main.is_empty() {
                self.evict_small(key)
            } else {
                self.evict_main(key)
            };
            if !evicted {
                break;
            }
        }
        let live = self.map.len();
        let sweep = |queue: &mut VecDeque<(u64, u64)>, map: &MixMap<u64, S3Entry<V>>| {
            if queue.len() > QUEUE_STALE_FACTOR * live + 64 {
                queue.retain(|(key, sequence)| {
                    map.get(key).is_some_and(|e| e.sequence == *sequence)
                });
            }
        };
        sweep(&mut self.small, &self.map);
        sweep(&mut self.main, &self.map);
    }

    /// Takes the oldest object of the small FIFO: to the main FIFO if it was used since it was
    /// inserted, else out (its key to the ghost FIFO). Returns whether anything moved or left.
    fn evict_small(&mut self, protected: u64) -> bool {
        while let Some((candidate, candidate_sequence)) = self.small.pop_front() {
            let Some(entry) = self.map.get(&candidate) else {
                continue;
            };
            if entry.sequence != candidate_sequence {
                continue;
            }
            if candidate == protected || entry.frequency > 0 {
                let sequence = self.sequence();
                let entry = self.map.get_mut(&candidate).expect("looked up above");
                entry.frequency = 0;
                entry.in_main = true;
                entry.sequence = sequence;
                self.small_bytes -= entry.size_bytes;
                self.main_bytes += entry.size_bytes;
                self.main.push_back((candidate, sequence));
                return true;
            }
            let entry = self.map.remove(&candidate).expect("looked up above");
            self.small_bytes -= entry.size_bytes;
            let sequence = self.sequence();
            self.ghost.insert(candidate, sequence);
            self.ghost_queue.push_back((candidate, sequence));
            let ghost_capacity = self.map.len().max(S3FIFO_GHOST_MIN_ENTRIES);
            while self.ghost.len() > ghost_capacity {
                let Some((old, old_sequence)) = self.ghost_queue.pop_front() else {
                    break;
                };
                if self.ghost.get(&old) == Some(&old_sequence) {
                    self.ghost.remove(&old);
                }
            }
            if self.ghost_queue.len() > QUEUE_STALE_FACTOR * ghost_capacity + 64 {
                let ghost = &self.ghost;
                self.ghost_queue
                    .retain(|(key, sequence)| ghost.get(key) == Some(sequence));
            }
            return true;
        }
        false
    }

    /// Takes the oldest object of the main FIFO: once more round if it was used since it was
    /// last queued (one use less), else out. Returns whether anything moved or left.
    fn evict_main(&mut self, protected: u64) -> bool {
        while let Some((candidate, candidate_sequence)) = self.main.pop_front() {
            let MapEntry::Occupied(mut entry) = self.map.entry(candidate) else {
                continue;
            };
            if entry.get().sequence != candidate_sequence {
                continue;
            }
            if candidate == protected || entry.get().frequency > 0 {
                let frequency = entry.get().frequency.saturating_sub(1);
                entry.get_mut().frequency = frequency;
                self.main.push_back((candidate, candidate_sequence));
                return true;
            }
            self.main_bytes -= entry.remove().size_bytes;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const POLICIES: [CachePolicy; 4] = [
        CachePolicy::TwoGenerations,
        CachePolicy::Lru,
        CachePolicy::Clock,
        CachePolicy::S3Fifo {
            small_percent: S3FIFO_SMALL_PERCENT_DEFAULT,
        },
    ];

    #[derive(Clone, Debug)]
    enum Operation {
        Get(u64),
        Take(u64),
        Insert(u64, usize),
    }

    fn operation() -> impl Strategy<Value = Operation> {
        prop_oneof![
            4 => (0u64..64).prop_map(Operation::Get),
            1 => (0u64..64).prop_map(Operation::Take),
            4 => (0u64..64, 1usize..300).prop_map(|(key, size)| Operation::Insert(key, size)),
        ]
    }

    proptest! {
        /// Against a model (a map of what was inserted and not taken): a hit returns what was
        /// inserted, with its size; a taken key is gone; what the cache holds never exceeds the
        /// budget by more than the last object inserted; frees are spread (an insertion frees at
        /// most a bounded number of objects, whatever the cache holds).
        #[test]
        fn policies_follow_the_model(operations in proptest::collection::vec(operation(), 1..600)) {
            let budget = 1000;
            for policy in POLICIES {
                let mut cache: ObjectCache<std::rc::Rc<(u64, usize)>> =
                    ObjectCache::new(policy, budget);
                let mut model: BTreeMap<u64, usize> = BTreeMap::new();
                let mut alive: Vec<(std::rc::Weak<(u64, usize)>, usize)> = Vec::new();
                for operation in &operations {
                    match *operation {
                        Operation::Get(key) => {
                            // A peek sees what a get returns, and is not a use.
                            let peeked = cache.peek(key).map(|value| **value);
                            if let Some((value, size)) = cache.get(key) {
                                prop_assert_eq!(Some(&size), model.get(&key), "{:?}", policy);
                                prop_assert_eq!(*value, (key, size));
                                prop_assert_eq!(peeked, Some((key, size)), "{:?}", policy);
                            } else {
                                prop_assert_eq!(peeked, None, "{:?}", policy);
                            }
                        }
                        Operation::Take(key) => {
                            if let Some((value, size)) = cache.take(key) {
                                prop_assert_eq!(*value, (key, size));
                                prop_assert_eq!(model.remove(&key), Some(size));
                            }
                            prop_assert!(cache.get(key).is_none());
                        }
                        Operation::Insert(key, size) => {
                            if cache.get(key).is_some() {
                                continue;
                            }
                            let value = std::rc::Rc::new((key, size));
                            let dead_before: Vec<bool> =
                                alive.iter().map(|(weak, _)| weak.strong_count() == 0).collect();
                            alive.push((std::rc::Rc::downgrade(&value), size));
                            cache.insert(key, value, size);
                            model.insert(key, size);
                            let (freed_objects, freed_bytes) = alive
                                .iter()
                                .zip(dead_before)
                                .filter(|((weak, _), dead)| !dead && weak.strong_count() == 0)
                                .fold((0, 0), |(count, bytes), ((_, size), _)| (count + 1, bytes + size));
                            // Frees are spread: two generations free a fixed few per insertion;
                            // the others evict only while over the budget, so they free less
                            // than the new object plus one more (sizes are below 300).
                            match policy {
                                CachePolicy::TwoGenerations => prop_assert!(
                                    freed_objects <= RETIRED_FREED_PER_INSERT),
                                _ => prop_assert!(freed_bytes < size + 300,
                                    "{:?} freed {} bytes for {}", policy, freed_bytes, size),
                            }
                            let occupancy = cache.occupancy();
                            // Two generations may each pass half the budget by one object.
                            let held_limit = match policy {
                                CachePolicy::TwoGenerations => budget + 2 * 300,
                                _ => budget + size,
                            };
                            prop_assert!(occupancy.held_bytes <= held_limit,
                                "{:?} holds {} bytes", policy, occupancy.held_bytes);
                            // Just inserted: held until the next insertion at least.
                            prop_assert!(cache.get(key).is_some(), "{:?} lost {}", policy, key);
                        }
                    }
                    // Everything the cache holds or still has to free is alive; nothing else
                    // inserted is (the cache is the only holder).
                    let occupancy = cache.occupancy();
                    let alive_count = alive.iter().filter(|(weak, _)| weak.strong_count() > 0).count();
                    prop_assert_eq!(alive_count, occupancy.objects + occupancy.retired_objects,
                        "{:?}", policy);
                }
            }
        }
    }

    /// A value whose copies are new allocations, to see which one the cache holds.
    #[derive(Clone)]
    struct Relocating(std::rc::Rc<u64>);

    impl CachedValue for Relocating {
        fn relocated(&self) -> Option<Self> {
            Some(Relocating(std::rc::Rc::new(*self.0)))
        }
    }

    #[test]
    fn two_generations_copy_a_hit_they_move_back_and_free_the_original() {
        let mut cache = ObjectCache::new(CachePolicy::TwoGenerations, 100);
        let original = Relocating(std::rc::Rc::new(1));
        cache.insert(1, original.clone(), 40);
        // The young generation passes half the budget: both objects become the old one.
        cache.insert(2, Relocating(std::rc::Rc::new(2)), 40);
        let (moved, size) = cache.get(1).expect("held in the old generation");
        assert_eq!((*moved.0, size), (1, 40));
        assert!(
            !std::rc::Rc::ptr_eq(&moved.0, &original.0),
            "a copy moved back"
        );
        assert_eq!(
            std::rc::Rc::strong_count(&original.0),
            1,
            "the cache let go of the original"
        );
        // A hit in the young generation returns what it holds, not another copy.
        let (again, _) = cache.get(1).expect("held in the young generation");
        assert!(std::rc::Rc::ptr_eq(&moved.0, &again.0));
    }

    /// The data-driven checks of one policy: `steps` of (operation, key, size, expected hit).
    fn check(policy: CachePolicy, budget: usize, steps: &[(&str, u64, usize, bool)]) {
        let mut cache: ObjectCache<u64> = ObjectCache::new(policy, budget);
        for (position, (operation, key, size, expected)) in steps.iter().enumerate() {
            let found = match *operation {
                "get" => cache.get(*key).is_some(),
                "take" => cache.take(*key).is_some(),
                "insert" => {
                    cache.insert(*key, *key, *size);
                    true
                }
                _ => unreachable!(),
            };
            assert_eq!(
                found, *expected,
                "{policy:?} step {position}: {operation} {key}"
            );
        }
    }

    #[test]
    fn lru_keeps_what_is_used() {
        check(
            CachePolicy::Lru,
            30,
            &[
                ("insert", 1, 10, true),
                ("insert", 2, 10, true),
                ("insert", 3, 10, true),
                ("get", 1, 0, true),
                ("insert", 4, 10, true), // evicts 2, the least recently used
                ("get", 2, 0, false),
                ("get", 1, 0, true),
                ("get", 3, 0, true),
                ("take", 3, 0, true),
                ("get", 3, 0, false),
                ("insert", 5, 10, true), // room left by the take: nothing evicted
                ("get", 1, 0, true),
                ("get", 4, 0, true),
            ],
        );
    }

    #[test]
    fn clock_gives_used_objects_a_second_chance() {
        check(
            CachePolicy::Clock,
            30,
            &[
                ("insert", 1, 10, true),
                ("insert", 2, 10, true),
                ("insert", 3, 10, true),
                ("get", 1, 0, true),
                ("insert", 4, 10, true), // 1 referenced: goes round; 2 evicted
                ("get", 2, 0, false),
                ("get", 1, 0, true),
                ("insert", 5, 10, true), // 3 evicted (1 referenced again)
                ("get", 3, 0, false),
                ("get", 1, 0, true),
            ],
        );
    }

    #[test]
    fn s3fifo_drops_one_hit_objects_first() {
        // Small FIFO: 10 % of 90 = 9 bytes.
        check(
            CachePolicy::S3Fifo { small_percent: 10 },
            90,
            &[
                ("insert", 1, 10, true),
                ("get", 1, 0, true), // used in the small FIFO: promoted on eviction
                ("insert", 2, 10, true),
                ("insert", 3, 70, true), // 90 bytes: nothing evicted
                ("insert", 4, 10, true), // over: 1 to main, 2 out (to the ghost)
                ("get", 2, 0, false),
                ("get", 1, 0, true),
                ("get", 3, 0, true),
                ("insert", 2, 10, true), // a ghost: into main; 3 (used) to main, 4 out
                ("get", 4, 0, false),
                ("get", 2, 0, true),
                ("get", 3, 0, true),
                ("get", 1, 0, true),
            ],
        );
    }

    #[test]
    fn two_generations_move_old_hits_back() {
        check(
            CachePolicy::TwoGenerations,
            40,
            &[
                ("insert", 1, 10, true),
                ("insert", 2, 10, true),
                ("insert", 3, 10, true), // young over 20: becomes old
                ("get", 1, 0, true),     // moved back to young
                ("insert", 4, 10, true),
                ("insert", 5, 10, true), // young (1, 4, 5) becomes old, (2, 3) retired
                ("get", 2, 0, false),
                ("get", 1, 0, true),
            ],
        );
    }

    #[test]
    fn trace_records_round_trip() {
        for (offset, size, event) in [
            (0, 0, TraceEvent::Commit),
            (u64::MAX, u32::MAX as usize, TraceEvent::Hit),
            (4096, 700, TraceEvent::MissInserted),
            (17, 1, TraceEvent::TakeHit),
            (18, 0, TraceEvent::TakeMiss),
            (19, 5, TraceEvent::InsertWritten),
        ] {
            let record = encode_trace_record(offset, size, event);
            assert_eq!(decode_trace_record(&record), Some((offset, size, event)));
        }
        let mut record = encode_trace_record(1, 1, TraceEvent::Hit);
        record[12] = 9;
        assert_eq!(decode_trace_record(&record), None);
    }
}
