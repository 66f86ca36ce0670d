import { describeRefusal } from "./orders-output.js";

/** What a command gave to be let in: the host's URL, `--key` and `--token`. */
export interface HostCredentials {
  readonly url: string;
  readonly key: string | undefined;
  readonly token: string | undefined;
}

/**
 * The host's refusal as the CLI prints it: the status and the host's reason (the Functions host's 401
 * has no body: "unauthorized" then), and after a 401 whether the key was missing or refused.
 */
export function describeHostRefusal(
  status: number,
  body: Record<string, unknown>,
  given: HostCredentials,
): string {
  const reason = status === 401 && body.error === undefined ? { ...body, error: "unauthorized" } : body;
  const lines = [describeRefusal(status, reason)];
  if (status === 401) lines.push(describeUnauthorized(given));
  return `${lines.join("\n")}\n`;
}

/** After a 401, what was missing or refused: the Functions app wants a key, the embedded host a token. */
export function describeUnauthorized(given: HostCredentials): string {
  const named = [given.key ? "--key" : "", given.token ? "--token" : ""].filter(Boolean);
  if (named.length === 0) {
    return (
      `${given.url} wants a key: give --key <function key> (the Functions app; sas host prints its key) ` +
      "or --token <API token> (sas start --api-token)"
    );
  }
  return `${given.url} refused the ${named.join(" and ")} given: check it against what the host printed when it started`;
}
