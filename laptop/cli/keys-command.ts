import { parseArgs } from "node:util";
import { type Command, showUsage } from "./command.js";
import { HELP } from "./flags.js";
import { UsageError } from "./usage-error.js";

const USAGE = `usage: sas keys new | sas keys rotate --data <dir>

The data-protection key ring.

  sas keys new                print a new key ring, for DATA_PROTECTION_KEYS
  sas keys rotate --data <dir>
                              put a new key in front of that data folder's key file; the older
                              keys stay, to open what they sealed
`;

export const KEYS: Command = {
  name: "keys",
  summary: [
    'the data-protection key ring: "sas keys new" prints a new one for DATA_PROTECTION_KEYS;',
    '"sas keys rotate --data <dir>" puts a new key in front of that data folder\'s key file',
  ],
  usage: USAGE,
  run: keys,
};

async function keys(args: readonly string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    strict: true,
    allowPositionals: true,
    options: { data: { type: "string" }, ...HELP },
  });
  if (values.help) return showUsage(USAGE);
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`sas keys takes one action; got ${positionals.join(" ")}`);
  if (action === undefined) {
    process.stdout.write(USAGE);
    return 2;
  }
  const { newKeyRingText, rotateKeyFile } = await import("../embedded/key-file.js");
  if (action === "new") {
    process.stdout.write(`${newKeyRingText(new Date())}\n`);
    return 0;
  }
  if (action !== "rotate") throw new UsageError(`unknown keys action ${action}: new or rotate`);
  if (values.data === undefined)
    throw new UsageError("sas keys rotate needs --data <dir>, the folder holding the key file");
  const ids = rotateKeyFile(values.data, new Date());
  process.stdout.write(
    `key ring now ${ids.join(", ")}: new writes sealed under ${ids[0]}, older keys kept to open what they sealed\n`,
  );
  return 0;
}
