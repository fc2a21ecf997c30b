/**
 * What the node's pre-flight of a token transfer costs, asked four ways, against a fresh anvil (#31 item 6,
 * docs/speed.md): one `eth_estimateGas` per request (what the service does), one `eth_call` at a fixed gas
 * limit (one execution where an estimate searches for the limit), ten estimates in one JSON-RPC batch, and
 * ten transfers in one `eth_simulateV1` (one call for ten, each seeing the state the ones before it left). Each at concurrency 50 over 3,000 transfers to fresh recipients, in alternating rounds; prints
 * transfers pre-flighted a second and calls per transfer, each against the same round's single estimates.
 *
 * npx tsx bench/preflight-calls-bench.ts          (ROUNDS=3 by default)
 */
import { Interface, hexlify, randomBytes } from "ethers";
import { request } from "undici";
import { startAnvil } from "../src/dev/anvil.js";
import { setUpDemoChain } from "../src/dev/demo-chain.js";

const TRANSFERS = 3_000;
const CONCURRENCY = 50;
const PER_REQUEST = 10;
const ROUNDS = Number(process.env.ROUNDS ?? 3);

const anvil = await startAnvil();
try {
  const demo = await setUpDemoChain(anvil.rpcUrl);
  const erc20 = new Interface(["function transfer(address to, uint256 amount) returns (bool)"]);
  const transferCall = () => ({ from: demo.walletAddress, to: demo.tokenAddress, data: erc20.encodeFunctionData("transfer", [hexlify(randomBytes(20)), 1n]) });
  let id = 0;
  const rpc = async (body: unknown) => {
    const answer = await request(anvil.rpcUrl, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
    const parsed = (await answer.body.json()) as { error?: unknown } | { error?: unknown }[];
    const failed = (Array.isArray(parsed) ? parsed : [parsed]).find((each) => each.error !== undefined);
    if (failed) throw new Error(`the node refused: ${JSON.stringify(failed.error)}`);
  };
  const estimate = () => ({ jsonrpc: "2.0", id: ++id, method: "eth_estimateGas", params: [transferCall(), "latest"] });
  interface Way {
    perRequest: number;
    callsPerRequest: number;
    body: () => unknown;
  }
  const ways: Record<string, Way> = {
    "eth_estimateGas, one a request": { perRequest: 1, callsPerRequest: 1, body: estimate },
    "eth_call at a fixed gas limit": { perRequest: 1, callsPerRequest: 1, body: () => ({ jsonrpc: "2.0", id: ++id, method: "eth_call", params: [{ ...transferCall(), gas: "0x186a0" }, "latest"] }) },
    [`eth_estimateGas, ${PER_REQUEST} in a JSON-RPC batch`]: { perRequest: PER_REQUEST, callsPerRequest: PER_REQUEST, body: () => Array.from({ length: PER_REQUEST }, estimate) },
    [`eth_simulateV1, ${PER_REQUEST} transfers a call`]: {
      perRequest: PER_REQUEST,
      callsPerRequest: 1,
      body: () => ({ jsonrpc: "2.0", id: ++id, method: "eth_simulateV1", params: [{ blockStateCalls: [{ calls: Array.from({ length: PER_REQUEST }, transferCall) }] }, "latest"] }),
    },
  };
  // Transfers pre-flighted a second, CONCURRENCY requests in flight.
  const measure = async (way: Way) => {
    let started = 0;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (; started < TRANSFERS; started += way.perRequest) await rpc(way.body());
      }),
    );
    return TRANSFERS / ((performance.now() - began) / 1000);
  };
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(ways).map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) for (const [name, way] of Object.entries(ways)) rates[name].push(await measure(way));
  const [single] = Object.keys(ways);
  console.log(`pre-flight of ERC-20 transfers on anvil, concurrency ${CONCURRENCY}, ${TRANSFERS} transfers a round, ${ROUNDS} rounds`);
  for (const [name, way] of Object.entries(ways)) {
    const ratios = rates[name].map((rate, round) => (rate / rates[single][round]).toFixed(2)).join(", ");
    const shown = rates[name].map((rate) => `${Math.round(rate)}/s`).join(", ");
    console.log(`  ${name.padEnd(40)} ${shown}  (x ${ratios} of the single estimates)  ${(way.callsPerRequest / way.perRequest).toFixed(1)} calls a transfer`);
  }
} finally {
  await anvil.stop();
}
