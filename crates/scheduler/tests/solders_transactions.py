"""Transactions built and signed by solders (the Python binding of the Solana Rust SDK), for
tests/client_library.rs: one line per item, space-separated.

  table <table address hex> <address hex>...
  tx <wire hex> <first signature hex> <signatures> <unit limit or -> <unit price or ->
"""

from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.compute_budget import (
    request_heap_frame,
    set_compute_unit_limit,
    set_compute_unit_price,
)
from solders.hash import Hash
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.system_program import TransferParams, transfer
from solders.transaction import Transaction, VersionedTransaction

blockhash = Hash.from_bytes(bytes([5] * 32))
payers = [Keypair.from_seed(bytes([seed] * 32)) for seed in range(1, 9)]
recipients = [Pubkey.from_bytes(bytes([0x40 + index] * 32)) for index in range(8)]
table_key = Pubkey.from_bytes(bytes([0x7A] * 32))
table = AddressLookupTableAccount(table_key, recipients)
print("table", bytes(table_key).hex(), " ".join(bytes(a).hex() for a in recipients))


def emit(wire, signatures, limit, price):
    print(
        "tx",
        bytes(wire).hex(),
        bytes(wire.signatures[0]).hex(),
        len(signatures),
        "-" if limit is None else limit,
        "-" if price is None else price,
    )


for index, (limit, price) in enumerate(
    [(12_345, 777), (200_000, 1), (1_400_000, 5_000_000), (None, 10_000), (None, None), (3_000, None)]
):
    payer = payers[index % len(payers)]
    instructions = []
    if limit is not None:
        instructions.append(set_compute_unit_limit(limit))
    if price is not None:
        instructions.append(set_compute_unit_price(price))
    if index == 2:
        instructions.append(request_heap_frame(64 * 1024))
    instructions.append(
        transfer(TransferParams(from_pubkey=payer.pubkey(), to_pubkey=recipients[index], lamports=1_000 + index))
    )
    message = Message.new_with_blockhash(instructions, payer.pubkey(), blockhash)
    emit(Transaction([payer], message, blockhash), [payer], limit, price)
    # The same instructions as a v0 transaction whose recipient comes from the lookup table.
    message = MessageV0.try_compile(payer.pubkey(), instructions, [table], blockhash)
    emit(VersionedTransaction(message, [payer]), [payer], limit, price)

# Two signers: the second pays nothing but signs a transfer of its own.
first, second = payers[6], payers[7]
instructions = [
    set_compute_unit_limit(50_000),
    set_compute_unit_price(42),
    transfer(TransferParams(from_pubkey=first.pubkey(), to_pubkey=recipients[6], lamports=5)),
    transfer(TransferParams(from_pubkey=second.pubkey(), to_pubkey=recipients[7], lamports=6)),
]
message = Message.new_with_blockhash(instructions, first.pubkey(), blockhash)
emit(Transaction([first, second], message, blockhash), [first, second], 50_000, 42)
