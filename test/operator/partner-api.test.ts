import { describe, expect, it } from "vitest";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";
import { createPartnerApi } from "../../src/operator/partner-api.js";
import type { PartnerControls, PartnerControlsResult } from "../../src/ports/partner-controls.js";

const STATE = {
  faults: { transient: 0.5, permanent: 0, slow: 0, lostReply: 0 },
  outage: null,
  seed: 7,
  slowMs: 8000,
  changes: [],
};

/** Controls that record what they were asked and answer `result`. */
function controls(result: PartnerControlsResult) {
  const calls: unknown[][] = [];
  const answer =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
      return result;
    };
  const fake: PartnerControls = {
    status: answer("status"),
    setFaults: answer("setFaults"),
    startOutage: answer("startOutage"),
    endOutage: answer("endOutage"),
  };
  return { fake, calls };
}

describe("the partner's controls API", () => {
  it("passes the partner's answers on, its 400s included, and logs each change", async () => {
    const ok = controls({ kind: "answer", status: 200, body: STATE });
    const logger = new MemoryLogger();
    const api = createPartnerApi({ controls: ok.fake, logger });
    expect(await api.status()).toEqual({ status: 200, body: STATE });
    expect(await api.setFaults('{"transient":0.5}')).toEqual({ status: 200, body: STATE });
    expect(await api.startOutage('{"seconds":30}')).toEqual({ status: 200, body: STATE });
    expect(await api.endOutage()).toEqual({ status: 200, body: STATE });
    expect(ok.calls).toEqual([
      ["status"],
      ["setFaults", { transient: 0.5 }],
      ["startOutage", 30],
      ["endOutage"],
    ]);
    expect(logger.events("partner.controls.changed").map((line) => line.operation)).toEqual([
      "setFaults",
      "startOutage",
      "endOutage",
    ]);

    const refusal = { error: "invalid-outage", message: "seconds must be an integer from 1 to 86400" };
    const refused = controls({ kind: "answer", status: 400, body: refusal });
    const strict = createPartnerApi({ controls: refused.fake, logger: new MemoryLogger() });
    expect(await strict.startOutage('{"seconds":1.5}')).toEqual({ status: 400, body: refusal });
  });

  it("answers 404 when the partner has no controls, 502 when it cannot be had, with the reason", async () => {
    const message = "the partner at https://partner.example has no control API";
    const none = createPartnerApi({
      controls: controls({ kind: "refused", reason: "no-partner-controls", message }).fake,
      logger: new MemoryLogger(),
    });
    expect(await none.status()).toEqual({ status: 404, body: { error: "no-partner-controls", message } });
    for (const reason of ["partner-unreachable", "partner-refused-key", "partner-failed"] as const) {
      const logger = new MemoryLogger();
      const api = createPartnerApi({
        controls: controls({ kind: "refused", reason, message: "m" }).fake,
        logger,
      });
      expect(await api.endOutage()).toEqual({ status: 502, body: { error: reason, message: "m" } });
      expect(logger.events("partner.controls.refused")).toMatchObject([{ operation: "endOutage", reason }]);
    }
  });

  it.each([
    ["setFaults", "not json", "invalid-faults"],
    ["setFaults", "[0.5]", "invalid-faults"],
    ["startOutage", '{"seconds":"30"}', "invalid-outage"],
    ["startOutage", "{}", "invalid-outage"],
  ] as const)("refuses %s with body %s as %s, asking the partner nothing", async (route, text, error) => {
    const { fake, calls } = controls({ kind: "answer", status: 200, body: STATE });
    const answer = await createPartnerApi({ controls: fake, logger: new MemoryLogger() })[route](text);
    expect(answer).toMatchObject({ status: 400, body: { error } });
    expect(calls).toEqual([]);
  });
});
