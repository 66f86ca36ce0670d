import type { IncomingMessage, ServerResponse } from "node:http";

/** Where the app serves its dashboard (src/functions/orders-http.ts): a function route, behind a key. */
export const DASHBOARD_PATH = "/api/dashboard";

/**
 * `GET /`, which the Functions host answers with a page of its own: here, the way to the dashboard.
 * With `?code=` it goes straight there with that key (the dashboard checks it); without, a page
 * asks for the function key sas host printed, and opens the dashboard with it.
 */
export function serveLanding(req: IncomingMessage, res: ServerResponse, url: URL): void {
  req.resume();
  const code = url.searchParams.get("code");
  if (code) {
    res.writeHead(302, { Location: `${DASHBOARD_PATH}?code=${encodeURIComponent(code)}` }).end();
    return;
  }
  const page = Buffer.from(LANDING);
  res.writeHead(200, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Length": page.length,
    "Cache-Control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : page);
}

const LANDING = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>sas host · Orders · Scheduler Agent Supervisor</title>
<style>
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { max-width: 36rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5; }
  input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.4rem; }
  button { font: inherit; margin-top: 0.6rem; padding: 0.4rem 1rem; }
</style>
</head>
<body>
<main>
<h1>The orders' dashboard</h1>
<p>The Functions app serves its dashboard at <code>${DASHBOARD_PATH}</code>, behind a function key, as in
Azure. <code>sas host</code> printed the dashboard's address with its key when it started; or give the
key here (it is also in <code>host-keys.json</code> in its data folder).</p>
<form method="get" action="${DASHBOARD_PATH}">
<label for="code">Function key</label>
<input id="code" name="code" type="password" autocomplete="off" required>
<button type="submit">Open the dashboard</button>
</form>
</main>
</body>
</html>
`;
