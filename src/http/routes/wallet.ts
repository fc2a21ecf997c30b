/** GET /wallet: the hot wallet at a glance, so one curl tells whether it is funded, busy or jammed. */
import { SecondAdminNeededError, type SecondAdminResume } from "../../signers/second-admin-resume.js";
import { JournalUnavailableError } from "../../journal/transfer-journal.js";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { NetworkServices } from "../../network/network-services.js";
import { formatTokenAmount } from "../../domain/token-amount.js";
import { asNodeUnavailable } from "../../node/ethers-errors.js";
import { type ChainConnection, tokensOf } from "../../node/connect-chain.js";
import { type WalletSnapshot, tokenBalanceOf } from "../../send-path/wallet-snapshot.js";
import { STUCK_AFTER_SECONDS, isJammed, readUnconfirmedTransfers } from "../../send-path/unconfirmed-transfers.js";
import { feesAsText } from "../../send-path/wallet-transaction.js";
import { ServiceError } from "../../errors.js";
import type { UnexpectedOutflows } from "../../outflows/unexpected-outflows.js";
import { PauseChangedError, type SigningPause } from "../../signers/signing-pause.js";
import { TxHashSchema, errorReplies } from "../schemas.js";


export interface WalletRouteOptions {
  /**
   * Every running network, the default first while it runs: the document is the default's (the first running
   * network's while the default has not been reached), with every one's under `networks` when there are several.
   */
  networks: readonly NetworkServices[];
  /** The default network's chain id: its node failing fails the document; another's falls back to its snapshot. */
  defaultChainId: bigint;
  /** Set when several replicas share one database. */
  replicaId?: string;
  /** Transactions and token transfers out of the wallets that the service never made. */
  outflows: Pick<UnexpectedOutflows, "recent">;
  /** Whether the service signs; POST /wallet/resume ends a pause. */
  signing: Pick<SigningPause, "paused" | "resume">;
  /** With RESUME_NEEDS_SECOND_ADMIN: the first admin's resume asks (entered in the audit log first), another person's confirms. */
  resumes: SecondAdminResume | undefined;
}

const SigningPausedSchema = Type.Object({
  since: Type.String({ description: "when signing stopped (ISO time)" }),
  reason: Type.String(),
  hash: Type.Union([Type.String(), Type.Null()], { description: "the unexpected outflow's transaction that stopped it" }),
  latestHash: Type.Union([Type.String(), Type.Null()], { description: "the latest outflow reported since (the first, until another): POST /wallet/resume names it" }),
  outflows: Type.Integer({ description: "outflows reported since it began" }),
});

/** How many unexpected outflows the document lists per network, the newest first. */
const OUTFLOWS_SHOWN = 20;

/** Which replica answered, when several share one database; null for a service on its own. */
export const ReplicaReportSchema = Type.Union([
  Type.Object({ id: Type.String({ description: "REPLICA_ID" }), leads: Type.Boolean({ description: "true for the replica that sends transfers; the others forward them to it" }) }),
  Type.Null(),
]);

const FeesSchema = Type.Object({
  maxFeePerGas: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; null on a chain without EIP-1559" }),
  maxPriorityFeePerGas: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; null on a chain without EIP-1559" }),
  gasPrice: Type.Union([Type.String(), Type.Null()], { description: "wei, decimal; only on a chain without EIP-1559" }),
});

const EndpointReportSchema = Type.Object({
  endpoint: Type.String({ description: "protocol and host of an RPC_URL endpoint (its path and query, which can carry a key, are never shown)" }),
  state: Type.Union([Type.Literal("in"), Type.Literal("failing"), Type.Literal("lagging")], {
    description: "in: takes reads and broadcasts; failing: left out after faults (3 in 60 s, or a 429); lagging: left out, its head more than RPC_MAX_LAG_BLOCKS behind",
  }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "why it is left out; null while in rotation" }),
  headLagBlocks: Type.Union([Type.Integer(), Type.Null()], { description: "blocks behind the highest head seen when it last showed its head; null before it showed one" }),
  calls: Type.Integer({ description: "requests sent to it since the service started" }),
  faults: Type.Integer({ description: "of those, how many got no usable answer (time-out, refused or reset connection, HTTP 5xx or 429)" }),
  latencyMs: Type.Union([Type.Number(), Type.Null()], { description: "average latency of its recent requests, ms" }),
});

const TokenBalancesSchema = Type.Array(
  Type.Object({
    symbol: Type.String({ description: "its symbol in NETWORKS_FILE; without the file, its address" }),
    address: Type.String({ description: "the contract's address, or \"native\" for the native coin (the ETH balance)" }),
    decimals: Type.Integer(),
    balance: Type.String({ description: "base units, decimal, as of the snapshot" }),
    balanceInTokens: Type.String(),
  }),
  { description: "every token the network pays in, the default first, as of the snapshot" },
);

const UnexpectedOutflowSchema = Type.Object({
  wallet: Type.String({ description: "the wallet (a lane of the pool) it left" }),
  hash: Type.String({ description: "the transaction that did it" }),
  blockNumber: Type.Integer(),
  blockHash: Type.String(),
  nonce: Type.Union([Type.Integer(), Type.Null()], { description: "a transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (a spender the wallet approved)" }),
  token: Type.Union([Type.String(), Type.Null()], { description: "a token Transfer log out of the wallet: the token; null for the transaction itself" }),
  logIndex: Type.Union([Type.Integer(), Type.Null()], { description: "a token Transfer log: its index in the block; null for the transaction itself" }),
  to: Type.Union([Type.String(), Type.Null()], { description: "the token's recipient, or the transaction's to; null when the node did not return the transaction" }),
  amount: Type.Union([Type.String(), Type.Null()], { description: "base units of the token, or the transaction's value in wei; decimal" }),
  code: Type.Union([Type.String(), Type.Null()], {
    description: "code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate), which moves funds with no nonce and no log; hash is then the keccak-256 of the wallet's address and the code. Null for a transaction or a log",
  }),
  otherToken: Type.Boolean({ description: "a Transfer of a contract this network does not pay in: any contract can emit one (fake tokens do), so it never pauses signing" }),
  detectedAt: Type.String({ description: "when this service noticed it" }),
});

const NetworkWalletSchema = Type.Object({
  address: Type.String(),
  network: Type.String({ description: "the network's name in NETWORKS_FILE; without the file, its chain id in decimal" }),
  chainId: Type.Integer(),
  token: Type.Object({ address: Type.String(), decimals: Type.Integer() }),
  ethBalance: Type.String({ description: "wei, decimal, as of snapshotBlock" }),
  tokenBalance: Type.String({ description: "base units, decimal, as of snapshotBlock" }),
  tokenBalanceInTokens: Type.String(),
  balances: TokenBalancesSchema,
  snapshotBlock: Type.Integer({ description: "block of the balances above (re-read every CHAIN_REFRESH_INTERVAL_MS)" }),
  gasRunwayHours: Type.Union([Type.Number(), Type.Null()], { description: "hours the ETH balance lasts at the last hour's gas spend; null when nothing was spent" }),
  nonces: Type.Object({
    next: Type.Union([Type.Integer(), Type.Null()], { description: "the nonce the service gives the next transfer; null before the first" }),
    chainLatest: Type.Integer({ description: "transactions of the wallet mined (with ?snapshot=true: as of snapshotBlock)" }),
    chainPending: Type.Union([Type.Integer(), Type.Null()], { description: "mined plus waiting in the node's pool; null with ?snapshot=true" }),
  }),
  transfersInFlight: Type.Integer({ description: "signed by the service, not yet mined" }),
  oldestUnconfirmed: Type.Union([
    Type.Object({ hash: Type.String(), nonce: Type.Integer(), state: Type.String(), ageSeconds: Type.Integer() }),
    Type.Null(),
  ]),
  stuckAtFeeCap: Type.Array(
    Type.Object({
      hash: Type.String({ description: "the transfer's first hash, as POST /transfer answered it" }),
      carriedBy: Type.String({ description: "its latest attempt" }),
      nonce: Type.Integer(),
      offered: FeesSchema,
      needed: FeesSchema,
    }),
    {
      description:
        "transfers whose fees the chain has outgrown while MAX_FEE_PER_GAS / MAX_PRIORITY_FEE_PER_GAS allow nothing higher: they wait at the highest allowed fee (offered) for the chain to need less (needed), and every later transfer waits behind them",
    },
  ),
  jammed: Type.Boolean({ description: `true when the oldest unconfirmed transfer is over ${STUCK_AFTER_SECONDS} s old and its nonce is still not mined` }),
  unexpectedOutflows: Type.Array(UnexpectedOutflowSchema, {
    description: `transactions, transfers of any ERC-20 and code (an EIP-7702 delegation) out of this network's wallets that this service never made, seen since it started (OUTFLOW_CHECK_INTERVAL_MS), newest first, at most ${OUTFLOWS_SHOWN}: the key used elsewhere, or compromised`,
  }),
  replica: ReplicaReportSchema,
  rpcEndpoints: Type.Array(EndpointReportSchema, { description: "every RPC_URL endpoint, in the order configured" }),
  lanes: Type.Optional(
    Type.Array(
      Type.Object({
        address: Type.String(),
        ethBalance: Type.String({ description: "wei, decimal, as of its snapshot" }),
        tokenBalance: Type.String({ description: "base units, decimal, as of its snapshot" }),
        tokenBalanceInTokens: Type.String(),
        balances: TokenBalancesSchema,
        transfersInFlight: Type.Integer({ description: "signed from this wallet, not yet mined" }),
        gasRunwayHours: Type.Union([Type.Number(), Type.Null()], { description: "hours its ETH lasts at the last hour's gas spend; null when it spent nothing" }),
        state: Type.Union([Type.Literal("open"), Type.Literal("held")], { description: "open: takes new transfers; held: takes none until it clears" }),
        heldBecause: Type.Union([Type.Literal("jammed"), Type.Literal("stuck"), Type.Literal("gas-below-floor"), Type.Literal("in-flight-limit"), Type.Null()], {
          description: "why a held lane takes no transfers: its nonces are jammed, a transfer is stuck past STUCK_AFTER_BLOCKS, it cannot pay one more transfer's gas, or it holds MAX_IN_FLIGHT_PER_LANE unmined",
        }),
        gasTopUp: Type.Optional(
          Type.Object(
            {
              funds: Type.Boolean({ description: "true for GAS_TOPUP_FROM, the lane that pays the others' gas" }),
              inFlight: Type.Union([Type.String(), Type.Null()], { description: "the hash of its top-up signed and not yet mined" }),
              received: Type.Integer({ description: "top-ups sent to it since the service started" }),
            },
            { description: "with GAS_TOPUP_FROM set only" },
          ),
        ),
      }),
      { description: "a wallet pool only (several keys): every lane, in the order of the keys; the document above is the first lane's" },
    ),
  ),
});

const WalletReportSchema = Type.Composite([
  NetworkWalletSchema,
  Type.Object({
    signingPaused: Type.Union([SigningPausedSchema, Type.Null()], {
      description:
        "set while the service signs nothing (PAUSE_ON_UNEXPECTED_OUTFLOW stopped it after an unexpected outflow): new transfers are answered 503 SIGNING_PAUSED until an admin resumes with POST /wallet/resume; null while it signs",
    }),
    networks: Type.Optional(
      Type.Array(NetworkWalletSchema, {
        description: "several networks running (NETWORKS_FILE) only: every running network's wallet, the default first; the document above is the default's (while the default has not been reached, the first running network's: `network` says which)",
      }),
    ),
  }),
]);

const RESUME_SCHEMA = {
  summary: "Sign again after PAUSE_ON_UNEXPECTED_OUTFLOW stopped the service",
  description:
    "Ends the pause an unexpected outflow started (see signingPaused in GET /wallet): new transfers are signed and sent again. " +
    "Resume once the outflow is explained (another system of yours used the key) or the key is replaced. `latestHash` names the " +
    "pause's latest outflow (signingPaused.latestHash): when another was reported since you looked, 409 PAUSE_CHANGED and nothing is resumed. " +
    "An outflow reported later pauses again. Answers the pause it ended, or null when signing was not paused. " +
    "With RESUME_NEEDS_SECOND_ADMIN, the first admin's call is answered 202 (awaitingSecondAdmin): a second admin, another person (API_KEY_HOLDERS), " +
    "naming the same latestHash within an hour ends the pause; the asker again is 403 RESUME_NEEDS_SECOND_ADMIN.",
  tags: ["operations"],
  operationId: "resumeSigning",
  querystring: Type.Object({ latestHash: Type.Union([TxHashSchema, Type.Literal("none")], { description: "signingPaused.latestHash from GET /wallet (`none` when it is null)" }) }, { additionalProperties: false }),
  response: {
    200: Type.Object({ resumed: Type.Union([SigningPausedSchema, Type.Null()], { description: "the pause this ended; null when the service was signing" }) }),
    202: Type.Object({
      resumed: Type.Null(),
      awaitingSecondAdmin: Type.Object({
        askedBy: Type.String({ description: "the admin key that asked" }),
        askedAt: Type.String({ description: "ISO time" }),
        expiresAt: Type.String({ description: "ISO time: the ask lapses then, and when another outflow is reported" }),
        latestHash: Type.String({ description: "the latest outflow the ask named: the second admin names it too" }),
      }),
      message: Type.String(),
    }),
    ...errorReplies(400, 401, 403, 409, 429, 500, 503),
  },
};

const WALLET_SCHEMA = {
  summary: "The hot wallet: balances, nonces, transfers in flight",
  tags: ["operations"],
  operationId: "wallet",
  querystring: Type.Object(
    { snapshot: Type.Optional(Type.Literal("true", { description: "answer from the latest wallet snapshot only, at no node call (what the console polls)" })) },
    { additionalProperties: false },
  ),
  response: { 200: WalletReportSchema, ...errorReplies(401, 429, 500, 503) },
};

export const walletRoute: FastifyPluginAsyncTypebox<WalletRouteOptions> = async (app, { networks, defaultChainId, replicaId, outflows, signing, resumes }) => {
  app.post("/wallet/resume", { schema: RESUME_SCHEMA }, async (request, reply) => {
    let resumed;
    try {
      const outcome = resumes ? await resumes.resume(request.apiKeyId, request.query.latestHash) : { resumed: await signing.resume(request.apiKeyId, request.query.latestHash) };
      if ("asked" in outcome) {
        const { askedBy, askedAt, expiresAt, latestHash } = outcome.asked;
        request.log.warn({ apiKeyId: askedBy, latestHash }, "a resume of signing was asked for; it waits for a second admin (RESUME_NEEDS_SECOND_ADMIN)");
        const awaitingSecondAdmin = { askedBy, askedAt: new Date(askedAt).toISOString(), expiresAt: new Date(expiresAt).toISOString(), latestHash };
        return reply.code(202).send({ resumed: null, awaitingSecondAdmin, message: `asked by ${askedBy}: a second admin, another person, confirms it with the same call before ${awaitingSecondAdmin.expiresAt}` });
      }
      resumed = outcome.resumed ?? null;
    } catch (error) {
      if (error instanceof PauseChangedError) throw new ServiceError("PAUSE_CHANGED", error.message);
      if (error instanceof SecondAdminNeededError) throw new ServiceError("RESUME_NEEDS_SECOND_ADMIN", error.message);
      if (error instanceof JournalUnavailableError) throw new ServiceError("JOURNAL_UNAVAILABLE", "the transfer journal cannot record (see the service's log); nothing was asked or resumed. Retry later.");
      throw error;
    }
    if (resumed) request.log.warn({ apiKeyId: request.apiKeyId, pausedSince: resumed.since, hash: resumed.hash }, "signing resumed by an admin after an unexpected outflow");
    return { resumed };
  });

  app.get("/wallet", { schema: WALLET_SCHEMA }, async (request) => {
    const snapshotOnly = request.query.snapshot === "true";
    if (networks.length === 0) throw new ServiceError("NETWORK_UNAVAILABLE", "no network has been reached since the service started: there is no wallet to show yet; retry later");
    // Another network's node failing does not take the default's document down: its part is then its snapshot's.
    const reports = await Promise.all(
      networks.map((network) =>
        walletOf(network, snapshotOnly, replicaId, outflows).catch((error: unknown) =>
          network.chain.chainId === defaultChainId ? Promise.reject(error) : walletOf(network, true, replicaId, outflows),
        ),
      ),
    );
    return { ...reports[0], signingPaused: signing.paused ?? null, ...(reports.length > 1 && { networks: reports }) };
  });
};

/** The balance of every token of the network in `snapshot`. */
function balancesOf(chain: ChainConnection, snapshot: WalletSnapshot) {
  return tokensOf(chain).map((token) => {
    const balance = tokenBalanceOf(snapshot, chain, token);
    return { symbol: token.symbol, address: token.address, decimals: token.decimals, balance: balance.toString(), balanceInTokens: formatTokenAmount(balance, token.decimals) };
  });
}

/** One network's wallet: its balances, nonces and transfers in flight; its node is asked unless `snapshotOnly`. */
async function walletOf(services: NetworkServices, snapshotOnly: boolean, replicaId: string | undefined, outflows: WalletRouteOptions["outflows"]) {
  const { chain } = services;
  const { provider, wallet } = chain;
  const snapshot = services.ledger.snapshot;
  const [latest, pending] =
    snapshotOnly
      ? [snapshot.minedNonceCount, null]
      : await Promise.all([
          provider.send("eth_getTransactionCount", [wallet.address, "latest"]),
          provider.send("eth_getTransactionCount", [wallet.address, "pending"]),
        ]).catch((error) => {
          throw asNodeUnavailable(error);
        });
  const chainLatest = Number(latest);
  const unconfirmed = readUnconfirmedTransfers(services.journal);
  const { topUps } = services;
  return {
    address: wallet.address,
    network: services.network.name,
    chainId: Number(chain.chainId),
    token: { address: chain.tokenAddress, decimals: chain.tokenDecimals },
    ethBalance: snapshot.ethBalance.toString(),
    tokenBalance: snapshot.tokenBalance.toString(),
    tokenBalanceInTokens: formatTokenAmount(snapshot.tokenBalance, chain.tokenDecimals),
    balances: balancesOf(chain, snapshot),
    snapshotBlock: snapshot.blockNumber,
    gasRunwayHours: services.lanes[0].gasRunwayHours(),
    nonces: { next: services.nonces.peek() ?? null, chainLatest, chainPending: pending === null ? null : Number(pending) },
    transfersInFlight: services.ledger.unminedCount,
    oldestUnconfirmed: unconfirmed.oldest ?? null,
    stuckAtFeeCap: services.replacer.stuckAtCap.map(({ offered, needed, ...stuck }) => ({ ...stuck, offered: feesAsText(offered), needed: feesAsText(needed) })),
    jammed: isJammed(unconfirmed, chainLatest),
    unexpectedOutflows: outflows
      .recent(services.network.name, OUTFLOWS_SHOWN)
      .map(({ wallet: from, hash, block, nonce, token, logIndex, to, amount, code, otherToken, detectedAt }) => ({ wallet: from, hash, blockNumber: block.number, blockHash: block.hash, nonce, token, logIndex, to, amount, code, otherToken, detectedAt })),
    replica: replicaId === undefined ? null : { id: replicaId, leads: true },
    rpcEndpoints: chain.endpoints.reports(),
    ...(services.lanes.length > 1 && {
      lanes: services.lanes.map((lane) => {
        const { snapshot: laneSnapshot } = lane.ledger;
        const { ethBalance, tokenBalance } = laneSnapshot;
        const hold = lane.hold() ?? null;
        return {
          address: lane.address,
          ethBalance: ethBalance.toString(),
          tokenBalance: tokenBalance.toString(),
          tokenBalanceInTokens: formatTokenAmount(tokenBalance, chain.tokenDecimals),
          balances: balancesOf(chain, laneSnapshot),
          transfersInFlight: lane.ledger.unminedCount,
          gasRunwayHours: lane.gasRunwayHours(),
          state: hold === null ? ("open" as const) : ("held" as const),
          heldBecause: hold,
          ...(topUps && {
            gasTopUp: {
              funds: lane.address === topUps.from,
              inFlight: topUps.inFlight.find((topUp) => topUp.lane === lane.address)?.hash ?? null,
              received: topUps.sentTo(lane.address),
            },
          }),
        };
      }),
    }),
  };
}
