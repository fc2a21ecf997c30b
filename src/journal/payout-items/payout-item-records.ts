/** The journal's records: the payout item ids each API key's batches hold: an item is paid once, whichever batch names it again. */

export interface PayoutItemRecords {
  /**
   * Which of these payout item ids of the API key a batch holds, with that batch's entry id: a batch holds
   * its items' ids from its claim on, for good (retention too keeps them), unless it was refused, rejected
   * or released (then nothing of it was sent). A leader's working copy asks the shared database for the
   * ids it does not hold.
   */
  payoutItemsHeld(apiKeyId: string, itemIds: readonly string[]): Promise<Map<string, number>>;
}
