import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { ConfigError } from "../../src/settings/settings-part.js";
import { parseNetworksFile } from "../../src/network-settings/networks-file.js";
import { deploymentConfigOfNetworksFile } from "../../src/network-settings/served-network.js";

const USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const USDC_POLYGON = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359";
const KEY = `0x${"11".repeat(32)}`;

/** The example, with a provider key kept in the environment. */
const TWO_NETWORKS = {
  networks: [
    { name: "base", chainId: 8453, rpcUrls: ["https://base.example/v2/${BASE_KEY}"], tokens: { USDC: USDC_BASE, ETH: "native" } },
    { name: "polygon", chainId: 137, rpcUrls: ["https://a.example", "https://b.example"], tokens: { USDC: USDC_POLYGON } },
  ],
  default: { network: "base", token: "USDC" },
};

const parse = (document: unknown, env: Record<string, string> = { BASE_KEY: "secret-key-123" }) => parseNetworksFile(JSON.stringify(document), env);

function problemsOf(document: unknown, env?: Record<string, string>): string {
  try {
    if (typeof document === "string") parseNetworksFile(document, env ?? {});
    else parse(document, env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the file was accepted");
}

describe("NETWORKS_FILE", () => {
  it("reads the issue's example: networks, tokens (native too), the default, and variables filled in", () => {
    const settings = parse(TWO_NETWORKS);
    expect(settings.default).toEqual({ network: "base", token: "USDC" });
    expect(settings.networks.map(({ name, chainId, rpcUrls }) => ({ name, chainId, rpcUrls }))).toEqual([
      { name: "base", chainId: 8453, rpcUrls: ["https://base.example/v2/secret-key-123"] },
      { name: "polygon", chainId: 137, rpcUrls: ["https://a.example", "https://b.example"] },
    ]);
    expect(settings.networks[0].tokens).toEqual([
      { symbol: "USDC", address: USDC_BASE },
      { symbol: "ETH", address: "native" },
    ]);
  });

  it("takes per-network settings and per-token limits in the variables' own forms", () => {
    const settings = parse({
      networks: [
        {
          name: "base",
          chainId: 8453,
          rpcUrls: ["https://a.example"],
          finalityBlocks: 20,
          maxFeePerGas: "2.5",
          stuckAfterBlocks: 6,
          tokens: { USDC: { address: USDC_BASE.toLowerCase(), maxTransferAmount: "5000", transferCapPerDay: "20000" } },
        },
      ],
    });
    expect(settings.networks[0]).toMatchObject({ finalityBlocks: 20, maxFeePerGas: "2.5", stuckAfterBlocks: 6 });
    // An all-lower-case address is checksummed; the one network and token are the default without naming them.
    expect(settings.networks[0].tokens).toEqual([{ symbol: "USDC", address: USDC_BASE, maxTransferAmount: "5000", transferCapPerDay: "20000" }]);
    expect(settings.default).toEqual({ network: "base", token: "USDC" });
  });

  it("names a variable that is not set, and never prints a value that came from one", () => {
    const message = problemsOf(TWO_NETWORKS, {});
    expect(message).toContain("networks[0].rpcUrls[0]: names ${BASE_KEY}, which is not set");
    const bad = { ...TWO_NETWORKS, networks: [{ ...TWO_NETWORKS.networks[0], rpcUrls: ["${BASE_KEY}"] }, TWO_NETWORKS.networks[1]] };
    const invalid = problemsOf(bad, { BASE_KEY: "not-a-url-secret" });
    expect(invalid).toContain("rpcUrls: endpoint 1 is not a valid http:// or https:// URL");
    expect(invalid).not.toContain("not-a-url-secret");
  });

  it("refuses, naming each: unknown fields, bad types, bad names, bad addresses, duplicates and a default that is not there", () => {
    expect(problemsOf("not json")).toMatch(/invalid NETWORKS_FILE:\n {2}is not JSON/);
    // Where the fault is, never the text around it (which may hold an inline RPC key).
    const withKey = '{"networks": [{"name": "base", "rpcUrl": "https://base.example/v2/s3cretRpcKey0123" oops}]}';
    expect(problemsOf(withKey)).toMatch(/is not JSON \(at line 1, column \d+\)/);
    expect(problemsOf(withKey)).not.toContain("s3cretRpcKey0123");
    expect(problemsOf('{\n  "networks": [\n    {"rpcUrl": "https://x/s3cretRpcKey0123",}\n  ]\n}')).toMatch(/is not JSON \(at line 3, column \d+\)/);
    expect(problemsOf({ ...TWO_NETWORKS, extra: 1 })).toContain("extra: unknown field");
    const [base, polygon] = TWO_NETWORKS.networks;
    expect(problemsOf({ ...TWO_NETWORKS, networks: [{ ...base, rpcUrl: "x" }, polygon] })).toContain("networks[0].rpcUrl: unknown field");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [{ ...base, chainId: "8453" }, polygon] })).toContain("networks[0].chainId: expected integer");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, name: "137" }] })).toContain("networks[1].name: must be 1 to 32 lower-case letters");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, finalityBlocks: 0 }] })).toContain("networks[1].finalityBlocks:");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, tokens: { USDC: "0x1234" } }] })).toContain(
      'networks[1] (polygon).tokens.USDC: must be "native" or a token contract\'s address',
    );
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, tokens: { USDC: { address: USDC_POLYGON, cap: "1" } } }] })).toContain(
      "networks[1] (polygon).tokens.USDC.cap: unknown field",
    );
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, tokens: {} }] })).toContain("networks[1] (polygon).tokens: names no token");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, tokens: { USDC: USDC_POLYGON, usdc: USDC_BASE } }] })).toContain(
      "two entries have the symbol (in any case) USDC",
    );
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, name: "base" }] })).toContain("networks: two entries have the name base");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, chainId: 8453 }] })).toContain("networks: two entries have the chainId 8453");
    expect(problemsOf({ ...TWO_NETWORKS, networks: [base, { ...polygon, rpcUrls: ["https://a.example", "https://a.example"] }] })).toContain(
      "rpcUrls: endpoint 2 repeats endpoint 1",
    );
    expect(problemsOf({ ...TWO_NETWORKS, default: { network: "arbitrum", token: "USDC" } })).toContain("default.network: arbitrum is not one of the networks' names");
    expect(problemsOf({ ...TWO_NETWORKS, default: { network: "polygon", token: "ETH" } })).toContain("default.token: ETH is not one of polygon's tokens");
    expect(problemsOf({ networks: TWO_NETWORKS.networks })).toContain("default: required with several networks or tokens");
    expect(problemsOf({ networks: [] })).toContain("networks: must list 1 to 32 networks");
    expect(problemsOf({ networks: [{ ...base, tokens: { Native: USDC_BASE } }] })).toContain('tokens.Native: the symbol "Native" names the native coin in requests');
    expect(problemsOf({ networks: [{ ...base, rpcUrls: [] }] })).toContain("networks[0].rpcUrls: must list 1 to 16 endpoint URLs");
  });

  it("lists every problem of a file at once", () => {
    const [base, polygon] = TWO_NETWORKS.networks;
    const message = problemsOf({ ...TWO_NETWORKS, networks: [{ ...base, speed: 1 }, { ...polygon, chainId: -1 }] });
    expect(message).toContain("networks[0].speed: unknown field");
    expect(message).toContain("networks[1].chainId:");
  });
});

describe("the deployment a NETWORKS_FILE describes", () => {
  const config = loadConfig({ NETWORKS_FILE: "./networks.json", PRIVATE_KEY: KEY, API_KEYS: "a-long-enough-api-key", MAX_FEE_PER_GAS: "100", FINALITY_BLOCKS: "12" });

  it("is the one network and token of the file, with its settings over the variables' and its messages naming the file", () => {
    const settings = parse({
      networks: [{ name: "base", chainId: 8453, rpcUrls: ["https://a.example", "https://b.example"], maxFeePerGas: "2", tokens: { USDC: { address: USDC_BASE, maxTransferAmount: "10" } } }],
    });
    const chainConfig = deploymentConfigOfNetworksFile(config, settings);
    expect(chainConfig).toMatchObject({
      rpcUrl: "https://a.example,https://b.example",
      chainId: 8453,
      tokenAddress: USDC_BASE,
      maxFeePerGas: "2",
      // A variable stays the default where the network says nothing.
      finalityBlocks: 12,
      served: { network: "base", token: "USDC" },
      // A token's limits stay with the token: another token of the network does not take them.
      tokens: [{ symbol: "USDC", address: USDC_BASE, maxTransferAmount: "10" }],
      settingNames: {
        rpcUrl: 'NETWORKS_FILE networks "base" rpcUrls',
        chainId: 'NETWORKS_FILE networks "base" chainId',
        tokenAddress: 'NETWORKS_FILE networks "base" tokens.USDC',
        tokens: 'NETWORKS_FILE networks "base" tokens',
      },
    });
    expect(chainConfig.maxTransferAmount).toBeUndefined();
    expect(chainConfig.signers).toEqual([{ kind: "private-key", privateKey: KEY }]);
    expect(chainConfig.otherNetworks).toEqual([]);
  });

  it("is every network of the file, the default first, each with its own endpoints, chain, token and settings", () => {
    const [base, polygon] = TWO_NETWORKS.networks;
    const settings = parse({
      networks: [{ ...base, tokens: { USDC: USDC_BASE } }, { ...polygon, finalityBlocks: 128 }],
      default: { network: "polygon", token: "USDC" },
    });
    const deployment = deploymentConfigOfNetworksFile(config, settings);
    expect(deployment).toMatchObject({ chainId: 137, rpcUrl: "https://a.example,https://b.example", tokenAddress: USDC_POLYGON, finalityBlocks: 128, served: { network: "polygon" } });
    expect(deployment.otherNetworks).toHaveLength(1);
    expect(deployment.otherNetworks?.[0]).toMatchObject({ chainId: 8453, rpcUrl: "https://base.example/v2/secret-key-123", tokenAddress: USDC_BASE, finalityBlocks: 12, served: { network: "base", token: "USDC" } });
  });

  it("holds every token of a network, the default's symbol first (else the first listed), its first ERC-20 as the token its balances are read through", () => {
    const [base, polygon] = TWO_NETWORKS.networks;
    const EURC = "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42";
    const deployment = deploymentConfigOfNetworksFile(config, parse({ networks: [{ ...base, tokens: { ETH: "native", EURC, USDC: USDC_BASE } }, { ...polygon, tokens: { EURC, POL: "native" } }], default: { network: "base", token: "USDC" } }));
    expect(deployment.tokens?.map((token) => token.symbol)).toEqual(["USDC", "ETH", "EURC"]);
    expect(deployment).toMatchObject({ tokenAddress: USDC_BASE, served: { network: "base", token: "USDC" } });
    // polygon has no USDC: a request naming polygon alone gets its first token.
    expect(deployment.otherNetworks?.[0]).toMatchObject({ tokenAddress: EURC, served: { network: "polygon", token: "EURC" } });
    expect(deployment.otherNetworks?.[0].tokens?.map((token) => token.symbol)).toEqual(["EURC", "POL"]);
    // The native coin comes first where it is the default, and the first ERC-20 is still the one read first.
    const nativeFirst = deploymentConfigOfNetworksFile(config, parse({ ...TWO_NETWORKS, default: { network: "base", token: "ETH" } }));
    expect(nativeFirst).toMatchObject({ tokenAddress: USDC_BASE, served: { network: "base", token: "ETH" } });
    expect(nativeFirst.tokens?.map((token) => token.address)).toEqual(["native", USDC_BASE]);
  });

  it("is refused for a network that names only its native coin (its balances and logs are read through an ERC-20)", () => {
    const [base, polygon] = TWO_NETWORKS.networks;
    expect(() => deploymentConfigOfNetworksFile(config, parse({ ...TWO_NETWORKS, networks: [base, { ...polygon, tokens: { POL: "native" } }] }))).toThrow(
      /networks "polygon" tokens: names only the native coin; a network needs one ERC-20 token at least/,
    );
  });

  it("takes the networks from the file only: RPC_URL, TOKEN_ADDRESS or CHAIN_ID beside it are refused, and a signer and API keys are required", () => {
    expect(() => loadConfig({ NETWORKS_FILE: "./n.json", RPC_URL: "http://127.0.0.1:8545", CHAIN_ID: "1", PRIVATE_KEY: KEY, API_KEYS: "a-long-enough-api-key" })).toThrow(
      "NETWORKS_FILE: give the networks in the file only; unset RPC_URL, CHAIN_ID",
    );
    const message = (() => {
      try {
        loadConfig({ NETWORKS_FILE: "./n.json" });
        return "";
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toContain("PRIVATE_KEY: required when RPC_URL or NETWORKS_FILE is set");
    expect(message).toContain("API_KEYS: required");
  });
});
