/** The transfer history in the PostgreSQL journal, a page at a time, as the SQLite journal walks it (history-walks.ts). */
import type pg from "pg";
import type { EntryRow } from "../journal-rows.js";
import type { HistoryFilter, HistoryPage, JournalElsewhere } from "../journal-records.js";
import { BY_IDS } from "../postgres-by-ids.js";
import { entriesWithAttempts } from "../transfers/postgres-transfer-reads.js";
import { type Driver, idBoundsOf, mergeWalks, pageOfKeyed, planWalks, walkOf } from "./history-walks.js";

/** The history's read of JournalElsewhere, on `pool`. */
export function postgresHistoryReads(pool: pg.Pool): Pick<JournalElsewhere, "history"> {
  return {
    /**
     * A page of the history, as the SQLite journal reads it (history-walks.ts): each walk (a state's along
     * its index, or the one along the ids) is one branch of one statement, so the walks cost one round trip
     * whatever the filter; the page's rows, then their attempts, one each (in that order: an attempt is
     * shipped with its row's new state, so attempts read after the rows include every attempt those rows have).
     */
    async history(filter: HistoryFilter, beforeId: number | undefined, limit: number): Promise<HistoryPage> {
      const bounds = idBoundsOf(filter, beforeId, { since: await firstIdAtOrAfter(pool, filter.since), until: await firstIdAtOrAfter(pool, filter.until) });
      if (!bounds || filter.states?.length === 0) return { entries: [], nextBefore: undefined };
      if (filter.idempotencyKeys || filter.payoutItem) {
        const keyed = filter.idempotencyKeys
          ? await pool.query<EntryRow>("SELECT * FROM transfers WHERE idempotency_key = ANY($1)", [filter.idempotencyKeys])
          : await pool.query<EntryRow>("SELECT t.* FROM payout_items p JOIN transfers t ON t.id = p.transfer_id WHERE p.api_key = ANY($1) AND p.item_id = $2", [
              filter.payoutItem?.apiKeyIds,
              filter.payoutItem?.itemId,
            ]);
        const { rows, nextBefore } = pageOfKeyed(keyed.rows.sort((a, b) => b.id - a.id), filter, bounds, limit);
        return { entries: await entriesWithAttempts(pool, rows), nextBefore };
      }
      const plan = planWalks(filter, limit);
      const values: unknown[] = [bounds.below, bounds.low, plan.scan];
      const parameter = (value: unknown) => `$${values.push(value)}`;
      const driven = plan.driver ? `${plan.driver.column} = ${parameter(plan.values[plan.driver.field])} AND ` : "";
      const hit = plan.checked.length === 0 ? "1" : `(${plan.checked.map((filter: Driver) => `${filter.column} = ${parameter(plan.values[filter.field])}`).join(" AND ")})::int`;
      const walked = plan.states ?? [undefined];
      const walks = walked.map(
        (state, branch) =>
          `(SELECT ${branch} AS walk, id, ${hit} AS hit FROM transfers WHERE ${driven}${state === undefined ? "" : `state = ${parameter(state)} AND `}id < $1 AND id >= $2 ORDER BY id DESC LIMIT $3)`,
      );
      const { rows } = await pool.query<{ walk: number; id: number; hit: number }>(walks.join(" UNION ALL "), values);
      const byWalk = walked.map(() => [] as [number, number][]);
      for (const row of rows) byWalk[row.walk].push([row.id, row.hit]);
      const page = mergeWalks(
        byWalk.map((walk) => walkOf(walk.sort((a, b) => b[0] - a[0]), plan.scan)),
        limit,
      );
      if (page.ids.length === 0) return { entries: [], nextBefore: page.nextBefore };
      const entries = await pool.query<EntryRow>(`SELECT t.* FROM ${BY_IDS} JOIN transfers t ON t.id = held.id`, [page.ids]);
      return { entries: await entriesWithAttempts(pool, entries.rows.sort((a, b) => b.id - a.id)), nextBefore: page.nextBefore };
    },
  };
}

async function firstIdAtOrAfter(pool: pg.Pool, time: number | undefined): Promise<number | undefined> {
    if (time === undefined) return undefined;
    return (await pool.query<{ id: number }>("SELECT id FROM transfers WHERE created_at >= $1 ORDER BY created_at, id LIMIT 1", [time])).rows[0]?.id;
  }
