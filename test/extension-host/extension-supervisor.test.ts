/**
 * The extension host's supervisor on a virtual clock, with stand-in hosts: what `sas host` does when
 * its .NET process ends on its own (sas-host-extension.test.ts kills the real one).
 */
import { describe, expect, it } from "vitest";
import type { ExtensionHost, ExtensionReady } from "../../laptop/extension-host/extension-process.js";
import {
  type StartExtensionHost,
  superviseExtensionHost,
} from "../../laptop/extension-host/extension-supervisor.js";
import { VirtualClock } from "../../laptop/simulation/virtual-clock.js";
import { MemoryLogger } from "../../src/adapters/logging/json-logger.js";

type OnExit = Parameters<StartExtensionHost>[0];

/** Hosts that start when asked (or fail to, while `failing` says so), each with its pid and its exit. */
function standInHosts() {
  const hosts: { pid: number; exit: OnExit; closed: boolean }[] = [];
  const state = { failing: false };
  const start: StartExtensionHost = async (onExit) => {
    if (state.failing) throw new Error("the extension host ended before it was ready\nits last line");
    const pid = 1000 + hosts.length;
    const entry = { pid, exit: onExit, closed: false };
    hosts.push(entry);
    const ready = { clientData: { rpcBaseUrl: `http://127.0.0.1:${17071 + hosts.length}/` } };
    const host: ExtensionHost = {
      ready: ready as unknown as ExtensionReady,
      pid,
      close: async () => {
        entry.closed = true;
      },
    };
    return host;
  };
  return { hosts, state, start };
}

async function supervised(policy?: Parameters<typeof superviseExtensionHost>[0]["policy"]) {
  const clock = new VirtualClock();
  const logger = new MemoryLogger();
  const stand = standInHosts();
  const gaveUp: Error[] = [];
  const host = await superviseExtensionHost({
    start: stand.start,
    clock,
    logger,
    onGiveUp: (error) => gaveUp.push(error),
    ...(policy ? { policy } : {}),
  });
  return { clock, logger, ...stand, gaveUp, host };
}

const events = (logger: MemoryLogger, name: string) => logger.events(name);

describe("F23-1: the extension host restarted when it ends on its own", () => {
  it("starts another after a second, which the durable clients then reach", async () => {
    const { clock, logger, hosts, host, gaveUp } = await supervised();
    expect(host.pid).toBe(1000);
    hosts[0]?.exit(null, "SIGKILL");
    expect(events(logger, "extension.restarting")).toMatchObject([
      { pid: 1000, how: "signal SIGKILL", inMs: 1_000, exitsInWindow: 1 },
    ]);
    await clock.advance(999);
    expect(hosts).toHaveLength(1);
    await clock.advance(1);
    expect(hosts).toHaveLength(2);
    expect(host.pid).toBe(1001);
    expect(host.ready.clientData.rpcBaseUrl).toBe("http://127.0.0.1:17073/");
    expect(events(logger, "extension.started").map((e) => e.pid)).toEqual([1000, 1001]);
    expect(gaveUp).toEqual([]);
  });

  it("backs off, doubling the wait for each exit within the minute", async () => {
    const { clock, logger, hosts } = await supervised({
      maxExits: 5,
      windowMs: 60_000,
      firstDelayMs: 1_000,
      maxDelayMs: 16_000,
    });
    for (let i = 0; i < 4; i++) {
      hosts[i]?.exit(137, null);
      await clock.advance(16_000);
    }
    expect(events(logger, "extension.restarting").map((e) => e.inMs)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(hosts).toHaveLength(5);
  });

  it("counts only the exits of the last minute", async () => {
    const { clock, hosts, gaveUp } = await supervised();
    for (let i = 0; i < 4; i++) {
      hosts[i]?.exit(null, "SIGKILL");
      await clock.advance(31_000);
    }
    expect(hosts).toHaveLength(5);
    expect(gaveUp).toEqual([]);
  });
});

describe("F23-2: the supervisor gives up on a host that keeps ending", () => {
  it("after three exits within a minute, naming the last one", async () => {
    const { clock, logger, hosts, gaveUp } = await supervised();
    for (let i = 0; i < 3; i++) {
      hosts[i]?.exit(null, "SIGKILL");
      await clock.advance(5_000);
    }
    expect(hosts).toHaveLength(3);
    expect(gaveUp.map((error) => error.message)).toEqual([
      "the extension host ended 3 times within 60 s (the last, pid 1002, by signal SIGKILL); its durable functions stopped",
    ]);
    expect(events(logger, "extension.gave-up")).toHaveLength(1);
  });

  it("when a new one cannot start, its last lines in the log", async () => {
    const { clock, logger, hosts, state, gaveUp } = await supervised();
    state.failing = true;
    hosts[0]?.exit(1, null);
    await clock.advance(1_000);
    expect(gaveUp.map((error) => error.message)).toEqual([
      "the extension host could not start again after pid 1000 ended by exit code 1: the extension host ended before it was ready; its durable functions stopped",
    ]);
    expect(events(logger, "extension.gave-up")).toMatchObject([{ lastLines: ["its last line"] }]);
  });
});

describe("F23-3: closing the supervisor leaves no extension host running", () => {
  it("during the back-off, starts none", async () => {
    const { clock, hosts, host, gaveUp } = await supervised();
    hosts[0]?.exit(null, "SIGKILL");
    await host.close();
    await clock.advance(60_000);
    expect(hosts).toHaveLength(1);
    expect(gaveUp).toEqual([]);
  });

  it("closes the one that runs now, not only the one it started first", async () => {
    const { clock, hosts, host } = await supervised();
    hosts[0]?.exit(null, "SIGKILL");
    await clock.advance(1_000);
    await host.close();
    expect(hosts.map((h) => h.closed)).toEqual([false, true]);
  });
});
