// Child process for lock tests: takes the data-directory lock, says so, then either exits
// normally ("exit") or holds the lock until killed ("hold").
import { lockDataDir } from "../../kernel/embedded/lock.js";

const [dataDir, mode] = process.argv.slice(2);
lockDataDir(dataDir!);
process.stdout.write("locked\n");
if (mode === "exit") process.exit(0);
setInterval(() => {}, 60_000);
