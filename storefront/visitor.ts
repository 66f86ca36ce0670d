/**
 * Who is asking, for the per-visitor limits (limits.ts): the client's address. Behind App Service every
 * connection comes from its front end, which names the client in `X-Forwarded-For`; it adds the address
 * it saw last, after anything the client sent itself, so the last entry is the one to believe. Without
 * the header the socket's address is the client. An IPv6 client is counted by its /64, the block one
 * subscriber is given, which it can fill with addresses of its own at will.
 *
 * An address rather than a cookie: a cookie is the client's to send or to drop, and a client that drops
 * it is a new visitor with every request, so it would limit only the visitors who mean no harm.
 */
import type { IncomingMessage } from "node:http";
import { isIP, isIPv4 } from "node:net";

export interface Visitor {
  /** What the per-visitor limits count by: an IPv4 address, or an IPv6 /64 prefix. */
  readonly key: string;
  /**
   * On this machine: the socket's address is loopback and no front end named anyone else (the
   * operator, `npm run smoke`). Only the storefront-wide limits apply to it.
   */
  readonly local: boolean;
}

export function visitorOf(req: IncomingMessage): Visitor {
  const socket = unmapped(req.socket.remoteAddress ?? "");
  const forwarded = lastForwarded(req.headers["x-forwarded-for"]);
  if (forwarded !== undefined) return { key: keyOf(forwarded), local: false };
  return { key: keyOf(socket), local: isLoopback(socket) };
}

/** The last address of `X-Forwarded-For`, without a port; undefined when absent or not an address. */
function lastForwarded(header: string | string[] | undefined): string | undefined {
  const joined = Array.isArray(header) ? header.join(",") : header;
  const last = joined?.split(",").at(-1)?.trim();
  if (!last) return undefined;
  const address = withoutPort(last);
  return isIP(address) === 0 ? undefined : unmapped(address);
}

/** `1.2.3.4:56`, `[2001:db8::1]:56` and `[2001:db8::1]` without the port and brackets. */
function withoutPort(entry: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(entry);
  if (bracketed?.[1]) return bracketed[1];
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(entry);
  return v4WithPort?.[1] ?? entry;
}

/** An IPv4 address written as IPv6 (`::ffff:1.2.3.4`, as a dual-stack socket reports it) as IPv4. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}

function isLoopback(address: string): boolean {
  return address === "::1" || (isIPv4(address) && address.startsWith("127."));
}

function keyOf(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, as lowercase hex without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.toLowerCase().split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":").flatMap(v4AsGroups));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const zeros = Array.from({ length: 8 - left.length - right.length }, () => "0");
  return [...left, ...zeros, ...right].map((group) => Number.parseInt(group, 16).toString(16));
}

/** A trailing dotted IPv4 part of an IPv6 address as its two groups; any other group as it is. */
function v4AsGroups(group: string): string[] {
  if (!isIPv4(group)) return [group];
  const [a = 0, b = 0, c = 0, d = 0] = group.split(".").map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
