"""pytezos 3.20 against a running `kestrel node`: reveal a new account, transfer tez, originate
the FA1.2 reference contract, call its `transfer`, read its storage and a big-map value; then
originate Liquidity Baking's `lqt.tz`, fund the genesis CPMM (`approve`, `addLiquidity`), autofill
an `xtzToToken` call, run it with `run_code`, send it, read the token's TZIP-4 `getBalance` view
and an on-chain view. Prints one JSON object with what it read, for the Rust test
(crates/node/tests/clients.rs) to check.

Usage: python3 pytezos_client.py <node url> <fa12_reference.tz> <lqt.tz> <cpmm.tz>
"""

import json
import sys
from decimal import Decimal

from pytezos import ContractInterface, pytezos
from pytezos.operation.result import OperationResult

URL, FA12_PATH, LQT_PATH = sys.argv[1], sys.argv[2], sys.argv[3]
# 2100-01-01T00:00:00Z: a deadline the swaps never reach.
DEADLINE = 4102444800
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

# Liquidity Baking: `lqt.tz` originated as a plain FA1.2 token; the genesis CPMM (`cpmm.tz`
# typechecks only in legacy mode, so Octez lets no client originate it) over its test token.
lqt_script = ContractInterface.from_file(LQT_PATH).script(
    initial_storage={"tokens": {}, "allowances": {}, "admin": admin, "total_supply": 0}
)
result["lqt_status"] = status(funder.origination(script=lqt_script).send(min_confirmations=1))
cpmm_address = funder.shell.head.context.liquidity_baking.cpmm_address()
result["cpmm"] = cpmm_address
cpmm = funder.contract(cpmm_address)
token = funder.contract(cpmm.storage()["tokenAddress"])
token.mintOrBurn({"quantity": 1000, "target": admin}).send(min_confirmations=1)
approval = token.approve({"spender": cpmm_address, "value": 500}).send(min_confirmations=1)
result["approve_status"] = status(approval)
liquidity = cpmm.addLiquidity(
    {"owner": admin, "minLqtMinted": 1, "maxTokensDeposited": 500, "deadline": DEADLINE}
).with_amount(50_000)
result["add_liquidity_status"] = status(liquidity.send(min_confirmations=1))
cpmm_storage = fresh.shell.head.context.contracts[cpmm_address].storage
result["pools_before_swap"] = cpmm_storage()

# xtzToToken: autofilled (simulated), run with run_code, then sent by the fresh account.
swap_call = fresh.contract(cpmm_address).xtzToToken(
    {"to": fresh_address, "minTokensBought": 1, "deadline": DEADLINE}
).with_amount(10_000)
ran = swap_call.run_code(storage=cpmm.storage())
result["run_code_storage"] = [
    {"int": str(ran.storage[field])} for field in ("tokenPool", "xtzPool", "lqtTotal")
]
result["run_code_operations"] = len(ran.operations)
swap = swap_call.as_transaction().autofill()
simulated = swap.run_operation()["contents"][0]["metadata"]
result["estimate_fee"] = str(swap.contents[0]["fee"])
result["estimate_milligas"] = str(
    sum(
        int(step["consumed_milligas"])
        for step in [simulated["operation_result"]]
        + [internal["result"] for internal in simulated["internal_operation_results"]]
    )
)
result["fresh_before_swap"] = str(fresh.account(fresh_address)["balance"])
injected = swap.sign().inject(min_confirmations=1)
block_operations = fresh.shell.head()["operations"][3]
receipt = next(op for op in block_operations if op["hash"] == injected["hash"])["contents"][0]
result["swap_receipt"] = receipt
result["swap_status"] = receipt["metadata"]["operation_result"]["status"]
result["fresh_after_swap"] = str(fresh.account(fresh_address)["balance"])
result["pools_after_swap"] = cpmm_storage()
result["fresh_swapped_tokens"] = str(token.storage["tokens"][fresh_address]())
# The same balance through the token's TZIP-4 view entrypoint.
result["tzip4_balance"] = str(token.getBalance(fresh_address, None).callback_view())

# An on-chain view (`run_script_view`).
viewed_script = ContractInterface.from_michelson(
    'parameter unit; storage nat; code { CDR; NIL operation; PAIR }; view "add" nat nat { UNPAIR; ADD }'
).script(initial_storage=7)
viewed_origination = funder.origination(script=viewed_script).send(min_confirmations=1)
viewed = funder.contract(OperationResult.originated_contracts(viewed_origination.opg_result)[0])
result["onchain_view"] = str(viewed.view.add(5).run_view())

print(json.dumps(result))
