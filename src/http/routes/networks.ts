/** GET /networks: the networks and tokens this deployment pays in, as requests name them. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { ServedNetwork } from "../../network-settings/network-choice.js";
import { errorReplies } from "../schemas.js";

export interface NetworksRouteOptions {
  /** Every configured network, the default first. */
  configured: () => readonly ServedNetwork[];
  /** A running network's tokens as its node described them, by address; undefined while the network has not been reached. */
  tokensOf: (network: ServedNetwork) => ReadonlyMap<string, { decimals: number; displaySymbol?: string }> | undefined;
}

const NetworkSchema = Type.Object({
  name: Type.String({ description: "what `network` names in requests (NETWORKS_FILE's name; without the file, the chain id in decimal)" }),
  chainId: Type.Integer(),
  default: Type.Boolean({ description: "true for the network a request that names none pays on" }),
  running: Type.Boolean({ description: "false while its node has not been reached since the service started (its transfers are answered 503)" }),
  tokens: Type.Array(
    Type.Object({
      symbol: Type.String({ description: "what `token` names in requests (any case); without NETWORKS_FILE, the address" }),
      address: Type.String({ description: "the contract's address, or \"native\" for the network's native coin" }),
      decimals: Type.Union([Type.Integer(), Type.Null()], { description: "null while the network has not been reached" }),
      displaySymbol: Type.Union([Type.String(), Type.Null()], {
        description: "for people only: the contract's own symbol() where NETWORKS_FILE names the token by no symbol (then `symbol` is its address); null otherwise, or while the network has not been reached",
      }),
    }),
    { description: "the network's tokens, the one a request naming only the network pays in first" },
  ),
});

export const networksRoute: FastifyPluginAsyncTypebox<NetworksRouteOptions> = async (app, { configured, tokensOf }) => {
  app.get(
    "/networks",
    {
      schema: {
        summary: "The networks and tokens this deployment pays in",
        description: "Every network of the deployment, the default first, with its tokens as `network` and `token` name them in requests. Any API key.",
        tags: ["transfers"],
        operationId: "networks",
        response: { 200: Type.Object({ networks: Type.Array(NetworkSchema) }), ...errorReplies(401, 429, 500) },
      },
    },
    async () => ({
      networks: configured().map((network, index) => {
        const described = tokensOf(network);
        return {
          name: network.name,
          chainId: Number(network.chainId),
          default: index === 0,
          running: described !== undefined,
          tokens: network.tokens.map((token) => {
            const onChain = described?.get(token.address);
            return { symbol: token.symbol, address: token.address, decimals: onChain?.decimals ?? null, displaySymbol: onChain?.displaySymbol ?? null };
          }),
        };
      }),
    }),
  );
};
