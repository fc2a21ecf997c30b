/**
 * Automatic gas top-up (GAS_TOPUP_FROM, GAS_TOPUP_BELOW, GAS_TOPUP_TO): the funding wallet, one lane of the
 * pool, sends ETH to each other lane whose balance fell below GAS_TOPUP_BELOW, enough to bring it to
 * GAS_TOPUP_TO. A top-up is a transaction of the funding lane like its transfers: journaled before it is
 * broadcast, sent again, re-priced when stuck and followed until mined, under the same contract.
 *
 * Decided from facts, never twice for one shortfall: a lane's balance as its latest snapshot read it, and
 * the funding lane's journal. No top-up goes to a lane while one to it is unmined, nor after one was mined
 * until the lane's balance has been read at or above the block that showed it mined.
 */
import { formatEther, parseEther } from "ethers";
import type { FastifyBaseLogger } from "fastify";
import { monotonicNow } from "../clock.js";
import { type Config } from "../config.js";
import { ConfigError } from "../settings/settings-part.js";
import { SerialRounds } from "../lanes/serial-rounds.js";
import type { LaneServices } from "../lanes/start-lane.js";

/** After a top-up the funding lane could not send, the lane waits this long before it is tried again. */
const RETRY_AFTER_MS = 30_000;

export interface GasTopUpSettings {
  /** GAS_TOPUP_FROM: the funding lane's address. */
  from: string;
  /** GAS_TOPUP_BELOW, wei. */
  below: bigint;
  /** GAS_TOPUP_TO, wei. */
  to: bigint;
}

/**
 * The top-up settings, checked against the pool's wallets; undefined when GAS_TOPUP_FROM is unset.
 * ConfigError when it names none of them, or the only one (there is no other lane to top up).
 */
export function gasTopUpSettingsOf(config: Pick<Config, "gasTopUpFrom" | "gasTopUpBelow" | "gasTopUpTo">, laneAddresses: readonly string[]): GasTopUpSettings | undefined {
  const { gasTopUpFrom, gasTopUpBelow, gasTopUpTo } = config;
  if (!gasTopUpFrom || !gasTopUpBelow || !gasTopUpTo) return undefined;
  const from = laneAddresses.find((address) => address.toLowerCase() === gasTopUpFrom.toLowerCase());
  if (!from) throw new ConfigError(`GAS_TOPUP_FROM: ${gasTopUpFrom} is none of the pool's wallets (${laneAddresses.join(", ")}); name the one that pays the others' gas`);
  if (laneAddresses.length === 1) throw new ConfigError("GAS_TOPUP_FROM: names the only wallet; gas top-up needs a pool (several keys) to move ETH between");
  return { from, below: parseEther(gasTopUpBelow), to: parseEther(gasTopUpTo) };
}

/** What the top-ups use of a lane. */
export type TopUpLane = Pick<LaneServices, "address" | "ledger" | "journal" | "transfers" | "ensureBalances">;

/** A top-up sent and not yet seen mined. */
export interface TopUpInFlight {
  lane: string;
  hash: string;
}

export class GasTopUps {
  readonly #funder: TopUpLane;
  readonly #others: readonly TopUpLane[];
  readonly #rounds: SerialRounds;
  // Lanes with a top-up unmined, as the last round found them in the journal.
  #owed = new Map<string, string>();
  // Lane -> the funding lane's snapshot block that showed its last top-up mined: the lane's balance counts it from there.
  readonly #minedBy = new Map<string, number>();
  // Lane -> when (monotonic ms) a top-up refused or not affordable may be tried again.
  readonly #retryAt = new Map<string, number>();
  readonly #sentTo = new Map<string, number>();
  // Whether a round has read the funding lane's journal yet (after a restart, a top-up may be unmined there).
  #journalRead = false;

  constructor(
    private readonly settings: GasTopUpSettings,
    lanes: readonly TopUpLane[],
    private readonly log: FastifyBaseLogger,
  ) {
    const funder = lanes.find((lane) => lane.address === settings.from);
    if (!funder) throw new Error(`GAS_TOPUP_FROM ${settings.from} is none of the started lanes`);
    this.#funder = funder;
    this.#others = lanes.filter((lane) => lane !== funder);
    this.#rounds = new SerialRounds(
      () => this.#round(),
      (error) => log.warn({ err: error }, "gas top-up round failed; will retry at the next block"),
    );
  }

  /** Asks for a round (after any lane's snapshot or block): it reads memory and the local journal only. */
  wake(): void {
    this.#rounds.run(0);
  }

  /** The funding lane's address (GAS_TOPUP_FROM, checksummed). */
  get from(): string {
    return this.#funder.address;
  }

  /** Top-ups sent to `lane` by this process. */
  sentTo(lane: string): number {
    return this.#sentTo.get(lane) ?? 0;
  }

  /** Top-ups journaled and not yet seen mined, as of the last round. */
  get inFlight(): TopUpInFlight[] {
    return [...this.#owed].map(([lane, hash]) => ({ lane, hash }));
  }

  /** No round starts any more; resolves once the one under way is over. */
  stop(): Promise<void> {
    return this.#rounds.stop();
  }

  async #round(): Promise<void> {
    // Rounds follow every lane's block: once the journal was read at startup, with no lane low and no
    // top-up to follow, a round reads nothing at all.
    const quiet = this.#owed.size === 0 && this.#minedBy.size === 0 && this.#others.every((lane) => lane.ledger.snapshot.ethBalance >= this.settings.below);
    if (quiet && this.#journalRead) return;
    this.#journalRead = true;
    const owed = this.#unminedTopUps();
    for (const lane of this.#owed.keys()) if (!owed.has(lane)) this.#minedBy.set(lane, this.#funder.ledger.snapshot.blockNumber);
    this.#owed = owed;
    for (const lane of this.#others) {
      if (owed.has(lane.address) || monotonicNow() < (this.#retryAt.get(lane.address) ?? 0)) continue;
      const minedBy = this.#minedBy.get(lane.address);
      if (minedBy !== undefined && lane.ledger.snapshot.blockNumber < minedBy) {
        // Its balance predates the top-up: read it again before deciding anything.
        await lane.ensureBalances(0);
        continue;
      }
      // Its balance counts the last top-up now: the balance alone decides from here.
      this.#minedBy.delete(lane.address);
      const balance = lane.ledger.snapshot.ethBalance;
      if (balance < this.settings.below) await this.#topUp(lane, this.settings.to - balance);
    }
  }

  // The funding lane's own top-ups that are not mined yet, by the lane they pay.
  #unminedTopUps(): Map<string, string> {
    const owed = new Map<string, string>();
    for (const entry of this.#funder.journal.unsettled()) {
      const first = entry.attempts[0];
      if (first?.kind === "top-up") owed.set(entry.recipient, entry.hash ?? first.hash);
    }
    return owed;
  }

  async #topUp(lane: TopUpLane, wei: bigint): Promise<void> {
    const funder = this.#funder;
    const figures = { lane: lane.address, from: funder.address, wei: wei.toString(), ether: formatEther(wei), balance: lane.ledger.snapshot.ethBalance.toString() };
    // The funding lane keeps GAS_TOPUP_BELOW for itself: a top-up must not move the shortage to it.
    if (funder.ledger.gasAvailable - wei < this.settings.below) {
      this.#retryAt.set(lane.address, monotonicNow() + RETRY_AFTER_MS);
      this.log.warn({ ...figures, funderAvailable: funder.ledger.gasAvailable.toString() }, "a lane runs low on gas, and the funding wallet (GAS_TOPUP_FROM) cannot top it up without going below GAS_TOPUP_BELOW itself: fund it");
      return;
    }
    try {
      const sent = await funder.transfers.sendGasTopUp(lane.address, wei);
      this.#owed.set(lane.address, sent.hash);
      this.#minedBy.delete(lane.address);
      this.#sentTo.set(lane.address, this.sentTo(lane.address) + 1);
      this.log.info({ ...figures, hash: sent.hash }, "sent a gas top-up to a lane that ran low");
    } catch (error) {
      this.#retryAt.set(lane.address, monotonicNow() + RETRY_AFTER_MS);
      this.log.warn({ ...figures, err: error }, "could not send a gas top-up (err says whether anything of it may still go out); it is tried again shortly");
    }
  }
}
