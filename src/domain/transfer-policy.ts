/**
 * What a client may send, checked before anything is signed: a largest single amount, a rolling cap per
 * API key, and an optional list of allowed recipients. It looks at the ERC-20 transfer's recipient and
 * amount, not at the transaction's `to` (the token contract).
 */
import { ServiceError } from "../errors.js";
import { steadyWallClockNow } from "../clock.js";
import { type AmountUnit, describeAmount } from "./token-amount.js";

export interface TransferPolicyLimits {
  /** Base units; none when unset. */
  maxUnitsPerTransfer?: bigint;
  /** Base units one key may send within `periodMs`; none when unset. */
  capUnitsPerPeriod?: bigint;
  periodMs: number;
  /** Checksummed addresses; any recipient when unset. */
  allowedRecipients?: ReadonlySet<string>;
  /** Base units above which a transfer or payout waits for an admin's approval (APPROVAL_ABOVE); none when unset. */
  approvalAboveUnits?: bigint;
  /**
   * Base units one person's keys (personOf) may send within `periodMs` without approval
   * (APPROVAL_ABOVE_PER_DAY): a transfer that would take them past it waits for an admin's approval too, so
   * that splitting escapes nothing; none when unset.
   */
  approvalAbovePerPeriodUnits?: bigint;
  /** ADDRESS_BOOK: whether a recipient is paid without approval now; a transfer to any other waits for one. Unset: every recipient is. */
  paysWithoutApproval?: (recipient: string) => boolean;
  /** Who holds a key (API_KEY_HOLDERS): APPROVAL_ABOVE_PER_DAY counts a person's keys together. Unset: each key is one. */
  personOf?: (apiKeyId: string) => string;
  /** The token the limits are in, so refusals name amounts as people write them; base units alone when unset. */
  unit?: AmountUnit;
}

/** What one key sent within the period: each send, oldest first, and their sum, kept as they come and go. */
interface Tally {
  sends: SpentAmount[];
  total: bigint;
}

/** Whether a request waits for approval, and, when it does not, what counts it as being sent until it is released. */
export interface ApprovalDecision {
  needsApproval: boolean;
  /** Ends the request's count as being sent (its own count against the cap, once sent, stays); once only. */
  release(): void;
}

/** A transfer counted against a key's cap: when, and how much. */
export interface SpentAmount {
  apiKeyId: string;
  units: bigint;
  at: number;
}

export class TransferPolicy {
  readonly #spentByKey = new Map<string, Tally>();
  // Per person: the units of requests decided "no approval" whose send has not yet counted them (see decideApproval).
  readonly #beingSent = new Map<string, bigint>();

  /** `history`: what each key sent lately (from the journal), so a restart does not reset the caps. */
  constructor(
    private readonly limits: TransferPolicyLimits,
    history: SpentAmount[] = [],
    private readonly now: () => number = steadyWallClockNow,
  ) {
    for (const spent of [...history].sort((a, b) => a.at - b.at)) {
      const tally = this.#tally(spent.apiKeyId);
      tally.sends.push(spent);
      tally.total += spent.units;
    }
  }

  /**
   * Throws 403 (AMOUNT_ABOVE_LIMIT, RECIPIENT_NOT_ALLOWED, DAILY_CAP_EXCEEDED) when the transfer is not
   * allowed; otherwise counts it against the key's cap at once (so concurrent requests cannot both slip
   * under it) and returns the function that takes it back if the transfer is not sent after all.
   */
  authorize(apiKeyId: string, recipient: string, units: bigint): () => void {
    this.#checkPayment(recipient, units, "");
    return this.#countAgainstCap(apiKeyId, units);
  }

  /**
   * Whether a transfer (or a payout batch's total) of `units` by `apiKeyId` waits for a second admin key's
   * approval before it is signed: above APPROVAL_ABOVE, to a recipient the address book does not pay yet
   * (ADDRESS_BOOK), or taking what the key sent within the period (and what it is sending now) past
   * APPROVAL_ABOVE_PER_DAY. One that does not wait is counted as being sent
   * until released, after its send counted it or refused it: requests at once each see the others.
   */
  decideApproval(apiKeyId: string, units: bigint, recipients: readonly string[]): ApprovalDecision {
    const { approvalAboveUnits, approvalAbovePerPeriodUnits, paysWithoutApproval } = this.limits;
    if (approvalAboveUnits !== undefined && units > approvalAboveUnits) return { needsApproval: true, release: () => undefined };
    if (paysWithoutApproval && !recipients.every((recipient) => paysWithoutApproval(recipient))) return { needsApproval: true, release: () => undefined };
    if (approvalAbovePerPeriodUnits === undefined) return { needsApproval: false, release: () => undefined };
    const person = this.#personOf(apiKeyId);
    const beingSent = this.#beingSent.get(person) ?? 0n;
    if (this.#sentByPerson(person) + beingSent + units > approvalAbovePerPeriodUnits) return { needsApproval: true, release: () => undefined };
    this.#beingSent.set(person, beingSent + units);
    let released = false;
    return {
      needsApproval: false,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#beingSent.get(person) ?? 0n) - units;
        if (left > 0n) this.#beingSent.set(person, left);
        else this.#beingSent.delete(person);
      },
    };
  }

  #personOf(apiKeyId: string): string {
    return this.limits.personOf?.(apiKeyId) ?? apiKeyId;
  }

  // What every key of `person` sent within the period (a few keys: those of API_KEYS).
  #sentByPerson(person: string): bigint {
    let sent = 0n;
    for (const apiKeyId of this.#spentByKey.keys()) if (this.#personOf(apiKeyId) === person) sent += this.#sentWithinPeriod(apiKeyId);
    return sent;
  }

  // What the key sent within the period, its older sends forgotten (each once: the sum is kept as they go).
  #sentWithinPeriod(apiKeyId: string): bigint {
    const tally = this.#tally(apiKeyId);
    const since = this.now() - this.limits.periodMs;
    while (tally.sends.length > 0 && tally.sends[0].at <= since) tally.total -= (tally.sends.shift() as SpentAmount).units;
    return tally.total;
  }

  /**
   * The same for a payout batch: each item is a payment of its own to the largest amount and the allowed
   * recipients (a refusal names the item's index in the request), and the batch's total counts against the
   * key's cap.
   */
  authorizePayout(apiKeyId: string, items: readonly { index: number; recipient: string; units: bigint }[]): () => void {
    for (const item of items) this.#checkPayment(item.recipient, item.units, `items[${item.index}]: `);
    return this.#countAgainstCap(
      apiKeyId,
      items.reduce((total, item) => total + item.units, 0n),
    );
  }

  #checkPayment(recipient: string, units: bigint, place: string): void {
    const { maxUnitsPerTransfer, allowedRecipients } = this.limits;
    if (maxUnitsPerTransfer !== undefined && units > maxUnitsPerTransfer) {
      throw new ServiceError("AMOUNT_ABOVE_LIMIT", `${place}a single transfer may move at most ${this.#describe(maxUnitsPerTransfer)}; ${this.#describe(units)} requested`);
    }
    if (allowedRecipients && !allowedRecipients.has(recipient)) {
      throw new ServiceError("RECIPIENT_NOT_ALLOWED", `${place}${recipient} is not on the list of allowed recipients`);
    }
  }

  #describe(units: bigint): string {
    return describeAmount(units, this.limits.unit);
  }

  #countAgainstCap(apiKeyId: string, units: bigint): () => void {
    const { capUnitsPerPeriod } = this.limits;
    const tally = this.#tally(apiKeyId);
    const spent = { apiKeyId, units, at: this.now() };
    // Forgets what left the period whatever is set: the tally stays a day's sends.
    const total = this.#sentWithinPeriod(apiKeyId);
    if (capUnitsPerPeriod !== undefined) {
      if (total + units > capUnitsPerPeriod) {
        throw new ServiceError(
          "DAILY_CAP_EXCEEDED",
          `this API key may send ${this.#describe(capUnitsPerPeriod)} per ${this.limits.periodMs / 3_600_000} h; ${this.#describe(total)} already sent, ${this.#describe(units)} requested`,
        );
      }
    }
    tally.sends.push(spent);
    tally.total += units;
    return () => {
      const index = tally.sends.indexOf(spent);
      if (index < 0) return;
      tally.sends.splice(index, 1);
      tally.total -= units;
    };
  }

  #tally(apiKeyId: string): Tally {
    let tally = this.#spentByKey.get(apiKeyId);
    if (!tally) {
      tally = { sends: [], total: 0n };
      this.#spentByKey.set(apiKeyId, tally);
    }
    return tally;
  }
}
