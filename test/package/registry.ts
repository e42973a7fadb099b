import { execFile, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "../support/browser.js";

const run = promisify(execFile);

export interface LocalRegistry {
  url: string;
  /** The version `trellis` and `create-trellis` were published at (unique per run). */
  version: string;
  /** npm's settings for a command that uses the registry: its address and the publishing token. */
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/**
 * Where the registry keeps what it proxied, from one run to the next, as npm keeps its own cache in
 * ~/.npm: the first run on a machine fetches every package's metadata from upstream (minutes, and
 * some of the auth library's optional peers have 50 MB packuments); later runs read it from disk.
 */
const proxyCache = process.env.TRELLIS_REGISTRY_CACHE || join(homedir(), ".cache", "trellis-test-registry");

/**
 * The same port from one run to the next where it is free: npm keys the metadata it caches by
 * address, so with `prefer-offline` a later run reads every other package's metadata from npm's own
 * cache without asking the registry at all (an answer from verdaccio's disk still takes 0.3 to 12 s
 * a package, 533 of them). Another run holding it gets a free port and pays for the asking.
 */
async function registryPort(): Promise<number> {
  const preferred = 48_730;
  const probe = createServer();
  const free = await new Promise<boolean>((resolve) => {
    probe.once("error", () => resolve(false));
    probe.listen(preferred, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
  return free ? preferred : freePort();
}

/**
 * A verdaccio on a loopback port: `trellis` and `create-trellis` are published to it, every other
 * package is proxied from the registry npm is configured with and kept in the proxy cache (its
 * metadata trusted for a day). What an earlier run published is removed first: this run's are the
 * only versions of the two packages it serves.
 */
async function startVerdaccio(root: string, dir: string): Promise<{ url: string; child: ChildProcess }> {
  const upstream = (await run("npm", ["config", "get", "registry"])).stdout.trim() || "https://registry.npmjs.org/";
  const storage = join(proxyCache, "storage");
  for (const name of ["trellis", "create-trellis"]) await rm(join(storage, name), { recursive: true, force: true });
  await mkdir(storage, { recursive: true });
  const config = [
    `storage: ${storage}`,
    `auth: { htpasswd: { file: ${join(dir, "htpasswd")} } }`,
    `uplinks: { upstream: { url: "${upstream}", timeout: 60s, maxage: 1d } }`,
    "packages:",
    "  'trellis': { access: $all, publish: $authenticated }",
    "  'create-trellis': { access: $all, publish: $authenticated }",
    "  '**': { access: $all, proxy: upstream }",
    "log: { type: stdout, format: json, level: error }",
  ].join("\n");
  await writeFile(join(dir, "config.yaml"), config);
  const port = await registryPort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [join(root, "node_modules/verdaccio/bin/verdaccio"), "--config", join(dir, "config.yaml"), "--listen", `127.0.0.1:${port}`], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited with ${child.exitCode}:\n${output}`);
    const ping = await fetch(`${url}/-/ping`).catch(() => undefined);
    if (ping?.ok) break;
    if (attempt > 240) throw new Error(`verdaccio did not answer within a minute:\n${output}`);
    await new Promise((wait) => setTimeout(wait, 250));
  }
  return { url, child };
}

/**
 * Starts the registry and publishes the packed `trellis` and `create-trellis` at a version of this
 * run's own (`<version>-ci.<random>`): npm keeps what `npm exec` installed in its cache by package
 * name, so a second run publishing the same version would run the first run's build.
 */
export async function publishToLocalRegistry(root: string, dir: string, tarball: string): Promise<LocalRegistry> {
  const { url, child } = await startVerdaccio(root, dir);
  try {
    const user = await fetch(`${url}/-/user/org.couchdb.user:ci`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", password: randomBytes(12).toString("hex") }),
    });
    const { token } = (await user.json()) as { token: string };
    const userconfig = join(dir, "npmrc");
    await writeFile(userconfig, `registry=${url}/\n//127.0.0.1:${new URL(url).port}/:_authToken=${token}\n`);
    // prefer-offline: a package's metadata fetched once through the registry serves every later install.
    // A request the registry never finishes (its upstream stalled mid-answer: seen with the 50 MB
    // packuments of the auth library's optional peers) is given up after a minute and retried,
    // rather than waited on for the whole test.
    const patience = { npm_config_fetch_timeout: "60000", npm_config_fetch_retries: "4", npm_config_fetch_retry_mintimeout: "2000" };
    const env = { ...process.env, npm_config_registry: `${url}/`, npm_config_userconfig: userconfig, npm_config_prefer_offline: "true", npm_config_update_notifier: "false", CI: "", NO_COLOR: "1", ...patience };

    const base = (JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { version: string }).version;
    const version = `${base}-ci.${randomBytes(4).toString("hex")}`;
    const trellis = join(dir, "publish", "trellis");
    await mkdir(trellis, { recursive: true });
    await run("tar", ["xzf", tarball, "-C", trellis, "--strip-components=1"]);
    const create = join(dir, "publish", "create-trellis");
    await cp(join(root, "presets/create-trellis"), create, { recursive: true });
    for (const [folder, dependency] of [[trellis, false], [create, true]] as const) {
      const manifest = JSON.parse(await readFile(join(folder, "package.json"), "utf8"));
      manifest.version = version;
      if (dependency) manifest.dependencies.trellis = version;
      await writeFile(join(folder, "package.json"), JSON.stringify(manifest, null, 2));
      // The folder holds the packed files as they are: nothing to build (the tarball was built).
      await run("npm", ["publish", "--ignore-scripts", "--tag", "latest", "--no-provenance"], { cwd: folder, env });
    }
    // What npm cached of the two packages in an earlier run on this port lacks this run's version,
    // and npm does not fetch again for a version its cached metadata lacks: forget it (one key a call:
    // npm stops at the first it does not hold).
    for (const name of ["trellis", "create-trellis"]) await run("npm", ["cache", "clean", `make-fetch-happen:request-cache:${url}/${name}`], { env }).catch(() => undefined);
    return {
      url,
      version,
      env,
      close: async () => {
        if (child.exitCode === null) {
          child.kill("SIGTERM");
          await new Promise((resolve) => child.once("exit", resolve));
        }
      },
    };
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}
