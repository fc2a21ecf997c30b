import { Wallet } from "ethers";
import { describe, expect, it } from "vitest";
import { ERC20_INTERFACE, decodeTransfer, encodeTransfer } from "../../src/node/erc20.js";

describe("encodeTransfer", () => {
  it.each([1n, 10n ** 18n, (1n << 256n) - 1n])("writes the same call data as the ABI encoder for %s", (amount) => {
    const to = Wallet.createRandom().address;
    expect(encodeTransfer(to, amount)).toBe(ERC20_INTERFACE.encodeFunctionData("transfer", [to, amount]));
  });
});

describe("decodeTransfer", () => {
  it("reads back what encodeTransfer wrote, checksummed", () => {
    const to = Wallet.createRandom().address;
    expect(decodeTransfer(encodeTransfer(to, 42n))).toEqual({ to, amount: 42n });
    expect(decodeTransfer(encodeTransfer(to, 42n).toUpperCase().replace("0X", "0x"))).toEqual({ to, amount: 42n });
  });

  it("ignores other calls and malformed data", () => {
    const to = Wallet.createRandom().address;
    expect(decodeTransfer(ERC20_INTERFACE.encodeFunctionData("balanceOf", [to]))).toBeUndefined();
    expect(decodeTransfer(`${encodeTransfer(to, 1n)}00`)).toBeUndefined();
    expect(decodeTransfer("0x")).toBeUndefined();
  });
});
