import type { Server } from "node:net";

/** Where a server listens, and what the refusal of a taken port tells the user to do instead. */
export interface ListenPlace {
  readonly port: number;
  readonly host: string;
  /** What the port is, as the message names it; default "port". */
  readonly subject?: string;
  /** The way out besides stopping what holds the port; default "choose another port". */
  readonly remedy?: string;
}

/**
 * Something else holds the port a server was to listen on. The `sas` commands report it in one line
 * and exit 2, as a usage error without the usage; they recognise it by its name, which the
 * storefront's own class of the same name shares (it is an application of its own, and cannot import
 * this module).
 */
export class PortInUseError extends Error {
  override readonly name = "PortInUseError";
  readonly port: number;
  readonly host: string;
  constructor(place: ListenPlace) {
    const subject = place.subject ?? "port";
    const remedy = place.remedy ?? "choose another port";
    super(`${subject} ${place.port} on ${place.host} is already in use: stop what holds it, or ${remedy}`);
    this.port = place.port;
    this.host = place.host;
  }
}

/** Listens on `place`; a port something else holds is a PortInUseError naming it and the address. */
export function listenOrRefuse(server: Server, place: ListenPlace): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => reject(isAddressInUse(error) ? new PortInUseError(place) : error);
    server.once("error", fail);
    server.listen(place.port, place.host, () => {
      server.off("error", fail);
      resolve();
    });
  });
}

/**
 * Starts a service that listens by means of its own (a library's server, a child process), turning
 * its failure on a taken port into a PortInUseError naming `place`. The service is expected to have
 * closed whatever it opened before failing.
 */
export async function startOrRefuse<T>(start: () => Promise<T>, place: ListenPlace): Promise<T> {
  try {
    return await start();
  } catch (error) {
    throw isAddressInUse(error) ? new PortInUseError(place) : error;
  }
}

/**
 * A failure to listen on a port something else holds: Node's EADDRINUSE, a PortInUseError of any
 * module (by name), or a child process's failure whose text reports EADDRINUSE.
 */
export function isAddressInUse(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === "PortInUseError") return true;
  return (error as NodeJS.ErrnoException).code === "EADDRINUSE" || /\bEADDRINUSE\b/.test(error.message);
}
