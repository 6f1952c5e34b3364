"""pytezos 3.20 against a running `kestrel node`: reveal a new account, transfer tez, originate
the FA1.2 reference contract, call its `transfer`, read its storage and a big-map value. Prints
one JSON object with what it read, for the Rust test (crates/node/tests/clients.rs) to check.

Usage: python3 pytezos_client.py <node url> <fa12_reference.tz path>
"""

import json
import sys
from decimal import Decimal

from pytezos import ContractInterface, pytezos
from pytezos.operation.result import OperationResult

URL, FA12_PATH = sys.argv[1], sys.argv[2]
BOOTSTRAP1 = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh"
BOOTSTRAP2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN"
# A key no genesis account uses: the account is new, its key unrevealed.
FRESH = "edsk4Gx4CdgGnQeq2etU7qvvxGFW1F1koULhBWhWUoQvpT3ZDanLsQ"



def status(operation):
    """Taquito's word for the operation's outcome."""
    return "applied" if OperationResult.is_applied(operation.opg_result) else "failed"


funder = pytezos.using(shell=URL, key=BOOTSTRAP1)
fresh = pytezos.using(shell=URL, key=FRESH)
fresh_address = fresh.key.public_key_hash()
admin = funder.key.public_key_hash()
result = {"fresh": fresh_address}

funding = funder.transaction(destination=fresh_address, amount=Decimal(100)).send(
    min_confirmations=1
)
result["funding_status"] = status(funding)

result["revealed_before"] = fresh.shell.head.context.contracts[fresh_address].manager_key() is not None
fresh.reveal().send(min_confirmations=1)
result["revealed_after"] = fresh.shell.head.context.contracts[fresh_address].manager_key() is not None

fresh.transaction(destination=BOOTSTRAP2, amount=Decimal(1)).send(min_confirmations=1)
result["fresh_balance"] = str(fresh.account(fresh_address)["balance"])

script = ContractInterface.from_file(FA12_PATH).script(
    initial_storage={
        "ledger": {admin: {"balance": 1000, "approvals": {}}},
        "admin": admin,
        "paused": False,
        "totalSupply": 1000,
    }
)
origination = funder.origination(script=script).send(min_confirmations=1)
address = OperationResult.originated_contracts(origination.opg_result)[0]
result["contract"] = address

contract = funder.contract(address)
call = contract.transfer({"from": admin, "to": fresh_address, "value": 30}).send(
    min_confirmations=1
)
result["call_status"] = status(call)

storage = contract.storage()
result["total_supply"] = str(storage["totalSupply"])
result["fresh_tokens"] = str(contract.storage["ledger"][fresh_address]()["balance"])
result["admin_tokens"] = str(contract.storage["ledger"][admin]()["balance"])
result["head_level"] = funder.shell.head.header()["level"]

print(json.dumps(result))
