const LOOPBACK = ["127.0.0.1", "::1", "localhost"];

/** An address only this machine reaches; any other exposes what listens on it to others. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.includes(host);
}
