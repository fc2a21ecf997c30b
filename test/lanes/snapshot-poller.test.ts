/** The snapshot poller spends node calls only when something needs them (fakes at the node boundary). */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SnapshotPoller, type SnapshotPollerOptions } from "../../src/lanes/snapshot-poller.js";
import type { FeeBlock, WalletSnapshot } from "../../src/send-path/wallet-snapshot.js";

const snapshotAt = (blockNumber: number, readAt = performance.now()): WalletSnapshot => ({
  blockNumber,
  blockHash: `0x${blockNumber.toString(16).padStart(64, "0")}`,
  tokenBalance: 1n,
  ethBalance: 1n,
  minedNonceCount: 0,
  baseFeePerGas: 1n,
  tip: 1n,
  maxFeePerGas: 1n,
  maxPriorityFeePerGas: 1n,
  l1DataFee: 0n,
  readAt,
});

describe("SnapshotPoller", () => {
  let poller: SnapshotPoller | undefined;
  afterEach(async () => {
    await poller?.stop();
    vi.useRealTimers();
  });

  function startPoller(state: { busy: boolean; head: number; fork?: string }) {
    const calls = { blocks: 0, snapshots: 0, baseFees: [] as bigint[] };
    poller = new SnapshotPoller({
      initial: snapshotAt(1),
      readBlock: async () => {
        calls.blocks++;
        const block: FeeBlock = { number: state.head, hash: `0x${state.head}${state.fork ?? ""}`, parentHash: `0x${state.head - 1}${state.fork ?? ""}`, baseFeePerGas: BigInt(state.head) };
        return { block, readAt: performance.now() };
      },
      readSnapshot: async (block) => {
        calls.snapshots++;
        return snapshotAt(block?.number ?? state.head);
      },
      onSnapshot: () => {},
      onBlock: (block) => calls.baseFees.push(block.baseFeePerGas ?? 0n),
      onError: () => {},
      isBusy: () => state.busy,
      busyIntervalMs: 100,
      idleIntervalMs: 5_000,
    });
    poller.start();
    return calls;
  }

  // An idle poller on block 1 (nothing busy, the idle interval far off), with what a case changes.
  function startIdlePoller(options: Pick<SnapshotPollerOptions, "readSnapshot"> & Partial<SnapshotPollerOptions>): SnapshotPoller {
    poller = new SnapshotPoller({
      initial: snapshotAt(1),
      readBlock: async () => ({ block: { number: 1, hash: "0x1", parentHash: "0x0", baseFeePerGas: 1n }, readAt: performance.now() }),
      onSnapshot: () => {},
      onBlock: () => {},
      onError: () => {},
      isBusy: () => false,
      busyIntervalMs: 100,
      idleIntervalMs: 60_000,
      ...options,
    });
    poller.start();
    return poller;
  }

  it("idle, it reads only the latest block, every idle interval, even when blocks arrive", async () => {
    vi.useFakeTimers();
    const state = { busy: false, head: 1 };
    const calls = startPoller(state);
    for (let second = 0; second < 20; second++) {
      state.head++;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(calls).toMatchObject({ blocks: 4, snapshots: 0 });
    // Every block read passes its base fee on: fees follow the chain at no extra cost.
    expect(calls.baseFees).toEqual([6n, 11n, 16n, 21n]);
  });

  it("idle, it reads a snapshot when the block reads show a reorganisation: mined transfers may be pending again", async () => {
    vi.useFakeTimers();
    const state: { busy: boolean; head: number; fork?: string } = { busy: false, head: 5 };
    const calls = startPoller(state);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toMatchObject({ blocks: 1, snapshots: 0 });
    // Another block at the same height.
    state.fork = "b";
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toMatchObject({ blocks: 2, snapshots: 1 });
    // The chain grows on as before: nothing more to read.
    state.head++;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toMatchObject({ blocks: 3, snapshots: 1 });
    // A child of another parent.
    state.head++;
    state.fork = "c";
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toMatchObject({ blocks: 4, snapshots: 2 });
  });

  it("busy, it reads the snapshot once per new block, at the busy pace, and never for the same block twice", async () => {
    vi.useFakeTimers();
    const state = { busy: true, head: 1 };
    const calls = startPoller(state);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toMatchObject({ blocks: 10, snapshots: 0 });
    state.head = 2;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toMatchObject({ blocks: 20, snapshots: 1 });
  });

  it("fees older than a request allows are read with one block read, not a whole snapshot", async () => {
    vi.useFakeTimers();
    const state = { busy: false, head: 7 };
    const calls = startPoller(state);
    await vi.advanceTimersByTimeAsync(1_000);
    // Fees from a second ago are fresh enough for 10 s: nothing is read.
    await poller?.ensureFeesFresh(10_000);
    expect(calls).toMatchObject({ blocks: 0, snapshots: 0 });
    // Not for 100 ms: one block read, its base fee passed on, no snapshot.
    state.head = 8;
    await poller?.ensureFeesFresh(100);
    expect(calls).toMatchObject({ blocks: 1, snapshots: 0, baseFees: [8n] });
  });

  it("a request wakes an idle poller to the busy pace even before its transfer counts as busy", async () => {
    vi.useFakeTimers();
    const state = { busy: false, head: 3 };
    const calls = startPoller(state);
    await vi.advanceTimersByTimeAsync(10);
    await poller?.ensureFeesFresh(60_000);
    await vi.advanceTimersByTimeAsync(150);
    expect(calls.blocks).toBe(1);
  });

  it("a request wakes an idle poller and reads a snapshot when the one it has is too old", async () => {
    vi.useFakeTimers();
    const state = { busy: false, head: 3 };
    const calls = startPoller(state);
    await vi.advanceTimersByTimeAsync(10);
    await poller?.ensureFresh(60_000);
    expect(calls.snapshots).toBe(0);
    await vi.advanceTimersByTimeAsync(20_000);
    state.busy = true;
    await poller?.ensureFresh(10_000);
    expect(calls.snapshots).toBe(1);
    // Woken: the next block read comes at the busy pace, not at the end of an idle wait.
    const blocksBefore = calls.blocks;
    await vi.advanceTimersByTimeAsync(150);
    expect(calls.blocks).toBe(blocksBefore + 1);
  });

  it("a request that arrives while a read frees the wallet of its last transfers keeps the busy pace after that read", async () => {
    vi.useFakeTimers();
    const state = { busy: true, head: 2 };
    let blocks = 0;
    let release: () => void = () => {};
    poller = new SnapshotPoller({
      initial: snapshotAt(1),
      readBlock: async () => {
        blocks++;
        return { block: { number: state.head, hash: `0x${state.head}`, parentHash: `0x${state.head - 1}`, baseFeePerGas: 1n }, readAt: performance.now() };
      },
      readSnapshot: (block) => new Promise((resolve) => (release = () => resolve(snapshotAt(block?.number ?? state.head)))),
      // The snapshot shows the last transfers mined: nothing is in flight once it is taken.
      onSnapshot: () => (state.busy = false),
      onBlock: () => {},
      onError: () => {},
      isBusy: () => state.busy,
      busyIntervalMs: 100,
      idleIntervalMs: 5_000,
    });
    poller.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(blocks).toBe(1);
    // A transfer let in meanwhile asks for fees (it holds nothing in the ledger yet).
    await poller.ensureFeesFresh(60_000);
    release();
    await vi.advanceTimersByTimeAsync(150);
    expect(blocks).toBe(2);
  });

  it("a quiet look past half its age limit is answered at once and reads in the background; past the limit it waits for the read", async () => {
    vi.useFakeTimers();
    let snapshots = 0;
    let release: () => void = () => {};
    const quiet = startIdlePoller({
      readSnapshot: () => {
        snapshots++;
        return new Promise((resolve) => (release = () => resolve(snapshotAt(2))));
      },
    });
    const answered = (look: Promise<void>) => Promise.race([look.then(() => true), vi.advanceTimersByTimeAsync(1).then(() => false)]);
    await vi.advanceTimersByTimeAsync(400);
    // Younger than half the limit: nothing read.
    expect(await answered(quiet.ensureFreshQuietly(1_000))).toBe(true);
    expect(snapshots).toBe(0);
    await vi.advanceTimersByTimeAsync(200);
    // Older than half: answered from what it has while a read starts; the looks meanwhile share that read.
    expect(await answered(quiet.ensureFreshQuietly(1_000))).toBe(true);
    expect(await answered(quiet.ensureFreshQuietly(1_000))).toBe(true);
    expect(snapshots).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    // Renewed: young again.
    expect(await answered(quiet.ensureFreshQuietly(1_000))).toBe(true);
    expect(snapshots).toBe(1);
    // Older than the limit: the look waits for the read.
    await vi.advanceTimersByTimeAsync(1_100);
    const late = quiet.ensureFreshQuietly(1_000);
    expect(await answered(late)).toBe(false);
    expect(snapshots).toBe(2);
    release();
    await late;
  });

  it("a reorganisation seen while a quiet look's read is under way is read again once that read ends: the read under way may be of the chain before", async () => {
    vi.useFakeTimers();
    const state: { head: number; fork: string } = { head: 5, fork: "" };
    const asked: (string | undefined)[] = [];
    const releases: (() => void)[] = [];
    const quiet = startIdlePoller({
      initial: snapshotAt(5),
      readBlock: async () => ({ block: { number: state.head, hash: `0x${state.head}${state.fork}`, parentHash: `0x${state.head - 1}`, baseFeePerGas: 1n }, readAt: performance.now() }),
      readSnapshot: (block) => {
        asked.push(block?.hash);
        return new Promise((resolve) => releases.push(() => resolve(snapshotAt(block?.number ?? state.head))));
      },
      idleIntervalMs: 1_000,
    });
    // The first tick reads block 5 of the first chain; nothing to read besides.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(asked).toEqual([]);
    // A quiet look starts a read in the background; then the chain switches to another block 5.
    await quiet.ensureFreshQuietly(1_600);
    expect(asked).toEqual([undefined]);
    state.fork = "b";
    await vi.advanceTimersByTimeAsync(1_000);
    // The tick saw the switch and waits for the read under way rather than take it for the new chain's.
    expect(asked).toEqual([undefined]);
    releases[0]();
    await vi.advanceTimersByTimeAsync(0);
    expect(asked).toEqual([undefined, "0x5b"]);
    releases[1]();
  });

  it("a background read whose snapshot cannot be taken (the journal failed writing it) ends quietly: the next look meets the failure", async () => {
    vi.useFakeTimers();
    const failure = new Error("the journal takes no writes");
    const quiet = startIdlePoller({
      readSnapshot: async () => snapshotAt(2),
      onSnapshot: () => {
        throw failure;
      },
    });
    await vi.advanceTimersByTimeAsync(600);
    // Answered at once; the read it starts fails in the background without an unhandled rejection (which
    // would end the process, and fails this test).
    await quiet.ensureFreshQuietly(1_000);
    await vi.advanceTimersByTimeAsync(10);
    // A look that must wait for a read is told.
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(quiet.ensureFreshQuietly(1_000)).rejects.toBe(failure);
  });

  it("a look that asks for a read from now (0 ms) does not take one under way since earlier: it waits for it, then reads", async () => {
    vi.useFakeTimers();
    let snapshots = 0;
    const releases: (() => void)[] = [];
    const quiet = startIdlePoller({
      readSnapshot: () => {
        snapshots++;
        return new Promise((resolve) => releases.push(() => resolve(snapshotAt(1 + snapshots))));
      },
    });
    await vi.advanceTimersByTimeAsync(600);
    await quiet.ensureFreshQuietly(1_000);
    expect(snapshots).toBe(1);
    await vi.advanceTimersByTimeAsync(50);
    // As after a reorganisation (start-lane's onReorg): the read under way began before it.
    const fromNow = quiet.ensureFresh(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(snapshots).toBe(1);
    releases[0]();
    await vi.advanceTimersByTimeAsync(0);
    expect(snapshots).toBe(2);
    releases[1]();
    await fromNow;
  });
});
