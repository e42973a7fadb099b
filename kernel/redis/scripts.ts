import type { Redis } from "ioredis";

/**
 * Counts a hit of ARGV[2] (1 for one request) in a fixed window, atomically and in one round trip: the first hit of a window
 * sets its expiry, later hits never extend it. Returns the count and the window's remaining ms.
 * (A key left without expiry, by a crash between two commands of an older client, gets one.)
 */
const HIT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
if count == tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return { count, ttl }
`;

const COMMAND = "trellisWindowHit";

type WithHit = Redis & { [COMMAND](key: string, windowMs: number, cost: number): Promise<[number, number]> };

/**
 * The window counter as a script command on the client (sent with EVALSHA, loaded once).
 * Defined on the client the first time it is asked for, shared by every store on that client.
 */
export function windowHit(client: Redis): (key: string, windowMs: number, cost?: number) => Promise<[number, number]> {
  if (!(COMMAND in client)) client.defineCommand(COMMAND, { numberOfKeys: 1, lua: HIT });
  return (key, windowMs, cost = 1) => (client as WithHit)[COMMAND](key, windowMs, cost);
}
