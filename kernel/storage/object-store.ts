import type { AppStorage } from "../contracts/resources.js";

/** The S3 client's `send`, as `@aws-sdk/client-s3`'s `S3Client` has it. */
export interface ObjectStoreClient {
  send(command: any): Promise<any>;
}

interface ObjectInput {
  Bucket: string;
  Key: string;
}

/**
 * The three command classes of `@aws-sdk/client-s3`, passed in so `trellis` never imports the SDK
 * (an optional peer): `{ GetObjectCommand, PutObjectCommand, DeleteObjectCommand }`.
 */
export interface ObjectStoreCommands {
  GetObjectCommand: new (input: ObjectInput) => unknown;
  PutObjectCommand: new (input: ObjectInput & { Body: Uint8Array; ContentLength: number }) => unknown;
  DeleteObjectCommand: new (input: ObjectInput) => unknown;
}

/**
 * `AppStorage` over an S3-compatible object store: `fromObjectStore(new S3Client(...), { GetObjectCommand,
 * PutObjectCommand, DeleteObjectCommand }, "my-bucket")`. A missing object reads as null.
 */
export function fromObjectStore(client: ObjectStoreClient, commands: ObjectStoreCommands, bucket: string): AppStorage {
  return {
    async get(key) {
      let output: { Body?: { transformToByteArray(): Promise<Uint8Array> } };
      try {
        output = await client.send(new commands.GetObjectCommand({ Bucket: bucket, Key: key }));
      } catch (error) {
        if (isMissing(error)) return null;
        throw error;
      }
      return output.Body ? await output.Body.transformToByteArray() : new Uint8Array(0);
    },
    async set(key, bytes) {
      await client.send(new commands.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength }));
    },
    async delete(key) {
      await client.send(new commands.DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}

function isMissing(error: unknown): boolean {
  const { name, $metadata } = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return name === "NoSuchKey" || name === "NotFound" || $metadata?.httpStatusCode === 404;
}
