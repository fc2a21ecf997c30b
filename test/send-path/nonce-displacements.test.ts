/** What NonceDisplacements keeps: a transfer's displacement holds for the nonce it was found at, only. */
import { describe, expect, it } from "vitest";
import { NonceDisplacements } from "../../src/send-path/nonce-displacements.js";

const AT_95 = { by: `0x${"aa".repeat(32)}`, block: { number: 95, hash: `0x${"bb".repeat(32)}` }, nonce: 4 };

describe("NonceDisplacements", () => {
  it("answers a displacement only for the nonce it was found at: one put back by a round that read the transfer before it was signed again says nothing of its new nonce", () => {
    const found: number[] = [];
    const displacements = new NonceDisplacements((entryId) => found.push(entryId));
    displacements.set(7, AT_95);
    expect(displacements.of(7, 4)).toEqual(AT_95);
    // Signed again at nonce 9; a stale round sets the old displacement again.
    displacements.set(7, AT_95);
    expect(displacements.of(7, 9)).toBeUndefined();
    expect(displacements.of(7, null)).toBeUndefined();
    expect(found).toEqual([7]);
  });
});
