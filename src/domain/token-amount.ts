/** Turns a client's token amount (whole token units, as a JSON number or string) into exact base units. */

const UINT256_MAX = (1n << 256n) - 1n;
const PLAIN_DECIMAL = /^([0-9]+)(?:\.([0-9]+))?$/;
// A double carries any decimal of up to 15 significant digits without loss (DBL_DIG); beyond that the
// number the client wrote may already have been rounded by the JSON parser.
const EXACT_DOUBLE_DIGITS = 15;

/** Why an amount was refused; the message is written for the client. */
export class InvalidAmountError extends Error {
  override name = "InvalidAmountError";
}

/**
 * Converts an amount in token units into base units with exact decimal arithmetic. Numbers are read in
 * their shortest decimal form (0.1 is exactly 0.1). Refuses zero, negatives, exponent and hex strings,
 * more fractional digits than the token has, and anything above uint256.
 */
export function parseTokenAmount(amount: number | string, decimals: number): bigint {
  const decimal = typeof amount === "number" ? numberToDecimal(amount) : amount;
  const match = PLAIN_DECIMAL.exec(decimal);
  if (!match) {
    throw new InvalidAmountError(
      `amount must be a positive decimal number of tokens such as "1.5" (no sign, exponent, hex or spaces); got ${JSON.stringify(decimal.slice(0, 40))}`,
    );
  }
  const [, whole, fraction = ""] = match;
  const significantFraction = fraction.replace(/0+$/, "");
  if (significantFraction.length > decimals) {
    throw new InvalidAmountError(`amount has more than ${decimals} fractional digits, the token's precision; it is not rounded`);
  }
  const units = BigInt(whole + significantFraction.padEnd(decimals, "0"));
  if (units === 0n) throw new InvalidAmountError("amount must be greater than zero");
  if (units > UINT256_MAX) throw new InvalidAmountError("amount is larger than a uint256 can hold");
  return units;
}

function numberToDecimal(amount: number): string {
  if (!Number.isFinite(amount)) throw new InvalidAmountError("amount must be a finite number");
  if (amount < 0) throw new InvalidAmountError("amount must be greater than zero");
  const [mantissa, exponentText] = amount.toExponential().split("e");
  const digits = mantissa.replace(".", "");
  if (digits.replace(/0+$/, "").length > EXACT_DOUBLE_DIGITS) {
    throw new InvalidAmountError(
      `amount ${amount} has more than ${EXACT_DOUBLE_DIGITS} significant digits and may have been rounded by JSON parsing; send it as a string`,
    );
  }
  return shiftDecimalPoint(digits, Number(exponentText));
}

// Writes digits d0.d1d2... x 10^exponent as a plain decimal, without exponent notation.
function shiftDecimalPoint(digits: string, exponent: number): string {
  const pointIndex = exponent + 1;
  if (pointIndex <= 0) return `0.${"0".repeat(-pointIndex)}${digits}`;
  if (pointIndex >= digits.length) return digits + "0".repeat(pointIndex - digits.length);
  return `${digits.slice(0, pointIndex)}.${digits.slice(pointIndex)}`;
}

/** A token as a message names an amount of it: its symbol (or its address, without NETWORKS_FILE) and decimals. */
export interface AmountUnit {
  symbol: string;
  decimals: number;
}

/**
 * An amount as people write it, the base units beside: "2001 USDC (2001000000 base units)". A symbol that is
 * the token's address is written "tokens"; without a unit, the base units alone.
 */
export function describeAmount(units: bigint, unit: AmountUnit | undefined, baseUnits = "base units"): string {
  if (unit === undefined) return `${units} ${baseUnits}`;
  const name = /^0x[0-9a-fA-F]{40}$/.test(unit.symbol) ? "tokens" : unit.symbol;
  return `${formatTokenAmount(units < 0n ? 0n : units, unit.decimals)} ${name} (${units} ${baseUnits})`;
}

/** Writes base units as whole token units, without trailing zeros: 1500000 with 6 decimals is "1.5". */
export function formatTokenAmount(units: bigint, decimals: number): string {
  const digits = units.toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}
