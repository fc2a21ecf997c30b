/** The local dev chain: started when RPC_URL is unset, or set up on an anvil RPC_URL names (DEMO_SETUP). */
import { Type } from "@sinclair/typebox";
import { settingsPart } from "../settings/settings-part.js";

export const DEV_SETTINGS = settingsPart({
  schema: {
    demoSetup: Type.Boolean({ default: false, description: "create a funded wallet and a demo token on an anvil node" }),
    devBlockTime: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600, description: "local dev chain only: seconds between blocks (unset: a block per transaction)" })),
  },
  variables: { demoSetup: "DEMO_SETUP", devBlockTime: "DEV_BLOCK_TIME" },
  check(raw, problems) {
    if (raw.devBlockTime !== undefined && raw.rpcUrl) problems.push("DEV_BLOCK_TIME: only for the local dev chain started when RPC_URL is unset");
    if (raw.demoSetup === "true" && !raw.rpcUrl) problems.push("DEMO_SETUP: needs RPC_URL of an anvil node (without RPC_URL a local one is started anyway)");
  },
});
