/**
 * One wallet as a lane of one: it takes at most twice MAX_IN_FLIGHT_PER_LANE transfers from the moment they
 * are let in until mined (see admittedPerLane), as each lane of a pool does, and the node holds at most
 * MAX_IN_FLIGHT_PER_LANE of them (TransferSubmitterOptions.awaitRoomAtNode). A node keeps only so many pending transactions per sender (geth: 16
 * for sure); past them it refuses the next ("txpool is full": a 417 for its client) and every nonce above
 * the refused one waits in a gap. A new transfer that finds the wallet full waits for room, first come
 * first served, as long as room keeps freeing (see SlotQueue); once none freed for TRANSFER_SLOT_WAIT_MS it
 * is answered 503 NO_LANE_AVAILABLE with Retry-After, its Idempotency-Key unused. A repeat of a key the journal holds never waits: its answer is there already.
 */
import { ServiceError } from "../errors.js";
import type { TransferJournal, TransferRequest } from "../journal/transfer-journal.js";
import { MOVING_WAIT_LIMIT, type SlotQueue } from "../lanes/slot-queue.js";
import type { ApprovedTransfer, AuthorizeTransfer, TokenTransferService, TransferOutcome, TransferSender } from "../send-path/transfer-service.js";
import type { SignedTokenTransfer } from "../send-path/wallet-transaction.js";
import type { WalletLedger } from "../send-path/wallet-ledger.js";

export interface InFlightLimitSettings {
  /** Transfers let in at once, until mined: admittedPerLane(MAX_IN_FLIGHT_PER_LANE). */
  maxInFlight: number;
  /** TRANSFER_SLOT_WAIT_MS. */
  maxWaitMs: number;
}

export class WalletInFlightLimit implements TransferSender {
  // Transfers let in that hold no reservation in the ledger yet (the ledger counts the others).
  #admitted = 0;

  constructor(
    private readonly wallet: { address: string; transfers: TokenTransferService; ledger: WalletLedger },
    private readonly journal: TransferJournal,
    private readonly settings: InFlightLimitSettings,
    private readonly slots: SlotQueue,
  ) {}

  /** Transactions being sent or not yet mined, and transfers let in on their way to being signed. */
  get inFlight(): number {
    return this.wallet.ledger.inFlightCount + this.#admitted;
  }

  async sendTokenTransfer(request: TransferRequest, idempotencyKey?: string, authorize?: AuthorizeTransfer): Promise<TransferOutcome> {
    // Room at once (nobody waiting ahead): no look at the journal on this path.
    if (!(this.slots.size === 0 && this.#admit())) {
      if (idempotencyKey !== undefined && this.journal.findByKey(idempotencyKey)) return this.wallet.transfers.sendTokenTransfer(request, idempotencyKey, authorize);
      if (!(await this.slots.take(() => this.#admit(), this.settings.maxWaitMs))) throw walletFull(this.wallet.address, this.settings);
    }
    return this.#sendAdmitted((uncount) => this.wallet.transfers.sendTokenTransfer(request, idempotencyKey, authorize, uncount));
  }

  // Sends a transfer let in: it counts as admitted until the ledger holds its reservation (`uncount`).
  async #sendAdmitted<T>(send: (uncount: () => void) => Promise<T>): Promise<T> {
    let counted = true;
    const uncount = () => {
      if (counted) this.#admitted--;
      counted = false;
    };
    try {
      return await send(uncount);
    } finally {
      // Refused before it held a reservation: its room is free for the next.
      if (counted) {
        uncount();
        this.slots.wake();
      }
    }
  }

  /** An approved transfer: it waits for room as a new one does (see the top). */
  async sendApproved(approved: ApprovedTransfer, authorize?: AuthorizeTransfer): Promise<SignedTokenTransfer> {
    if (!(this.slots.size === 0 && this.#admit()) && !(await this.slots.take(() => this.#admit(), this.settings.maxWaitMs))) throw walletFull(this.wallet.address, this.settings);
    return this.#sendAdmitted((uncount) => this.wallet.transfers.sendApproved(approved, authorize, uncount));
  }

  #admit(): boolean {
    if (this.inFlight >= this.settings.maxInFlight) return false;
    this.#admitted++;
    return true;
  }
}

/** The answer to a transfer that found the wallet full for as long as it may wait. */
export function walletFull(address: string, settings: InFlightLimitSettings): ServiceError {
  return new ServiceError(
    "NO_LANE_AVAILABLE",
    `the wallet ${address} holds ${settings.maxInFlight} transfers not yet mined (twice MAX_IN_FLIGHT_PER_LANE), and no room came to this transfer in its turn (none freed for ${settings.maxWaitMs} ms, or it waited ${MOVING_WAIT_LIMIT * settings.maxWaitMs} ms in all); nothing was sent, retry shortly`,
    { retryAfterSeconds: 1 },
  );
}
