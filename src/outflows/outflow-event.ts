/**
 * The webhook event of an unexpected outflow, `wallet.unexpected_outflow`. It belongs to no transfer (its
 * entry is null): it waits for no other event, so that an endpoint that refuses one alarm does not hold
 * back the next.
 */
import { randomUUID } from "node:crypto";
import { steadyWallClockNow } from "../clock.js";
import type { WebhookEventRecord } from "../journal/transfer-journal.js";
import type { ReportedOutflow } from "./unexpected-outflows.js";

/** The event for `outflow`; `signingPaused`: whether the service stopped signing (now or before). */
export function outflowEvent(outflow: ReportedOutflow, signingPaused: boolean): WebhookEventRecord {
  const data = {
    network: outflow.network,
    chainId: outflow.chainId,
    wallet: outflow.wallet,
    hash: outflow.hash,
    blockNumber: outflow.block.number,
    blockHash: outflow.block.hash,
    nonce: outflow.nonce,
    token: outflow.token,
    logIndex: outflow.logIndex,
    to: outflow.to,
    amount: outflow.amount,
    code: outflow.code,
    otherToken: outflow.otherToken,
    detectedAt: outflow.detectedAt,
    signingPaused,
  };
  const type = "wallet.unexpected_outflow";
  const body = JSON.stringify({ type, timestamp: new Date(steadyWallClockNow()).toISOString(), data });
  return { id: `msg_${randomUUID().replaceAll("-", "")}`, type, entryId: null, body };
}
