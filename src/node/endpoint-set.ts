/**
 * The JSON-RPC endpoints of one chain (RPC_URL, comma-separated), and which of them a call goes to. Reads go
 * to an endpoint in rotation near the highest head, the first configured first; a read at a block number
 * goes first to one known to have reached that block; reads of the head take turns, so that every endpoint's
 * head is compared with the others' at no extra cost. Endpoints left out are probed now and then, and come
 * back once they answer again (on the same chain) and have caught up. An endpoint whose chain id was not
 * checked (it did not answer at startup) or that serves another chain is never used, not even as a last resort.
 */
import type { EndpointReport } from "./endpoint-health.js";
import type { RpcEndpoint } from "./rpc-endpoint.js";

/** An endpoint at most this many blocks behind the highest head is "near" it, and preferred for reads. */
export const NEAR_HEAD_BLOCKS = 1;
/** How often the endpoints left out are looked at (each is probed at most every PROBE_AFTER_MS). */
const PROBE_CHECK_MS = 5_000;

export class EndpointSet {
  #nextHeadReader = 0;
  #probeTimer: NodeJS.Timeout | undefined;
  #probing: Promise<void> | undefined;

  constructor(
    readonly endpoints: readonly RpcEndpoint[],
    readonly maxLagBlocks: number,
    readonly chainId: bigint,
    /** Asks an endpoint its chain id or head; undefined without an answer. */
    private readonly ask: (endpoint: RpcEndpoint, method: "eth_chainId" | "eth_blockNumber") => Promise<bigint | undefined>,
  ) {}

  // Endpoints whose chain id was checked; one that did not answer at startup is checked by its first probe.
  readonly #onTheChain = new Set<RpcEndpoint>();

  /** The endpoint answered the expected chain id. */
  markOnTheChain(endpoint: RpcEndpoint): void {
    this.#onTheChain.add(endpoint);
  }

  /**
   * The highest head the endpoints on the chain show now (each its latest): after a reorganisation to a
   * lower height, or with the endpoint that led gone quiet, it follows them down.
   */
  get highestHead(): number {
    return Math.max(0, ...this.#usable().map((endpoint) => endpoint.health.head ?? 0));
  }

  /** Endpoints in rotation. */
  get healthy(): RpcEndpoint[] {
    return this.#usable().filter((endpoint) => endpoint.health.state === "in");
  }

  /**
   * The endpoints to try for a read, in order: those in rotation (near the head, then the others), each
   * group led by those known to have reached `atBlock`; then those left out, as a last resort.
   */
  readOrder(atBlock?: number): RpcEndpoint[] {
    const healthy = this.healthy;
    const near = healthy.filter((endpoint) => endpoint.health.lagBlocks <= NEAR_HEAD_BLOCKS);
    const order = [...near, ...healthy.filter((endpoint) => !near.includes(endpoint))];
    const reached = atBlock === undefined ? order : order.filter((endpoint) => (endpoint.health.head ?? -1) >= atBlock);
    return [...reached, ...order.filter((endpoint) => !reached.includes(endpoint)), ...this.#leftOut()];
  }

  /** The endpoints to try for a read of the head: those in rotation take turns leading; then the others. */
  headReadOrder(): RpcEndpoint[] {
    const healthy = this.healthy;
    if (healthy.length === 0) return this.#leftOut();
    const first = this.#nextHeadReader++ % healthy.length;
    return [...healthy.slice(first), ...healthy.slice(0, first), ...this.#leftOut()];
  }

  /** The endpoints a transaction is broadcast to first: every one in rotation (all on the chain when none is). */
  broadcastTargets(): RpcEndpoint[] {
    const healthy = this.healthy;
    return healthy.length > 0 ? healthy : this.#usable();
  }

  /** The endpoints on the chain that are not in `targets`, in the order configured. */
  otherThan(targets: readonly RpcEndpoint[]): RpcEndpoint[] {
    return this.#usable().filter((endpoint) => !targets.includes(endpoint));
  }

  /** The endpoint showed head `head`; its lag is measured against the highest head of them all. */
  recordHead(endpoint: RpcEndpoint, head: number): void {
    if (!this.#onTheChain.has(endpoint)) return;
    const others = this.#usable().filter((other) => other !== endpoint);
    endpoint.health.recordHead(head, Math.max(head, ...others.map((other) => other.health.head ?? 0)), this.maxLagBlocks);
  }

  /**
   * A left-out endpoint answered a call while none was in rotation: a failing one is back (its answer was
   * as good as a probe), so that a rate limit of a moment does not hold the service out for 30 s.
   */
  recordAnsweredWhileNoneIn(endpoint: RpcEndpoint): void {
    if (endpoint.health.state === "failing" && this.healthy.length === 0) endpoint.health.recordProbe(true, this.maxLagBlocks);
  }

  /** Starts probing the endpoints that are left out. */
  start(): void {
    if (this.endpoints.length < 2) return;
    this.#probeTimer = setInterval(() => void this.probeDue(), PROBE_CHECK_MS).unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#probeTimer);
    await this.#probing;
  }

  /** Each endpoint by host: "in" while in rotation, else why it is left out (for /ready). */
  states(): Record<string, string> {
    return Object.fromEntries(this.reports().map((report) => [report.endpoint, report.state === "in" ? "in" : `left out, ${report.state}: ${report.reason}`]));
  }

  reports(): EndpointReport[] {
    return this.endpoints.map((endpoint) => endpoint.health.report());
  }

  /** Probes every endpoint that is left out and due: one call each (two until its chain id was checked). */
  probeDue(): Promise<void> {
    this.#probing ??= Promise.all(this.endpoints.filter((endpoint) => endpoint.health.probeDue).map((endpoint) => this.#probe(endpoint)))
      .then(() => undefined)
      .finally(() => (this.#probing = undefined));
    return this.#probing;
  }

  async #probe(endpoint: RpcEndpoint): Promise<void> {
    if (!this.#onTheChain.has(endpoint)) {
      const chainId = await this.ask(endpoint, "eth_chainId");
      if (chainId === undefined) return endpoint.health.recordProbe(false, this.maxLagBlocks);
      if (chainId !== this.chainId) return endpoint.health.recordWrongChain(chainId);
      this.#onTheChain.add(endpoint);
    }
    const head = await this.ask(endpoint, "eth_blockNumber");
    if (head !== undefined) this.recordHead(endpoint, Number(head));
    endpoint.health.recordProbe(head !== undefined, this.maxLagBlocks);
  }

  // Endpoints whose chain is known to be ours.
  #usable(): RpcEndpoint[] {
    return this.endpoints.filter((endpoint) => this.#onTheChain.has(endpoint));
  }

  // Those on the chain but left out, lagging ones before failing ones: a lagging endpoint answers.
  #leftOut(): RpcEndpoint[] {
    const usable = this.#usable();
    return [...usable.filter((endpoint) => endpoint.health.state === "lagging"), ...usable.filter((endpoint) => endpoint.health.state === "failing")];
  }
}
