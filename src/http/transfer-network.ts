/** A network as the HTTP routes see it: what a request may name, and the parts that send, look up and report on it. */
import type { ApprovalNetwork } from "../approvals/approval-desk.js";
import type { TransferPolicy } from "../domain/transfer-policy.js";
import type { PayoutStatusReader } from "../lookup/payout-status.js";
import type { ServedNetwork, ServedToken } from "../network-settings/network-choice.js";
import type { TransferSender } from "../send-path/transfer-service.js";

/** A network the service pays on, as this route sends on it (and journals a transfer that waits for approval). */
export interface TransferNetwork extends ApprovalNetwork {
  /** What `network` and `token` may name. */
  network: ServedNetwork;
  /** The token the request pays in (named, or the network's first). */
  token: ServedToken;
  transfers: TransferSender;
  tokenDecimals: number;
  policy: TransferPolicy;
  /** Resolves with the confirmations a transaction has once it has `wanted`, or when time runs out. */
  awaitConfirmations: (hash: string, wanted: number, timeoutMs: number) => Promise<number>;
  /** The payout contract POST /payouts pays through on this network; null without payouts. */
  payoutContract: string | null;
  /** What became of this network's payout batches. */
  payouts: PayoutStatusReader;
}
