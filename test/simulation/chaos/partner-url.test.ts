import { afterEach, describe, expect, it } from "vitest";
import { HOST_READY, type SasProcess, startSas } from "../../../laptop/simulation/chaos/child-processes.js";
import { type PartnerService, startPartnerService } from "../../../partner/partner-service.js";
import { SystemClock } from "../../../src/adapters/clock/system-clock.js";
import { MemoryLogger } from "../../../src/adapters/logging/json-logger.js";

let partner: PartnerService | undefined;
let host: SasProcess | undefined;
afterEach(async () => {
  await host?.kill();
  await partner?.close();
});

describe("sas start --partner-url", () => {
  it("calls the partner it is given instead of starting its own, and dies whole on SIGKILL", async () => {
    partner = await startPartnerService({ clock: new SystemClock(), logger: new MemoryLogger() });
    host = await startSas(
      [
        ...["start", "--data", ":memory:", "--port", "0", "--store-port", "0"],
        ...["--demo-orders", "4", "--partner-url", partner.url],
      ],
      // The addresses come first; the demo batch's end after them.
      new RegExp(`${HOST_READY.source}[\\s\\S]*demo batch finished`),
    );
    expect(host.output()).toContain(`partner at ${partner.url}`);
    expect(host.output()).toContain("demo batch finished");
    const ledger = partner.ledger();
    expect(Object.keys(ledger.effectsByOrder)).toHaveLength(4);
    expect(ledger.effects).toBe(16); // four steps each
    expect(host.rss()).toBeGreaterThan(10 * 1_048_576);

    const pid = host.pid;
    await host.kill();
    host = undefined;
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
  }, 60_000);
});
