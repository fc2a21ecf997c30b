/**
 * The address book (ADDRESS_BOOK): GET /address-book lists it; an admin adds an address (POST, paid without
 * approval from ADDRESS_BOOK_COOLING_OFF_HOURS later) or removes one (DELETE, at once). Every change is in
 * the audit log, in the commit that makes it.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import { steadyWallClockNow } from "../../clock.js";
import { InvalidAddressError, parseRecipientAddress } from "../../domain/recipient-address.js";
import { ServiceError } from "../../errors.js";
import { ADDRESS_BOOK_MAX, type AddressBook, type AddressBookEntry, AddressBookFullError } from "../../journal/approvals/address-book.js";
import { JournalUnavailableError, type TransferJournal } from "../../journal/transfer-journal.js";
import { AddressSchema, errorReplies } from "../schemas.js";

export interface AddressBookRouteOptions {
  journal: Pick<TransferJournal, "addressBook" | "flushed">;
  /** ADDRESS_BOOK: whether transfers to recipients off the book wait for approval. */
  enforced: boolean;
  /** ADDRESS_BOOK_COOLING_OFF_HOURS, in ms. */
  coolingOffMs: number;
}

const EntrySchema = Type.Object({
  address: Type.String({ description: "checksummed" }),
  label: Type.Union([Type.String(), Type.Null()]),
  addedBy: Type.String({ description: "the admin key that added it" }),
  addedAt: Type.String({ description: "ISO time" }),
  effectiveAt: Type.String({ description: "ISO time from which transfers to it are sent without approval" }),
  effective: Type.Boolean({ description: "whether that time has come" }),
});

function asListed(entry: AddressBookEntry, now: number) {
  return { ...entry, addedAt: new Date(entry.addedAt).toISOString(), effectiveAt: new Date(entry.effectiveAt).toISOString(), effective: entry.effectiveAt <= now };
}

function checkedAddress(address: string): string {
  try {
    return parseRecipientAddress(address);
  } catch (error) {
    if (error instanceof InvalidAddressError) throw new ServiceError("INVALID_ADDRESS", error.message);
    throw error;
  }
}

// A change is answered once its commit (and its audit entry) is durable.
async function durably<T>(journal: Pick<TransferJournal, "flushed">, change: () => T): Promise<T> {
  try {
    const changed = change();
    await journal.flushed();
    return changed;
  } catch (error) {
    if (error instanceof JournalUnavailableError) throw new ServiceError("JOURNAL_UNAVAILABLE", "the transfer journal cannot record (see the service's log); nothing was changed. Retry later.");
    throw error;
  }
}

export const addressBookRoute: FastifyPluginAsyncTypebox<AddressBookRouteOptions> = async (app, { journal, enforced, coolingOffMs }) => {
  const book: AddressBook = journal.addressBook;

  app.get(
    "/address-book",
    {
      schema: {
        summary: "The address book: recipients paid without approval (ADDRESS_BOOK)",
        description: `Every entry, in the order added (at most ${ADDRESS_BOOK_MAX}). \`enforced\`: whether transfers and payouts to any other recipient wait for an admin's approval.`,
        tags: ["approvals"],
        operationId: "listAddressBook",
        response: { 200: Type.Object({ enforced: Type.Boolean(), coolingOffHours: Type.Number(), entries: Type.Array(EntrySchema) }), ...errorReplies(401, 403, 429, 500) },
      },
    },
    async () => {
      const now = steadyWallClockNow();
      return { enforced, coolingOffHours: coolingOffMs / 3_600_000, entries: book.entries().map((entry) => asListed(entry, now)) };
    },
  );

  app.post(
    "/address-book",
    {
      schema: {
        summary: "Adds a recipient to the address book",
        description:
          "Transfers and payouts to it are sent without an admin's approval once ADDRESS_BOOK_COOLING_OFF_HOURS have passed (until then they wait, as to any address off the book): " +
          "whoever adds a thief's address is seen before it pays. Entered in the audit log (operator.address_book_added). 409 when it is on the book already.",
        tags: ["approvals"],
        operationId: "addToAddressBook",
        body: Type.Object({ address: AddressSchema, label: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false }),
        response: { 201: EntrySchema, ...errorReplies(400, 401, 403, 409, 429, 500, 503) },
      },
    },
    async (request, reply) => {
      const address = checkedAddress(request.body.address);
      const now = steadyWallClockNow();
      const entry = { address, label: request.body.label ?? null, addedBy: request.apiKeyId, addedAt: now, effectiveAt: now + coolingOffMs };
      const added = await durably(journal, () => {
        try {
          return book.add(entry);
        } catch (error) {
          if (error instanceof AddressBookFullError) throw new ServiceError("ADDRESS_BOOK_FULL", error.message);
          throw error;
        }
      });
      if (!added) throw new ServiceError("ADDRESS_BOOK_ENTRY_EXISTS", `${address} is on the address book already (GET /address-book); nothing was changed`);
      request.log.warn({ address, label: entry.label, apiKeyId: request.apiKeyId, effectiveAt: new Date(entry.effectiveAt).toISOString() }, "an address was added to the address book");
      return reply.code(201).send(asListed(entry, now));
    },
  );

  app.delete(
    "/address-book/:address",
    {
      schema: {
        summary: "Removes a recipient from the address book",
        description: "At once: transfers to it wait for approval again. Entered in the audit log (operator.address_book_removed).",
        tags: ["approvals"],
        operationId: "removeFromAddressBook",
        params: Type.Object({ address: AddressSchema }),
        response: { 200: Type.Object({ removed: EntrySchema }), ...errorReplies(400, 401, 403, 404, 429, 500, 503) },
      },
    },
    async (request) => {
      const address = checkedAddress(request.params.address);
      const now = steadyWallClockNow();
      const removed = await durably(journal, () => book.remove(address, request.apiKeyId, now));
      if (!removed) throw new ServiceError("ADDRESS_BOOK_ENTRY_NOT_FOUND", `${address} is not on the address book; nothing was changed`);
      request.log.warn({ address, apiKeyId: request.apiKeyId }, "an address was removed from the address book");
      return { removed: asListed(removed, now) };
    },
  );
};
