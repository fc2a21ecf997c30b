/**
 * What several RPC endpoints cost: the RPC cost of bench/rpc-cost.ts measured in the same run through one
 * endpoint (the baseline) and through three (each a counting proxy in front of the same node), in total and
 * per endpoint. Targets (issue #30): idle at most 0.25 calls a second in total; per transfer at most 2.0
 * calls plus one eth_sendRawTransaction per extra endpoint.
 */
import { type RpcCost, measureRpcCost } from "./rpc-cost.js";

const idleSeconds = Number(process.env.RPC_IDLE_SECONDS ?? 30);
const TRANSFERS = 200;
const CONCURRENCY = 10;

function describe(label: string, cost: RpcCost): void {
  const each = (calls: number[], per: number) => calls.map((count) => (count / per).toFixed(3)).join(" + ");
  console.log(label);
  console.log(`  idle      ${cost.idleCallsPerSecond.toFixed(3)} calls/s in total (${each(cost.perEndpoint.idle, cost.idleSeconds)} per endpoint)  ${JSON.stringify(cost.idleByMethod)}`);
  console.log(
    `  sending   ${cost.callsPerTransferWhileSending.toFixed(3)} calls per transfer in total (${each(cost.perEndpoint.sending, cost.transfers)} per endpoint), ` +
      `${cost.callsPerTransferUntilSettled.toFixed(3)} until settled  ${JSON.stringify(cost.sendingByMethod)}`,
  );
  console.log(`  following ${cost.callsPerNewBlockWhileUnfinal.toFixed(3)} calls per new block (${each(cost.perEndpoint.unfinal, cost.unfinalBlocks)} per endpoint)  ${JSON.stringify(cost.unfinalByMethod)}`);
}

const one = await measureRpcCost(idleSeconds, TRANSFERS, CONCURRENCY, 1);
const three = await measureRpcCost(idleSeconds, TRANSFERS, CONCURRENCY, 3);
describe("one endpoint (baseline)", one);
describe("three endpoints", three);
const broadcastsPerTransfer = (three.sendingByMethod.eth_sendRawTransaction ?? 0) / three.transfers;
const otherPerTransfer = three.callsPerTransferWhileSending - broadcastsPerTransfer;
console.log("three against one");
console.log(`  idle      ${(three.idleCallsPerSecond / one.idleCallsPerSecond).toFixed(2)}x (target: at most 0.25 calls/s in total: ${three.idleCallsPerSecond <= 0.25 ? "met" : "MISSED"})`);
console.log(
  `  sending   ${otherPerTransfer.toFixed(3)} calls per transfer besides the broadcasts (target at most 2.0: ${otherPerTransfer <= 2.0 ? "met" : "MISSED"}), ` +
    `${broadcastsPerTransfer.toFixed(3)} eth_sendRawTransaction per transfer (target 3, one per endpoint)`,
);
