/** SQL that the PostgreSQL journal's store and its reader both use to read rows by transfer id. */

/**
 * A list of transfer ids ($1) as a table to join: the planner looks each up in its index. `id = ANY($1)`
 * on a table not analyzed yet (filled in bulk, or just migrated) was taken to match half the rows and read
 * the whole table: a second at a million attempts.
 */
export const BY_IDS = "unnest($1::bigint[]) AS held (id)";
