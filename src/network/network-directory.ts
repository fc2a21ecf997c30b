/**
 * The networks as requests name them: every network the configuration names (another is a 400), of which
 * one not reached since startup is answered 503 with nothing sent, and one no longer configured 409.
 */
import type { JournalEntry } from "../journal/transfer-journal.js";
import { ServiceError } from "../errors.js";
import { type ServedNetwork, type ServedToken, chooseNetwork } from "../network-settings/network-choice.js";
import type { NetworkServices } from "./network-services.js";

/** What the directory reads: the configured networks, the running ones, and why one does not run. */
export interface NetworkRoster {
  configured: readonly ServedNetwork[];
  networkOf(chainId: bigint | number): NetworkServices | undefined;
  unavailable(chainId: bigint | number): string | undefined;
}

export class NetworkDirectory {
  readonly #roster: NetworkRoster;
  // chooseNetwork's candidates, made once: the configured networks do not change while the service runs.
  readonly #choices: readonly { network: ServedNetwork }[];

  constructor(roster: NetworkRoster) {
    this.#roster = roster;
    this.#choices = roster.configured.map((network) => ({ network }));
  }

  /** Whether the configuration names more than one network. */
  get several(): boolean {
    return this.#choices.length > 1;
  }

  /** The configured network a request names (the default when it names none); 400 for one not configured. */
  named(choice: { network?: string | number; token?: string }): ServedNetwork {
    return chooseNetwork(this.#choices, choice).chosen.network;
  }

  /** The running network a request names; 400 for one not configured, 503 for one not running. */
  chosen(choice: { network?: string | number; token?: string }): NetworkServices {
    return this.running(this.named(choice));
  }

  /** The configured network and token a request names (each its default when it names none); 400 for one not configured. */
  namedWithToken(choice: { network?: string | number; token?: string }): { network: ServedNetwork; token: ServedToken } {
    const { chosen, token } = chooseNetwork(this.#choices, choice);
    return { network: chosen.network, token };
  }

  /** The running network and the token a transfer names (each its default when it names none); 400, or 503 as chosen(). */
  chosenWithToken(choice: { network?: string | number; token?: string }): { network: NetworkServices; token: ServedToken } {
    const { chosen, token } = chooseNetwork(this.#choices, choice);
    return { network: this.running(chosen.network), token };
  }

  /** The running network of a configured one; 503 while it does not run. */
  running(served: ServedNetwork): NetworkServices {
    const network = this.#roster.networkOf(served.chainId);
    if (network) return network;
    const reason = this.#roster.unavailable(served.chainId) ?? "it is starting";
    throw new ServiceError("NETWORK_UNAVAILABLE", `network ${served.name} has not been reached since the service started (${reason}); nothing was sent: retry later`);
  }

  /** The running network a transfer was made on; 503 while it does not run, 409 when it is no longer configured. */
  ofEntry(entry: JournalEntry): NetworkServices {
    const served = this.#roster.configured.find((network) => network.chainId === BigInt(entry.chainId));
    if (!served) throw new ServiceError("NETWORK_NOT_SERVED", `transfer ${entry.hash} was made on chain ${entry.chainId}, which this deployment no longer pays on`);
    return this.running(served);
  }
}
