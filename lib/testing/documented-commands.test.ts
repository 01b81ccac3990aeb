import { describe, expect, it } from "vitest";
import {
  commandsIn,
  documentedCommands,
  namedDatabase,
  npmScriptOf,
  scriptFileOf,
} from "@/lib/testing/documented-commands";

const page = [
  "# A page",
  "",
  "Install with `npm ci`, then read `DATABASE_URL` (a variable, not a command).",
  "",
  "```sh",
  "createdb -h 127.0.0.1 -U postgres shop   # once; it needs a server",
  "npm run build && DATABASE_URL=postgresql://postgres@127.0.0.1:5432/shop \\",
  "  CLUSTER_SIZE=2 npm run cluster",
  "```",
  "",
  "- a list item:",
  "  ```text",
  "  npm start   (output, not a command: `quoted`)",
  "  ```",
  "",
  "Or run `npm run build && DATABASE_URL=… npm run",
  "bench` with your own server, and `KEY=$(node -e 'a; b') npm test`.",
].join("\n");

describe("the commands a Markdown page shows", () => {
  it("reads shell blocks (comments dropped, continued lines joined, && split) and inline spans that start like a command", () => {
    const found = commandsIn(page, "page.md");

    expect(found.map(({ source, text }) => [source, text])).toEqual([
      ["page.md:3", "npm ci"],
      ["page.md:6", "createdb -h 127.0.0.1 -U postgres shop"],
      ["page.md:7", "npm run build"],
      [
        "page.md:7",
        "DATABASE_URL=postgresql://postgres@127.0.0.1:5432/shop    CLUSTER_SIZE=2 npm run cluster",
      ],
      ["page.md:16", "npm run build"],
      ["page.md:16", "DATABASE_URL=… npm run bench"],
      ["page.md:17", "KEY=$(node -e 'a; b') npm test"],
    ]);
    const cluster = found[3]!;
    expect(cluster.env).toEqual({
      DATABASE_URL: "postgresql://postgres@127.0.0.1:5432/shop",
      CLUSTER_SIZE: "2",
    });
    expect(cluster.words).toEqual(["npm", "run", "cluster"]);
  });

  it("says which database a command names, and none for a URL left to the reader", () => {
    const [, , , cluster, , elided] = commandsIn(page, "page.md");

    expect(namedDatabase(cluster!)).toEqual({
      url: "postgresql://postgres@127.0.0.1:5432/shop",
      database: "shop",
    });
    expect(namedDatabase(elided!)).toBeUndefined();
    expect(npmScriptOf(cluster!)).toBe("cluster");
    expect(npmScriptOf(elided!)).toBe("bench");
  });

  it("finds README's PostgreSQL start command where the README shows it, and the script npm runs for it", () => {
    const readmeStart = documentedCommands().find(
      (command) =>
        command.source.startsWith("README.md:") &&
        npmScriptOf(command) === "start" &&
        namedDatabase(command),
    );

    expect(readmeStart?.text).toMatch(/^DATABASE_URL=postgresql:\/\/\S+ npm start$/);
    expect(scriptFileOf("start")).toBe("scripts/launch.mts");
    expect(scriptFileOf("cluster")).toBe("scripts/cluster.mts");
    expect(() => scriptFileOf("no-such-script")).toThrow(
      'package.json has no script "no-such-script"',
    );
  });
});
