import { describe, expect, it } from "vitest";
import { InvalidAmountError, describeAmount, formatTokenAmount, parseTokenAmount } from "../../src/domain/token-amount.js";

describe("parseTokenAmount", () => {
  const accepted: [number | string, number, bigint][] = [
    ["1.5", 18, 1_500_000_000_000_000_000n],
    [1.5, 18, 1_500_000_000_000_000_000n],
    [0.1, 18, 100_000_000_000_000_000n],
    [0.3, 6, 300_000n],
    ["1.50", 6, 1_500_000n],
    ["1.000000000", 6, 1_000_000n],
    ["007", 0, 7n],
    [1e-7, 18, 100_000_000_000n],
    [5e-18, 18, 5n],
    [1e21, 0, 10n ** 21n],
    [123456789012345, 0, 123456789012345n],
    ["0.000001", 6, 1n],
    [`${(1n << 256n) - 1n}`, 0, (1n << 256n) - 1n],
  ];
  it.each(accepted)("%s with %i decimals is %s base units", (amount, decimals, units) => {
    expect(parseTokenAmount(amount, decimals)).toBe(units);
  });

  const refused: [string, number | string, number, RegExp][] = [
    ["zero", "0", 18, /greater than zero/],
    ["zero with decimals", "0.000", 18, /greater than zero/],
    ["numeric zero", 0, 18, /greater than zero/],
    ["negative zero", -0, 18, /greater than zero/],
    ["a negative number", -1, 18, /greater than zero/],
    ["a negative string", "-1", 18, /no sign/],
    ["a plus sign", "+1", 18, /no sign/],
    ["an exponent", "1e18", 18, /exponent/],
    ["hex", "0x01", 18, /hex/],
    ["NaN", "NaN", 18, /positive decimal/],
    ["Infinity", "Infinity", 18, /positive decimal/],
    ["a numeric infinity", Number.POSITIVE_INFINITY, 18, /finite/],
    ["a numeric NaN", Number.NaN, 18, /finite/],
    ["spaces", " 1", 18, /spaces/],
    ["a trailing point", "1.", 18, /positive decimal/],
    ["a leading point", ".5", 18, /positive decimal/],
    ["a comma", "1,5", 18, /positive decimal/],
    ["more fraction than the token has", "0.0000001", 6, /more than 6 fractional digits/],
    ["a fraction on a 0-decimal token", "1.5", 0, /more than 0 fractional digits/],
    ["more than uint256", `${1n << 256n}`, 0, /uint256/],
    ["more than uint256 after scaling", `${1n << 250n}`, 18, /uint256/],
    ["a number past double precision", 12345678901234567890, 18, /significant digits/],
    ["a fraction past double precision", 0.12345678901234568, 18, /significant digits/],
    ["an empty string", "", 18, /positive decimal/],
  ];
  it.each(refused)("refuses %s", (_label, amount, decimals, message) => {
    expect(() => parseTokenAmount(amount, decimals)).toThrow(InvalidAmountError);
    expect(() => parseTokenAmount(amount, decimals)).toThrow(message);
  });
});

describe("formatTokenAmount", () => {
  it.each([
    [1_500_000n, 6, "1.5"],
    [1_000_000n, 6, "1"],
    [1n, 6, "0.000001"],
    [0n, 18, "0"],
    [123n, 0, "123"],
    [10n ** 18n + 1n, 18, "1.000000000000000001"],
  ])("%s with %i decimals is %s, and parses back", (units, decimals, text) => {
    expect(formatTokenAmount(units, decimals)).toBe(text);
    if (units > 0n) expect(parseTokenAmount(text, decimals)).toBe(units);
  });
});

describe("describeAmount", () => {
  it("writes an amount as people do, with the base units beside", () => {
    expect(describeAmount(2_001_000_000n, { symbol: "USDC", decimals: 6 })).toBe("2001 USDC (2001000000 base units)");
    expect(describeAmount(5n * 10n ** 17n, { symbol: "ETH", decimals: 18 }, "wei")).toBe("0.5 ETH (500000000000000000 wei)");
    // Without NETWORKS_FILE a token's symbol is its address: "tokens" reads better than a second address.
    expect(describeAmount(2n * 10n ** 21n, { symbol: "0x5FbDB2315678afecb367f032d93F642f64180aa3", decimals: 18 })).toBe("2000 tokens (2000000000000000000000 base units)");
    expect(describeAmount(7n, undefined)).toBe("7 base units");
  });
});
