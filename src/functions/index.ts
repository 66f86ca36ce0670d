/**
 * The Azure Functions app's entry point (package.json `main`). Settings are validated when the host
 * loads the app, so a missing or malformed setting stops start-up with a message naming it. Services
 * and handlers are built here, once; no client connects before its first use.
 */
import "./telemetry-setup.js";
import { loadAzureSettings } from "../config/azure-settings.js";
import { registerFunctions } from "./app.js";
import { createAzureApp } from "./azure-app.js";
import { createAzureServices } from "./azure-services-factory.js";

registerFunctions(createAzureApp(createAzureServices(loadAzureSettings(process.env))));
