import { builtinModules } from "node:module";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The package is installed on its own, so it may import only itself, Node's
 * built-in modules and the packages its package.json names. Every import of
 * every file is resolved here (the shop's ESLint rule says the same at the
 * editor; this holds even where that config is not in force).
 */
const PACKAGE_ROOT = path.resolve(import.meta.dirname, "..");
const OWN_FOLDERS = ["src", "test", "scripts", "fixture", "conformance"];
const GENERATED = path.join(PACKAGE_ROOT, "test", "prisma", "generated");

async function sourceFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && /\.(ts|mts|mjs|js)$/.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.startsWith(GENERATED));
}

function importsOf(source: string): string[] {
  const specifiers = [
    // An import or export statement, over as many lines as it takes (not a comment's "from").
    ...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+["']([^"']+)["']/gm),
    ...source.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ...source.matchAll(/^\s*import\s+["']([^"']+)["']/gm),
  ];
  return specifiers.map((match) => match[1]!);
}

/** The package name of a bare specifier: "@scope/name/sub" is "@scope/name". */
function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

describe("the package's imports", async () => {
  const manifest = JSON.parse(await readFile(path.join(PACKAGE_ROOT, "package.json"), "utf8"));
  const declared = new Set(
    ["dependencies", "peerDependencies", "devDependencies"].flatMap((field) =>
      Object.keys(manifest[field] ?? {}),
    ),
  );
  const runtime = new Set([
    ...Object.keys(manifest.dependencies),
    ...Object.keys(manifest.peerDependencies),
  ]);
  const files = (
    await Promise.all(OWN_FOLDERS.map((folder) => sourceFiles(path.join(PACKAGE_ROOT, folder))))
  ).flat();

  it("reads a fair number of files, so an empty walk cannot pass", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  it("stay inside the package, or name Node's modules and the packages package.json declares", async () => {
    const strays: string[] = [];
    for (const file of files) {
      for (const specifier of importsOf(await readFile(file, "utf8"))) {
        const where = `${path.relative(PACKAGE_ROOT, file)} imports ${specifier}`;
        if (specifier.startsWith(".")) {
          const target = path.resolve(path.dirname(file), specifier);
          if (!target.startsWith(PACKAGE_ROOT + path.sep)) strays.push(where);
        } else if (specifier.startsWith("node:") || builtinModules.includes(specifier)) {
          continue;
        } else if (!declared.has(packageNameOf(specifier))) {
          strays.push(where);
        }
      }
    }
    expect(strays).toEqual([]);
  });

  it("of the shipped code (src) need only its dependencies and peers", async () => {
    const strays: string[] = [];
    for (const file of files.filter((file) => file.includes(`${path.sep}src${path.sep}`))) {
      for (const specifier of importsOf(await readFile(file, "utf8"))) {
        if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
        if (!runtime.has(packageNameOf(specifier)))
          strays.push(`${path.relative(PACKAGE_ROOT, file)} imports ${specifier}`);
      }
    }
    expect(strays).toEqual([]);
  });
});
