//! The packet arena: every accepted packet's bytes, copied once into a fixed-size slot, where
//! `kestrel-txview` frames and sanitizes them in place and from where workers read them.
//!
//! Slots come in two sizes, as packets do: 1,232 bytes (legacy, v0 and most v1) and 4,096 bytes
//! (v1 up to SIMD-0296's limit), each class with its own capacity, so memory is bounded by the
//! capacities whatever arrives. Slots are reused through free lists; the arena grows slot by slot
//! up to its capacity and never allocates per transaction once warm.

use kestrel_txview::limits::{MAX_TRANSACTION_SIZE_V1, PACKET_DATA_SIZE};

/// A slot's handle: the large class is marked by the top bit.
pub type PacketHandle = u32;

const LARGE: u32 = 1 << 31;

/// One slot class.
struct Slots<const SIZE: usize> {
    bytes: Vec<[u8; SIZE]>,
    lengths: Vec<u16>,
    free: Vec<u32>,
    capacity: usize,
}

impl<const SIZE: usize> Slots<SIZE> {
    fn new(capacity: usize) -> Self {
        Self {
            bytes: Vec::new(),
            lengths: Vec::new(),
            free: Vec::new(),
            capacity,
        }
    }

    fn insert(&mut self, packet: &[u8]) -> Option<u32> {
        let index = match self.free.pop() {
            Some(index) => index,
            None if self.bytes.len() < self.capacity => {
                self.bytes.push([0; SIZE]);
                self.lengths.push(0);
                (self.bytes.len() - 1) as u32
            }
            None => return None,
        };
        self.bytes[index as usize][..packet.len()].copy_from_slice(packet);
        self.lengths[index as usize] = packet.len() as u16;
        Some(index)
    }

    fn get(&self, index: u32) -> &[u8] {
        &self.bytes[index as usize][..usize::from(self.lengths[index as usize])]
    }

    fn free(&mut self, index: u32) {
        debug_assert!(!self.free.contains(&index), "slot {index} freed twice");
        self.free.push(index);
    }

    fn live(&self) -> usize {
        self.bytes.len() - self.free.len()
    }
}

/// Fixed-size packet slots in two classes.
pub struct PacketArena {
    small: Slots<PACKET_DATA_SIZE>,
    large: Slots<MAX_TRANSACTION_SIZE_V1>,
}

impl PacketArena {
    /// An arena of `small_capacity` 1,232-byte slots and `large_capacity` 4,096-byte ones.
    pub fn new(small_capacity: usize, large_capacity: usize) -> Self {
        assert!(small_capacity < LARGE as usize && large_capacity < LARGE as usize);
        Self {
            small: Slots::new(small_capacity),
            large: Slots::new(large_capacity),
        }
    }

    /// Copies `packet` (at most 4,096 bytes) into a slot; `None` when its class is full.
    pub fn insert(&mut self, packet: &[u8]) -> Option<PacketHandle> {
        if packet.len() <= PACKET_DATA_SIZE {
            self.small.insert(packet)
        } else if packet.len() <= MAX_TRANSACTION_SIZE_V1 {
            self.large.insert(packet).map(|index| index | LARGE)
        } else {
            None
        }
    }

    /// A live slot's bytes.
    pub fn get(&self, handle: PacketHandle) -> &[u8] {
        if handle & LARGE == 0 {
            self.small.get(handle)
        } else {
            self.large.get(handle & !LARGE)
        }
    }

    /// Returns a slot.
    pub fn free(&mut self, handle: PacketHandle) {
        if handle & LARGE == 0 {
            self.small.free(handle);
        } else {
            self.large.free(handle & !LARGE);
        }
    }

    /// Slots in use.
    pub fn live(&self) -> usize {
        self.small.live() + self.large.live()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_their_bytes_and_are_reused() {
        let mut arena = PacketArena::new(2, 1);
        let a = arena.insert(&[1; 10]).unwrap_or(u32::MAX);
        let b = arena.insert(&[2; PACKET_DATA_SIZE]).unwrap_or(u32::MAX);
        assert_eq!(arena.insert(&[3; 5]), None, "small class full");
        let c = arena.insert(&[4; PACKET_DATA_SIZE + 1]).unwrap_or(u32::MAX);
        assert_eq!(
            arena.insert(&[5; MAX_TRANSACTION_SIZE_V1]),
            None,
            "large class full"
        );
        assert_eq!(
            arena.insert(&[6; MAX_TRANSACTION_SIZE_V1 + 1]),
            None,
            "too large"
        );
        assert_eq!(arena.get(a), &[1; 10]);
        assert_eq!(arena.get(b), &[2; PACKET_DATA_SIZE]);
        assert_eq!(arena.get(c), &[4; PACKET_DATA_SIZE + 1]);
        assert_eq!(arena.live(), 3);
        arena.free(a);
        let d = arena.insert(&[7; 3]).unwrap_or(u32::MAX);
        assert_eq!(d, a);
        assert_eq!(arena.get(d), &[7; 3]);
    }
}
