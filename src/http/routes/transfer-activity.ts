/** GET /transfers/activity: the last hours of transfers and gas, hour by hour, for the console's charts. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { TransferActivity } from "../../lookup/transfer-activity.js";
import { errorReplies } from "../schemas.js";

export interface TransferActivityRouteOptions {
  activity: Pick<TransferActivity, "hours">;
}

const ActivityHourSchema = Type.Object({
  start: Type.String({ description: "ISO time the hour began" }),
  sent: Type.Integer({ description: "transfers asked for in the hour that were signed and sent, whatever became of them since" }),
  mined: Type.Integer({ description: "of those, mined" }),
  failed: Type.Integer({ description: "transfers asked for in the hour that failed: refused (417), rejected at their first broadcast, or replaced by another transaction" }),
  gasSpentWei: Type.Union([Type.String(), Type.Null()], {
    description: "wei the wallets' ETH balances went down by in the hour (gas, and ETH sent to other lanes of the pool); null for an hour before this process started",
  }),
});

export const transferActivityRoute: FastifyPluginAsyncTypebox<TransferActivityRouteOptions> = async (app, { activity }) => {
  app.get(
    "/transfers/activity",
    {
      schema: {
        summary: "The last 24 hours of transfers and gas, hour by hour",
        description:
          "The current hour and the 23 before it, oldest first. Counts come from the journal, tallied in the background once a minute; gas from the " +
          "wallets' balances as this process saw them. Read and admin keys.",
        tags: ["transactions"],
        operationId: "transferActivity",
        response: { 200: Type.Object({ hours: Type.Array(ActivityHourSchema) }), ...errorReplies(401, 403, 429, 500) },
      },
    },
    async () => ({
      hours: (await activity.hours()).map((hour) => ({
        start: new Date(hour.start).toISOString(),
        sent: hour.sent,
        mined: hour.mined,
        failed: hour.failed,
        gasSpentWei: hour.gasSpentWei === null ? null : hour.gasSpentWei.toString(),
      })),
    }),
  );
};
