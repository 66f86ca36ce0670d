import { describe, expect, it } from "vitest";
import { ordersCommand } from "../../laptop/cli/orders-command.js";
import { partnerControlsCommand } from "../../laptop/cli/partner-controls-command.js";

const URL = "http://127.0.0.1:7071";

/** A host that refuses every request as the Functions host does without the right key: 401, no body. */
function refusingIo() {
  const io = {
    err: "",
    out: "",
    fetch: (async () => new Response(null, { status: 401 })) as typeof fetch,
  };
  return {
    io,
    ports: {
      fetch: io.fetch,
      out: (text: string) => {
        io.out += text;
      },
      err: (text: string) => {
        io.err += text;
      },
    },
  };
}

const MISSING = `401 unauthorized\n${URL} wants a key: give --key <function key> (the Functions app; sas host prints its key) or --token <API token> (sas start --api-token)\n`;
const REFUSED = `401 unauthorized\n${URL} refused the --key given: check it against what the host printed when it started\n`;

describe("F27-4: every command that calls the host names a missing or refused key", () => {
  it.each([
    [
      "sas orders list",
      (ports: Parameters<typeof ordersCommand>[1], key: string[]) =>
        ordersCommand(["list", "--url", URL, ...key], ports),
    ],
    [
      "sas stats",
      (ports: Parameters<typeof ordersCommand>[1], key: string[]) =>
        ordersCommand(["stats", "--url", URL, ...key], ports),
    ],
    [
      "sas partner status",
      (ports: Parameters<typeof ordersCommand>[1], key: string[]) =>
        partnerControlsCommand("status", ["--url", URL, ...key], ports),
    ],
    [
      "sas partner faults",
      (ports: Parameters<typeof ordersCommand>[1], key: string[]) =>
        partnerControlsCommand("faults", ["--url", URL, "--transient", "0.1", ...key], ports),
    ],
  ])("%s", async (_, run) => {
    const missing = refusingIo();
    expect(await run(missing.ports, [])).toBe(1);
    expect(missing.io.err).toBe(MISSING);
    const refused = refusingIo();
    expect(await run(refused.ports, ["--key", "not-the-key"])).toBe(1);
    expect(refused.io.err).toBe(REFUSED);
  });
});
