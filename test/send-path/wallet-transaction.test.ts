import { Transaction, Wallet } from "ethers";
import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/journal/transfer-journal.js";
import { encodeTransfer } from "../../src/node/erc20.js";
import { reservationOf } from "../../src/send-path/wallet-transaction.js";

const wallet = Wallet.createRandom();
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

async function attempt(call: { to: string; data?: string; value?: bigint; gasLimit: bigint }, maxFeePerGas: bigint, kind: "transfer" | "cancel") {
  const raw = await wallet.signTransaction(Transaction.from({ type: 2, chainId: 31337n, nonce: 4, maxFeePerGas, maxPriorityFeePerGas: 1n, data: "0x", value: 0n, ...call }));
  return { hash: Transaction.from(raw).hash as string, rawTransaction: raw, kind, signedAtBlock: 1 };
}

function entryOf(token: string, units: bigint, attempts: Awaited<ReturnType<typeof attempt>>[]): JournalEntry {
  return { id: 1, recipient: RECIPIENT, units, token, chainId: 31337, lane: wallet.address, nonce: 4, hash: attempts[0].hash, rawTransaction: attempts[0].rawTransaction, attempts } as unknown as JournalEntry;
}

describe("what a journaled transfer holds in the ledger until mined", () => {
  it("a native transfer: its value and gas in ETH, no token, and still its value once a cancel is its latest attempt (the transfer may yet be mined)", async () => {
    const sent = await attempt({ to: RECIPIENT, value: 9_000n, gasLimit: 21_000n }, 10n, "transfer");
    expect(reservationOf(entryOf("native", 9_000n, [sent]), 5n)).toEqual({ units: 0n, gasCost: 21_000n * 10n + 5n + 9_000n, value: 9_000n });
    const cancel = await attempt({ to: wallet.address, gasLimit: 21_000n }, 20n, "cancel");
    expect(reservationOf(entryOf("native", 9_000n, [sent, cancel]), 5n)).toEqual({ units: 0n, gasCost: 21_000n * 20n + 5n + 9_000n, value: 9_000n });
  });

  it("a token transfer: its units of its token, and the latest attempt's gas", async () => {
    const sent = await attempt({ to: TOKEN, data: encodeTransfer(RECIPIENT, 7n), gasLimit: 60_000n }, 10n, "transfer");
    const cancel = await attempt({ to: wallet.address, gasLimit: 21_000n }, 20n, "cancel");
    expect(reservationOf(entryOf(TOKEN, 7n, [sent, cancel]), 0n)).toEqual({ units: 7n, gasCost: 21_000n * 20n, token: TOKEN });
  });

  it("a gas top-up (0 units): the ETH it carries with its gas", async () => {
    const topUp = await attempt({ to: RECIPIENT, value: 500n, gasLimit: 21_000n }, 10n, "transfer");
    expect(reservationOf(entryOf(TOKEN, 0n, [topUp]), 0n)).toEqual({ units: 0n, gasCost: 21_000n * 10n + 500n, token: TOKEN });
  });
});
