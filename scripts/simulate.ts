/**
 * npm run simulate -- --seeds 500           runs seeds 1 to 500 on anvil, prints each, then the failing ones
 *                                           (one more seed at a time than the machine has cores: each waits on its node much of the time)
 * npm run simulate -- --seed 42             replays one seed (add --node hardhat for Hardhat Network)
 * npm run simulate -- --seeds 50 --from 1000 --node hardhat --transfers 40
 * npm run simulate -- --seeds 500 --parallel 1   runs one seed at a time (each seed has its own node and service)
 * npm run simulate -- --seeds 50 --networks 2     the service pays on a second chain too (NETWORKS_FILE)
 * npm run simulate -- --seeds 300 --profile rollup  the default chain shaped as a rollup (anvil): 250 ms blocks,
 *                                           128 blocks of state, a finalized tag 300 blocks behind, outages
 *                                           longer than the state kept
 * Exits 1 when any seed broke an invariant.
 */
import { availableParallelism } from "node:os";
import { parseArgs } from "node:util";
import { buildService } from "../test/helpers/service-build.js";
import { DEFAULT_SIMULATION, simulateSeed } from "../test/simulation/simulator.js";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "20" },
    from: { type: "string", default: "1" },
    seed: { type: "string" },
    node: { type: "string", default: "anvil" },
    transfers: { type: "string", default: String(DEFAULT_SIMULATION.transfers) },
    parallel: { type: "string", default: String(Math.min(16, availableParallelism() + 1)) },
    networks: { type: "string", default: "1" },
    profile: { type: "string", default: "default" },
  },
});
if (values.profile !== "default" && values.profile !== "rollup") throw new Error("--profile is default or rollup");
const profile = values.profile;
if (values.networks !== "1" && values.networks !== "2") throw new Error("--networks is 1 or 2");
const networks = values.networks === "2" ? 2 : 1;
if (values.node !== "anvil" && values.node !== "hardhat") throw new Error("--node is anvil or hardhat");
if (profile === "rollup" && values.node !== "anvil") throw new Error("the rollup profile runs on anvil");
const node = values.node;
const seeds = values.seed !== undefined ? [Number(values.seed)] : Array.from({ length: Number(values.seeds) }, (_, index) => Number(values.from) + index);
const parallel = Number(values.parallel);
if (!Number.isInteger(parallel) || parallel < 1 || parallel > 16) throw new Error("--parallel is a number of seeds run at once, 1 to 16");
// Each seed starts the compiled service (as npm start does): built first, only what changed since the last build.
await buildService();
const started = Date.now();
// A seed's first line comes once its chain, proxies and service are up and its transfers done (half a minute).
console.log(`simulating ${seeds.length} seed(s) (${seeds[0]}${seeds.length > 1 ? ` to ${seeds.at(-1)}` : ""}) on ${node}, profile ${profile}, ${networks} network(s), ${Math.min(parallel, seeds.length)} at a time: each seed prints a line when it ends`);
const failing: number[] = [];
// How many runs met each fault, over every seed.
const runsMeeting = new Map<string, number>();
// Each seed has a chain, proxies and a service of its own: several run side by side without sharing anything.
let next = 0;
const runner = async () => {
  while (next < seeds.length) {
    const seed = seeds[next++];
    const report = await simulateSeed(seed, { ...DEFAULT_SIMULATION, node, networks, profile, transfers: Number(values.transfers), log: (line) => console.log(line) });
    for (const [fault, times] of Object.entries(report.faults)) if (times > 0) runsMeeting.set(fault, (runsMeeting.get(fault) ?? 0) + 1);
    if (report.violations.length > 0) {
      failing.push(seed);
      for (const violation of report.violations) console.log(`  seed ${seed}: ${violation}`);
    }
  }
};
await Promise.all(Array.from({ length: Math.min(parallel, seeds.length) }, runner));
failing.sort((a, b) => a - b);
console.log(`runs that met each fault: ${JSON.stringify(Object.fromEntries([...runsMeeting].sort(([a], [b]) => a.localeCompare(b))))}`);
console.log(`${seeds.length} seeds in ${Math.round((Date.now() - started) / 1000)} s, ${parallel} at a time`);
console.log(`${seeds.length - failing.length} passed, ${failing.length} failed`);
for (const seed of failing) console.log(`replay: npm run simulate -- --seed ${seed} --node ${node} --transfers ${values.transfers} --networks ${networks} --profile ${profile}`);
process.exit(failing.length > 0 ? 1 : 0);
