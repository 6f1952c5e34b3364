//! Runs of live pack bytes held compactly in memory: the GC's mark lists them ([`MarkedRuns`],
//! found from the pack's end towards its start) and a prefix's mapping looks pack offsets up in
//! them ([`RunMap`]).
//!
//! A mapping of a million runs at 16 bytes each (two `u64`s, as in the mapping file) took 17 MB,
//! and the mark's list as much again with a `Vec`'s doubling, during a GC that also held the
//! previous generation's mapping: the largest part of a collecting replay's peak RSS
//! (BENCHMARKS.md, "Issue 20: GC compaction"). Here each run is two LEB128 integers, the gap
//! since the previous run's end and its length (live objects are a few hundred bytes and sit
//! close together: 3-5 bytes a run), and [`RunMap`] keeps one absolute entry per
//! [`GROUP_RUNS`] runs, so a lookup is a binary search over groups and at most that many
//! decodes. The bytes are written by this module only, so decoding them cannot fail.

/// Runs per group of a [`RunMap`]: a lookup decodes at most this many (about 0.1-0.2 µs), and a
/// group's 24-byte entry costs under half a byte per run.
const GROUP_RUNS: u64 = 64;

/// Appends `value` as LEB128 ([`crate::leb128`]).
fn put(bytes: &mut Vec<u8>, value: u64) {
    crate::leb128::write_u64(bytes, value);
}

/// Decodes the LEB128 integer at `*at` of bytes this module wrote, advancing `*at`.
fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = bytes[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return value;
        }
        shift += 7;
    }
}

/// Decodes the LEB128 integer that ends just before `*end` of bytes this module wrote, moving
/// `*end` to its first byte: its last byte is the only one below 0x80.
fn get_backwards(bytes: &[u8], end: &mut usize) -> u64 {
    let last = *end - 1;
    let mut first = last;
    while first > 0 && bytes[first - 1] & 0x80 != 0 {
        first -= 1;
    }
    *end = first;
    let mut at = first;
    get(bytes, &mut at)
}

/// One run: its pack range `[start, end)` and where it starts in the prefix file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Run {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) prefix_offset: u64,
}

/// The first run of a group, in full, and where the group's encoded runs start.
#[derive(Clone, Copy, Debug)]
struct Group {
    start: u64,
    prefix_offset: u64,
    at: usize,
}

/// Runs sorted by pack offset, apart from one another, each followed by the next in the prefix
/// file: pack offset to prefix offset.
#[derive(Debug, Default)]
pub(crate) struct RunMap {
    groups: Vec<Group>,
    /// Per run: the gap since the previous run's end (0 for a group's first), its length.
    bytes: Vec<u8>,
    count: u64,
    /// Where the last run ends, in the pack and in the prefix.
    end: u64,
    length_bytes: u64,
}

impl RunMap {
    /// Appends the run `[start, end)`, which lies after every run before it and is not empty.
    pub(crate) fn push(&mut self, start: u64, end: u64) {
        debug_assert!(start < end && (self.count == 0 || start > self.end));
        let gap = if self.count.is_multiple_of(GROUP_RUNS) {
            self.groups.push(Group {
                start,
                prefix_offset: self.length_bytes,
                at: self.bytes.len(),
            });
            0
        } else {
            start - self.end
        };
        put(&mut self.bytes, gap);
        put(&mut self.bytes, end - start);
        self.count += 1;
        self.end = end;
        self.length_bytes += end - start;
    }

    /// Frees the capacity the pushes left unused.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.groups.shrink_to_fit();
        self.bytes.shrink_to_fit();
    }

    /// Runs held.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// The runs' total length (the prefix file's length).
    pub(crate) fn length_bytes(&self) -> u64 {
        self.length_bytes
    }

    /// Bytes of memory held.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.groups.capacity() * std::mem::size_of::<Group>() + self.bytes.capacity()
    }

    /// The runs in order, from the first of the group that holds the last run starting at or
    /// before `offset` (from the first run when none does): every run ending after `offset`
    /// comes out of it.
    pub(crate) fn from(&self, offset: u64) -> Runs<'_> {
        let group = self
            .groups
            .partition_point(|group| group.start <= offset)
            .saturating_sub(1);
        match self.groups.get(group) {
            Some(first) => Runs {
                map: self,
                next_group: group + 1,
                in_group: 0,
                at: first.at,
                end: first.start,
                prefix_offset: first.prefix_offset,
            },
            None => Runs {
                map: self,
                next_group: 0,
                in_group: 0,
                at: self.bytes.len(),
                end: 0,
                prefix_offset: 0,
            },
        }
    }
}

/// The runs of a [`RunMap`] in increasing order ([`RunMap::from`]).
#[derive(Clone)]
pub(crate) struct Runs<'a> {
    map: &'a RunMap,
    /// The group after the one being decoded.
    next_group: usize,
    /// Runs of the current group decoded so far.
    in_group: u64,
    at: usize,
    /// Where the previous run ended (a group's first run's start before it is decoded).
    end: u64,
    prefix_offset: u64,
}

impl Iterator for Runs<'_> {
    type Item = Run;

    fn next(&mut self) -> Option<Run> {
        if self.at >= self.map.bytes.len() {
            return None;
        }
        if self.in_group == GROUP_RUNS {
            // The next group's entry holds its first run's start; its gap is 0.
            let group = self.map.groups[self.next_group];
            self.next_group += 1;
            self.in_group = 0;
            self.end = group.start;
            debug_assert_eq!(group.prefix_offset, self.prefix_offset);
        }
        let start = self.end + get(&self.map.bytes, &mut self.at);
        let length = get(&self.map.bytes, &mut self.at);
        let run = Run {
            start,
            end: start + length,
            prefix_offset: self.prefix_offset,
        };
        self.in_group += 1;
        self.end = run.end;
        self.prefix_offset += length;
        Some(run)
    }
}

/// The runs of live bytes a mark finds, in decreasing offset order (objects are visited from the
/// pack's end towards its start, [`crate::walk`]): a run grows downwards while the objects touch.
#[derive(Debug, Default)]
pub(crate) struct MarkedRuns {
    /// Per finished run, highest first: the gap up to the start of the run above it (the first:
    /// 0), its length.
    bytes: Vec<u8>,
    count: u64,
    /// The run being grown, `[start, end)`, below every finished one.
    current: Option<(u64, u64)>,
    /// The start of the lowest finished run.
    lowest_start: u64,
}

impl MarkedRuns {
    /// Adds the live range `[start, end)`, which ends at or below every range added before.
    pub(crate) fn add(&mut self, start: u64, end: u64) {
        match &mut self.current {
            Some(current) if current.0 == end => current.0 = start,
            _ => {
                self.finish_current();
                self.current = Some((start, end));
            }
        }
    }

    fn finish_current(&mut self) {
        if let Some((start, end)) = self.current.take() {
            let gap = if self.count == 0 {
                0
            } else {
                self.lowest_start - end
            };
            put(&mut self.bytes, gap);
            put(&mut self.bytes, end - start);
            self.count += 1;
            self.lowest_start = start;
        }
    }

    /// The runs, lowest first.
    pub(crate) fn into_ascending(mut self) -> AscendingRuns {
        self.finish_current();
        self.bytes.shrink_to_fit();
        AscendingRuns {
            at: self.bytes.len(),
            left: self.count,
            start: self.lowest_start,
            bytes: self.bytes,
        }
    }
}

/// The runs of a [`MarkedRuns`], lowest first: its bytes read from their end.
pub(crate) struct AscendingRuns {
    bytes: Vec<u8>,
    at: usize,
    left: u64,
    /// Where the next run starts.
    start: u64,
}

impl Iterator for AscendingRuns {
    type Item = (u64, u64);

    fn next(&mut self) -> Option<(u64, u64)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let length = get_backwards(&self.bytes, &mut self.at);
        let gap_above = get_backwards(&self.bytes, &mut self.at);
        let run = (self.start, self.start + length);
        self.start = run.1 + gap_above;
        Some(run)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

impl ExactSizeIterator for AscendingRuns {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs of every size of gap and length, over several groups.
    fn sample_runs() -> Vec<(u64, u64)> {
        let mut runs = Vec::new();
        let mut at = 16u64;
        for index in 0..1000u64 {
            let gap = [1, 127, 128, 16_383, 16_384, 1 << 40][(index % 6) as usize];
            let length = [1, 200, 128, 70_000][(index % 4) as usize];
            at += gap;
            runs.push((at, at + length));
            at += length;
        }
        runs
    }

    #[test]
    fn a_run_map_gives_every_run_from_any_offset() {
        let runs = sample_runs();
        let mut map = RunMap::default();
        for &(start, end) in &runs {
            map.push(start, end);
        }
        assert_eq!(map.count(), runs.len() as u64);
        let mut prefix = 0;
        let expected: Vec<Run> = runs
            .iter()
            .map(|&(start, end)| {
                let run = Run {
                    start,
                    end,
                    prefix_offset: prefix,
                };
                prefix += end - start;
                run
            })
            .collect();
        assert_eq!(map.length_bytes(), prefix);
        assert_eq!(map.from(0).collect::<Vec<_>>(), expected);
        for (index, run) in expected.iter().enumerate() {
            for offset in [run.start, run.end - 1] {
                let found: Vec<Run> = map.from(offset).collect();
                // Every run ending after `offset` comes out, and at most a group's worth before.
                let first = found.iter().position(|r| r.end > offset).unwrap();
                assert_eq!(found[first..], expected[index..]);
                assert!(first < GROUP_RUNS as usize);
            }
        }
        assert_eq!(RunMap::default().from(5).next(), None);
    }

    #[test]
    fn marked_runs_come_out_lowest_first_and_merged() {
        let runs = sample_runs();
        let mut marked = MarkedRuns::default();
        for &(start, end) in runs.iter().rev() {
            // Each run of two bytes or more added as two touching ranges: they merge.
            let middle = start + (end - start) / 2;
            if middle > start {
                marked.add(middle, end);
                marked.add(start, middle);
            } else {
                marked.add(start, end);
            }
        }
        let ascending = marked.into_ascending();
        assert_eq!(ascending.len(), runs.len());
        assert_eq!(ascending.collect::<Vec<_>>(), runs);
        let mut none = MarkedRuns::default().into_ascending();
        assert_eq!((none.len(), none.next()), (0, None));
    }
}
