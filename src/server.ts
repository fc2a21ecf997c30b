/** Entry point: environment -> config -> (dev chain) -> composeService -> listen -> graceful close. */
import type { AddressInfo } from "node:net";
import dotenv from "dotenv";
import { ApiKeyRing } from "./auth/api-keys.js";
import { ChainStartupError } from "./node/connect-chain.js";
import { encodeTransfer } from "./node/erc20.js";
import { type ChainConfig, type Config, type DeploymentConfig, chainConfigOf, loadConfig } from "./config.js";
import { rpcEndpointUrls } from "./node/settings.js";
import { ConfigError } from "./settings/settings-part.js";
import { signerSettingsOf } from "./signers/settings.js";
import { readSignerAddresses, signerVariableOf } from "./signers/create-signer.js";
import { SignerStartupError } from "./signers/wallet-signer.js";
import { withSecretFiles } from "./secret-files.js";
import { parseWebhookUrls } from "./domain/webhook-settings.js";
import { type AnvilNode, mineEvery, startAnvil } from "./dev/anvil.js";
import { JournalOwnerMismatchError } from "./journal/transfer-journal.js";
import { DEMO_REFUSED_RECIPIENT, type DemoChain, setUpDemoChain } from "./dev/demo-chain.js";
import { devRunJournalPath } from "./dev/dev-run-journal.js";
import { composeService } from "./compose.js";
import { readNetworksFile } from "./network-settings/networks-file.js";
import { deploymentConfigOfNetworksFile } from "./network-settings/served-network.js";
import { createLogger } from "./logger.js";
import { startReplica } from "./replicas/start-replica.js";

async function main(): Promise<void> {
  dotenv.config({ quiet: true });
  const env = withSecretFiles(process.env);
  const config = loadConfig(env);
  const devNode = config.rpcUrl || config.networksFile ? undefined : await startAnvil();
  const stopDevNode = () => devNode?.stop();
  try {
    const { chainConfig, demo }: { chainConfig: DeploymentConfig; demo?: DemoRun } = config.networksFile
      ? { chainConfig: deploymentConfigOfNetworksFile(config, readNetworksFile(config.networksFile, env)) }
      : await resolveChain(config, devNode);
    const logger = createLogger(config.logLevel, {
      ...chainConfig,
      // Every network's endpoints: a provider's key in any of them is scrubbed from the logs.
      rpcUrl: [chainConfig, ...(chainConfig.otherNetworks ?? [])].map((network) => network.rpcUrl).join(","),
      awsSecretAccessKey: process.env.AWS_SECRET_ACCESS_KEY,
      awsSessionToken: process.env.AWS_SESSION_TOKEN,
    });
    if (chainConfig.authDisabled) {
      logger.warn("AUTH_DISABLED=true: ANYONE WHO CAN REACH THIS PORT CAN SPEND FROM THE HOT WALLET. Never do this outside a sealed network.");
    }
    if (chainConfig.databaseUrl) {
      const replica = await startReplica({ ...chainConfig, databaseUrl: chainConfig.databaseUrl }, logger, {
        port: config.port,
        host: config.host,
        // Nothing more may be sent by this process: its lock and its journal writes went with the session.
        onLeadershipLost: (error) => {
          logger.fatal({ err: error }, "this replica led and lost its database session; exiting, to come back as a follower");
          logger.flush(() => process.exit(1));
        },
      });
      closeGracefullyOnSignals(async () => {
        await replica.close();
        await stopDevNode();
      }, logger);
      return;
    }
    const service = await composeService(chainConfig, logger);
    const { app, chain } = service;
    const [home, ...others] = service.services.configured;
    // The signer is the same on every network: any running network's connection names it.
    const signing = chain ?? service.services.networks[0]?.chain;
    // In order: stop taking requests and finish those in flight, then background work, the journal, the node.
    closeGracefullyOnSignals(async () => {
      await service.close();
      await stopDevNode();
    }, logger);
    await app.listen({ port: config.port, host: config.host });
    app.log.info(
      {
        node: chain ? chain.endpoints.endpoints.map((endpoint) => endpoint.label).join(", ") : "not reached yet: its transfers are answered 503 until it answers",
        ...(chainConfig.served && { network: chainConfig.served.network }),
        chainId: Number(home.chainId),
        token: home.token.address,
        ...(chainConfig.served && { tokenSymbol: chainConfig.served.token }),
        // Several networks or tokens: every network with its tokens, the default (above) first.
        ...((others.length > 0 || home.tokens.length > 1) && {
          networks: service.services.configured.map((network) => `${network.name} (chain ${network.chainId}, ${network.tokens.map((token) => `${token.symbol} ${token.address}`).join(", ")})`),
        }),
        ...(signing && {
          wallet: signing.wallet.address,
          signer: signing.signer.description,
          // A wallet pool: every lane's address, in the order of the keys.
          ...(signing.laneSigners.length > 1 && { lanes: signing.laneSigners.map((signer) => signer.address) }),
          keccak: signing.keccak,
        }),
        // Where events go, by host only: a path or query may carry a receiver's token.
        webhooks: chainConfig.webhookUrl ? parseWebhookUrls(chainConfig.webhookUrl).map((url) => new URL(url).host) : "off",
      },
      "service ready",
    );
    if (demo) {
      // The banner is written straight to stdout; the log lines before it go first.
      await new Promise<void>((resolve) => logger.flush(() => resolve()));
      printDemoBanner(demo, app.server.address());
    }
  } catch (error) {
    await stopDevNode();
    throw error;
  }
}

interface DemoRun extends DemoChain {
  /** Every wallet that sends, funded for the demo: the created one, or the configured signers'. */
  wallets: string[];
  /** The variable of the configured signers the demo funded; undefined for a wallet created for the run. */
  signerVariable?: string;
  /** DEV_BLOCK_TIME, when set. */
  blockTime?: number;
  /** The API key generated for this run, if API_KEYS was empty. */
  generatedKey?: string;
  /** What the example command sends as its bearer token. */
  exampleKey?: string;
  /** Whether the run started its anvil (no RPC_URL), or set up the node at RPC_URL (DEMO_SETUP). */
  startedNode: boolean;
  /** The node the demo was set up on. */
  rpcUrl: string;
  /** This run's journal (see devRunJournalPath). */
  journalPath: string;
}

// Without RPC_URL, a local anvil was started; with DEMO_SETUP, RPC_URL is an anvil to set up the same way.
async function resolveChain(config: Config, devNode: AnvilNode | undefined): Promise<{ chainConfig: ChainConfig; demo?: DemoRun }> {
  const rpcUrl = devNode?.rpcUrl ?? config.rpcUrl;
  if (!rpcUrl) throw new ConfigError("RPC_URL: required");
  if (devNode || config.demoSetup) {
    // DEMO_SETUP sets up its wallet and token through the first endpoint.
    const [setupUrl] = rpcEndpointUrls(rpcUrl);
    // A signer the developer configured (a keystore, a pool of keys, an HSM) is the one that sends, funded
    // here; never silently replaced by a wallet created for the run.
    const configured = signerSettingsOf(config);
    const holders = configured ? await readSignerAddresses(configured) : [];
    // A payout contract of the developer's own (PAYOUT_CONTRACT) is used as it is.
    const setup = await setUpDemoChain(setupUrl, { holders, payoutContract: !config.payoutContract });
    if (devNode && config.devBlockTime !== undefined) await mineEvery(setupUrl, config.devBlockTime);
    // Every demo run has a new token, and a journal belongs to one token: a journal of its own, beside JOURNAL_PATH.
    const journalPath = devRunJournalPath(config.journalPath, setup.tokenAddress);
    // A demo without API_KEYS gets a generated key, printed with the example command.
    const generatedKey = config.apiKeys || config.authDisabled ? undefined : ApiKeyRing.generateKey();
    // The generated key is the developer's own: admin, so /wallet and the webhook deliveries answer it too.
    const apiKeys = generatedKey ? `admin:${generatedKey}` : config.apiKeys;
    return {
      chainConfig: {
        ...config,
        rpcUrl,
        ...(configured ? {} : { privateKey: setup.privateKey }),
        signers: configured ?? [{ kind: "private-key", privateKey: setup.privateKey }],
        tokenAddress: setup.tokenAddress,
        payoutContract: config.payoutContract ?? setup.payoutContract,
        journalPath,
        apiKeys,
      },
      demo: {
        ...setup,
        wallets: configured ? holders : [setup.walletAddress],
        signerVariable: configured && signerVariableOf(configured[0]),
        blockTime: devNode ? config.devBlockTime : undefined,
        startedNode: devNode !== undefined,
        rpcUrl: setupUrl,
        journalPath,
        generatedKey,
        exampleKey: generatedKey ?? (config.authDisabled ? undefined : "<one of your API_KEYS>"),
      },
    };
  }
  return { chainConfig: chainConfigOf({ ...config, rpcUrl }) };
}

function printDemoBanner(demo: DemoRun, address: AddressInfo | string | null): void {
  if (!address || typeof address === "string") return;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const base = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;
  const example = JSON.stringify({ toAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", amount: "1.5" });
  const authHeader = demo.exampleKey ? ` -H 'authorization: Bearer ${demo.exampleKey}'` : "";
  const chain = demo.startedNode ? `Local dev chain ready (anvil, ${demo.blockTime === undefined ? "a block per transaction" : `a block every ${demo.blockTime} s`}).` : "Demo set up on RPC_URL's node (DEMO_SETUP).";
  process.stdout.write(
    [
      "",
      `${chain} ${demo.signerVariable ? `Demo token created, and your ${demo.signerVariable} signer funded, for this run:` : "Demo token and a funded dev wallet were created for this run:"}`,
      `  token:   ${demo.tokenAddress} (DEMO, 18 decimals)`,
      ...demo.wallets.map(
        (wallet, index) =>
          `  ${demo.wallets.length > 1 ? `lane ${index + 1}:` : "wallet: "} ${wallet} (${(1_000_000 / demo.wallets.length).toLocaleString("en-US")} DEMO, 1000 ETH${demo.signerVariable ? `; ${demo.signerVariable}` : ""})`,
      ),
      ...(demo.payoutContract ? [`  payouts: ${demo.payoutContract} (the payout contract, for POST /payouts)`] : []),
      `  refuses: ${DEMO_REFUSED_RECIPIENT} (the demo token reverts every transfer to it: a payout item that fails)`,
      ...(demo.generatedKey ? [`  API key: ${demo.generatedKey} (generated for this run; set API_KEYS to choose your own)`] : []),
      // The origin only: an endpoint's path or credentials may hold a provider's key.
      `  node:    ${new URL(demo.rpcUrl).origin}`,
      `  journal: ${demo.journalPath} (this run's; npm run audit:verify checks the newest)`,
      `  docs:    ${base}/docs`,
      "Try it:",
      `  curl -s -X POST ${base}/transfer -H 'content-type: application/json'${authHeader} -d '${example}'`,
      ...(demo.startedNode ? ["Send from the wallet outside the service, as a thief with its key would (the outflow watch reports it):", `  ${outsideSendRecipe(demo.rpcUrl, demo.wallets[0], demo.tokenAddress)}`] : []),
      "",
    ].join("\n") + "\n",
  );
}

// One line of curl: anvil sends 1 DEMO from the wallet without its key (impersonation), as an outside sender would.
function outsideSendRecipe(rpcUrl: string, wallet: string, token: string): string {
  const data = encodeTransfer("0x70997970C51812dc3A010C7d01b50e0d17dc79C8", 10n ** 18n);
  const call = (id: number, method: string, params: unknown[]) => `curl -s ${rpcUrl} -H 'content-type: application/json' -d '${JSON.stringify({ jsonrpc: "2.0", id, method, params })}'`;
  return `${call(1, "anvil_impersonateAccount", [wallet])} && ${call(2, "eth_sendTransaction", [{ from: wallet, to: token, data }])}`;
}

/** How long an exit waits for log lines under way to be written (they are buffered and written asynchronously). */
const LOG_DRAIN_AT_EXIT_MS = 2_000;

interface ExitLog {
  info(msg: string): void;
  error(obj: unknown, msg: string): void;
  flush(done: () => void): void;
}

function closeGracefullyOnSignals(close: () => Promise<void>, log: ExitLog): void {
  let closing = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (closing) return;
      closing = true;
      log.info(`${signal} received: finishing requests in flight, then exiting`);
      close().then(
        () => exitOnceLogged(log, 0),
        (error) => {
          log.error({ err: error }, "error while closing");
          exitOnceLogged(log, 1);
        },
      );
    });
  }
}

// The exit's own synchronous write cannot wait for a write already under way; this does, for a while.
function exitOnceLogged(log: ExitLog, code: number): void {
  setTimeout(() => process.exit(code), LOG_DRAIN_AT_EXIT_MS);
  log.flush(() => process.exit(code));
}

main().catch((error: unknown) => {
  const known = error instanceof ConfigError || error instanceof ChainStartupError || error instanceof SignerStartupError || error instanceof JournalOwnerMismatchError;
  process.stderr.write(`cannot start: ${known || error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
