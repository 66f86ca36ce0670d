/**
 * `npm run build:extension-host`: builds the extension host now (sas host builds it on first use),
 * into .build/extension-host/<hash of its sources>; a build of the same sources is reused.
 */
import { buildExtensionHost } from "./extension-build.js";

const build = await buildExtensionHost((line) => process.stdout.write(`${line}\n`));
process.stdout.write(`${build.built ? "built" : "up to date"}: ${build.dll}\n`);
