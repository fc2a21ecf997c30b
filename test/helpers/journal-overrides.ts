/**
 * A real journal with some of its members replaced: for unit tests of how the send path answers when the
 * journal fails in a way a real disk or database will not on demand (a commit failing at one moment).
 */
import type { TransferJournal } from "../../src/journal/transfer-journal.js";

/** `journal`, except for the members `overrides` gives (a getter for `failure`, functions for methods). */
export function journalWith(journal: TransferJournal, overrides: { failure?: () => unknown } & Partial<Record<keyof TransferJournal, unknown>>): TransferJournal {
  return new Proxy(journal, {
    get(target, property, receiver) {
      if (property === "failure" && overrides.failure) return (overrides.failure as () => unknown)();
      if (property !== "failure" && property in overrides) return overrides[property as keyof TransferJournal];
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
