import { Wallet } from "ethers";
import { describe, expect, it } from "vitest";
import { ERC20_INTERFACE, encodeTransfer } from "../../src/chain/erc20.js";

describe("encodeTransfer", () => {
  it.each([1n, 10n ** 18n, (1n << 256n) - 1n])("writes the same call data as the ABI encoder for %s", (amount) => {
    const to = Wallet.createRandom().address;
    expect(encodeTransfer(to, amount)).toBe(ERC20_INTERFACE.encodeFunctionData("transfer", [to, amount]));
  });
});
