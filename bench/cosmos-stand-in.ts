// The in-memory Cosmos DB stand-in of the tests, in a process of its own for `npm run bench:supervisor`:
// a million records need a larger heap than the bench's, and the stand-in then works on the second core.
import type { AddressInfo } from "node:net";
import { createHttpsServer } from "@vercel/cosmosdb-server";

const server = createHttpsServer({ keepAlive: true });
server.listen(0, "127.0.0.1", () => {
  process.send?.({ port: (server.address() as AddressInfo).port });
});
// The bench ends this process by disconnecting, or by exiting.
process.on("disconnect", () => process.exit(0));
