/** The formats of an address and a transaction hash, as every schema of the service (HTTP, webhooks) states them. */
import { Type } from "@sinclair/typebox";

export const AddressSchema = Type.String({
  pattern: "^0x[0-9a-fA-F]{40}$",
  description: "20-byte address, 0x-prefixed; a mixed-case address must carry a valid EIP-55 checksum",
  examples: ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"],
});

export const TxHashSchema = Type.String({
  pattern: "^0x[0-9a-fA-F]{64}$",
  description: "transaction hash: 0x and 64 hex digits, either case",
  examples: ["0xc193f20058868225941bc91a8286d45a4eac2105bea5d70f7a09e55c2c411deb"],
});
