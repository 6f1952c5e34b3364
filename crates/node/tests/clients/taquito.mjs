// Taquito 25 against a running `kestrel node`: reveal a new account, transfer tez, originate the
// FA1.2 reference contract, call its `transfer`, read its storage and a big-map value (Taquito
// packs the key with the node's `pack_data`). Prints one JSON object with what it read, for the
// Rust test (crates/node/tests/clients.rs) to check.
// Usage: node taquito.mjs <node url> <fa12_reference.tz path>
import { readFileSync } from "node:fs";
import { TezosToolkit } from "@taquito/taquito";
import { InMemorySigner } from "@taquito/signer";

const [url, fa12Path] = process.argv.slice(2);
const BOOTSTRAP1 = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
const BOOTSTRAP2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";
// A key no genesis account uses: the account is new, its key unrevealed.
const FRESH = "edsk4Gx4CdgGnQeq2etU7qvvxGFW1F1koULhBWhWUoQvpT3ZDanLsQ";

function toolkit(secretKey) {
  const tezos = new TezosToolkit(url);
  tezos.setSignerProvider(new InMemorySigner(secretKey));
  return tezos;
}

const funder = toolkit(BOOTSTRAP1);
const fresh = toolkit(FRESH);
const freshAddress = await fresh.signer.publicKeyHash();
const result = { fresh: freshAddress };

const funding = await funder.contract.transfer({ to: freshAddress, amount: 100 });
await funding.confirmation(1);
result.funding_status = funding.status;

result.revealed_before = (await fresh.rpc.getManagerKey(freshAddress)) !== null;
const reveal = await fresh.contract.reveal({});
await reveal.confirmation(1);
result.revealed_after = (await fresh.rpc.getManagerKey(freshAddress)) !== null;

const payment = await fresh.contract.transfer({ to: BOOTSTRAP2, amount: 1 });
await payment.confirmation(1);
result.fresh_balance = (await fresh.tz.getBalance(freshAddress)).toString();

const admin = await funder.signer.publicKeyHash();
const code = readFileSync(fa12Path, "utf8");
const origination = await funder.contract.originate({
  code,
  init: `(Pair { Elt "${admin}" (Pair 1000 {}) } (Pair "${admin}" (Pair False 1000)))`,
});
await origination.confirmation(1);
const contract = await origination.contract();
result.contract = contract.address;

const call = await contract.methodsObject
  .transfer({ from: admin, to: freshAddress, value: 30 })
  .send();
await call.confirmation(1);
result.call_status = call.status;

const storage = await contract.storage();
result.total_supply = storage.totalSupply.toString();
const entry = await storage.ledger.get(freshAddress);
result.fresh_tokens = entry.balance.toString();
const adminEntry = await storage.ledger.get(admin);
result.admin_tokens = adminEntry.balance.toString();
result.head_level = (await funder.rpc.getBlockHeader()).level;

console.log(JSON.stringify(result));
