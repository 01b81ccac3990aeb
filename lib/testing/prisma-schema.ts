import { readFileSync } from "node:fs";

/**
 * What schema.prisma says about each table, read from the file itself:
 * Prisma's own schema differ needs the native engine, which is not here
 * everywhere. Understands the subset this project's schema uses (scalar and
 * enum fields, `?`, `@map`, `@@map`, `@id`, `@unique`, `@@unique`); relation
 * fields are skipped, since they have no column.
 */
export interface TableShape {
  /** column → nullable */
  columns: Map<string, boolean>;
  /** Each unique column list (the primary key included), columns comma-joined in declared order. */
  uniques: Set<string>;
}

export function readPrismaSchema(path = "prisma/schema.prisma"): Map<string, TableShape> {
  const source = readFileSync(path, "utf8");
  const blocks = [...source.matchAll(/^(model|enum)\s+(\w+)\s*\{([\s\S]*?)^\}/gm)];
  const models = new Set(blocks.filter(([, kind]) => kind === "model").map(([, , name]) => name!));
  const tables = new Map<string, TableShape>();

  for (const [, kind, name, body] of blocks) {
    if (kind !== "model") continue;
    const lines = body!
      .split("\n")
      .map((line) => line.replace(/\/\/.*$/, "").trim())
      .filter(Boolean);
    const columnOf = new Map<string, string>();
    const shape: TableShape = { columns: new Map(), uniques: new Set() };
    const blockUniques: string[][] = [];
    let table = name!;

    for (const line of lines) {
      if (line.startsWith("@@")) {
        const mapped = /^@@map\("([^"]+)"\)/.exec(line);
        if (mapped) table = mapped[1]!;
        const unique = /^@@(?:unique|id)\(\[([^\]]+)\]/.exec(line);
        if (unique) blockUniques.push(unique[1]!.split(",").map((field) => field.trim()));
        continue;
      }
      const field = /^(\w+)\s+(\w+)(\?|\[\])?(.*)$/.exec(line);
      if (!field) continue;
      const [, fieldName, type, modifier, attributes] = field;
      if (models.has(type!) || modifier === "[]") continue; // a relation, no column
      const column = /@map\("([^"]+)"\)/.exec(attributes!)?.[1] ?? fieldName!;
      columnOf.set(fieldName!, column);
      shape.columns.set(column, modifier === "?");
      if (/@(id|unique)\b/.test(attributes!)) shape.uniques.add(column);
    }
    for (const fields of blockUniques)
      shape.uniques.add(fields.map((field) => columnOf.get(field) ?? field).join(","));
    tables.set(table, shape);
  }
  return tables;
}
