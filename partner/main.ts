/**
 * The simulated partner on its own, as App Service runs it in Azure: settings from the environment
 * (settings.ts), its books in an append-blob journal (or a SQLite file on a laptop), every request but
 * `GET /health` behind its access key, JSON log lines on stdout. Stops cleanly on SIGINT and SIGTERM.
 * See docs/partner.md.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { SystemClock } from "../src/adapters/clock/system-clock.js";
import { JsonLogger } from "../src/adapters/logging/json-logger.js";
import { PortInUseError } from "../src/adapters/web/listen-or-refuse.js";
import type { Logger } from "../src/ports/logger.js";
import type { Ledger } from "./ledger.js";
import { ledgerContainer, openBlobLedger } from "./ledger-blob.js";
import { openLedgerFile } from "./ledger-file.js";
import { type PartnerService, startPartnerService } from "./partner-service.js";
import {
  loadPartnerSettings,
  type PartnerBooks,
  type PartnerSettings,
  PartnerSettingsError,
} from "./settings.js";

export interface StandalonePartnerOptions {
  /** Where log lines go (default: JSON lines on stdout). */
  readonly logger?: Logger;
}

/** The running partner; closing it stops the service, then writes what is buffered and closes the books. */
export interface StandalonePartner {
  readonly url: string;
  readonly service: PartnerService;
  close(): Promise<void>;
}

interface OpenBooks {
  readonly ledger: Ledger;
  readonly restoredEvents: number;
  close(): Promise<void>;
}

export async function startStandalonePartner(
  settings: PartnerSettings,
  options: StandalonePartnerOptions = {},
): Promise<StandalonePartner> {
  const logger = options.logger ?? JsonLogger.toStream(process.stdout);
  const books = await openBooks(settings.books, logger);
  logger.info("partner.books", { kind: settings.books.kind, restoredEvents: books.restoredEvents });
  let service: PartnerService;
  try {
    service = await startPartnerService({
      host: settings.host,
      port: settings.port,
      portRemedy: "set PORT to another",
      accessKey: settings.accessKey,
      faults: settings.faults,
      seed: settings.seed,
      slowMs: settings.slowMs,
      ledger: books.ledger,
      clock: new SystemClock(),
      logger,
    });
  } catch (error) {
    await books.close().catch(() => {});
    throw error;
  }
  return {
    url: service.url,
    service,
    close: async () => {
      await service.close();
      await books.close();
    },
  };
}

async function openBooks(books: PartnerBooks, logger: Logger): Promise<OpenBooks> {
  if (books.kind === "file") {
    const file = openLedgerFile(books.path);
    return { ledger: file.ledger, restoredEvents: file.restoredEvents, close: async () => file.close() };
  }
  return openBlobLedger(ledgerContainer(books), { logger });
}

/** Runs until SIGINT or SIGTERM; the exit code: 0 after a clean stop, 2 for bad settings or a taken port. */
export async function main(env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let partner: StandalonePartner;
  try {
    partner = await startStandalonePartner(loadPartnerSettings(env));
  } catch (error) {
    if (error instanceof PartnerSettingsError || error instanceof PortInUseError) {
      console.error(`partner: ${error.message}`);
      return 2;
    }
    throw error;
  }
  await new Promise<void>((done) => {
    process.once("SIGINT", done);
    process.once("SIGTERM", done);
  });
  await partner.close();
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error("partner: failed to start:", error);
      process.exit(1);
    },
  );
}
