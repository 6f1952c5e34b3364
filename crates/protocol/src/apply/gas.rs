//! The gas of manager operations outside the Michelson interpreter, in milligas, as protocol 025
//! charges it: the fixed cost of an operation (`Michelson_v1_gas.Cost_of.manager_operation`) and
//! of its batch's signature check (`Operation_costs.check_signature_cost`), the transfer to an
//! implicit account (`transfer_operation`), decoding lazy Micheline (`Script_repr`
//! `deserialization_cost_estimated_from_bytes`), and carbonated storage accesses
//! (`Storage_costs.read_access` / `write_access`, `storage_functors.ml`).

use kestrel_crypto::SignatureScheme;
use num_bigint::BigInt;

/// `manager_operation`: 100 gas per manager operation, internal ones included.
pub const MANAGER_OPERATION_MILLI: u64 = 100_000;
/// `transfer_operation`: 2,000 gas per transfer to an implicit account.
pub const TRANSFER_OPERATION_MILLI: u64 = 2_000_000;
/// The path length of a contract's carbonated fields (`contracts/index/<id>/<field>` and the
/// `len`/`data` leaf under it).
pub const CONTRACT_FIELD_PATH_LENGTH: u64 = 5;

/// The operation ran out of gas (`Gas.Operation_quota_exceeded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GasExhausted;

/// The gas of one operation: what its limit leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GasMeter {
    limit_milli: u64,
    remaining_milli: u64,
}

impl GasMeter {
    /// A meter holding `limit_milli`.
    pub fn new(limit_milli: u64) -> GasMeter {
        GasMeter {
            limit_milli,
            remaining_milli: limit_milli,
        }
    }

    /// Takes `cost_milli`, or fails leaving nothing.
    pub fn consume(&mut self, cost_milli: u64) -> Result<(), GasExhausted> {
        match self.remaining_milli.checked_sub(cost_milli) {
            Some(remaining) => {
                self.remaining_milli = remaining;
                Ok(())
            }
            None => {
                self.remaining_milli = 0;
                Err(GasExhausted)
            }
        }
    }

    /// Milligas left.
    pub fn remaining_milli(&self) -> u64 {
        self.remaining_milli
    }

    /// Milligas consumed since the meter was made.
    pub fn consumed_milli(&self) -> u64 {
        self.limit_milli - self.remaining_milli
    }
}

/// `check_signature_cost`: serializing the unsigned operation (32 milligas per byte) and
/// checking the signature over it.
pub fn signature_check_milli(scheme: SignatureScheme, unsigned_length_bytes: u64) -> u64 {
    (unsigned_length_bytes << 5).saturating_add(kestrel_michelson::cost_check_signature_scheme(
        scheme,
        unsigned_length_bytes,
    ))
}

/// `deserialization_cost_estimated_from_bytes` (`cost_DECODING_MICHELINE_bytes`): 20 milligas per
/// byte, at least 10.
pub fn deserialization_milli(length_bytes: u64) -> u64 {
    length_bytes.saturating_mul(20).max(10)
}

/// `Cache_repr` `cache_find` / `cache_update` (`cost_CACHE_UPDATE`): `600 + 43 · log2(card + 1)`
/// milligas, the cardinal estimated from the cache's size at 688 bytes a contract, Octez's
/// `log2 x` being `1 + numbits x`.
pub fn cache_access_milli(cache_size_bytes: u64) -> u64 {
    let cardinal = cache_size_bytes / MINIMAL_CACHED_CONTRACT_BYTES;
    let log2 = 1 + u64::from(u64::BITS - (cardinal + 1).leading_zeros());
    log2.saturating_mul(43).saturating_add(600)
}

/// `Cache_costs.minimal_size_of_typed_contract_in_bytes`.
pub const MINIMAL_CACHED_CONTRACT_BYTES: u64 = 688;

/// The script cache's size when an operation of a mockup block runs: it holds the
/// liquidity-baking CPMM, which the block's subsidy (`apply_liquidity_baking_subsidy`, at the
/// start of every block) has just run. This is the size model's figure for the CPMM with its
/// storage (`Script::cached_size_bytes`; its integers stay below 2^62, so the subsidy does not
/// change it), checked against the script in the tests: 264 minimal contracts, in the bucket
/// the recorded receipts show (`log2 (card + 1) = 10`).
pub const MOCKUP_CACHED_BYTES: u64 = 182_272;

/// The size of the script cache as an operation sees it, which the cost of each lookup and
/// update depends on (`cache_access_milli`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptCacheView {
    bytes: u64,
}

impl ScriptCacheView {
    /// The cache when an operation starts in a context at `level`: empty at level 0 (genesis,
    /// and activation, before any block), else holding the CPMM (see [`MOCKUP_CACHED_BYTES`]),
    /// which every block's subsidy runs. An operation applied in a block sees its block's
    /// subsidy; one simulated on the head (`simulate_operation` at the head's level) sees the
    /// head's: on the genesis head the cache is empty (`test_level.out`: the estimate before any
    /// block is baked pays for an empty cache, the one after three blocks for the CPMM's).
    pub fn at_start(level: u64) -> ScriptCacheView {
        let bytes = if level == 0 { 0 } else { MOCKUP_CACHED_BYTES };
        ScriptCacheView { bytes }
    }

    /// Its size, bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// A contract of `bytes` (`Script_ir_translator.script_size`) inserted.
    pub fn insert(&mut self, bytes: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
    }
}

/// `Ticket_costs.Constants.cost_collect_tickets_step` (`cost_COLLECT_TICKETS_STEP 1`): a step
/// of the ticket scanner, or a ticket collected.
pub const COLLECT_TICKETS_STEP_MILLI: u64 = 80;

/// `Ticket_costs.has_tickets_of_ty_cost` (`cost_TYPE_HAS_TICKETS`): `10 + 6 · type size`.
pub fn type_has_tickets_milli(type_size: u64) -> u64 {
    type_size.saturating_mul(6).saturating_add(10)
}

/// `Carbonated_map_costs.find_cost` in a map of `size` entries whose keys compare at 10
/// milligas (ticket hashes, `cost_COMPARE_TICKET_HASH`, and destinations,
/// `cost_COMPARE_CONTRACT`): `50 + (10 + 2) · log2 size`, Octez's `log2 x` being
/// `1 + numbits x`.
pub fn carbonated_find_milli(size: usize) -> u64 {
    let log2 = 1 + u64::from(usize::BITS - size.leading_zeros());
    log2.saturating_mul(10 + 2).saturating_add(50)
}

/// `Carbonated_map_costs.update_cost`: twice [`carbonated_find_milli`].
pub fn carbonated_update_milli(size: usize) -> u64 {
    carbonated_find_milli(size).saturating_mul(2)
}

/// `Carbonated_map_costs.fold_cost` (`cost_fold`): `50 + 24 · size`.
pub fn carbonated_fold_milli(size: usize) -> u64 {
    (size as u64).saturating_mul(24).saturating_add(50)
}

/// `Michelson_v1_gas`'s `z_bytes`: the bytes of an integer's magnitude.
fn z_bytes(z: &BigInt) -> u64 {
    z.bits().div_ceil(8)
}

/// `Ticket_costs.add_z_cost` and `add_int_cost` (`cost_N_IAdd_int`): `35 + max bytes / 2`.
pub fn add_int_milli(left: &BigInt, right: &BigInt) -> u64 {
    (z_bytes(left).max(z_bytes(right)) >> 1).saturating_add(35)
}

/// `Ticket_costs.negate_cost` (`cost_N_INeg`): `25 + bytes / 2`.
pub fn negate_milli(z: &BigInt) -> u64 {
    (z_bytes(z) >> 1).saturating_add(25)
}

/// `Script_repr.strip_locations_cost` and `strip_annotations_cost` of an expression of `nodes`
/// nodes (`cost_strip_locations_micheline`, `cost_strip_annotations`): `51 · nodes`, at least 10.
pub fn strip_milli(nodes: u64) -> u64 {
    nodes.saturating_mul(51).max(10)
}

/// `Unparse_costs.unparse_type` (`cost_UNPARSE_TYPE`) of a type of `type_size` nodes:
/// `20 · size`, at least 10.
pub fn unparse_type_milli(type_size: u64) -> u64 {
    type_size.saturating_mul(20).max(10)
}

/// `Ticket_hash_builder.hash_bytes_cost` (`expr_to_address_in_context`): hashing `length` bytes,
/// `200 + 1.25 · length`.
pub fn hash_bytes_milli(length: u64) -> u64 {
    length.saturating_add(length >> 2).saturating_add(200)
}

/// `Script_typed_ir_size_costs.nodes_cost`: 45 milligas per node measured.
pub fn size_nodes_milli(nodes: u64) -> u64 {
    nodes.saturating_mul(45)
}

/// `Storage_costs.read_access`.
pub fn read_access_milli(path_length: u64, read_bytes: u64) -> u64 {
    200_000u64
        .saturating_add(path_length.saturating_mul(5000))
        .saturating_add(read_bytes.saturating_mul(2))
}

/// `Gas_limit_repr.alloc_mbytes_cost`: allocating `bytes` bytes (2 gas a word, 12 words of
/// header, one more each).
pub fn alloc_mbytes_milli(bytes: u64) -> u64 {
    let words = 13u64.saturating_add(bytes.div_ceil(8)).saturating_add(1);
    words.saturating_mul(2000)
}

/// `Storage_costs.write_access`.
pub fn write_access_milli(written_bytes: u64) -> u64 {
    200_000u64.saturating_add(written_bytes.saturating_mul(4))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meter_stops_at_its_limit() {
        let mut meter = GasMeter::new(1_000);
        assert_eq!(meter.consume(600), Ok(()));
        assert_eq!(meter.consume(401), Err(GasExhausted));
        assert_eq!(meter.consumed_milli(), 1_000);
    }

    #[test]
    fn costs_follow_octez_models() {
        // 103 bytes: 3296 to serialize, 65800 + 103 + 12 to check.
        assert_eq!(signature_check_milli(SignatureScheme::Ed25519, 103), 69_211);
        assert_eq!(deserialization_milli(0), 10);
        assert_eq!(deserialization_milli(30), 600);
        assert_eq!(read_access_milli(5, 34), 225_068);
        assert_eq!(write_access_milli(34), 200_136);
        // 13 words of header, then 1 word and one more for 1 to 8 bytes.
        assert_eq!(alloc_mbytes_milli(1), 30_000);
        assert_eq!(alloc_mbytes_milli(9), 32_000);
        // An empty cache: log2(1) = 1 + numbits(1) = 2.
        assert_eq!(cache_access_milli(0), 686);
        assert_eq!(cache_access_milli(688), 729);
    }

    #[test]
    fn ticket_costs_follow_octez_models() {
        // `log2 0 = 1`, `log2 1 = 2`, `log2 2 = 3`.
        assert_eq!(carbonated_find_milli(0), 62);
        assert_eq!(carbonated_find_milli(1), 74);
        assert_eq!(carbonated_update_milli(2), 172);
        assert_eq!(carbonated_fold_milli(2), 98);
        // Zero has no bytes; 255 one, 256 two, -256 two.
        assert_eq!(add_int_milli(&BigInt::from(0), &BigInt::from(255)), 35);
        assert_eq!(add_int_milli(&BigInt::from(0), &BigInt::from(-256)), 36);
        assert_eq!(negate_milli(&BigInt::from(1)), 25);
        assert_eq!(strip_milli(0), 10);
        assert_eq!(strip_milli(5), 255);
        assert_eq!(unparse_type_milli(1), 20);
        assert_eq!(hash_bytes_milli(72), 290);
    }

    #[test]
    fn the_mockup_cache_holds_the_cpmm() {
        let Some(path) = kestrel_testdata::require(
            "michelson/protocol/cpmm.tz",
            "the_mockup_cache_holds_the_cpmm",
        ) else {
            return;
        };
        let text = std::fs::read_to_string(path).expect("cpmm.tz");
        let config = kestrel_michelson::Config {
            legacy: true,
            gas_limit_milli: u64::MAX,
        };
        let script = kestrel_michelson::Script::parse(&text, &config).expect("CPMM typechecks");
        let storage = kestrel_micheline::parse_expression(
            "Pair 1 100 1 \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\" \"KT1AafHA1C1vk959wvHWBispY9Y2f3fxBUUo\"",
        )
        .expect("storage");
        assert_eq!(script.cached_size_bytes(&storage), MOCKUP_CACHED_BYTES);
        assert_eq!(cache_access_milli(MOCKUP_CACHED_BYTES), 600 + 43 * 10);
    }
}
