import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

/**
 * The shell commands README.md and docs/*.md show, read from the Markdown
 * itself, so that a test runs what a reader would paste (and a doc change
 * that breaks a command breaks the test). A command is one of a line's
 * `&&`- or `;`-joined commands, in a fenced `sh` block or an inline code
 * span that starts like a command.
 */
export interface DocumentedCommand {
  /** Where it is written: `README.md:39`. */
  source: string;
  /** As written, without a trailing comment. */
  text: string;
  /** Its leading `NAME=value` assignments. */
  env: Record<string, string>;
  /** The words after them: `["npm", "start"]`. */
  words: string[];
}

const SHELL_FENCE = /^```(sh|bash|shell|console)\s*$/;
// An inline span is taken for a command only when it starts like one.
const COMMAND_PROGRAMS = new Set(["npm", "npx", "node", "tsx", "createdb", "psql"]);
const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(.*)$/;

/** README.md and every docs/*.md under `root`, in that order. */
export function documentedCommands(root = process.cwd()): DocumentedCommand[] {
  const docs = readdirSync(path.join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => path.join("docs", name));
  return ["README.md", ...docs].flatMap((file) =>
    commandsIn(readFileSync(path.join(root, file), "utf8"), file),
  );
}

export function commandsIn(markdown: string, file: string): DocumentedCommand[] {
  const found: DocumentedCommand[] = [];
  const lines = markdown.split("\n");
  const prose: { line: number; text: string }[] = [];
  let inFence: "shell" | "other" | undefined;
  let continued: { line: number; text: string } | undefined;

  lines.forEach((text, index) => {
    const line = index + 1;
    // Fences may be indented (inside a list item).
    if (text.trimStart().startsWith("```")) {
      inFence = inFence ? undefined : SHELL_FENCE.test(text.trimStart()) ? "shell" : "other";
      return;
    }
    if (inFence === "other") return;
    if (!inFence) return void prose.push({ line, text });
    // A shell line; one ending in a backslash goes on on the next.
    const joined = continued ? `${continued.text} ${text}` : text;
    const start = continued?.line ?? line;
    if (joined.endsWith("\\")) return void (continued = { line: start, text: joined.slice(0, -1) });
    continued = undefined;
    found.push(...simpleCommands(withoutComment(joined.replace(/^\$ /, "")), `${file}:${start}`));
  });

  // Inline code spans may wrap onto the next line of a paragraph.
  const text = prose.map((entry) => entry.text).join("\n");
  for (const span of text.matchAll(/`([^`]+)`/g)) {
    const line = prose[text.slice(0, span.index).split("\n").length - 1]!.line;
    const commands = simpleCommands(span[1]!.replaceAll("\n", " "), `${file}:${line}`);
    if (commands.length > 0 && COMMAND_PROGRAMS.has(commands[0]!.words[0] ?? ""))
      found.push(...commands);
  }
  return found.sort((a, b) => lineOf(a) - lineOf(b));
}

/**
 * The URL and database name a command's DATABASE_URL gives, when it gives
 * a whole one (`postgresql://…` with the rest left out names none).
 */
export function namedDatabase(
  command: DocumentedCommand,
): { url: string; database: string } | undefined {
  const url = command.env.DATABASE_URL;
  if (!url || url.includes("…") || !/^postgres(ql)?:\/\//.test(url)) return undefined;
  const database = decodeURI(new URL(url).pathname.slice(1));
  return database ? { url, database } : undefined;
}

function simpleCommands(line: string, source: string): DocumentedCommand[] {
  return splitUnquoted(line, /&&|;/)
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((text) => {
      const words = splitUnquoted(text, /\s+/);
      const env: Record<string, string> = {};
      while (words.length > 0 && ASSIGNMENT.test(words[0]!)) {
        const [, name, value] = ASSIGNMENT.exec(words.shift()!)!;
        env[name!] = value!;
      }
      return { source, text, env, words };
    });
}

/** The parts of a line between `&&` and `;`, or between blanks, that are not quoted or inside `$(…)`. */
function splitUnquoted(text: string, separator: RegExp): string[] {
  const sticky = new RegExp(separator.source, "y");
  const parts: string[] = [];
  let quote: string | undefined;
  let depth = 0;
  let current = "";
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (!quote && depth === 0) {
      sticky.lastIndex = index;
      const match = sticky.exec(text);
      if (match) {
        parts.push(current);
        current = "";
        index += match[0].length - 1;
        continue;
      }
    }
    if (quote) {
      if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    current += char;
  }
  return [...parts, current];
}

/** The line less a `#` comment (a `#` at the start or after a space). */
function withoutComment(line: string): string {
  return line.replace(/(^|\s)#.*$/, "").trim();
}

/** The npm script a command runs (`npm start`, `npm run cluster`, `npm test`), if it runs one. */
export function npmScriptOf(command: DocumentedCommand): string | undefined {
  const [program, verb, script] = command.words;
  if (program !== "npm") return undefined;
  if (verb === "start" || verb === "test") return verb;
  return verb === "run" || verb === "run-script" ? script : undefined;
}

/** The TypeScript file an npm script of package.json ends by running (`scripts/cluster.mts`). */
export function scriptFileOf(npmScript: string, root = process.cwd()): string {
  const { scripts } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
    scripts: Record<string, string>;
  };
  const line = scripts[npmScript];
  if (line === undefined) throw new Error(`package.json has no script "${npmScript}"`);
  const file = [...line.matchAll(/\S+\.mts\b/g)].pop()?.[0];
  if (!file) throw new Error(`package.json's "${npmScript}" runs no .mts file: ${line}`);
  return file;
}

function lineOf(command: DocumentedCommand): number {
  return Number(command.source.split(":").pop());
}
