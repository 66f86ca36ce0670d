/**
 * The simulated partner on its own, as App Service runs it in Azure: settings from the environment
 * (settings.ts), its books in an append-blob journal (or a SQLite file on a laptop), every request but
 * `GET /health` behind its access key, JSON log lines on stdout. Stops cleanly on SIGINT and SIGTERM, and
 * stops with exit status 3 once its books can take no more changes (their journal failed for good), so
 * that App Service starts it again and the new process reads the books afresh. See docs/partner.md.
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
  /** Resolves, with the reason, if the books fail for good; until then `/health` answers 200. */
  readonly failed: Promise<Error>;
  close(): Promise<void>;
}

interface OpenBooks {
  readonly ledger: Ledger;
  readonly restoredEvents: number;
  /** How the books were read: from which snapshot, and how many events were replayed after it. */
  readonly read?: { readonly snapshot: string | null; readonly replayedEvents: number };
  close(): Promise<void>;
}

/** Exit status of a partner whose books failed for good (a conflict in their journal). */
export const BOOKS_FAILED_EXIT_CODE = 3;

export async function startStandalonePartner(
  settings: PartnerSettings,
  options: StandalonePartnerOptions = {},
): Promise<StandalonePartner> {
  const logger = options.logger ?? JsonLogger.toStream(process.stdout);
  let booksFailed: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    booksFailed = resolve;
  });
  const books = await openBooks(settings.books, logger, (error) => booksFailed(error));
  logger.info("partner.books", {
    kind: settings.books.kind,
    restoredEvents: books.restoredEvents,
    ...books.read,
  });
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
    failed,
    close: async () => {
      await service.close();
      await books.close();
    },
  };
}

async function openBooks(
  books: PartnerBooks,
  logger: Logger,
  onFailure: (error: Error) => void,
): Promise<OpenBooks> {
  if (books.kind === "file") {
    const file = openLedgerFile(books.path);
    return { ledger: file.ledger, restoredEvents: file.restoredEvents, close: async () => file.close() };
  }
  const blob = await openBlobLedger(ledgerContainer(books), { logger, onFailure });
  return {
    ledger: blob.ledger,
    restoredEvents: blob.restoredEvents,
    read: { snapshot: blob.snapshot, replayedEvents: blob.replayedEvents },
    close: () => blob.close(),
  };
}

/**
 * Runs until SIGINT or SIGTERM, or until its books fail for good; the exit code: 0 after a clean stop, 2 for
 * bad settings or a taken port, 3 when the books failed.
 */
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
  const signalled = new Promise<undefined>((done) => {
    process.once("SIGINT", () => done(undefined));
    process.once("SIGTERM", () => done(undefined));
  });
  const failure = await Promise.race([signalled, partner.failed]);
  if (failure === undefined) {
    await partner.close();
    return 0;
  }
  console.error(`partner: stopping, its books take no more changes: ${failure.message}`);
  // What is buffered cannot be written any more: closing the books reports that again, and nothing else.
  await partner.close().catch(() => {});
  return BOOKS_FAILED_EXIT_CODE;
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
