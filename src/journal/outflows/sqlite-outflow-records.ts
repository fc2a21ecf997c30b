/** The outflow watch's findings and progress, and the pause of signing, in the SQLite journal. */
import type { AuditRecords } from "../audit/audit-records.js";
import type { OutflowWatchProgress, StoredOutflow, StoredSigningPause } from "../journal-records.js";
import type { OutflowRecords } from "./outflow-records.js";
import type { SqliteJournalView, ViewClass } from "../sqlite-journal-view.js";

/** Adds the outflow records to a view of the SQLite journal (see the interface for what each method does). */
export function withSqliteOutflowRecords<Base extends ViewClass<SqliteJournalView & Pick<AuditRecords, "recordAudit">>>(base: Base) {
  return class SqliteOutflowRecords extends base implements OutflowRecords {
    recordOutflow(outflow: StoredOutflow): boolean {
      const { changes } = this.store.write(() => this.store.statements.insertOutflow.run({ ...outflow, logIndex: outflow.logIndex ?? -1 }));
      return changes === 1;
    }

    outflowWatchStart(): number | undefined {
      return (this.store.statements.outflowWatchStart.get(Number(this.laneOnNetwork.chain)) as number | undefined) ?? undefined;
    }

    recordOutflowWatchStart(block: number): void {
      this.store.write(() => this.store.statements.insertOutflowWatchStart.run(Number(this.laneOnNetwork.chain), block));
    }

    outflowWatchProgress(): OutflowWatchProgress | undefined {
      const kept = this.store.statements.outflowWatchProgress.get(Number(this.laneOnNetwork.chain)) as string | null | undefined;
      return kept ? (JSON.parse(kept) as OutflowWatchProgress) : undefined;
    }

    recordOutflowWatchProgress(progress: OutflowWatchProgress): void {
      const row = { chain: Number(this.laneOnNetwork.chain), logsReadTo: progress.logsReadTo, progress: JSON.stringify(progress) };
      this.store.write(() => this.store.statements.keepOutflowWatchProgress.run(row));
    }

    signingPause(): StoredSigningPause | undefined {
      return this.store.statements.signingPause.get() as StoredSigningPause | undefined;
    }

    recordSigningPaused(pause: StoredSigningPause): void {
      const { statements } = this.store;
      this.recordAudit({ kind: "wallet.signing_paused", actor: null, detail: { ...pause } });
      if (this.store.write(() => statements.updateSigningPause.run(pause)).changes > 0) return;
      this.store.writeOne("recording a signing pause", () => statements.insertSigningPause.run(pause));
    }

    recordSigningResumed(by: string, at: number): void {
      if (this.store.write(() => this.store.statements.resumeSigning.run({ by, at })).changes > 0) {
        this.recordAudit({ kind: "operator.resume_signing", actor: by, detail: { at } });
      }
    }
  };
}
