// Taquito 25 against a running `kestrel node`, with its `kestrel_*` methods: snapshot, transfer,
// revert (the balance comes back), then mine blocks and date the next one. Prints one JSON
// object with what it read, for the Rust test (crates/node/tests/kestrel_clients.rs) to check.
// Usage: node kestrel_methods.mjs <node url>
import { TezosToolkit } from "@taquito/taquito";
import { InMemorySigner } from "@taquito/signer";

const [url] = process.argv.slice(2);
const BOOTSTRAP1 = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
const BOOTSTRAP2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";

async function kestrel(method, body = {}) {
  const response = await fetch(`${url}/kestrel/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method}: ${response.status} ${await response.text()}`);
  return response.json();
}

const tezos = new TezosToolkit(url);
tezos.setSignerProvider(new InMemorySigner(BOOTSTRAP1));
const balance = async () => (await tezos.tz.getBalance(BOOTSTRAP2)).toString();
const result = { before: await balance() };

const { id } = await kestrel("snapshot");
const transfer = await tezos.contract.transfer({ to: BOOTSTRAP2, amount: 5 });
await transfer.confirmation(1);
result.transfer_status = transfer.status;
result.after_transfer = await balance();
result.revert = await kestrel("revert", { id });
result.after_revert = await balance();

// The reverted counter is free again: the same transfer goes through.
const again = await tezos.contract.transfer({ to: BOOTSTRAP2, amount: 2 });
await again.confirmation(1);
result.after_second_transfer = await balance();

await kestrel("set_next_block_timestamp", { timestamp: "2031-06-01T00:00:00Z" });
await kestrel("mine", { blocks: 3 });
const header = await tezos.rpc.getBlockHeader();
result.head_level = header.level;
result.timestamps = [];
for (const level of [header.level - 2, header.level - 1, header.level]) {
  result.timestamps.push((await tezos.rpc.getBlockHeader({ block: `${level}` })).timestamp);
}
console.log(JSON.stringify(result));
