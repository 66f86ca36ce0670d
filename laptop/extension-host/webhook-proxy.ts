import { type IncomingMessage, request, type ServerResponse } from "node:http";

/** Where the Functions host serves the extension's API, and where its management links point. */
const WEBHOOKS_ROOT = "/runtime/webhooks/durabletask/";

/**
 * Serves the extension's webhooks (`/runtime/webhooks/durabletask/...`, which the management links
 * name) from its local HTTP endpoint, the same API under `rpcBaseUrl`: the host in front has checked
 * the request's key, as the Functions host does before handing it to the extension.
 */
export function webhookProxy(rpcBaseUrl: string): (req: IncomingMessage, res: ServerResponse) => void {
  const target = new URL(rpcBaseUrl);
  return (req, res) => {
    const url = req.url ?? "/";
    const rest = url.startsWith(WEBHOOKS_ROOT) ? url.slice(WEBHOOKS_ROOT.length) : "";
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `${target.pathname}${rest}`,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(`the extension's endpoint did not answer: ${error.message}`);
    });
    req.pipe(forwarded);
  };
}
