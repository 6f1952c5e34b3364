// Taquito 25 against a running `kestrel node`: reveal a new account, transfer tez, originate the
// FA1.2 reference contract, call its `transfer`, read its storage and a big-map value (Taquito
// packs the key with the node's `pack_data`); then originate Liquidity Baking's `lqt.tz` and
// `cpmm.tz` over that token, fund the exchange, `approve` it, estimate an `xtzToToken` call, run
// it off-chain with `run_code`, send it, read a TZIP-4 view and an on-chain view. Prints one
// JSON object with what it read, for the Rust test (crates/node/tests/clients.rs) to check.
// Usage: node taquito.mjs <node url> <fa12_reference.tz path> <lqt.tz path> <cpmm.tz path>
import { readFileSync } from "node:fs";
import { TezosToolkit } from "@taquito/taquito";
import { InMemorySigner } from "@taquito/signer";

const [url, fa12Path, lqtPath, cpmmPath] = process.argv.slice(2);
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

// Liquidity Baking: `lqt.tz` originated as a plain FA1.2 token; the genesis CPMM (`cpmm.tz`
// typechecks only in legacy mode, so Octez lets no client originate it) over its test token.
const lqtOrigination = await funder.contract.originate({
  code: readFileSync(lqtPath, "utf8"),
  init: `(Pair {} {} "${admin}" 0)`,
});
await lqtOrigination.confirmation(1);
result.lqt_status = lqtOrigination.status;
const cpmmAddress = await (
  await fetch(`${url}/chains/main/blocks/head/context/liquidity_baking/cpmm_address`)
).json();
const cpmm = await funder.contract.at(cpmmAddress);
const token = await funder.contract.at((await cpmm.storage()).tokenAddress);
result.cpmm = cpmmAddress;
const minted = await token.methodsObject.mintOrBurn({ quantity: 1000, target: admin }).send();
await minted.confirmation(1);
const approval = await token.methodsObject.approve({ spender: cpmmAddress, value: 500 }).send();
await approval.confirmation(1);
result.approve_status = approval.status;
const deadline = "2100-01-01T00:00:00Z";
const liquidity = await cpmm.methodsObject
  .addLiquidity({ owner: admin, minLqtMinted: 1, maxTokensDeposited: 500, deadline })
  .send({ amount: 50_000, mutez: true });
await liquidity.confirmation(1);
result.add_liquidity_status = liquidity.status;
result.pools_before_swap = await fresh.rpc.getStorage(cpmmAddress);

// xtzToToken: estimated, run off-chain with run_code, then sent by the fresh account.
const swapParameter = cpmm.methodsObject
  .xtzToToken({ to: freshAddress, minTokensBought: 1, deadline })
  .toTransferParams({ amount: 10_000, mutez: true });
const estimate = await fresh.estimate.transfer(swapParameter);
result.estimate_fee = estimate.suggestedFeeMutez.toString();
result.estimate_milligas = estimate.consumedMilligas.toString();
const cpmmScript = await fresh.rpc.getScript(cpmmAddress);
const ran = await fresh.rpc.runCode({
  script: cpmmScript.code,
  storage: cpmmScript.storage,
  input: swapParameter.parameter.value,
  entrypoint: "xtzToToken",
  amount: "10000",
  chain_id: await fresh.rpc.getChainId(),
});
result.run_code_storage = ran.storage;
result.run_code_operations = ran.operations.length;
result.fresh_before_swap = (await fresh.tz.getBalance(freshAddress)).toString();
const swap = await fresh.contract.transfer(swapParameter);
await swap.confirmation(1);
result.swap_status = swap.status;
result.fresh_after_swap = (await fresh.tz.getBalance(freshAddress)).toString();
const block = await fresh.rpc.getBlock();
result.swap_receipt = block.operations[3].find((op) => op.hash === swap.hash).contents[0];
result.pools_after_swap = await fresh.rpc.getStorage(cpmmAddress);
result.fresh_swapped_tokens = (await (await token.storage()).tokens.get(freshAddress)).toString();
// The same balance through the token's TZIP-4 view entrypoint (`run_view`).
result.tzip4_balance = (await token.views.getBalance(freshAddress).read()).toString();

// An on-chain view (`run_script_view`).
const viewed = await funder.contract.originate({
  code: `parameter unit; storage nat; code { CDR; NIL operation; PAIR };
         view "add" nat nat { UNPAIR; ADD }`,
  storage: 7,
});
await viewed.confirmation(1);
const viewContract = await funder.contract.at((await viewed.contract()).address);
result.onchain_view = (
  await viewContract.contractViews.add(5).executeView({ viewCaller: admin })
).toString();

console.log(JSON.stringify(result));
