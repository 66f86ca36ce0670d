import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openHostLog } from "../../laptop/functions-host/host-log.js";
import { startHostSummary } from "../../laptop/functions-host/host-summary.js";

/** A terminal or a pipe that keeps what is written to it. */
function sink(isTTY: boolean) {
  const out = {
    text: "",
    isTTY,
    write: (text: string) => {
      out.text += text;
    },
  };
  return out;
}

/** A host whose stats answer each count in turn, then the last again. */
function statsOf(...answers: (Record<string, number> | number)[]): typeof fetch {
  let next = 0;
  return (async () => {
    const answer = answers[Math.min(next++, answers.length - 1)];
    if (typeof answer === "number") return new Response(null, { status: answer });
    return Response.json({ counts: answer });
  }) as typeof fetch;
}

const summaries: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const summary of summaries.splice(0)) await summary.stop();
});

describe("F27-10: sas host's summary of the orders per state", () => {
  it("writes a plain line per change when piped, naming the states with orders in them", async () => {
    const out = sink(false);
    const fetch = statsOf({ Pending: 0 }, { Pending: 2, Processing: 1 }, { Pending: 2, Processing: 1 }, 401, {
      Processed: 3,
    });
    const summary = startHostSummary({ url: "http://h", functionKey: "k", out, fetch });
    summaries.push(summary);
    for (let i = 0; i < 5; i++) await summary.update();
    expect(out.text).toBe(
      "orders: none yet\n" +
        "orders: Pending 2 · Processing 1\n" +
        "orders: GET /api/stats answered 401\n" +
        "orders: Processed 3\n",
    );
  });

  it("rewrites one line in place on a terminal, and ends it when stopped", async () => {
    const out = sink(true);
    const summary = startHostSummary({
      url: "http://h",
      functionKey: "k",
      out,
      fetch: statsOf({ Pending: 12, Processing: 3 }, { Processed: 1 }),
    });
    await summary.update();
    await summary.update();
    await summary.stop();
    // Padded over what the longer line before it left.
    expect(out.text).toBe("\rorders: Pending 12 · Processing 3\rorders: Processed 1              \n");
  });
});

describe("F27-11: sas host's log", () => {
  const folders: string[] = [];
  afterEach(() => {
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it("keeps every line in its file, and shows on the terminal those at --log-level and above", () => {
    const folder = mkdtempSync(join(tmpdir(), "sas-host-log-"));
    folders.push(folder);
    const terminal = sink(false);
    const log = openHostLog(join(folder, "logs", "sas-host.log"), "warn", terminal);
    log.logger.info("host.timer.fired", { functionName: "supervisor" });
    log.logger.error("host.function.failed", { functionName: "submitOrder" });
    log.stream.write('{"time":"t","level":"warn","event":"extension.log","message":"slow"}\n{"level":"info"');
    log.stream.write(',"event":"extension.log"}\nnot a log line\n');
    log.close();

    const lines = readFileSync(join(folder, "logs", "sas-host.log"), "utf8")
      .trim()
      .split("\n");
    expect(lines.map((line) => (line.startsWith("{") ? JSON.parse(line).event : line))).toEqual([
      "host.timer.fired",
      "host.function.failed",
      "extension.log",
      "extension.log",
      "not a log line",
    ]);
    expect(
      terminal.text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).level),
    ).toEqual(["error", "warn"]);
  });

  it("shows none without --log-level", () => {
    const folder = mkdtempSync(join(tmpdir(), "sas-host-log-"));
    folders.push(folder);
    const terminal = sink(false);
    const log = openHostLog(join(folder, "sas-host.log"), undefined, terminal);
    log.logger.error("host.function.failed", {});
    log.close();
    expect(terminal.text).toBe("");
    expect(readFileSync(join(folder, "sas-host.log"), "utf8")).toContain("host.function.failed");
  });
});
