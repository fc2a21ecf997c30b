/** POST /transfer: send tokens from the hot wallet; answers the ethers v5 record as soon as the node accepts it. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { TokenTransferSender } from "../../chain/token-transfer.js";
import { InvalidAddressError, parseRecipientAddress } from "../../domain/recipient-address.js";
import { InvalidAmountError, parseTokenAmount } from "../../domain/token-amount.js";
import { ServiceError } from "../../errors.js";
import { toV5TransferRecord } from "../../wire/v5-record.js";
import { type TransferBody, TransferBodySchema, TransferReplySchema, errorReplies } from "../schemas.js";

export interface TransferRouteOptions {
  transfers: TokenTransferSender;
  tokenDecimals: number;
}

export const transferRoute: FastifyPluginAsyncTypebox<TransferRouteOptions> = async (app, { transfers, tokenDecimals }) => {
  app.post(
    "/transfer",
    {
      schema: {
        summary: "Send tokens from the hot wallet",
        description:
          "Sends `amount` tokens to `toAddress` (or `to`) and answers at once, before the transaction is mined " +
          "(confirmations 0). Anything that would make the transfer fail is checked first and answered with 417.",
        tags: ["transfers"],
        operationId: "transfer",
        body: TransferBodySchema,
        response: { 200: TransferReplySchema, ...errorReplies(400, 413, 415, 417, 500) },
      },
    },
    async (request) => {
      const recipient = readRecipient(request.body);
      const units = readUnits(request.body.amount, tokenDecimals);
      const transaction = await transfers.sendTokenTransfer(recipient, units);
      request.log.info({ hash: transaction.hash, nonce: transaction.nonce, recipient, units: units.toString() }, "transfer sent");
      return { result: toV5TransferRecord(transaction) };
    },
  );
};

function readRecipient({ toAddress, to }: TransferBody): string {
  if (toAddress !== undefined && to !== undefined && toAddress.toLowerCase() !== to.toLowerCase()) {
    throw new ServiceError("CONFLICTING_RECIPIENT", "toAddress and to name different addresses; send only toAddress");
  }
  const address = toAddress ?? to;
  if (address === undefined) throw new ServiceError("MISSING_RECIPIENT", "body must have toAddress");
  try {
    return parseRecipientAddress(address);
  } catch (error) {
    if (error instanceof InvalidAddressError) throw new ServiceError("INVALID_ADDRESS", `toAddress: ${error.message}`);
    throw error;
  }
}

function readUnits(amount: number | string, decimals: number): bigint {
  try {
    return parseTokenAmount(amount, decimals);
  } catch (error) {
    if (error instanceof InvalidAmountError) throw new ServiceError("INVALID_AMOUNT", error.message);
    throw error;
  }
}
