// Written by scripts/client-types.ts from the service's OpenAPI document (the routes' TypeBox schemas).
// Do not edit: UPDATE_CLIENT_TYPES=1 npx vitest run test/client/client-types.test.ts writes it again.

/** Every route: its path parameters, query, headers, body, and its answers by status (2xx). */
export interface Operations {
  /** Liveness: the process answers */
  "GET /health": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        status: "ok";
      };
    };
  };
  /** Readiness: the node answers, serves the expected chain, the journal records, and the wallet can pay for gas */
  "GET /ready": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        status: "ready";
        /** "ok", or what is wrong, per check */
        checks: {
          [key: string]: string;
        };
        /** each RPC endpoint (protocol and host): "in" while in rotation, else why it is left out; the service is ready while one is in */
        endpoints: {
          [key: string]: string;
        };
      };
    };
  };
  /** Send tokens from the hot wallet */
  "POST /transfer": {
    params: Record<string, never>;
    query: {
      /** answer only once the transfer has this many confirmations (0 to 12) */
      waitConfirmations?: string;
      /** how long to wait at most, in ms (up to 120000; default 60000); then answer as it stands */
      waitTimeoutMs?: string;
    };
    headers: {
      /** makes retries safe: a repeat with the same key and body answers the first result without sending again (409 while the first is in flight, 422 with a different body); keys are kept for IDEMPOTENCY_KEY_TTL_HOURS */
      "idempotency-key"?: string;
    };
    body: {
      /** 20-byte address, 0x-prefixed; a mixed-case address must carry a valid EIP-55 checksum */
      toAddress?: string;
      /** alias of toAddress (the spec's sample body uses it) */
      to?: string;
      /** amount in whole token units (1.5 is one and a half tokens), as a plain decimal number or string; large or very precise amounts should be strings */
      amount: number | string;
      /** the network to pay on: its name in NETWORKS_FILE, or its chain id; without it the default network (see docs/networks.md) */
      network?: string | number;
      /** the token to pay in: its symbol in NETWORKS_FILE (any case), its address, or "native" for the network's native coin; without it the network's default token */
      token?: string;
    };
    replies: {
      200: {
        result: {
          type: number;
          chainId: number;
          nonce: number;
          /** an ethers v5 BigNumber */
          maxPriorityFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          gasPrice: null;
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          /** EIP-2930 access list */
          accessList: {
            address: string;
            storageKeys: string[];
          }[];
          hash: string;
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          /** always 0: the transaction has just been accepted by the node */
          confirmations: number;
        } | {
          nonce: number;
          /** an ethers v5 BigNumber */
          gasPrice: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          chainId: number;
          /** EIP-155: chainId * 2 + 35 + parity */
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          hash: string;
          /** ethers v5 left it unset for a legacy transaction */
          type: null;
          confirmations: number;
        };
      };
      /** A transfer that waits for an admin's approval (POST /transfer and POST /payouts answer it with 202); nothing of it is signed until approved */
      202: {
        /** the transfer's id: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it */
        id: number;
        /** awaiting_approval: nothing signed yet; rejected (by an admin) and expired (APPROVAL_TTL_HOURS): never sent, the key answers 417 */
        state: "awaiting_approval" | "rejected" | "expired";
        network: string;
        /** the token's symbol (its address for a token the deployment does not name) */
        token: string;
        /** the recipient; for a payout batch, the payout contract */
        toAddress: string;
        /** whole tokens (a batch: the total of the items it pays) */
        amount: string;
        /** base units, decimal */
        units: string;
        /** a payout batch: how many items it pays; null for a transfer */
        payoutItems: number | null;
        /** the API key that asked for it: it may not decide it */
        apiKeyId: string | null;
        /** when it expires undecided (ISO time) */
        expiresAt: string;
        /** the admin key that decided it, or expiry; null while it waits */
        decidedBy: string | null;
        /** ISO time; null while it waits */
        decidedAt: string | null;
      };
    };
  };
  /** Pay many recipients in one transaction */
  "POST /payouts": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: {
      /** required (400 IDEMPOTENCY_KEY_REQUIRED without it): a repeat with the same key and items answers the first batch without paying again (409 while the first is in flight, 422 with other items) */
      "idempotency-key"?: string;
    };
    body: {
      items: {
        /** the recipient, checksummed or all one case */
        toAddress: string;
        /** amount in whole token units (1.5 is one and a half tokens), as a plain decimal number or string; large or very precise amounts should be strings */
        amount: number | string;
        /** the item's id, 1 to 64 printable ASCII characters without spaces, unique per API key across batches: an item already paid or being paid is never paid again */
        id: string;
      }[];
      /** the network to pay on: its name in NETWORKS_FILE, or its chain id; without it the default network (see docs/networks.md) */
      network?: string | number;
      /** the token to pay in: its symbol in NETWORKS_FILE (any case), its address, or "native" for the network's native coin; without it the network's default token */
      token?: string;
    };
    replies: {
      200: {
        /** the batch's id (GET /payouts/{id}; also its id in GET /transfers) */
        id: number;
        network: string;
        /** the token's symbol (its address without NETWORKS_FILE) */
        token: string;
        /** the payout contract that pays the batch */
        contract: string;
        /** the ethers v5 record of the batch's transaction, as POST /transfer answers it */
        transaction: {
          type: number;
          chainId: number;
          nonce: number;
          /** an ethers v5 BigNumber */
          maxPriorityFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          gasPrice: null;
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          /** EIP-2930 access list */
          accessList: {
            address: string;
            storageKeys: string[];
          }[];
          hash: string;
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          /** always 0: the transaction has just been accepted by the node */
          confirmations: number;
        } | {
          nonce: number;
          /** an ethers v5 BigNumber */
          gasPrice: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          chainId: number;
          /** EIP-155: chainId * 2 + 35 + parity */
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          hash: string;
          /** ethers v5 left it unset for a legacy transaction */
          type: null;
          confirmations: number;
        };
        items: {
          id: string;
          toAddress: string;
          /** whole tokens */
          amount: string;
          /** base units, decimal */
          units: string;
          /** pending: the batch is not mined yet (or its receipt not read yet), or the item failed in a block not final yet (reason); paid: mined, and the item's tokens moved; failed, for good: in a final block the item's transfer failed (reason), or the batch reverted, was cancelled or lost its nonce; or the node refused the batch */
          state: "pending" | "paid" | "failed";
          /** why it failed (or, pending, will fail unless a reorganisation changes it), with the token's own words */
          reason: string | null;
          /** an earlier batch of this API key holds the item's id: this batch did not pay it, and state and reason are that batch's */
          duplicateOf: number | null;
        }[];
        /** GET /payouts/{id} only: the status document of the batch's transaction (GET /transactions/{hash}) */
        status?: {
          hash: string;
          /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
          network: string;
          chainId: number;
          /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
          state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
          /** 0 unless mined; latest block - blockNumber + 1 */
          confirmations: number;
          blockNumber: number | null;
          blockHash: string | null;
          /** from the receipt, decimal */
          gasUsed: string | null;
          /** from the receipt, wei, decimal */
          effectiveGasPrice: string | null;
          /** the ERC-20 transfer(to, amount) the transaction carries, else null */
          transfer: {
            /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
            token: string;
            /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
            tokenSymbol: string | null;
            from: string;
            /** the recipient */
            to: string;
            /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
            amount: string;
            /** amount in whole token units, when decimals() is known */
            amountInTokens: string | null;
            /** what the transfer(to, amount) call asks for, base units, decimal */
            requestedAmount: string;
          } | null;
          /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
          carriedBy?: string;
          /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
          attempts?: {
            hash: string;
            /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
            kind: "transfer" | "cancel" | "top-up" | "approval";
            /** the chain head when it was signed */
            signedAtBlock: number;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxFeePerGas: string | null;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxPriorityFeePerGas: string | null;
            /** wei, decimal; only for a legacy (type 0) transaction */
            gasPrice: string | null;
            /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
            fate: "mined" | "pending" | "replaced" | "void";
            replacedBy: string | null;
          }[];
          /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
          finalized?: boolean;
          /** only for this service's transfers: the finalized block that made it final; null until then */
          finalizedBlock?: number | null;
          /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
          payoutId?: number;
          /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
          displacedBy?: {
            /** the other transaction of the wallet mined at the transfer's nonce */
            hash: string;
            blockNumber: number;
            blockHash: string;
            final: false;
          };
        };
      };
      /** A transfer that waits for an admin's approval (POST /transfer and POST /payouts answer it with 202); nothing of it is signed until approved */
      202: {
        /** the transfer's id: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it */
        id: number;
        /** awaiting_approval: nothing signed yet; rejected (by an admin) and expired (APPROVAL_TTL_HOURS): never sent, the key answers 417 */
        state: "awaiting_approval" | "rejected" | "expired";
        network: string;
        /** the token's symbol (its address for a token the deployment does not name) */
        token: string;
        /** the recipient; for a payout batch, the payout contract */
        toAddress: string;
        /** whole tokens (a batch: the total of the items it pays) */
        amount: string;
        /** base units, decimal */
        units: string;
        /** a payout batch: how many items it pays; null for a transfer */
        payoutItems: number | null;
        /** the API key that asked for it: it may not decide it */
        apiKeyId: string | null;
        /** when it expires undecided (ISO time) */
        expiresAt: string;
        /** the admin key that decided it, or expiry; null while it waits */
        decidedBy: string | null;
        /** ISO time; null while it waits */
        decidedAt: string | null;
      };
    };
  };
  /** What became of a payout batch and of each item */
  "GET /payouts/{id}": {
    params: {
      /** the batch's id, as POST /payouts answered it */
      id: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        /** the batch's id (GET /payouts/{id}; also its id in GET /transfers) */
        id: number;
        network: string;
        /** the token's symbol (its address without NETWORKS_FILE) */
        token: string;
        /** the payout contract that pays the batch */
        contract: string;
        /** the ethers v5 record of the batch's transaction, as POST /transfer answers it */
        transaction: {
          type: number;
          chainId: number;
          nonce: number;
          /** an ethers v5 BigNumber */
          maxPriorityFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          gasPrice: null;
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          /** EIP-2930 access list */
          accessList: {
            address: string;
            storageKeys: string[];
          }[];
          hash: string;
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          /** always 0: the transaction has just been accepted by the node */
          confirmations: number;
        } | {
          nonce: number;
          /** an ethers v5 BigNumber */
          gasPrice: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          chainId: number;
          /** EIP-155: chainId * 2 + 35 + parity */
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          hash: string;
          /** ethers v5 left it unset for a legacy transaction */
          type: null;
          confirmations: number;
        };
        items: {
          id: string;
          toAddress: string;
          /** whole tokens */
          amount: string;
          /** base units, decimal */
          units: string;
          /** pending: the batch is not mined yet (or its receipt not read yet), or the item failed in a block not final yet (reason); paid: mined, and the item's tokens moved; failed, for good: in a final block the item's transfer failed (reason), or the batch reverted, was cancelled or lost its nonce; or the node refused the batch */
          state: "pending" | "paid" | "failed";
          /** why it failed (or, pending, will fail unless a reorganisation changes it), with the token's own words */
          reason: string | null;
          /** an earlier batch of this API key holds the item's id: this batch did not pay it, and state and reason are that batch's */
          duplicateOf: number | null;
        }[];
        /** GET /payouts/{id} only: the status document of the batch's transaction (GET /transactions/{hash}) */
        status?: {
          hash: string;
          /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
          network: string;
          chainId: number;
          /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
          state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
          /** 0 unless mined; latest block - blockNumber + 1 */
          confirmations: number;
          blockNumber: number | null;
          blockHash: string | null;
          /** from the receipt, decimal */
          gasUsed: string | null;
          /** from the receipt, wei, decimal */
          effectiveGasPrice: string | null;
          /** the ERC-20 transfer(to, amount) the transaction carries, else null */
          transfer: {
            /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
            token: string;
            /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
            tokenSymbol: string | null;
            from: string;
            /** the recipient */
            to: string;
            /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
            amount: string;
            /** amount in whole token units, when decimals() is known */
            amountInTokens: string | null;
            /** what the transfer(to, amount) call asks for, base units, decimal */
            requestedAmount: string;
          } | null;
          /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
          carriedBy?: string;
          /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
          attempts?: {
            hash: string;
            /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
            kind: "transfer" | "cancel" | "top-up" | "approval";
            /** the chain head when it was signed */
            signedAtBlock: number;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxFeePerGas: string | null;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxPriorityFeePerGas: string | null;
            /** wei, decimal; only for a legacy (type 0) transaction */
            gasPrice: string | null;
            /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
            fate: "mined" | "pending" | "replaced" | "void";
            replacedBy: string | null;
          }[];
          /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
          finalized?: boolean;
          /** only for this service's transfers: the finalized block that made it final; null until then */
          finalizedBlock?: number | null;
          /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
          payoutId?: number;
          /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
          displacedBy?: {
            /** the other transaction of the wallet mined at the transfer's nonce */
            hash: string;
            blockNumber: number;
            blockHash: string;
            final: false;
          };
        };
      };
    };
  };
  /** Approve a transfer that waits for a second admin key */
  "POST /transfers/{id}/approve": {
    params: {
      /** the transfer's id, as the 202 answered it (GET /transfers lists it) */
      id: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        result: {
          type: number;
          chainId: number;
          nonce: number;
          /** an ethers v5 BigNumber */
          maxPriorityFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxFeePerGas: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          gasPrice: null;
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          /** EIP-2930 access list */
          accessList: {
            address: string;
            storageKeys: string[];
          }[];
          hash: string;
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          /** always 0: the transaction has just been accepted by the node */
          confirmations: number;
        } | {
          nonce: number;
          /** an ethers v5 BigNumber */
          gasPrice: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** the token contract */
          to: string;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** ERC-20 transfer(to, amount) call data */
          data: string;
          chainId: number;
          /** EIP-155: chainId * 2 + 35 + parity */
          v: number;
          r: string;
          s: string;
          /** the hot wallet */
          from: string;
          hash: string;
          /** ethers v5 left it unset for a legacy transaction */
          type: null;
          confirmations: number;
        };
      };
    };
  };
  /** Reject a transfer that waits for a second admin key */
  "POST /transfers/{id}/reject": {
    params: {
      /** the transfer's id, as the 202 answered it (GET /transfers lists it) */
      id: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      /** A transfer that waits for an admin's approval (POST /transfer and POST /payouts answer it with 202); nothing of it is signed until approved */
      200: {
        /** the transfer's id: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it */
        id: number;
        /** awaiting_approval: nothing signed yet; rejected (by an admin) and expired (APPROVAL_TTL_HOURS): never sent, the key answers 417 */
        state: "awaiting_approval" | "rejected" | "expired";
        network: string;
        /** the token's symbol (its address for a token the deployment does not name) */
        token: string;
        /** the recipient; for a payout batch, the payout contract */
        toAddress: string;
        /** whole tokens (a batch: the total of the items it pays) */
        amount: string;
        /** base units, decimal */
        units: string;
        /** a payout batch: how many items it pays; null for a transfer */
        payoutItems: number | null;
        /** the API key that asked for it: it may not decide it */
        apiKeyId: string | null;
        /** when it expires undecided (ISO time) */
        expiresAt: string;
        /** the admin key that decided it, or expiry; null while it waits */
        decidedBy: string | null;
        /** ISO time; null while it waits */
        decidedAt: string | null;
      };
    };
  };
  /** Look a transaction up by hash */
  "POST /getTransaction": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: {
      /** transaction hash: 0x and 64 hex digits, either case */
      Tx: string;
      /** the network to look the hash up on; without it the network of the service's transfer, or the default */
      network?: string | number;
    };
    replies: {
      200: {
        /** null when the node does not know the hash */
        result: {
          hash: string;
          type: number;
          accessList: {
            address: string;
            storageKeys: string[];
          }[] | null;
          blockHash: string | null;
          blockNumber: number | null;
          transactionIndex: number | null;
          /** 0 while pending; latest block - blockNumber + 1 once mined */
          confirmations: number;
          from: string;
          /** an ethers v5 BigNumber */
          gasPrice?: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxPriorityFeePerGas?: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          maxFeePerGas?: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          /** an ethers v5 BigNumber */
          gasLimit: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          to: string | null;
          /** an ethers v5 BigNumber */
          value: {
            type: "BigNumber";
            /** lowercase hex quantity, even number of digits */
            hex: string;
          };
          nonce: number;
          data: string;
          r?: string;
          s?: string;
          v?: number;
          /** address of the created contract, else null */
          creates: string | null;
          raw?: string;
          chainId: number;
        } | null;
      };
    };
  };
  /** What happened to a transaction */
  "GET /transactions/{hash}": {
    params: {
      /** transaction hash: 0x and 64 hex digits, either case */
      hash: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        hash: string;
        /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
        network: string;
        chainId: number;
        /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
        state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
        /** 0 unless mined; latest block - blockNumber + 1 */
        confirmations: number;
        blockNumber: number | null;
        blockHash: string | null;
        /** from the receipt, decimal */
        gasUsed: string | null;
        /** from the receipt, wei, decimal */
        effectiveGasPrice: string | null;
        /** the ERC-20 transfer(to, amount) the transaction carries, else null */
        transfer: {
          /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
          token: string;
          /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
          tokenSymbol: string | null;
          from: string;
          /** the recipient */
          to: string;
          /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
          amount: string;
          /** amount in whole token units, when decimals() is known */
          amountInTokens: string | null;
          /** what the transfer(to, amount) call asks for, base units, decimal */
          requestedAmount: string;
        } | null;
        /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
        carriedBy?: string;
        /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
        attempts?: {
          hash: string;
          /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
          kind: "transfer" | "cancel" | "top-up" | "approval";
          /** the chain head when it was signed */
          signedAtBlock: number;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxFeePerGas: string | null;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxPriorityFeePerGas: string | null;
          /** wei, decimal; only for a legacy (type 0) transaction */
          gasPrice: string | null;
          /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
          fate: "mined" | "pending" | "replaced" | "void";
          replacedBy: string | null;
        }[];
        /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
        finalized?: boolean;
        /** only for this service's transfers: the finalized block that made it final; null until then */
        finalizedBlock?: number | null;
        /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
        payoutId?: number;
        /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
        displacedBy?: {
          /** the other transaction of the wallet mined at the transfer's nonce */
          hash: string;
          blockNumber: number;
          blockHash: string;
          final: false;
        };
      };
    };
  };
  /** Cancel a pending transfer */
  "POST /transactions/{hash}/cancel": {
    params: {
      /** transaction hash: 0x and 64 hex digits, either case */
      hash: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        hash: string;
        /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
        network: string;
        chainId: number;
        /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
        state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
        /** 0 unless mined; latest block - blockNumber + 1 */
        confirmations: number;
        blockNumber: number | null;
        blockHash: string | null;
        /** from the receipt, decimal */
        gasUsed: string | null;
        /** from the receipt, wei, decimal */
        effectiveGasPrice: string | null;
        /** the ERC-20 transfer(to, amount) the transaction carries, else null */
        transfer: {
          /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
          token: string;
          /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
          tokenSymbol: string | null;
          from: string;
          /** the recipient */
          to: string;
          /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
          amount: string;
          /** amount in whole token units, when decimals() is known */
          amountInTokens: string | null;
          /** what the transfer(to, amount) call asks for, base units, decimal */
          requestedAmount: string;
        } | null;
        /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
        carriedBy?: string;
        /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
        attempts?: {
          hash: string;
          /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
          kind: "transfer" | "cancel" | "top-up" | "approval";
          /** the chain head when it was signed */
          signedAtBlock: number;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxFeePerGas: string | null;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxPriorityFeePerGas: string | null;
          /** wei, decimal; only for a legacy (type 0) transaction */
          gasPrice: string | null;
          /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
          fate: "mined" | "pending" | "replaced" | "void";
          replacedBy: string | null;
        }[];
        /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
        finalized?: boolean;
        /** only for this service's transfers: the finalized block that made it final; null until then */
        finalizedBlock?: number | null;
        /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
        payoutId?: number;
        /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
        displacedBy?: {
          /** the other transaction of the wallet mined at the transfer's nonce */
          hash: string;
          blockNumber: number;
          blockHash: string;
          final: false;
        };
      };
      202: {
        hash: string;
        /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
        network: string;
        chainId: number;
        /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
        state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
        /** 0 unless mined; latest block - blockNumber + 1 */
        confirmations: number;
        blockNumber: number | null;
        blockHash: string | null;
        /** from the receipt, decimal */
        gasUsed: string | null;
        /** from the receipt, wei, decimal */
        effectiveGasPrice: string | null;
        /** the ERC-20 transfer(to, amount) the transaction carries, else null */
        transfer: {
          /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
          token: string;
          /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
          tokenSymbol: string | null;
          from: string;
          /** the recipient */
          to: string;
          /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
          amount: string;
          /** amount in whole token units, when decimals() is known */
          amountInTokens: string | null;
          /** what the transfer(to, amount) call asks for, base units, decimal */
          requestedAmount: string;
        } | null;
        /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
        carriedBy?: string;
        /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
        attempts?: {
          hash: string;
          /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
          kind: "transfer" | "cancel" | "top-up" | "approval";
          /** the chain head when it was signed */
          signedAtBlock: number;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxFeePerGas: string | null;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxPriorityFeePerGas: string | null;
          /** wei, decimal; only for a legacy (type 0) transaction */
          gasPrice: string | null;
          /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
          fate: "mined" | "pending" | "replaced" | "void";
          replacedBy: string | null;
        }[];
        /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
        finalized?: boolean;
        /** only for this service's transfers: the finalized block that made it final; null until then */
        finalizedBlock?: number | null;
        /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
        payoutId?: number;
        /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
        displacedBy?: {
          /** the other transaction of the wallet mined at the transfer's nonce */
          hash: string;
          blockNumber: number;
          blockHash: string;
          final: false;
        };
      };
    };
  };
  /** Re-price a pending transfer now */
  "POST /transactions/{hash}/reprice": {
    params: {
      /** transaction hash: 0x and 64 hex digits, either case */
      hash: string;
    };
    query: {
      /** true: an admin's explicit say to offer more than 10 times the first attempt's fee cap (never above the caps) */
      aboveCeiling?: "true" | "false";
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      202: {
        hash: string;
        /** the network it was looked up on: its name in NETWORKS_FILE, or its chain id in decimal without the file */
        network: string;
        chainId: number;
        /** pending: known to the node, not mined. confirmed: mined, receipt status 1. failed: mined, reverted (status 0). dropped: signed by this service, unknown to the node now; the service keeps sending the same bytes. replaced: another transaction was mined at its nonce (seen twice, seconds apart). rejected: the node refused it when it was first sent; it never was and never will be on chain (the client was told 417). cancelled: its cancel (a 0-value transaction from the wallet to itself at its nonce) was mined; the recipient got nothing. unknown: a node took it and the chain has used its nonce, but the node does not return it now (a lagging backend, usually). */
        state: "pending" | "confirmed" | "failed" | "dropped" | "replaced" | "rejected" | "cancelled" | "unknown";
        /** 0 unless mined; latest block - blockNumber + 1 */
        confirmations: number;
        blockNumber: number | null;
        blockHash: string | null;
        /** from the receipt, decimal */
        gasUsed: string | null;
        /** from the receipt, wei, decimal */
        effectiveGasPrice: string | null;
        /** the ERC-20 transfer(to, amount) the transaction carries, else null */
        transfer: {
          /** the ERC-20 contract, or "native" for a plain value transfer of the network's native coin */
          token: string;
          /** its symbol in NETWORKS_FILE (its address without the file); null for a token this service does not send */
          tokenSymbol: string | null;
          from: string;
          /** the recipient */
          to: string;
          /** base units, decimal: once mined, what the recipient received (the token's Transfer events; less than requested for a fee-on-transfer token); before, what was requested */
          amount: string;
          /** amount in whole token units, when decimals() is known */
          amountInTokens: string | null;
          /** what the transfer(to, amount) call asks for, base units, decimal */
          requestedAmount: string;
        } | null;
        /** only for this service's transfers: the attempt that carries the transfer (the mined one once mined, else the latest); the figures above are that attempt's, the state is the transfer's */
        carriedBy?: string;
        /** only for this service's transfers: every transaction signed for it, oldest first (the first is what POST /transfer answered) */
        attempts?: {
          hash: string;
          /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
          kind: "transfer" | "cancel" | "top-up" | "approval";
          /** the chain head when it was signed */
          signedAtBlock: number;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxFeePerGas: string | null;
          /** wei, decimal; null for a legacy (type 0) transaction */
          maxPriorityFeePerGas: string | null;
          /** wei, decimal; only for a legacy (type 0) transaction */
          gasPrice: string | null;
          /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
          fate: "mined" | "pending" | "replaced" | "void";
          replacedBy: string | null;
        }[];
        /** only for this service's transfers: its outcome is final, at or below the node's finalized block (or FINALITY_BLOCKS deep); no reorganisation can undo it */
        finalized?: boolean;
        /** only for this service's transfers: the finalized block that made it final; null until then */
        finalizedBlock?: number | null;
        /** only for this service's payout batches: the batch's id; GET /payouts/{id} reports its items */
        payoutId?: number;
        /** only for this service's transfers, while another transaction of the wallet is found mined at its nonce in a block not final yet: nothing is signed for it and no failure is reported until that block is final (then it is signed again at a new nonce) or leaves the chain */
        displacedBy?: {
          /** the other transaction of the wallet mined at the transfer's nonce */
          hash: string;
          blockNumber: number;
          blockHash: string;
          final: false;
        };
      };
    };
  };
  /** The service's transfers, newest first */
  "GET /transfers": {
    params: Record<string, never>;
    query: {
      /** nextCursor of the previous page */
      cursor?: string;
      /** items per page, 1 to 500 (default 100); with CSV, at most this many rows (default: all) */
      limit?: string;
      /** comma-separated states to list */
      state?: string;
      /** made at or after this ISO time */
      since?: string;
      /** made before this ISO time */
      until?: string;
      /** 20-byte address, 0x-prefixed; a mixed-case address must carry a valid EIP-55 checksum */
      recipient?: string;
      /** the id of an API key (as logs and this list show it) */
      apiKeyId?: string;
      /** as the client sent it, under any configured API key (or the one apiKeyId names) */
      idempotencyKey?: string;
      /** a payout item's id: the batch that pays it, under any configured API key (or the one apiKeyId names) */
      payoutItemId?: string;
      /** the sending wallet (a lane of the pool) */
      lane?: string;
      /** a network's name or chain id (400 UNKNOWN_NETWORK for one not served) */
      network?: string;
      /** a token's symbol, address or "native", of the network named (else the default network); 400 UNKNOWN_TOKEN for one not served */
      token?: string;
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      /** a page of the history, or with Accept: text/csv the CSV export */
      200: {
        transfers: {
          /** its place in the history; pages continue below the last one (nextCursor) */
          id: number;
          /** what POST /transfer answered; null while nothing is signed (sending) or when refused before signing */
          hash: string | null;
          /** as the journal knows it: awaiting_approval (above APPROVAL_ABOVE: waits for a second admin key, nothing signed), sending (key claimed, nothing signed yet), pending (signed, not mined), mined (the chain used its nonce with one of its attempts; receipt figures: GET /transactions/{hash}), replaced (another transaction took its nonce), rejected (refused before or at its first broadcast: 417; also rejected by an admin or expired while awaiting approval: refusal.code APPROVAL_REJECTED, APPROVAL_EXPIRED), cancelled (its cancel was mined) */
          state: "awaiting_approval" | "sending" | "pending" | "mined" | "replaced" | "rejected" | "cancelled";
          /** transfer: a client's; payout: a client's payout batch (POST /payouts; its recipient is the payout contract, its amount the total it pays); gas-top-up: ETH sent to another lane of the pool; payout-approval: the wallet's approve() of the payout contract; nonce-filler: a 0-value transaction to the wallet itself that filled a nonce */
          kind: "transfer" | "payout" | "gas-top-up" | "payout-approval" | "nonce-filler";
          /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
          network: string;
          chainId: number;
          transfer: {
            /** the token contract's address, or "native" for the network's native coin */
            token: string;
            /** the token's symbol in NETWORKS_FILE; without the file (or for a token it no longer names), its address */
            tokenSymbol: string;
            /** the lane (wallet) that sends it */
            from: string;
            /** the recipient */
            to: string;
            /** base units requested, decimal (0 for a top-up or filler) */
            amount: string;
            /** null for a token or network the service no longer pays in, or a network not reached since it started */
            amountInTokens: string | null;
            requestedAmount: string;
          };
          /** the attempt that carries it: the mined one once known, else the latest */
          carriedBy: string | null;
          /** only for a transfer that needed a second admin key's approval (APPROVAL_ABOVE): POST /transfers/{id}/approve or /reject decide it */
          approval?: {
            /** when it expires undecided (ISO time) */
            expiresAt: string;
            /** the admin key that approved or rejected it, or expiry; null while it waits */
            decidedBy: string | null;
            /** ISO time; null while it waits */
            decidedAt: string | null;
          };
          /** a payout batch only: the items it pays (not those an earlier batch holds); each item's outcome: GET /payouts/{id}. In CSV, one more row per item (kind payout-item, payoutItemId) */
          items?: {
            id: string;
            toAddress: string;
            /** base units */
            amount: string;
            amountInTokens: string | null;
          }[];
          nonce: number | null;
          /** null once older than IDEMPOTENCY_KEY_TTL_HOURS */
          idempotencyKey: string | null;
          /** the id of the API key that asked for it (never the key) */
          apiKeyId: string | null;
          /** what a rejected transfer's client was told */
          refusal: {
            code: string;
            message: string;
          } | null;
          attempts: {
            hash: string;
            /** cancel: a 0-value transaction to the wallet itself; top-up: ETH for gas sent to another lane of the pool (GAS_TOPUP_*); approval: the wallet's approve() of the payout contract (made once per token, before its first payout) */
            kind: "transfer" | "cancel" | "top-up" | "approval";
            /** the chain head when it was signed */
            signedAtBlock: number;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxFeePerGas: string | null;
            /** wei, decimal; null for a legacy (type 0) transaction */
            maxPriorityFeePerGas: string | null;
            /** wei, decimal; only for a legacy (type 0) transaction */
            gasPrice: string | null;
            /** mined: carries the transfer. pending: the latest, not mined yet. replaced: replacedBy took its place. void: never mined and never will be */
            fate: "mined" | "pending" | "replaced" | "void";
            replacedBy: string | null;
          }[];
          finalized: boolean;
          finalizedBlock: number | null;
          /** ISO time it was asked for */
          createdAt: string;
        }[];
        /** the cursor of the next page; null on the last */
        nextCursor: string | null;
      };
    };
  };
  /** The last 24 hours of transfers and gas, hour by hour */
  "GET /transfers/activity": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        hours: {
          /** ISO time the hour began */
          start: string;
          /** transfers asked for in the hour that were signed and sent, whatever became of them since */
          sent: number;
          /** of those, mined */
          mined: number;
          /** transfers asked for in the hour that failed: refused (417), rejected at their first broadcast, or replaced by another transaction */
          failed: number;
          /** wei the wallets' ETH balances went down by in the hour (gas, and ETH sent to other lanes of the pool); null for an hour before this process started */
          gasSpentWei: string | null;
        }[];
      };
    };
  };
  /** The networks and tokens this deployment pays in */
  "GET /networks": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        networks: {
          /** what `network` names in requests (NETWORKS_FILE's name; without the file, the chain id in decimal) */
          name: string;
          chainId: number;
          /** true for the network a request that names none pays on */
          default: boolean;
          /** false while its node has not been reached since the service started (its transfers are answered 503) */
          running: boolean;
          /** the network's tokens, the one a request naming only the network pays in first */
          tokens: {
            /** what `token` names in requests (any case); without NETWORKS_FILE, the address */
            symbol: string;
            /** the contract's address, or "native" for the network's native coin */
            address: string;
            /** null while the network has not been reached */
            decimals: number | null;
            /** for people only: the contract's own symbol() where NETWORKS_FILE names the token by no symbol (then `symbol` is its address); null otherwise, or while the network has not been reached */
            displaySymbol: string | null;
          }[];
        }[];
      };
    };
  };
  /** Sign again after PAUSE_ON_UNEXPECTED_OUTFLOW stopped the service */
  "POST /wallet/resume": {
    params: Record<string, never>;
    query: {
      /** signingPaused.latestHash from GET /wallet (`none` when it is null) */
      latestHash: string | "none";
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        /** the pause this ended; null when the service was signing */
        resumed: {
          /** when signing stopped (ISO time) */
          since: string;
          reason: string;
          /** the unexpected outflow's transaction that stopped it */
          hash: string | null;
          /** the latest outflow reported since (the first, until another): POST /wallet/resume names it */
          latestHash: string | null;
          /** outflows reported since it began */
          outflows: number;
        } | null;
      };
      202: {
        resumed: null;
        awaitingSecondAdmin: {
          /** the admin key that asked */
          askedBy: string;
          /** ISO time */
          askedAt: string;
          /** ISO time: the ask lapses then, and when another outflow is reported */
          expiresAt: string;
          /** the latest outflow the ask named: the second admin names it too */
          latestHash: string;
        };
        message: string;
      };
    };
  };
  /** The hot wallet: balances, nonces, transfers in flight */
  "GET /wallet": {
    params: Record<string, never>;
    query: {
      /** answer from the latest wallet snapshot only, at no node call (what the console polls) */
      snapshot?: "true";
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        address: string;
        /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
        network: string;
        chainId: number;
        token: {
          address: string;
          decimals: number;
        };
        /** wei, decimal, as of snapshotBlock */
        ethBalance: string;
        /** base units, decimal, as of snapshotBlock */
        tokenBalance: string;
        tokenBalanceInTokens: string;
        /** every token the network pays in, the default first, as of the snapshot */
        balances: {
          /** its symbol in NETWORKS_FILE; without the file, its address */
          symbol: string;
          /** the contract's address, or "native" for the native coin (the ETH balance) */
          address: string;
          decimals: number;
          /** base units, decimal, as of the snapshot */
          balance: string;
          balanceInTokens: string;
        }[];
        /** block of the balances above (re-read every CHAIN_REFRESH_INTERVAL_MS) */
        snapshotBlock: number;
        /** hours the ETH balance lasts at the last hour's gas spend; null when nothing was spent */
        gasRunwayHours: number | null;
        nonces: {
          /** the nonce the service gives the next transfer; null before the first */
          next: number | null;
          /** transactions of the wallet mined (with ?snapshot=true: as of snapshotBlock) */
          chainLatest: number;
          /** mined plus waiting in the node's pool; null with ?snapshot=true */
          chainPending: number | null;
        };
        /** signed by the service, not yet mined */
        transfersInFlight: number;
        oldestUnconfirmed: {
          hash: string;
          nonce: number;
          state: string;
          ageSeconds: number;
        } | null;
        /** transfers whose fees the chain has outgrown while MAX_FEE_PER_GAS / MAX_PRIORITY_FEE_PER_GAS allow nothing higher: they wait at the highest allowed fee (offered) for the chain to need less (needed), and every later transfer waits behind them */
        stuckAtFeeCap: {
          /** the transfer's first hash, as POST /transfer answered it */
          hash: string;
          /** its latest attempt */
          carriedBy: string;
          nonce: number;
          offered: {
            /** wei, decimal; null on a chain without EIP-1559 */
            maxFeePerGas: string | null;
            /** wei, decimal; null on a chain without EIP-1559 */
            maxPriorityFeePerGas: string | null;
            /** wei, decimal; only on a chain without EIP-1559 */
            gasPrice: string | null;
          };
          needed: {
            /** wei, decimal; null on a chain without EIP-1559 */
            maxFeePerGas: string | null;
            /** wei, decimal; null on a chain without EIP-1559 */
            maxPriorityFeePerGas: string | null;
            /** wei, decimal; only on a chain without EIP-1559 */
            gasPrice: string | null;
          };
        }[];
        /** true when the oldest unconfirmed transfer is over 120 s old and its nonce is still not mined */
        jammed: boolean;
        /** transactions, transfers of any ERC-20 and code (an EIP-7702 delegation) out of this network's wallets that this service never made, seen since it started (OUTFLOW_CHECK_INTERVAL_MS), newest first, at most 20: the key used elsewhere, or compromised */
        unexpectedOutflows: {
          /** the wallet (a lane of the pool) it left */
          wallet: string;
          /** the transaction that did it */
          hash: string;
          blockNumber: number;
          blockHash: string;
          /** a transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (a spender the wallet approved) */
          nonce: number | null;
          /** a token Transfer log out of the wallet: the token; null for the transaction itself */
          token: string | null;
          /** a token Transfer log: its index in the block; null for the transaction itself */
          logIndex: number | null;
          /** the token's recipient, or the transaction's to; null when the node did not return the transaction */
          to: string | null;
          /** base units of the token, or the transaction's value in wei; decimal */
          amount: string | null;
          /** code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate), which moves funds with no nonce and no log; hash is then the keccak-256 of the wallet's address and the code. Null for a transaction or a log */
          code: string | null;
          /** a Transfer of a contract this network does not pay in: any contract can emit one (fake tokens do), so it never pauses signing */
          otherToken: boolean;
          /** when this service noticed it */
          detectedAt: string;
        }[];
        replica: {
          /** REPLICA_ID */
          id: string;
          /** true for the replica that sends transfers; the others forward them to it */
          leads: boolean;
        } | null;
        /** every RPC_URL endpoint, in the order configured */
        rpcEndpoints: {
          /** protocol and host of an RPC_URL endpoint (its path and query, which can carry a key, are never shown) */
          endpoint: string;
          /** in: takes reads and broadcasts; failing: left out after faults (3 in 60 s, or a 429); lagging: left out, its head more than RPC_MAX_LAG_BLOCKS behind */
          state: "in" | "failing" | "lagging";
          /** why it is left out; null while in rotation */
          reason: string | null;
          /** blocks behind the highest head seen when it last showed its head; null before it showed one */
          headLagBlocks: number | null;
          /** requests sent to it since the service started */
          calls: number;
          /** of those, how many got no usable answer (time-out, refused or reset connection, HTTP 5xx or 429) */
          faults: number;
          /** average latency of its recent requests, ms */
          latencyMs: number | null;
        }[];
        /** a wallet pool only (several keys): every lane, in the order of the keys; the document above is the first lane's */
        lanes?: {
          address: string;
          /** wei, decimal, as of its snapshot */
          ethBalance: string;
          /** base units, decimal, as of its snapshot */
          tokenBalance: string;
          tokenBalanceInTokens: string;
          /** every token the network pays in, the default first, as of the snapshot */
          balances: {
            /** its symbol in NETWORKS_FILE; without the file, its address */
            symbol: string;
            /** the contract's address, or "native" for the native coin (the ETH balance) */
            address: string;
            decimals: number;
            /** base units, decimal, as of the snapshot */
            balance: string;
            balanceInTokens: string;
          }[];
          /** signed from this wallet, not yet mined */
          transfersInFlight: number;
          /** hours its ETH lasts at the last hour's gas spend; null when it spent nothing */
          gasRunwayHours: number | null;
          /** open: takes new transfers; held: takes none until it clears */
          state: "open" | "held";
          /** why a held lane takes no transfers: its nonces are jammed, a transfer is stuck past STUCK_AFTER_BLOCKS, it cannot pay one more transfer's gas, or it holds MAX_IN_FLIGHT_PER_LANE unmined */
          heldBecause: "jammed" | "stuck" | "gas-below-floor" | "in-flight-limit" | null;
          /** with GAS_TOPUP_FROM set only */
          gasTopUp?: {
            /** true for GAS_TOPUP_FROM, the lane that pays the others' gas */
            funds: boolean;
            /** the hash of its top-up signed and not yet mined */
            inFlight: string | null;
            /** top-ups sent to it since the service started */
            received: number;
          };
        }[];
        /** set while the service signs nothing (PAUSE_ON_UNEXPECTED_OUTFLOW stopped it after an unexpected outflow): new transfers are answered 503 SIGNING_PAUSED until an admin resumes with POST /wallet/resume; null while it signs */
        signingPaused: {
          /** when signing stopped (ISO time) */
          since: string;
          reason: string;
          /** the unexpected outflow's transaction that stopped it */
          hash: string | null;
          /** the latest outflow reported since (the first, until another): POST /wallet/resume names it */
          latestHash: string | null;
          /** outflows reported since it began */
          outflows: number;
        } | null;
        /** several networks running (NETWORKS_FILE) only: every running network's wallet, the default first; the document above is the default's (while the default has not been reached, the first running network's: `network` says which) */
        networks?: {
          address: string;
          /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
          network: string;
          chainId: number;
          token: {
            address: string;
            decimals: number;
          };
          /** wei, decimal, as of snapshotBlock */
          ethBalance: string;
          /** base units, decimal, as of snapshotBlock */
          tokenBalance: string;
          tokenBalanceInTokens: string;
          /** every token the network pays in, the default first, as of the snapshot */
          balances: {
            /** its symbol in NETWORKS_FILE; without the file, its address */
            symbol: string;
            /** the contract's address, or "native" for the native coin (the ETH balance) */
            address: string;
            decimals: number;
            /** base units, decimal, as of the snapshot */
            balance: string;
            balanceInTokens: string;
          }[];
          /** block of the balances above (re-read every CHAIN_REFRESH_INTERVAL_MS) */
          snapshotBlock: number;
          /** hours the ETH balance lasts at the last hour's gas spend; null when nothing was spent */
          gasRunwayHours: number | null;
          nonces: {
            /** the nonce the service gives the next transfer; null before the first */
            next: number | null;
            /** transactions of the wallet mined (with ?snapshot=true: as of snapshotBlock) */
            chainLatest: number;
            /** mined plus waiting in the node's pool; null with ?snapshot=true */
            chainPending: number | null;
          };
          /** signed by the service, not yet mined */
          transfersInFlight: number;
          oldestUnconfirmed: {
            hash: string;
            nonce: number;
            state: string;
            ageSeconds: number;
          } | null;
          /** transfers whose fees the chain has outgrown while MAX_FEE_PER_GAS / MAX_PRIORITY_FEE_PER_GAS allow nothing higher: they wait at the highest allowed fee (offered) for the chain to need less (needed), and every later transfer waits behind them */
          stuckAtFeeCap: {
            /** the transfer's first hash, as POST /transfer answered it */
            hash: string;
            /** its latest attempt */
            carriedBy: string;
            nonce: number;
            offered: {
              /** wei, decimal; null on a chain without EIP-1559 */
              maxFeePerGas: string | null;
              /** wei, decimal; null on a chain without EIP-1559 */
              maxPriorityFeePerGas: string | null;
              /** wei, decimal; only on a chain without EIP-1559 */
              gasPrice: string | null;
            };
            needed: {
              /** wei, decimal; null on a chain without EIP-1559 */
              maxFeePerGas: string | null;
              /** wei, decimal; null on a chain without EIP-1559 */
              maxPriorityFeePerGas: string | null;
              /** wei, decimal; only on a chain without EIP-1559 */
              gasPrice: string | null;
            };
          }[];
          /** true when the oldest unconfirmed transfer is over 120 s old and its nonce is still not mined */
          jammed: boolean;
          /** transactions, transfers of any ERC-20 and code (an EIP-7702 delegation) out of this network's wallets that this service never made, seen since it started (OUTFLOW_CHECK_INTERVAL_MS), newest first, at most 20: the key used elsewhere, or compromised */
          unexpectedOutflows: {
            /** the wallet (a lane of the pool) it left */
            wallet: string;
            /** the transaction that did it */
            hash: string;
            blockNumber: number;
            blockHash: string;
            /** a transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (a spender the wallet approved) */
            nonce: number | null;
            /** a token Transfer log out of the wallet: the token; null for the transaction itself */
            token: string | null;
            /** a token Transfer log: its index in the block; null for the transaction itself */
            logIndex: number | null;
            /** the token's recipient, or the transaction's to; null when the node did not return the transaction */
            to: string | null;
            /** base units of the token, or the transaction's value in wei; decimal */
            amount: string | null;
            /** code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate), which moves funds with no nonce and no log; hash is then the keccak-256 of the wallet's address and the code. Null for a transaction or a log */
            code: string | null;
            /** a Transfer of a contract this network does not pay in: any contract can emit one (fake tokens do), so it never pauses signing */
            otherToken: boolean;
            /** when this service noticed it */
            detectedAt: string;
          }[];
          replica: {
            /** REPLICA_ID */
            id: string;
            /** true for the replica that sends transfers; the others forward them to it */
            leads: boolean;
          } | null;
          /** every RPC_URL endpoint, in the order configured */
          rpcEndpoints: {
            /** protocol and host of an RPC_URL endpoint (its path and query, which can carry a key, are never shown) */
            endpoint: string;
            /** in: takes reads and broadcasts; failing: left out after faults (3 in 60 s, or a 429); lagging: left out, its head more than RPC_MAX_LAG_BLOCKS behind */
            state: "in" | "failing" | "lagging";
            /** why it is left out; null while in rotation */
            reason: string | null;
            /** blocks behind the highest head seen when it last showed its head; null before it showed one */
            headLagBlocks: number | null;
            /** requests sent to it since the service started */
            calls: number;
            /** of those, how many got no usable answer (time-out, refused or reset connection, HTTP 5xx or 429) */
            faults: number;
            /** average latency of its recent requests, ms */
            latencyMs: number | null;
          }[];
          /** a wallet pool only (several keys): every lane, in the order of the keys; the document above is the first lane's */
          lanes?: {
            address: string;
            /** wei, decimal, as of its snapshot */
            ethBalance: string;
            /** base units, decimal, as of its snapshot */
            tokenBalance: string;
            tokenBalanceInTokens: string;
            /** every token the network pays in, the default first, as of the snapshot */
            balances: {
              /** its symbol in NETWORKS_FILE; without the file, its address */
              symbol: string;
              /** the contract's address, or "native" for the native coin (the ETH balance) */
              address: string;
              decimals: number;
              /** base units, decimal, as of the snapshot */
              balance: string;
              balanceInTokens: string;
            }[];
            /** signed from this wallet, not yet mined */
            transfersInFlight: number;
            /** hours its ETH lasts at the last hour's gas spend; null when it spent nothing */
            gasRunwayHours: number | null;
            /** open: takes new transfers; held: takes none until it clears */
            state: "open" | "held";
            /** why a held lane takes no transfers: its nonces are jammed, a transfer is stuck past STUCK_AFTER_BLOCKS, it cannot pay one more transfer's gas, or it holds MAX_IN_FLIGHT_PER_LANE unmined */
            heldBecause: "jammed" | "stuck" | "gas-below-floor" | "in-flight-limit" | null;
            /** with GAS_TOPUP_FROM set only */
            gasTopUp?: {
              /** true for GAS_TOPUP_FROM, the lane that pays the others' gas */
              funds: boolean;
              /** the hash of its top-up signed and not yet mined */
              inFlight: string | null;
              /** top-ups sent to it since the service started */
              received: number;
            };
          }[];
        }[];
      };
    };
  };
  /** Webhook deliveries: the latest, or those in one state */
  "GET /webhooks/deliveries": {
    params: Record<string, never>;
    query: {
      state?: "pending" | "delivered" | "failed";
      /** any hash of one of the service's transfers: its deliveries only, newest first (state is then ignored) */
      transfer?: string;
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        deliveries: {
          id: number;
          /** the webhook-id header, the same on every attempt */
          eventId: string;
          type: string;
          /** the WEBHOOK_URL, its query string (which may hold the receiver's token) redacted */
          endpoint: string;
          state: "pending" | "delivered" | "failed";
          attempts: number;
          /** the endpoint's last HTTP status, or timeout / connection refused */
          lastStatus: string | null;
          /** ISO time of the next attempt, while pending */
          nextAttemptAt: string | null;
          createdAt: string;
        }[];
      };
    };
  };
  /** Deliver a failed or pending webhook again, now */
  "POST /webhooks/deliveries/{id}/retry": {
    params: {
      /** the delivery's id, from GET /webhooks/deliveries */
      id: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        retrying: true;
      };
    };
  };
  /** The tamper-evident audit log */
  "GET /audit": {
    params: Record<string, never>;
    query: {
      /** oldest first (the default), or newest first */
      order?: "oldest" | "newest";
      /** oldest first: entries after this seq (nextAfter of the previous page); default: from the first */
      after?: string;
      /** order=newest: entries before this seq (nextBefore of the previous page); default: from the latest */
      before?: string;
      /** at most this many (1 to 1000; default 100, a CSV export: all) */
      limit?: string;
    };
    headers: Record<string, never>;
    body: undefined;
    replies: {
      /** a page of the log, or with Accept: text/csv the CSV export */
      200: {
        entries: {
          /** its place in the log; pages continue after the last one (nextAfter), or before it newest first (nextBefore) */
          seq: number;
          /** when it happened (ISO time) */
          at: string;
          /** transfer.<state> (made, or changed to that state), attempt.<kind> (a transaction signed for it), operator.<action> (cancel, reprice, reprice_refused, delivery_retry, resume_signing), wallet.signing_paused, service.started (the settings a process started with, secrets only as set) */
          kind: string;
          /** the transfer it is about (GET /transfers lists it); null for none */
          transferId: number | null;
          /** the API key (its id) that did it, or expiry; null for the service itself */
          actor: string | null;
          /** the facts of the change */
          detail: {
            [key: string]: unknown;
          };
          /** the hash of the entry before it (64 zeros for the first) */
          prevHash: string;
          /** SHA-256 of prevHash and this entry's fields: changing any entry breaks every hash after it */
          hash: string;
        }[];
        /** oldest first: the next page's after; null when this page is not full, and newest first */
        nextAfter: string | null;
        /** order=newest: the next page's before; null when this page is not full, and oldest first */
        nextBefore: string | null;
      };
    };
  };
  /** The address book: recipients paid without approval (ADDRESS_BOOK) */
  "GET /address-book": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        enforced: boolean;
        coolingOffHours: number;
        entries: {
          /** checksummed */
          address: string;
          label: string | null;
          /** the admin key that added it */
          addedBy: string;
          /** ISO time */
          addedAt: string;
          /** ISO time from which transfers to it are sent without approval */
          effectiveAt: string;
          /** whether that time has come */
          effective: boolean;
        }[];
      };
    };
  };
  /** Adds a recipient to the address book */
  "POST /address-book": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: {
      /** 20-byte address, 0x-prefixed; a mixed-case address must carry a valid EIP-55 checksum */
      address: string;
      label?: string;
    };
    replies: {
      201: {
        /** checksummed */
        address: string;
        label: string | null;
        /** the admin key that added it */
        addedBy: string;
        /** ISO time */
        addedAt: string;
        /** ISO time from which transfers to it are sent without approval */
        effectiveAt: string;
        /** whether that time has come */
        effective: boolean;
      };
    };
  };
  /** Removes a recipient from the address book */
  "DELETE /address-book/{address}": {
    params: {
      /** 20-byte address, 0x-prefixed; a mixed-case address must carry a valid EIP-55 checksum */
      address: string;
    };
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      200: {
        removed: {
          /** checksummed */
          address: string;
          label: string | null;
          /** the admin key that added it */
          addedBy: string;
          /** ISO time */
          addedAt: string;
          /** ISO time from which transfers to it are sent without approval */
          effectiveAt: string;
          /** whether that time has come */
          effective: boolean;
        };
      };
    };
  };
  /** Prometheus metrics */
  "GET /metrics": {
    params: Record<string, never>;
    query: Record<string, never>;
    headers: Record<string, never>;
    body: undefined;
    replies: {
      /** Prometheus text exposition format */
      200: string;
    };
  };
}

/** The answer of every refusal (4xx, 5xx). */
export type ErrorReply = {
  statusCode: number;
  /** machine-readable error code */
  code: string;
  /** HTTP reason phrase */
  error: string;
  /** what went wrong, for people */
  message: string;
};

/** Every webhook event the service delivers, by type. */
export interface WebhookEvents {
  /** The transfer is mined and moved the tokens, with WEBHOOK_CONFIRMATIONS confirmations */
  "transfer.confirmed": {
    type: "transfer.confirmed";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** The transfer was mined and reverted (or moved nothing), or another transaction took its nonce: nothing was sent */
  "transfer.failed": {
    type: "transfer.failed";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** The transfer was re-priced: a new attempt (data.hash) at the same nonce carries it now */
  "transfer.replaced": {
    type: "transfer.replaced";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** Its cancel (a 0-value transaction to the wallet itself, data.hash) was mined: the recipient got nothing */
  "transfer.cancelled": {
    type: "transfer.cancelled";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** A block holding the transfer's reported outcome (confirmed, failed or cancelled) left the chain; it is pending again, and its outcome is reported again once it is mined again */
  "transfer.reorged": {
    type: "transfer.reorged";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** The outcome reported before (confirmed, failed or cancelled) is final: its block is at or below the node's finalized block (or FINALITY_BLOCKS deep) */
  "transfer.finalized": {
    type: "transfer.finalized";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's first hash, as POST /transfer answered it */
      transferHash: string;
      /** the attempt that carries the transfer now (the mined one once mined) */
      hash: string;
      nonce: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the hot wallet */
      from: string;
      /** the token contract's address, or "native" for the network's native coin */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** who receives the tokens */
      recipient: string;
      /** base units, decimal: what the recipient got ('0' for a failed or cancelled transfer), else what was requested, as in the status document */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** what the transfer asked to send, base units, decimal */
      requestedAmount: string;
      /** the id of the API key that sent it (never the key) */
      apiKeyId: string | null;
      /** the Idempotency-Key the client sent, if any */
      idempotencyKey: string | null;
      /** where it was mined; null before */
      blockNumber: number | null;
      /** where it was mined; null before */
      blockHash: string | null;
      confirmations: number;
      /** from the receipt, where read (failed, cancelled); decimal */
      gasUsed: string | null;
      /** from the receipt, where read; wei, decimal */
      effectiveGasPrice: string | null;
    };
  };
  /** An item of a payout batch was paid: the batch is mined (with WEBHOOK_CONFIRMATIONS confirmations) and the item's tokens moved */
  "payout.item.paid": {
    type: "payout.item.paid";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the batch's id, as POST /payouts answered it */
      payoutId: number;
      /** the item's id, as the client sent it */
      itemId: string;
      /** the item's recipient */
      toAddress: string;
      /** what the item pays, base units, decimal */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** the item's outcome; pending again after a reorganisation */
      state: "paid" | "failed" | "pending";
      /** why it failed, with the token's own words; null unless failed */
      reason: string | null;
      /** the batch's first hash, as POST /payouts answered it */
      transferHash: string;
      /** the attempt that carries the batch now (the mined one once mined) */
      hash: string;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** the id of the API key that sent the batch (never the key) */
      apiKeyId: string | null;
      /** the batch's Idempotency-Key */
      idempotencyKey: string | null;
      /** where the batch was mined; null after a reorganisation */
      blockNumber: number | null;
      /** where the batch was mined; null after a reorganisation */
      blockHash: string | null;
      confirmations: number;
    };
  };
  /** An item of a payout batch failed: the batch is mined and the item's transfer failed (reason: the token's words), or the whole batch reverted, was cancelled or lost its nonce */
  "payout.item.failed": {
    type: "payout.item.failed";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the batch's id, as POST /payouts answered it */
      payoutId: number;
      /** the item's id, as the client sent it */
      itemId: string;
      /** the item's recipient */
      toAddress: string;
      /** what the item pays, base units, decimal */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** the item's outcome; pending again after a reorganisation */
      state: "paid" | "failed" | "pending";
      /** why it failed, with the token's own words; null unless failed */
      reason: string | null;
      /** the batch's first hash, as POST /payouts answered it */
      transferHash: string;
      /** the attempt that carries the batch now (the mined one once mined) */
      hash: string;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** the id of the API key that sent the batch (never the key) */
      apiKeyId: string | null;
      /** the batch's Idempotency-Key */
      idempotencyKey: string | null;
      /** where the batch was mined; null after a reorganisation */
      blockNumber: number | null;
      /** where the batch was mined; null after a reorganisation */
      blockHash: string | null;
      confirmations: number;
    };
  };
  /** The block holding the item's reported outcome left the chain: it is pending again, and its outcome is reported again once the batch is mined again */
  "payout.item.reorged": {
    type: "payout.item.reorged";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the batch's id, as POST /payouts answered it */
      payoutId: number;
      /** the item's id, as the client sent it */
      itemId: string;
      /** the item's recipient */
      toAddress: string;
      /** what the item pays, base units, decimal */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** the item's outcome; pending again after a reorganisation */
      state: "paid" | "failed" | "pending";
      /** why it failed, with the token's own words; null unless failed */
      reason: string | null;
      /** the batch's first hash, as POST /payouts answered it */
      transferHash: string;
      /** the attempt that carries the batch now (the mined one once mined) */
      hash: string;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** the id of the API key that sent the batch (never the key) */
      apiKeyId: string | null;
      /** the batch's Idempotency-Key */
      idempotencyKey: string | null;
      /** where the batch was mined; null after a reorganisation */
      blockNumber: number | null;
      /** where the batch was mined; null after a reorganisation */
      blockHash: string | null;
      confirmations: number;
    };
  };
  /** The item's outcome reported before (state: paid or failed) is final: no reorganisation undoes it */
  "payout.item.finalized": {
    type: "payout.item.finalized";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the batch's id, as POST /payouts answered it */
      payoutId: number;
      /** the item's id, as the client sent it */
      itemId: string;
      /** the item's recipient */
      toAddress: string;
      /** what the item pays, base units, decimal */
      amount: string;
      /** amount in whole token units; null for a token the deployment no longer pays in */
      amountInTokens: string | null;
      /** the item's outcome; pending again after a reorganisation */
      state: "paid" | "failed" | "pending";
      /** why it failed, with the token's own words; null unless failed */
      reason: string | null;
      /** the batch's first hash, as POST /payouts answered it */
      transferHash: string;
      /** the attempt that carries the batch now (the mined one once mined) */
      hash: string;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address */
      token: string;
      /** the token's symbol in NETWORKS_FILE; without the file, its address */
      tokenSymbol: string;
      /** the id of the API key that sent the batch (never the key) */
      apiKeyId: string | null;
      /** the batch's Idempotency-Key */
      idempotencyKey: string | null;
      /** where the batch was mined; null after a reorganisation */
      blockNumber: number | null;
      /** where the batch was mined; null after a reorganisation */
      blockHash: string | null;
      confirmations: number;
    };
  };
  /** A transaction of a service wallet, a Transfer out of it of any ERC-20 (also one the service does not pay in), or code at it (an EIP-7702 delegation), that the service never made (its key used elsewhere, or compromised; a spender it approved) */
  "wallet.unexpected_outflow": {
    type: "wallet.unexpected_outflow";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the service's wallet (a lane of the pool) it left */
      wallet: string;
      /** the transaction that did it */
      hash: string;
      blockNumber: number;
      blockHash: string;
      /** a transaction of the wallet: the nonce it used; null for a token transfer another account's transaction made (transferFrom by a spender) */
      nonce: number | null;
      /** a token Transfer out of the wallet: the token's address; null for the wallet's transaction itself */
      token: string | null;
      /** a token Transfer: its log's index in the block (one transaction can move tokens out several times); null for the wallet's transaction itself */
      logIndex: number | null;
      /** the token's recipient, or the transaction's to; null when the node did not return the transaction */
      to: string | null;
      /** base units of the token, or the transaction's value in wei; decimal; null when the node did not return the transaction */
      amount: string | null;
      /** code found at the wallet (an EIP-7702 delegation: 0xef0100 and the delegate): the account can move funds with no nonce of its own and no log; hash is then the keccak-256 of the wallet's address and the code, and the block the head it was read at. Null for a transaction or a log */
      code: string | null;
      /** a Transfer of a contract this network does not pay in: any contract can emit one (fake tokens do), so it never pauses signing */
      otherToken: boolean;
      /** when the service noticed it, ISO 8601 */
      detectedAt: string;
      /** true when the service signs nothing until an admin resumes (PAUSE_ON_UNEXPECTED_OUTFLOW) */
      signingPaused: boolean;
    };
  };
  /** The audit log's head: its last entry's number and hash, published every AUDIT_HEAD_INTERVAL_MS while the log grows, so that a copy lives outside the database */
  "audit.head": {
    type: "audit.head";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the audit log's last sealed entry */
      seq: number;
      /** its hash: what audit:verify --expect <seq>:<hash> checks against */
      hash: string;
      /** when that entry was written, ISO 8601 */
      at: string;
      /** true when the log is sealed with AUDIT_KEY_FILE's key (the hash is an HMAC) */
      keyed: boolean;
      /** the argument of npm run audit:verify -- --expect, ready to keep */
      expect: string;
    };
  };
  /** A transfer or payout batch above APPROVAL_ABOVE was journaled and answered 202: nothing is signed until an admin key other than the one that asked approves it (POST /transfers/{id}/approve) */
  "transfer.awaiting_approval": {
    type: "transfer.awaiting_approval";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's id, as the 202 answered it: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it */
      id: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address, or "native" */
      token: string;
      /** the token's symbol in NETWORKS_FILE; its address without one */
      tokenSymbol: string;
      /** the recipient; for a payout batch, the payout contract */
      recipient: string;
      /** base units, decimal (a batch: the total of the items it pays) */
      amount: string;
      /** whole tokens; null for a token the service no longer pays in */
      amountInTokens: string | null;
      /** a payout batch: how many items it pays; null for a transfer */
      payoutItems: number | null;
      /** the API key that asked for it (its id) */
      apiKeyId: string | null;
      /** the client's Idempotency-Key; null when it sent none */
      idempotencyKey: string | null;
      /** when it expires undecided (APPROVAL_TTL_HOURS after it was asked for), ISO 8601 */
      expiresAt: string;
      /** the admin key that decided it, or expiry; null while it waits */
      decidedBy: string | null;
      /** transfer.rejected: why (APPROVAL_REJECTED, APPROVAL_EXPIRED, or the 417's code when it was refused as it was approved); null for transfer.awaiting_approval */
      reason: {
        code: string;
        message: string;
      } | null;
    };
  };
  /** A transfer that awaited approval will never be sent: an admin rejected it (reason.code APPROVAL_REJECTED), no admin approved it within APPROVAL_TTL_HOURS (APPROVAL_EXPIRED), or it was refused when approved (the 417's code: the wallet short of tokens, the call would revert) */
  "transfer.rejected": {
    type: "transfer.rejected";
    /** when the event was made, ISO 8601 */
    timestamp: string;
    data: {
      /** the transfer's id, as the 202 answered it: GET /transfers lists it, POST /transfers/{id}/approve and /reject take it */
      id: number;
      /** the network's name in NETWORKS_FILE; without the file, its chain id in decimal */
      network: string;
      chainId: number;
      /** the token contract's address, or "native" */
      token: string;
      /** the token's symbol in NETWORKS_FILE; its address without one */
      tokenSymbol: string;
      /** the recipient; for a payout batch, the payout contract */
      recipient: string;
      /** base units, decimal (a batch: the total of the items it pays) */
      amount: string;
      /** whole tokens; null for a token the service no longer pays in */
      amountInTokens: string | null;
      /** a payout batch: how many items it pays; null for a transfer */
      payoutItems: number | null;
      /** the API key that asked for it (its id) */
      apiKeyId: string | null;
      /** the client's Idempotency-Key; null when it sent none */
      idempotencyKey: string | null;
      /** when it expires undecided (APPROVAL_TTL_HOURS after it was asked for), ISO 8601 */
      expiresAt: string;
      /** the admin key that decided it, or expiry; null while it waits */
      decidedBy: string | null;
      /** transfer.rejected: why (APPROVAL_REJECTED, APPROVAL_EXPIRED, or the 417's code when it was refused as it was approved); null for transfer.awaiting_approval */
      reason: {
        code: string;
        message: string;
      } | null;
    };
  };
}
