/**
 * Runs settlements strictly one after another, each once the previous one was answered.
 *
 * rhea 3.0.5 (under `@azure/service-bus`) writes the dispositions of consecutive deliveries settled in
 * the same turn as one frame carrying the first one's outcome, comparing the outcomes only from the
 * third delivery on: a complete and an abandon issued together complete both, and the abandoned
 * message is lost. One settlement in flight per receiver never gives it two to merge.
 */
export function serialSettlement(): <T>(settlement: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(settlement: () => Promise<T>): Promise<T> => {
    const next = last.then(settlement, settlement);
    last = next.catch(() => undefined);
    return next;
  };
}
