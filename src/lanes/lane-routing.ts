/**
 * Which lane of a wallet pool sends a new transfer. Pure: it decides from the figures each lane's ledger
 * and journal hold at the moment of asking, so the rules can be read, and tested, in one place.
 *
 * A lane that takes no new transfers (see LaneHold) is passed over until it clears; among the others, a
 * lane that can pay the transfer (tokens and gas, after what it has in flight) with the fewest unmined
 * transactions takes it. Fewest unmined first spreads a burst over the pool and keeps each lane's queue
 * at the node short, well below the pending limit a node keeps per sender.
 */

/** What routing knows of one lane. Balances are what is left after the lane's transfers in flight. */
export interface LaneFigures {
  address: string;
  /** Transactions signed and not mined yet. */
  unmined: number;
  /** One of its transactions waited past STUCK_AFTER_BLOCKS. */
  stuck: boolean;
  /** Its oldest unmined nonce is stuck and not mined: nothing behind it can be mined either. */
  jammed: boolean;
  /** Base units of the token it can still spend. */
  tokensAvailable: bigint;
  /** Wei it can still spend on gas. */
  gasAvailable: bigint;
  /** What one more transfer may cost in gas at the current fees (the fee cap, L1 data fee included). */
  gasPerTransfer: bigint;
  /** Below this much gas left, the lane takes no new transfers (it is refilled, or an operator is told). */
  gasFloor: bigint;
}

/** Why a lane takes no new transfers, as /wallet and the metrics name it. */
export type LaneHold = "jammed" | "stuck" | "gas-below-floor" | "in-flight-limit";

/** Which refusal a transfer gets when no lane can take it: the one that names the pool's real shortage. */
export type PoolRefusal =
  /** No lane holds the tokens (after what is in flight): waiting frees none, what is in flight spends them. */
  | "INSUFFICIENT_TOKEN_BALANCE"
  /** The lanes that hold the tokens cannot pay the gas (one more transfer's, or their floor). */
  | "INSUFFICIENT_FUNDS"
  /** The lanes that could pay are held for now (stuck, jammed or full): nothing was sent, a retry may find one free. */
  | "NO_LANE_AVAILABLE";

export type Route = { lane: LaneFigures } | { refusal: PoolRefusal };

/**
 * Transfers a lane takes at once, from the moment they are let in until mined: twice what the node holds
 * for it (MAX_IN_FLIGHT_PER_LANE). The second half is priced, signed and journaled while the first waits
 * at the node, and is broadcast as room frees (TransferSubmitterOptions.awaitRoomAtNode): the node never
 * holds more than MAX_IN_FLIGHT_PER_LANE, and a fast chain is not slowed to one signing at a time per slot.
 */
export function admittedPerLane(maxInFlightPerLane: number): number {
  return 2 * maxInFlightPerLane;
}

/** Why `lane` takes no new transfers now, or undefined when it takes them. */
export function laneHold(lane: LaneFigures, maxInFlightPerLane: number): LaneHold | undefined {
  if (lane.jammed) return "jammed";
  if (lane.stuck) return "stuck";
  if (lane.gasAvailable < lane.gasFloor) return "gas-below-floor";
  if (lane.unmined >= maxInFlightPerLane) return "in-flight-limit";
  return undefined;
}

/** The lane that sends a transfer of `units`, or the refusal when none can. Ties go to the earlier lane. */
export function chooseLane(lanes: readonly LaneFigures[], units: bigint, maxInFlightPerLane: number): Route {
  const holdingTokens = lanes.filter((lane) => lane.tokensAvailable >= units);
  if (holdingTokens.length === 0) return { refusal: "INSUFFICIENT_TOKEN_BALANCE" };
  const holds = holdingTokens.map((lane) => laneHold(lane, maxInFlightPerLane));
  const open = holdingTokens.filter((_lane, index) => holds[index] === undefined);
  // Lanes short of gas stay so until someone pays: that is no reason to retry.
  if (open.length === 0) return { refusal: holds.every((hold) => hold === "gas-below-floor") ? "INSUFFICIENT_FUNDS" : "NO_LANE_AVAILABLE" };
  const canPay = open.filter((lane) => lane.gasAvailable >= lane.gasPerTransfer);
  if (canPay.length === 0) return { refusal: "INSUFFICIENT_FUNDS" };
  const lane = canPay.reduce((best, candidate) => (candidate.unmined < best.unmined ? candidate : best));
  return { lane };
}
