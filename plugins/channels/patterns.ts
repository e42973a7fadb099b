import { TrellisError } from "../../kernel/index.js";
import type { ChannelDefinition, ChannelDefinitions } from "./options.js";

const invalid = (message: string) => new TrellisError("CHANNELS_INVALID", `.channels(): ${message}`, { plugin: "channels" });

/** A channel name: letters, digits and `:_-.@` only, at most 200 characters. */
const NAME = /^[A-Za-z0-9:_\-.@]{1,200}$/;
const PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export interface ChannelPattern {
  pattern: string;
  definition: ChannelDefinition;
  regex: RegExp;
  names: string[];
}

export interface MatchedChannel {
  pattern: ChannelPattern;
  params: Record<string, string>;
}

/** Compiles every pattern: `{name}` matches one or more characters other than `:`. */
export function compilePatterns(definitions: ChannelDefinitions): ChannelPattern[] {
  return Object.entries(definitions).map(([pattern, definition]) => {
    const names: string[] = [];
    const literal = pattern.split(PARAM);
    let source = "";
    literal.forEach((part, index) => {
      if (index % 2 === 1) {
        names.push(part);
        source += "([^:]+)";
      } else {
        if (part && !NAME.test(part)) throw invalid(`the pattern "${pattern}" may only hold letters, digits, ":_-.@" and {parameters}`);
        source += part.replace(/[.]/g, "\\.");
      }
    });
    if (!definition || typeof definition.events !== "object") throw invalid(`the channel "${pattern}" needs events: { name: zodSchema }`);
    return { pattern, definition, regex: new RegExp(`^${source}$`), names };
  });
}

/** The pattern a channel name falls under, with its parameters; undefined when none does or the name is malformed. */
export function matchChannel(patterns: readonly ChannelPattern[], name: unknown): MatchedChannel | undefined {
  if (typeof name !== "string" || !NAME.test(name)) return undefined;
  for (const pattern of patterns) {
    const match = pattern.regex.exec(name);
    if (!match) continue;
    const params: Record<string, string> = {};
    pattern.names.forEach((param, index) => (params[param] = match[index + 1]!));
    return { pattern, params };
  }
  return undefined;
}
