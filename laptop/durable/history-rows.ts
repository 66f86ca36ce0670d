import type { HistoryEvent } from "./history.js";
import type { StoreStatements } from "./store-statements.js";

/**
 * The history table: one row per episode, its events only ever read back together with the rest.
 *
 * The number of each instance's last row, as committed, is kept so that the next row is written
 * without a query for it (one row goes in per episode). An instance is absent until its first row
 * written since the store opened (the query is made then, once), and again once its history is
 * deleted or its execution has finished, so the map holds only the instances under way.
 */
export class HistoryRows {
  private readonly lastEpisodes = new Map<string, number>();
  /** The transaction under way's changes to `lastEpisodes` (undefined: forget), merged when it commits. */
  private readonly lastEpisodesWritten = new Map<string, number | undefined>();

  constructor(private readonly statements: StoreStatements) {}

  read(instanceId: string): HistoryEvent[] {
    return this.statements.history.all(instanceId).flatMap((r) => JSON.parse(r.events) as HistoryEvent[]);
  }

  append(instanceId: string, events: readonly HistoryEvent[]): void {
    const json = JSON.stringify(events);
    const last = this.lastEpisodesWritten.has(instanceId)
      ? this.lastEpisodesWritten.get(instanceId)
      : this.lastEpisodes.get(instanceId);
    if (last === undefined) {
      const { episode } = this.statements.appendHistory.get(instanceId, json, instanceId) as {
        episode: number;
      };
      this.lastEpisodesWritten.set(instanceId, episode);
    } else {
      // Noted first: should the row fail (its number taken), the transaction's failure forgets it.
      this.lastEpisodesWritten.set(instanceId, last + 1);
      this.statements.insertHistory.run(instanceId, last + 1, json);
    }
  }

  /**
   * A new execution's history is empty: an instance id is only ever reused after its history was
   * deleted (replaced, continued as new), and a purge deletes the history with the row.
   */
  startEmpty(instanceId: string): void {
    this.lastEpisodesWritten.set(instanceId, 0);
  }

  delete(instanceId: string): void {
    this.statements.deleteHistory.run(instanceId);
    this.lastEpisodesWritten.set(instanceId, undefined);
  }

  /** The instance's execution ended: it has no more rows to number. */
  forget(instanceId: string): void {
    this.lastEpisodesWritten.set(instanceId, undefined);
  }

  begin(): void {
    this.lastEpisodesWritten.clear();
  }

  commit(): void {
    this.lastEpisodesWritten.forEach(this.mergeLastEpisode);
  }

  /** The transaction is over, committed or not. */
  end(committed: boolean): void {
    // A failed transaction may have failed on a number this store believed free (a row written
    // behind its back): the instances it touched are asked for their numbers again.
    if (!committed)
      for (const instanceId of this.lastEpisodesWritten.keys()) this.lastEpisodes.delete(instanceId);
    this.lastEpisodesWritten.clear();
  }

  /** A committed change to `lastEpisodes` (a bound method: `forEach` over the map makes no entry arrays). */
  private readonly mergeLastEpisode = (last: number | undefined, instanceId: string): void => {
    if (last === undefined) this.lastEpisodes.delete(instanceId);
    else this.lastEpisodes.set(instanceId, last);
  };
}
