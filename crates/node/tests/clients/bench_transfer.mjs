// Times Taquito transfers with confirmation(1) against a running `kestrel node` (BENCHMARKS.md).
// Usage: node bench_transfer.mjs <node url> [transfers]
import { TezosToolkit } from "@taquito/taquito";
import { InMemorySigner } from "@taquito/signer";

const [url, count = "30"] = process.argv.slice(2);
const tezos = new TezosToolkit(url);
tezos.setSignerProvider(
  new InMemorySigner("edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh"),
);
const times = [];
for (let i = 0; i < Number(count); i++) {
  const started = performance.now();
  const operation = await tezos.contract.transfer({
    to: "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN",
    amount: 1,
  });
  await operation.confirmation(1);
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
console.log(
  JSON.stringify({ transfers: times.length, median_ms: median, min_ms: times[0], max_ms: times.at(-1) }),
);
