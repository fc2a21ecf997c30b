import { describe, expect, it } from "vitest";
import { codeOf } from "../helpers/service-error-code.js";
import { chooseNetwork, servedNetworkOf, tokenAt } from "../../src/network-settings/network-choice.js";

const USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";
const EURC = "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42";
const base = {
  network: servedNetworkOf({ network: "base", token: "USDC" }, { chainId: 8453n, tokenAddress: USDC, tokens: [{ symbol: "USDC", address: USDC }, { symbol: "ETH", address: "native" }, { symbol: "EURC", address: EURC }] }),
};
const polygon = { network: servedNetworkOf({ network: "polygon", token: "USDC" }, { chainId: 137n, tokenAddress: USDC }) };

describe("the network and token a request names", () => {
  it("is the default network's first token when it names neither, and a named network's first token when it names no token", () => {
    expect(chooseNetwork([base, polygon], {})).toEqual({ chosen: base, token: { symbol: "USDC", address: USDC } });
    expect(chooseNetwork([base, polygon], { network: 137 }).chosen).toBe(polygon);
    expect(chooseNetwork([base, polygon], { network: "polygon" }).token.symbol).toBe("USDC");
  });

  it("takes a token by its symbol in any case, its address in any case, or native", () => {
    const tokenOf = (token: string) => chooseNetwork([base, polygon], { network: "base", token }).token.symbol;
    expect(["eurc", EURC.toLowerCase(), "Eth", "native", "NATIVE"].map(tokenOf)).toEqual(["EURC", "EURC", "ETH", "ETH", "ETH"]);
  });

  it("refuses a token of another network (400 UNKNOWN_TOKEN, listing the network's) and a network not served (400 UNKNOWN_NETWORK)", () => {
    expect(codeOf(() => chooseNetwork([base, polygon], { network: "polygon", token: "ETH" }))).toBe("UNKNOWN_TOKEN");
    expect(() => chooseNetwork([base, polygon], { token: "DAI" })).toThrow(`it pays in USDC (${USDC}), ETH (native), EURC (${EURC})`);
    expect(codeOf(() => chooseNetwork([base, polygon], { network: "arbitrum" }))).toBe("UNKNOWN_NETWORK");
  });

  it("finds the served token of a journal row by its address, in any case", () => {
    expect(tokenAt(base.network.tokens, EURC.toLowerCase())?.symbol).toBe("EURC");
    expect(tokenAt(base.network.tokens, "native")?.symbol).toBe("ETH");
    expect(tokenAt(polygon.network.tokens, "native")).toBeUndefined();
  });
});
