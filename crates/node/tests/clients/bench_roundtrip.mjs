// Client round trip against `kestrel node` and against a mock answering fixed JSON (issue 19, BENCHMARKS.md).
//
// 1. Starts `kestrel node` (release build) on a free port.
// 2. Records: each client (Taquito 25 in this process, pytezos 3.20 through bench_roundtrip.py) makes two
//    transfers through a recording proxy in front of the node; for every method + path the proxy keeps the
//    answers of the last round that asked for it, in order.
// 3. Serves those answers from a mock (one per client) instantly, cycling through each path's answers, so the
//    answers that must vary within a round (head before and after the injection) do; the counter and the head
//    stay fixed across rounds, so the client signs the same operation and finds it in the recorded block.
// 4. Times the same round (Taquito `transfer` + `confirmation(1)`, pytezos `send(min_confirmations=1)`)
//    against the node and against the mock, alternating, and prints each median and the ratio node / mock.
//
// Usage (from the workspace root, after `cargo build --release -p kestrel-cli`):
//   flock /tmp/kestrel-bench.lock node crates/node/tests/clients/bench_roundtrip.mjs [rounds] [kestrel binary]
import { spawn } from "node:child_process";
import http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TezosToolkit } from "@taquito/taquito";
import { InMemorySigner } from "@taquito/signer";

const [rounds = "20", kestrel = "target/release/kestrel"] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
const BOOTSTRAP1 = "edsk3gUfUPyBSfrS9CCgmCiQsTCHGkviBDusMxDJstFtojtc1zcpsh";
const BOOTSTRAP2 = "tz1gjaF81ZRRvdzjobyfVNsAeSC6PScjfQwN";
const agent = new http.Agent({ keepAlive: true });

const listen = (server) =>
  new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server.address().port)));

async function freePort() {
  const server = http.createServer();
  const port = await listen(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function readBody(stream) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    stream.on("data", (chunk) => chunks.push(chunk));
    stream.on("end", () => resolve(Buffer.concat(chunks)));
    stream.on("error", reject);
  });
}

// A proxy to `target` recording, per method + path, the answers of the last round that asked for it.
async function recorder(target) {
  const table = new Map();
  let round = 0;
  const server = http.createServer(async (request, response) => {
    if (request.url === "/__round") {
      round += 1;
      response.end("{}");
      return;
    }
    const body = await readBody(request);
    const started = performance.now();
    const forwarded = http.request(`${target}${request.url}`, {
      method: request.method,
      headers: { "content-type": request.headers["content-type"] ?? "application/json" },
      agent,
    });
    forwarded.on("response", async (answer) => {
      const answerBody = await readBody(answer);
      const key = `${request.method} ${request.url}`;
      const entry = table.get(key);
      const exchange = {
        status: answer.statusCode,
        type: answer.headers["content-type"],
        body: answerBody,
        ms: performance.now() - started,
      };
      if (entry === undefined || entry.round !== round) table.set(key, { round, answers: [exchange] });
      else entry.answers.push(exchange);
      response.writeHead(answer.statusCode, { "content-type": exchange.type ?? "application/json" });
      response.end(answerBody);
    });
    forwarded.end(body);
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, table, server, nextRound: () => (round += 1) };
}

// A mock serving a recorded table: each method + path cycles through its recorded answers.
async function mock(table) {
  const next = new Map();
  const server = http.createServer(async (request, response) => {
    await readBody(request);
    const key = `${request.method} ${request.url}`;
    const entry = table.get(key);
    if (entry === undefined) {
      console.error(`mock: no recorded answer for ${key}`);
      response.writeHead(404, { "content-type": "application/json" });
      response.end("[]");
      return;
    }
    const index = next.get(key) ?? 0;
    next.set(key, index + 1);
    const answer = entry.answers[index % entry.answers.length];
    response.writeHead(answer.status, {
      "content-type": answer.type ?? "application/json",
      "content-length": answer.body.length,
    });
    response.end(answer.body);
  });
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, server };
}

function taquito(url) {
  const tezos = new TezosToolkit(url);
  tezos.setSignerProvider(new InMemorySigner(BOOTSTRAP1));
  return tezos;
}

async function taquitoRound(tezos) {
  const started = performance.now();
  const operation = await tezos.contract.transfer({ to: BOOTSTRAP2, amount: 1 });
  await operation.confirmation(1);
  return performance.now() - started;
}

// Runs bench_roundtrip.py without blocking this process's event loop (the proxies and mocks live in it).
async function python(args) {
  const child = spawn("python3", [path.join(here, "bench_roundtrip.py"), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const output = await readBody(child.stdout);
  const code = await new Promise((resolve) => child.on("close", resolve));
  if (code !== 0) throw new Error(`bench_roundtrip.py ${args[0]} exited with ${code}`);
  return output.toString();
}

// The node's slowest answers in the recorded rounds (time through the proxy), to see where its time goes.
function slowest(table) {
  return [...table]
    .map(([key, entry]) => [key, entry.answers.reduce((sum, answer) => sum + answer.ms, 0)])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([key, ms]) => `${key.slice(0, 70)}: ${ms.toFixed(1)} ms`);
}

const median = (times) => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)];

function report(client, nodeTimes, mockTimes, table) {
  const node = median(nodeTimes);
  const mocked = median(mockTimes);
  return {
    client,
    rounds: nodeTimes.length,
    node_median_ms: Number(node.toFixed(2)),
    mock_median_ms: Number(mocked.toFixed(2)),
    ratio_node_to_mock: Number((node / mocked).toFixed(3)),
    node_min_max_ms: [Math.min(...nodeTimes), Math.max(...nodeTimes)].map((t) => Number(t.toFixed(1))),
    mock_min_max_ms: [Math.min(...mockTimes), Math.max(...mockTimes)].map((t) => Number(t.toFixed(1))),
    recorded_slowest_node_answers: slowest(table),
  };
}

const nodePort = await freePort();
const node = spawn(kestrel, ["node", "--port", String(nodePort)], { stdio: ["ignore", "ignore", "inherit"] });
const nodeUrl = `http://127.0.0.1:${nodePort}`;
try {
  for (let tries = 0; ; tries++) {
    try {
      const answer = await fetch(`${nodeUrl}/chains/main/chain_id`);
      if (answer.ok) break;
    } catch (error) {
      if (tries > 200) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }

  // Record two rounds per client: one-time requests (constants, protocol) come from the first.
  const taquitoRecorder = await recorder(nodeUrl);
  const taquitoRecording = taquito(taquitoRecorder.url);
  for (let i = 0; i < 2; i++) {
    taquitoRecorder.nextRound();
    await taquitoRound(taquitoRecording);
  }
  const pytezosRecorder = await recorder(nodeUrl);
  await python(["record", pytezosRecorder.url, "2"]);
  const taquitoMock = await mock(taquitoRecorder.table);
  const pytezosMock = await mock(pytezosRecorder.table);

  // Taquito: one warm-up round on each side, then alternate node, mock.
  const onNode = taquito(nodeUrl);
  const onMock = taquito(taquitoMock.url);
  await taquitoRound(onNode);
  await taquitoRound(onMock);
  const taquitoTimes = { node: [], mock: [] };
  for (let i = 0; i < Number(rounds); i++) {
    taquitoTimes.node.push(await taquitoRound(onNode));
    taquitoTimes.mock.push(await taquitoRound(onMock));
  }
  console.log(JSON.stringify(report("taquito 25", taquitoTimes.node, taquitoTimes.mock, taquitoRecorder.table)));

  // pytezos: its own process, alternating node, mock the same way.
  const times = JSON.parse(await python(["time", nodeUrl, pytezosMock.url, rounds]));
  console.log(JSON.stringify(report("pytezos 3.20", times.a_ms, times.b_ms, pytezosRecorder.table)));

  for (const server of [taquitoRecorder.server, pytezosRecorder.server, taquitoMock.server, pytezosMock.server]) {
    server.closeAllConnections();
    server.close();
  }
} finally {
  node.kill();
  agent.destroy();
}
