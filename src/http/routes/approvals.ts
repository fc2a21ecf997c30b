/**
 * POST /transfers/:id/approve and /reject: a second admin key decides a transfer or payout that waits for
 * approval (APPROVAL_ABOVE). The key that asked for it may not; an approved one is signed and sent at once.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { ApprovalDesk } from "../../approvals/approval-desk.js";
import type { JournalEntry } from "../../journal/transfer-journal.js";
import type { AuthorizeTransfer } from "../../send-path/transfer-service.js";
import { toV5TransferRecord } from "../../wire/v5-record.js";
import { ApprovalParamsSchema, ApprovalSchema, TransferReplySchema, errorReplies } from "../schemas.js";
import type { TransferNetwork } from "../transfer-network.js";
import { describeApproval } from "../approval-reply.js";

export interface ApprovalRouteOptions {
  approvals: Pick<ApprovalDesk, "approve" | "reject" | "find">;
  /** The network and token of a journaled transfer (503 while it is not running). */
  networkOfEntry: (entry: JournalEntry) => TransferNetwork;
  /** Throws while the service does not sign (PAUSE_ON_UNEXPECTED_OUTFLOW): an approval is answered 503 and the transfer keeps waiting. */
  assertSigning: () => void;
}

export const approvalRoutes: FastifyPluginAsyncTypebox<ApprovalRouteOptions> = async (app, { approvals, networkOfEntry, assertSigning }) => {
  // The policy of the transfer's network and token, for the key that asked: its cap counts the transfer now.
  const authorizeOf = (entry: JournalEntry): AuthorizeTransfer => {
    const { policy } = networkOfEntry(entry);
    const apiKeyId = entry.apiKeyId ?? "";
    return () => {
      assertSigning();
      if (!entry.payout) return policy.authorize(apiKeyId, entry.recipient, entry.units);
      const paid = entry.payout.items.flatMap((item, index) => (item.duplicateOf === undefined ? [{ index, recipient: item.recipient, units: item.units }] : []));
      return policy.authorizePayout(apiKeyId, paid);
    };
  };

  app.post(
    "/transfers/:id/approve",
    {
      schema: {
        summary: "Approve a transfer that waits for a second admin key",
        description:
          "Signs and sends a transfer or payout batch that was above APPROVAL_ABOVE (answered 202 with this id), and answers its record, as " +
          "POST /transfer would have (confirmations 0). Only an admin key other than the one that asked for it may (403 APPROVER_IS_REQUESTER). " +
          "From here on it has the whole contract of a transfer; its Idempotency-Key answers this record. Checked as a new transfer is when it is " +
          "sent: a 417 (the wallet short of tokens, the call would revert) refuses it for good (transfer.rejected tells its client); a 403 of " +
          "the policy (the key's daily cap) or a 503 leaves it waiting, nothing sent. 409 APPROVAL_DECIDED once rejected, expired or approved.",
        tags: ["approvals"],
        operationId: "approveTransfer",
        params: ApprovalParamsSchema,
        response: { 200: TransferReplySchema, ...errorReplies(400, 401, 403, 404, 409, 417, 429, 500, 503) },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      const transfer = await approvals.approve(id, request.apiKeyId, (entry) => networkOfEntry(entry), authorizeOf);
      request.log.info({ id, hash: transfer.hash, approvedBy: request.apiKeyId }, "transfer approved and sent");
      return { result: toV5TransferRecord(transfer) };
    },
  );

  app.post(
    "/transfers/:id/reject",
    {
      schema: {
        summary: "Reject a transfer that waits for a second admin key",
        description:
          "Refuses for good a transfer or payout batch that waits for approval: it is never signed, its Idempotency-Key answers 417 APPROVAL_REJECTED, " +
          "and transfer.rejected tells its client. Only an admin key other than the one that asked for it may. 409 APPROVAL_DECIDED once decided or expired.",
        tags: ["approvals"],
        operationId: "rejectTransfer",
        params: ApprovalParamsSchema,
        response: { 200: ApprovalSchema, ...errorReplies(400, 401, 403, 404, 409, 429, 500, 503) },
      },
    },
    async (request) => {
      const id = Number(request.params.id);
      // Its network first (503 while it is not running): the answer names it, and nothing is decided without one.
      const network = networkOfEntry(await approvals.find(id));
      const entry = await approvals.reject(id, request.apiKeyId);
      request.log.info({ id, rejectedBy: request.apiKeyId }, "transfer rejected; it is never sent");
      return describeApproval(entry, network);
    },
  );
};
