// A real S3-compatible server for tests: @20minutes/s3rver on a free loopback port, its data in a
// temporary folder, the bucket created at start. Tests skip with a printed reason when it cannot start.
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppStorage } from "../../kernel/index.js";
import { fromObjectStore } from "../../kernel/storage/index.js";

interface S3rverInstance {
  run(): Promise<{ port: number; address: string }>;
  close(): Promise<void>;
  httpServer?: import("node:http").Server;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;

export interface ObjectStore {
  storage: AppStorage;
  bucket: string;
  endpoint: string;
  /** Stops the server (its data stays), as an outage would. */
  stop(): Promise<void>;
  /** Starts it again on the same port, with the same data. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startObjectStore(bucket = "trellis-test"): Promise<ObjectStore | { skipped: string }> {
  let S3rver: S3rverClass;
  let sdk: typeof import("@aws-sdk/client-s3");
  try {
    S3rver = createRequire(import.meta.url)("@20minutes/s3rver") as S3rverClass;
    sdk = await import("@aws-sdk/client-s3");
  } catch (error) {
    return { skipped: `@20minutes/s3rver or @aws-sdk/client-s3 is not installed (${(error as Error).message})` };
  }
  const directory = await mkdtemp(join(tmpdir(), "trellis-s3-"));
  const options = { address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket }] };
  let server: S3rverInstance | undefined = new S3rver({ ...options, port: 0 });
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    return { skipped: `the S3-compatible server could not start: ${(error as Error).message}` };
  }
  const stop = async () => {
    const running = server;
    server = undefined;
    // An outage ends the connections too: `close()` alone would wait for keep-alive sockets the
    // client goes on using.
    const closed = running?.close();
    running?.httpServer?.closeAllConnections();
    await closed;
  };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new sdk.S3Client({
    endpoint,
    // One attempt: a stopped server answers at once, and the app, not the SDK, decides what then.
    maxAttempts: 1,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
  });
  const { GetObjectCommand, PutObjectCommand, DeleteObjectCommand, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, AbortMultipartUploadCommand } = sdk;
  const commands = { GetObjectCommand, PutObjectCommand, DeleteObjectCommand, CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand, AbortMultipartUploadCommand };
  return {
    storage: fromObjectStore(client, commands, bucket),
    bucket,
    endpoint,
    stop,
    start: async () => {
      server ??= new S3rver({ ...options, port });
      await server.run();
    },
    close: async () => {
      client.destroy();
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
