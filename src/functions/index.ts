/**
 * The Azure Functions app's entry point (package.json `main`). Settings are validated when the host
 * loads the app, so a missing or malformed setting stops start-up with a message naming it; clients
 * are built on the first invocation.
 */
import { loadAzureSettings } from "../config/azure-settings.js";
import { registerFunctions } from "./app.js";
import { createAzureServices } from "./azure-services-factory.js";
import { type AzureHandlers, createAzureHandlers } from "./handlers.js";

const settings = loadAzureSettings(process.env);
let handlers: AzureHandlers | undefined;

registerFunctions(() => {
  handlers ??= createAzureHandlers(createAzureServices(settings));
  return handlers;
});
