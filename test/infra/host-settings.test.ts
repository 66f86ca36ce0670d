/**
 * host.json against itself: a Service Bus message's lock must outlive the longest invocation, or a message
 * whose handler runs past the renewal window is unlocked mid-run and delivered again while it still runs.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

interface HostJson {
  readonly functionTimeout?: string;
  readonly extensions?: { readonly serviceBus?: { readonly maxAutoLockRenewalDuration?: string } };
}

/** A .NET TimeSpan as host.json writes it: `[d.]hh:mm:ss[.fff]`, in milliseconds. */
function timeSpanMs(value: string): number {
  const match = /^(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(value);
  if (!match) throw new Error(`not a TimeSpan: ${value}`);
  const [, days, hours, minutes, seconds, fraction] = match;
  const ms = Number((fraction ?? "").padEnd(3, "0"));
  return (
    (((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60 + Number(seconds)) * 1_000 + ms
  );
}

/** Problems with how long Service Bus locks are renewed, against how long an invocation may run. */
function lockRenewalProblems(host: HostJson): string[] {
  const timeout = host.functionTimeout;
  const renewal = host.extensions?.serviceBus?.maxAutoLockRenewalDuration;
  if (!timeout) return ["functionTimeout is not set: Flex Consumption's default is 30 minutes; say it here"];
  if (!renewal)
    return ["extensions.serviceBus.maxAutoLockRenewalDuration is not set (its default is 5 minutes)"];
  return timeSpanMs(renewal) >= timeSpanMs(timeout)
    ? []
    : [
        `locks are renewed for ${renewal} while an invocation may run ${timeout}: a longer one loses its lock`,
      ];
}

describe("host.json", () => {
  const host = JSON.parse(readFileSync(join(root, "host.json"), "utf8")) as HostJson;

  it("renews Service Bus locks for at least the function timeout", () => {
    expect(lockRenewalProblems(host)).toEqual([]);
  });

  it("the check fails on the old values: renewal for 5 minutes, timeout 10 minutes", () => {
    const old = {
      functionTimeout: "00:10:00",
      extensions: { serviceBus: { maxAutoLockRenewalDuration: "00:05:00" } },
    };
    expect(lockRenewalProblems(old)).toEqual([
      "locks are renewed for 00:05:00 while an invocation may run 00:10:00: a longer one loses its lock",
    ]);
  });

  it("reads TimeSpans as the host does", () => {
    expect(timeSpanMs("00:10:00")).toBe(600_000);
    expect(timeSpanMs("1.02:00:30.5")).toBe(93_630_500);
    expect(() => timeSpanMs("10m")).toThrow();
  });
});
