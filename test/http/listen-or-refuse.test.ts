import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  isAddressInUse,
  listenOrRefuse,
  PortInUseError,
  startOrRefuse,
} from "../../src/adapters/web/listen-or-refuse.js";
import { PortInUseError as StorefrontPortInUseError } from "../../storefront/storefront.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    if (server.listening) await new Promise((resolve) => server.close(resolve));
  }
});

/** A port held by a server of the test's own, as another program would hold it. */
async function heldPort(): Promise<number> {
  const holder = createServer();
  servers.push(holder);
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
  return (holder.address() as { port: number }).port;
}

function rawListen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

describe("listenOrRefuse", () => {
  it("listens on a free port", async () => {
    const server = createServer();
    servers.push(server);
    await listenOrRefuse(server, { port: 0, host: "127.0.0.1" });
    expect(server.listening).toBe(true);
  });

  it("refuses a taken port with a PortInUseError naming the port, the address and the way out", async () => {
    const port = await heldPort();
    const server = createServer();
    const refusal = await listenOrRefuse(server, {
      port,
      host: "127.0.0.1",
      remedy: "choose another with --port",
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    expect(refusal).toMatchObject({ name: "PortInUseError", port, host: "127.0.0.1" });
    expect((refusal as Error).message).toBe(
      `port ${port} on 127.0.0.1 is already in use: stop what holds it, or choose another with --port`,
    );
    expect(server.listening).toBe(false);
  });

  it("names what the port is for when told", async () => {
    const port = await heldPort();
    const refusal = await listenOrRefuse(createServer(), {
      port,
      host: "127.0.0.1",
      subject: "the Partner stand-in's port",
      remedy: "point PARTNER_URL at another port",
    }).catch((error: unknown) => error);
    expect(String(refusal)).toContain(
      `the Partner stand-in's port ${port} on 127.0.0.1 is already in use: stop what holds it, or point PARTNER_URL at another port`,
    );
  });
});

describe("startOrRefuse", () => {
  it("turns a service's own EADDRINUSE into a PortInUseError naming the place", async () => {
    const port = await heldPort();
    const refusal = await startOrRefuse(() => rawListen(createServer(), port), {
      port,
      host: "127.0.0.1",
      remedy: "choose another with --store-port",
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    expect(String(refusal)).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(String(refusal)).toContain("choose another with --store-port");
  });

  it("recognises the storefront's own PortInUseError by its name, and gives it this place's way out", async () => {
    const refusal = await startOrRefuse(() => Promise.reject(new StorefrontPortInUseError(7080, "::1")), {
      port: 7080,
      host: "::1",
      remedy: "choose another with --store-port (or --no-store)",
    }).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(PortInUseError);
    expect((refusal as Error).message).toBe(
      "port 7080 on ::1 is already in use: stop what holds it, or choose another with --store-port (or --no-store)",
    );
  });

  it("passes every other failure on as it is, and a started service back", async () => {
    const other = new Error("listen EACCES: permission denied 127.0.0.1:80");
    await expect(startOrRefuse(() => Promise.reject(other), { port: 80, host: "127.0.0.1" })).rejects.toBe(
      other,
    );
    await expect(startOrRefuse(async () => "started", { port: 1, host: "127.0.0.1" })).resolves.toBe(
      "started",
    );
  });
});

describe("isAddressInUse", () => {
  it("knows EADDRINUSE by its code or, from a child process, by its text", () => {
    expect(isAddressInUse(Object.assign(new Error("listen"), { code: "EADDRINUSE" }))).toBe(true);
    expect(
      isAddressInUse(
        new Error("Azurite exited early (1)\nstderr: listen EADDRINUSE: address already in use"),
      ),
    ).toBe(true);
    expect(isAddressInUse(new StorefrontPortInUseError(1, "127.0.0.1"))).toBe(true);
    expect(isAddressInUse(new Error("ECONNREFUSED"))).toBe(false);
    expect(isAddressInUse("EADDRINUSE")).toBe(false);
  });
});
