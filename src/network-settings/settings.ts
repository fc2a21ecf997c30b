/** What the service pays in: one network and token by variables, or NETWORKS_FILE's; and the limits on a transfer. */
import { Type } from "@sinclair/typebox";
import { HEX_ADDRESS, TOKEN_UNITS, TOKEN_UNITS_EXPECTED, settingsPart } from "../settings/settings-part.js";

const VARIABLES = {
  networksFile: "NETWORKS_FILE",
  tokenAddress: "TOKEN_ADDRESS",
  payoutContract: "PAYOUT_CONTRACT",
  maxTransferAmount: "MAX_TRANSFER_AMOUNT",
  transferCapPerDay: "TRANSFER_CAP_PER_DAY",
  allowedRecipients: "ALLOWED_RECIPIENTS",
} as const;

export const NETWORK_SETTINGS = settingsPart({
  schema: {
    networksFile: Type.Optional(
      Type.String({ minLength: 1, description: "JSON file of the networks and tokens the service pays in (docs/networks.md); instead of RPC_URL, TOKEN_ADDRESS and CHAIN_ID" }),
    ),
    tokenAddress: Type.Optional(Type.String({ pattern: HEX_ADDRESS, description: "ERC-20 contract address" })),
    payoutContract: Type.Optional(
      Type.String({ pattern: HEX_ADDRESS, description: "the payout contract (contracts/PayoutBatch.sol) POST /payouts pays through, checked at startup; unset: no payouts" }),
    ),
    maxTransferAmount: Type.Optional(Type.String({ pattern: TOKEN_UNITS, description: "largest amount of one transfer, in token units" })),
    transferCapPerDay: Type.Optional(Type.String({ pattern: TOKEN_UNITS, description: "most one API key may send in 24 h, in token units" })),
    allowedRecipients: Type.Optional(Type.String({ description: "comma-separated addresses; when set, the only recipients allowed" })),
  },
  variables: VARIABLES,
  expectations: {
    tokenAddress: "must be 0x followed by 40 hex digits",
    maxTransferAmount: TOKEN_UNITS_EXPECTED,
    transferCapPerDay: TOKEN_UNITS_EXPECTED,
  },
  check(raw, problems) {
    if (raw.rpcUrl && raw.demoSetup !== "true" && !raw.tokenAddress) problems.push("TOKEN_ADDRESS: required when RPC_URL is set");
    // NETWORKS_FILE describes every network: variables that describe one would leave in doubt which is meant.
    if (!raw.networksFile) return;
    const oneNetwork = (
      [
        ["rpcUrl", "RPC_URL"],
        ["tokenAddress", "TOKEN_ADDRESS"],
        ["chainId", "CHAIN_ID"],
        ["demoSetup", "DEMO_SETUP"],
        ["devBlockTime", "DEV_BLOCK_TIME"],
      ] as const
    ).filter(([field]) => raw[field] !== undefined);
    if (oneNetwork.length > 0) problems.push(`NETWORKS_FILE: give the networks in the file only; unset ${oneNetwork.map(([, variable]) => variable).join(", ")}`);
  },
});
