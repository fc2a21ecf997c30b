/**
 * The wallet pool's front: each new transfer goes to the lane routing picks (see lane-routing), and a
 * repeat of an Idempotency-Key to the lane that sent it first, whatever the pool's state now. Each lane's
 * own service does the rest exactly as for one wallet: claim, pre-flight checks, signing, journaling.
 * A lane drained of gas since its balances were read is refused (by the node, or by its own checks):
 * nothing was sent, and the transfer goes to another lane. One key, one answer: while the pool has not
 * decided (a lane's refusal is kept for the key until the pool frees it to route again), a repeat of the key
 * is answered 409, never that lane's 417 (the transfer may yet be paid on another lane). When every lane
 * that could pay is held, a new transfer waits its turn for one to free (TRANSFER_SLOT_WAIT_MS) before it
 * is answered 503.
 */
import { type AmountUnit, describeAmount } from "../domain/token-amount.js";
import { ServiceError } from "../errors.js";
import { type TransferJournal, type TransferRequest, requestOf } from "../journal/transfer-journal.js";
import { type LaneFigures, type PoolRefusal, type Route, chooseLane, laneHold } from "../lanes/lane-routing.js";
import type { SlotQueue } from "../lanes/slot-queue.js";
import { NATIVE_TOKEN } from "../network-settings/network-choice.js";
import type { ApprovedTransfer, AuthorizeTransfer, TokenTransferService, TransferOutcome, TransferSender } from "../send-path/transfer-service.js";
import type { SignedTokenTransfer } from "../send-path/wallet-transaction.js";
import { sameItems } from "../send-path/payout-call.js";

/** A lane as the pool sees it. */
export interface PoolLane {
  address: string;
  transfers: TokenTransferService;
  figures(token?: string): LaneFigures;
  /** Resolves once the lane's balances are at most `maxAgeMs` old, reading them if needed (and nothing more). */
  ensureBalances(maxAgeMs: number): Promise<void>;
}

/** Transfers routed to a lane that do not hold a reservation in its ledger yet: the ledger counts the rest. */
interface Routed {
  count: number;
  /** By token: "" for the network's first, else the lowercase address or "native". */
  units: Map<string, bigint>;
}

const REFUSAL_MESSAGES: Record<PoolRefusal, (request: TransferRequest, lanes: readonly LaneFigures[], settings: LanePoolSettings) => string> = {
  INSUFFICIENT_TOKEN_BALANCE: (request, lanes, settings) => {
    const describe = (units: bigint) => describeAmount(units, settings.unitOf?.(request.token));
    return `no wallet of the pool can spend ${describe(request.units)} of the token after transfers in flight (the most one can: ${describe(mostAvailable(lanes))})`;
  },
  INSUFFICIENT_FUNDS: () => "no wallet of the pool that holds the tokens has the ETH to pay for gas",
  NO_LANE_AVAILABLE: (_request, lanes, settings) =>
    `every wallet of the pool that could pay is held (${lanes
      .map((lane) => `${lane.address}: ${laneHold(lane, settings.maxInFlight) ?? "short of tokens"}`)
      .join(", ")}), and none freed within ${settings.maxWaitMs} ms; nothing was sent, retry shortly`,
};

function mostAvailable(lanes: readonly LaneFigures[]): bigint {
  return lanes.reduce((most, lane) => (lane.tokensAvailable > most ? lane.tokensAvailable : most), 0n);
}

export interface LanePoolSettings {
  /** Transfers a lane takes at once, until mined: admittedPerLane(MAX_IN_FLIGHT_PER_LANE). */
  maxInFlight: number;
  /** TRANSFER_SLOT_WAIT_MS: how long a new transfer waits for a held lane to free before it is answered 503. */
  maxWaitMs: number;
  /**
   * Routing decides from balances at most this old (CHAIN_REFRESH_INTERVAL_MS): a lane drained from
   * outside is seen before it is chosen. Busy lanes are read at this pace anyway; an idle pool reads nothing.
   */
  balancesMaxAgeMs: number;
  /** The network's chain id: a refusal another network's lane kept under a key is not this pool's to free. */
  chainId: bigint;
  /** A token's symbol and decimals (undefined: the network's first), for refusals; base units alone without it. */
  unitOf?: (token: string | undefined) => AmountUnit | undefined;
}

export class LanePool implements TransferSender {
  readonly #byAddress: Map<string, PoolLane>;
  readonly #routed = new Map<string, Routed>();
  // Keys of new transfers the pool is routing, with what each asks for: their answer is not decided yet.
  // As many as requests in flight.
  readonly #routingKeys = new Map<string, TransferRequest>();

  constructor(
    private readonly lanes: readonly PoolLane[],
    private readonly journal: TransferJournal,
    private readonly settings: LanePoolSettings,
    private readonly slots: SlotQueue,
  ) {
    this.#byAddress = new Map(lanes.map((lane) => [lane.address, lane]));
    for (const lane of lanes) this.#routed.set(lane.address, { count: 0, units: new Map() });
  }

  async sendTokenTransfer(request: TransferRequest, idempotencyKey?: string, authorize?: AuthorizeTransfer): Promise<TransferOutcome> {
    if (idempotencyKey === undefined) return this.#route(request, undefined, authorize);
    const routing = this.#routingKeys.get(idempotencyKey);
    if (routing) {
      // A payout batch is the same batch by its items (which an earlier batch held may differ between two reads).
      const same = routing.payout || request.payout ? sameItems(routing.payout, request.payout) : routing.recipient === request.recipient && routing.units === request.units;
      if (!same || routing.token?.toLowerCase() !== request.token?.toLowerCase()) {
        throw new ServiceError("IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for a different transfer; use a new key");
      }
      throw new ServiceError("IDEMPOTENCY_KEY_IN_FLIGHT", "a transfer with this Idempotency-Key is still being sent; retry shortly");
    }
    const existing = this.journal.findByKey(idempotencyKey);
    // A wallet taken out of the pool keeps its history: any lane answers from the journal.
    if (existing) return (this.#byAddress.get(existing.lane) ?? this.lanes[0]).transfers.sendTokenTransfer(request, idempotencyKey, authorize);
    this.#routingKeys.set(idempotencyKey, request);
    try {
      return await this.#route(request, idempotencyKey, authorize);
    } finally {
      this.#routingKeys.delete(idempotencyKey);
    }
  }

  /**
   * An approved transfer, to the lane routing picks. It is not routed again when that lane is refused: its
   * refusal is the approval's answer (a "try again" leaves it awaiting its approval).
   */
  async sendApproved(approved: ApprovedTransfer, authorize?: AuthorizeTransfer): Promise<SignedTokenTransfer> {
    const request = requestOf(approved.entry);
    const key = approved.entry.idempotencyKey ?? undefined;
    // A repeat of its key meanwhile is answered "in flight", as any transfer's being routed.
    if (key !== undefined) this.#routingKeys.set(key, request);
    const revoke = authorize?.();
    let handedOver = false;
    try {
      await Promise.all(this.lanes.map((candidate) => candidate.ensureBalances(this.settings.balancesMaxAgeMs)));
      const handOver = revoke && (() => ((handedOver = true), revoke));
      return await this.#sendOnARoute(request, new Set(), {}, {
        send: (lane, uncount) => lane.transfers.sendApproved(approved, handOver, uncount),
        refuse: (refusal) => this.lanes[0].transfers.refuseApproved(approved, refusal),
      });
    } catch (error) {
      if (!handedOver) revoke?.();
      throw error;
    } finally {
      if (key !== undefined) this.#routingKeys.delete(key);
    }
  }

  // A new transfer (or one whose key no lane holds yet), to the lanes that can pay it until one takes it
  // or every one that could has refused.
  async #route(request: TransferRequest, idempotencyKey: string | undefined, authorize: AuthorizeTransfer | undefined): Promise<TransferOutcome> {
    const refusedForGas = new Set<string>();
    for (;;) {
      // The policy first, as for one wallet: a transfer it refuses is refused whatever the pool holds.
      const revoke = authorize?.();
      let handedOver = false;
      const route: { lane?: PoolLane } = {};
      try {
        await Promise.all(this.lanes.map((candidate) => candidate.ensureBalances(this.settings.balancesMaxAgeMs)));
        const handOver = revoke && (() => ((handedOver = true), revoke));
        const outcome = await this.#sendOnARoute(request, refusedForGas, route, {
          send: (lane, uncount) => lane.transfers.sendTokenTransfer(request, idempotencyKey, handOver, uncount),
          refuse: (refusal) => this.lanes[0].transfers.refuse(request, idempotencyKey, refusal),
        });
        // Another request claimed the key meanwhile: this one is its repeat, which the policy never counts.
        if (outcome.replayed && !handedOver) revoke?.();
        return outcome;
      } catch (error) {
        if (!handedOver) revoke?.();
        // The last lane refused too: its refusal is the answer.
        const othersLeft = this.lanes.length - refusedForGas.size - 1 > 0;
        if (!route.lane || !othersLeft || !(await this.#mayRouteAgain(error, route.lane, idempotencyKey))) throw error;
        refusedForGas.add(route.lane.address);
      }
    }
  }

  /**
   * Whether a transfer a lane could not send goes to another lane: only when the lane was refused for want
   * of gas (drained after its balances were read), before signing or by the node at its first broadcast:
   * a 417 that proves nothing was sent. The lane's balances are read again, and the key its refusal was
   * kept for is freed.
   */
  async #mayRouteAgain(error: unknown, lane: PoolLane, idempotencyKey: string | undefined): Promise<boolean> {
    if (!(error instanceof ServiceError && error.code === "INSUFFICIENT_FUNDS")) return false;
    try {
      await lane.ensureBalances(0);
      if (idempotencyKey === undefined) return true;
      const refused = this.journal.findByKey(idempotencyKey);
      // Only a refusal this lane kept, on this network (a lane's address is the same on every chain).
      if (refused?.lane !== lane.address || BigInt(refused.chainId) !== this.settings.chainId || !this.journal.releaseRefusedKey(refused.id)) return false;
      await this.journal.flushed();
      return true;
    } catch {
      // Not known to be free: the refusal the key holds stands.
      return false;
    }
  }

  // A lane for the transfer, waiting for one while every lane that could pay is held; then sent there.
  async #sendOnARoute<T>(request: TransferRequest, excluded: ReadonlySet<string>, chosen: { lane?: PoolLane }, routed: RoutedSend<T>): Promise<T> {
    let route = { refusal: "NO_LANE_AVAILABLE" } as Route;
    let figures: LaneFigures[] = [];
    for (let reads = 0; ; reads++) {
      // Synchronous from reading the figures to counting the choice: concurrent requests see each other.
      await this.slots.take(() => {
        figures = this.lanes.filter((lane) => !excluded.has(lane.address)).map((lane) => this.#withRouted(lane.figures(request.token), request.token));
        route = chooseLane(figures, request.units, this.settings.maxInFlight);
        if ("lane" in route) this.#count(this.#byAddress.get(route.lane.address) as PoolLane, 1, request);
        // Only a held pool is worth waiting for: a shortage of tokens or gas is answered at once.
        return !("refusal" in route && route.refusal === "NO_LANE_AVAILABLE");
      }, this.settings.maxWaitMs);
      // A shortage, checked against balances read now, twice at most (a ledger frees what two snapshots show
      // mined: WalletLedger.applySnapshot), before it is the answer.
      if (!("refusal" in route) || route.refusal === "NO_LANE_AVAILABLE" || reads === 2) break;
      await Promise.all(this.lanes.map((lane) => lane.ensureBalances(0)));
    }
    if ("refusal" in route) {
      // Recorded for the key like any lane's own refusal (a 417 is every repeat's answer; a 503 frees it).
      const message = REFUSAL_MESSAGES[route.refusal](request, figures, this.settings);
      // The native coin is what pays gas: a wallet short of it is short of funds, in the lane's own words.
      const refusal =
        request.token === NATIVE_TOKEN && route.refusal === "INSUFFICIENT_TOKEN_BALANCE"
          ? new ServiceError("INSUFFICIENT_FUNDS", `no wallet of the pool can send ${describeAmount(request.units, this.settings.unitOf?.(NATIVE_TOKEN), "wei")} of the native coin and pay its gas after transactions in flight`)
          : new ServiceError(route.refusal, message, { retryAfterSeconds: route.refusal === "NO_LANE_AVAILABLE" ? 1 : undefined });
      return routed.refuse(refusal);
    }
    const lane = this.#byAddress.get(route.lane.address) as PoolLane;
    chosen.lane = lane;
    // Counted as routed (above) until the lane's ledger holds its reservation, or it ends without one.
    let counted = true;
    const uncount = () => {
      if (counted) this.#count(lane, -1, { ...request, units: -request.units });
      counted = false;
    };
    try {
      return await routed.send(lane, uncount);
    } finally {
      if (counted) {
        uncount();
        this.slots.wake();
      }
    }
  }

  // A lane's figures with the transfers routed to it that hold no reservation in its ledger yet.
  #withRouted(figures: LaneFigures, token: string | undefined): LaneFigures {
    const routed = this.#routed.get(figures.address) as Routed;
    return {
      ...figures,
      unmined: figures.unmined + routed.count,
      tokensAvailable: figures.tokensAvailable - (routed.units.get(routedTokenKey(token)) ?? 0n),
      gasAvailable: figures.gasAvailable - BigInt(routed.count) * figures.gasPerTransfer,
    };
  }

  #count(lane: PoolLane, count: number, { token, units }: TransferRequest): void {
    const routed = this.#routed.get(lane.address) as Routed;
    routed.count += count;
    const key = routedTokenKey(token);
    routed.units.set(key, (routed.units.get(key) ?? 0n) + units);
  }
}

/** How a routed transfer is sent on the lane chosen, and answered when no lane can take it. */
interface RoutedSend<T> {
  send: (lane: PoolLane, uncount: () => void) => Promise<T>;
  refuse: (refusal: ServiceError) => Promise<T>;
}

function routedTokenKey(token: string | undefined): string {
  return token?.toLowerCase() ?? "";
}
