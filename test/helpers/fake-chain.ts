/**
 * A chain connection whose node is a script: for unit tests of the send path's decisions on answers a real
 * node will not give on demand. Errors are thrown as ethers shapes them (a JSON-RPC error object in
 * `error`), so the code under test reads them as it reads a real node's.
 */
import { Wallet, makeError } from "ethers";
import type { ChainConnection } from "../../src/node/connect-chain.js";
import { servedNetworkOf } from "../../src/network-settings/network-choice.js";
import { localKeySigner } from "../../src/signers/local-key-signer.js";
import type { WalletSnapshot } from "../../src/send-path/wallet-snapshot.js";

/** One JSON-RPC call the fake node received. */
export interface FakeCall {
  method: string;
  params: unknown[];
}

/** Answers a call: a result, or a thrown node error (see nodeError). */
export type FakeNode = (call: FakeCall) => unknown | Promise<unknown>;

export const FAKE_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3";

/** A node error as ethers raises it for a JSON-RPC error answer. */
export function nodeError(message: string): Error {
  return makeError("could not coalesce error", "UNKNOWN_ERROR", { error: { code: -32000, message } });
}

/** A connection to the scripted node; `calls` records every call in order. */
export function fakeChain(node: FakeNode): { chain: ChainConnection; calls: FakeCall[] } {
  const wallet = Wallet.createRandom();
  const calls: FakeCall[] = [];
  const provider = {
    send: async (method: string, params: unknown[]) => {
      const call = { method, params };
      calls.push(call);
      return node(call);
    },
  };
  const chain = {
    provider,
    wallet: { address: wallet.address },
    signer: localKeySigner(wallet.privateKey, "private-key"),
    keccak: "ethers",
    chainId: 31337n,
    tokenAddress: FAKE_TOKEN,
    tokenDecimals: 18,
    network: servedNetworkOf(undefined, { chainId: 31337n, tokenAddress: FAKE_TOKEN }),
    opStack: false,
    gasIncludesL1: false,
    tokenMayReturnFalse: false,
  } as unknown as ChainConnection;
  return { chain, calls };
}

/** A wallet snapshot at `blockNumber` with `minedNonceCount` of the wallet's transactions mined. */
export function snapshotAt(blockNumber: number, minedNonceCount: number): WalletSnapshot {
  return {
    blockNumber,
    blockHash: `0x${blockNumber.toString(16).padStart(64, "0")}`,
    tokenBalance: 10n ** 24n,
    ethBalance: 10n ** 20n,
    minedNonceCount,
    baseFeePerGas: 1_000_000_000n,
    tip: 1_000_000n,
    maxFeePerGas: 2_001_000_000n,
    maxPriorityFeePerGas: 1_000_000n,
    l1DataFee: 0n,
    readAt: performance.now(),
  };
}
