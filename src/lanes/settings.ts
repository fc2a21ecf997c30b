/** How a lane (one wallet of the pool) prices, paces, re-prices and funds its transactions. */
import { Type } from "@sinclair/typebox";
import { parseEther } from "ethers";
import { ETHER, GWEI, HEX_ADDRESS, type RawSettings, settingsPart } from "../settings/settings-part.js";

const VARIABLES = {
  idempotencyKeyTtlHours: "IDEMPOTENCY_KEY_TTL_HOURS",
  rebroadcastAfterMs: "REBROADCAST_AFTER_MS",
  feeTipPercentile: "FEE_TIP_PERCENTILE",
  minPriorityFeePerGas: "MIN_PRIORITY_FEE_PER_GAS",
  maxFeePerGas: "MAX_FEE_PER_GAS",
  maxPriorityFeePerGas: "MAX_PRIORITY_FEE_PER_GAS",
  gasLimitMultiplier: "GAS_LIMIT_MULTIPLIER",
  stuckAfterBlocks: "STUCK_AFTER_BLOCKS",
  repriceUnminedAfterMs: "REPRICE_UNMINED_AFTER_MS",
  maxInFlightPerLane: "MAX_IN_FLIGHT_PER_LANE",
  transferSlotWaitMs: "TRANSFER_SLOT_WAIT_MS",
  gasTopUpFrom: "GAS_TOPUP_FROM",
  gasTopUpBelow: "GAS_TOPUP_BELOW",
  gasTopUpTo: "GAS_TOPUP_TO",
  feeBudgetPerDay: "FEE_BUDGET_PER_DAY",
  testFaultPoint: "TEST_FAULT_POINT",
} as const;

const GWEI_EXPECTED = "must be a plain decimal number of gwei, such as 30 or 0.5";
const ETHER_EXPECTED = "must be a plain decimal number of ether, such as 0.05";

export const LANE_SETTINGS = settingsPart({
  schema: {
    idempotencyKeyTtlHours: Type.Number({ exclusiveMinimum: 0, maximum: 8760, default: 24 }),
    rebroadcastAfterMs: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 15_000, description: "unmined this long, a sent transaction is checked and sent again if the node lost it" }),
    feeTipPercentile: Type.Integer({ minimum: 0, maximum: 100, default: 50, description: "which percentile of recent blocks' tips to offer" }),
    minPriorityFeePerGas: Type.String({ pattern: GWEI, default: "0.001", description: "the least tip offered, gwei" }),
    maxFeePerGas: Type.Optional(Type.String({ pattern: GWEI, description: "cap on maxFeePerGas, gwei" })),
    maxPriorityFeePerGas: Type.Optional(Type.String({ pattern: GWEI, description: "cap on maxPriorityFeePerGas, gwei" })),
    gasLimitMultiplier: Type.String({ pattern: "^[0-9]+(\\.[0-9]{1,4})?$", default: "1.0", description: "gas limit = eth_estimateGas x this (at least 1)" }),
    stuckAfterBlocks: Type.Integer({ minimum: 1, maximum: 10_000, default: 3, description: "blocks a transfer waits unmined before an underpriced one is re-priced" }),
    repriceUnminedAfterMs: Type.Integer({
      minimum: 100,
      maximum: 86_400_000,
      default: 60_000,
      description: "the wallet's next transaction, unmined at a fair price while the chain makes blocks without it, is re-priced after this long (and STUCK_AFTER_BLOCKS blocks) whatever any node says of it, at most 3 times",
    }),
    maxInFlightPerLane: Type.Integer({
      minimum: 1,
      maximum: 4096,
      default: 16,
      description: "at most this many of a wallet's (a pool lane's) transactions pending at the node; twice as many transfers taken at once (geth keeps 16 executable per sender for sure)",
    }),
    transferSlotWaitMs: Type.Integer({
      minimum: 0,
      maximum: 60_000,
      default: 10_000,
      description: "how long a new transfer waits for room in a full wallet (every lane of a pool) before it is answered 503 NO_LANE_AVAILABLE; a signed transfer waits as long for room at the node",
    }),
    gasTopUpFrom: Type.Optional(Type.String({ pattern: HEX_ADDRESS, description: "the pool's wallet that sends ETH for gas to the lanes that run low (GAS_TOPUP_BELOW, GAS_TOPUP_TO)" })),
    gasTopUpBelow: Type.Optional(Type.String({ pattern: ETHER, description: "a lane whose ETH balance falls below this (ether) is topped up" })),
    gasTopUpTo: Type.Optional(Type.String({ pattern: ETHER, description: "to this ETH balance (ether); more than GAS_TOPUP_BELOW" })),
    feeBudgetPerDay: Type.Optional(
      Type.String({ pattern: ETHER, description: "the network's wallets' fees in 24 hours (ether of its coin) above which the metric wallet_fee_budget_spent_ratio reaches 1 and FeeBudgetSpent pages" }),
    ),
    testFaultPoint: Type.Optional(Type.Union([Type.Literal("after-sign"), Type.Literal("after-broadcast"), Type.Literal("after-replacement-sign")])),
  },
  variables: VARIABLES,
  expectations: {
    minPriorityFeePerGas: GWEI_EXPECTED,
    maxFeePerGas: GWEI_EXPECTED,
    maxPriorityFeePerGas: GWEI_EXPECTED,
    gasLimitMultiplier: "must be a plain decimal number such as 1.2",
    gasTopUpFrom: "must be the address (0x and 40 hex digits) of one of the pool's wallets",
    gasTopUpBelow: ETHER_EXPECTED,
    gasTopUpTo: ETHER_EXPECTED,
    feeBudgetPerDay: ETHER_EXPECTED,
    testFaultPoint: "must be after-sign, after-broadcast or after-replacement-sign (tests only)",
  },
  check(raw, problems) {
    checkGasTopUpSettings(raw, problems);
    if (typeof raw.gasLimitMultiplier === "string" && Number(raw.gasLimitMultiplier) < 1) {
      problems.push("GAS_LIMIT_MULTIPLIER: must be at least 1 (below the estimate a transfer runs out of gas)");
    }
  },
});

/** Gas top-up is all three variables or none, and tops a lane up to more than the level that triggers it. */
function checkGasTopUpSettings(raw: RawSettings, problems: string[]): void {
  const fields = ["gasTopUpFrom", "gasTopUpBelow", "gasTopUpTo"] as const;
  const set = fields.filter((field) => raw[field] !== undefined);
  if (set.length === 0) return;
  for (const field of fields) {
    if (raw[field] === undefined) problems.push(`${VARIABLES[field]}: required with ${set.map((given) => VARIABLES[given]).join(" and ")} (gas top-up takes all three)`);
  }
  const below = etherOf(raw.gasTopUpBelow);
  const to = etherOf(raw.gasTopUpTo);
  if (below !== undefined && to !== undefined && to <= below) problems.push("GAS_TOPUP_TO: must be more than GAS_TOPUP_BELOW (a top-up raises the balance above the level that triggers it)");
}

/** A decimal ether amount in wei; undefined when it is not one (the schema reports that). */
function etherOf(value: unknown): bigint | undefined {
  return typeof value === "string" && new RegExp(ETHER).test(value) ? parseEther(value) : undefined;
}
