import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fieldRows, typeInWords, type JsonSchema } from "@/lib/pages/schema-fields";

const jsonSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: "input" }) as JsonSchema;

describe("a JSON Schema in words", () => {
  it.each([
    [`z.uuid()`, z.uuid(), "string (uuid)"],
    [`z.string().min(1).max(255)`, z.string().min(1).max(255), "string, 1 to 255 characters"],
    [`z.string().max(64)`, z.string().max(64), "string, at most 64 characters"],
    [`z.number().int()`, z.number().int(), "integer"],
    [`z.number().int().min(1)`, z.number().int().min(1), "integer, at least 1"],
    [`z.enum(["paid", "failed"])`, z.enum(["paid", "failed"]), '"paid" or "failed"'],
    [`z.literal("order")`, z.literal("order"), '"order"'],
    [`z.string().nullable()`, z.string().nullable(), "string or null"],
    [
      `z.array(z.boolean()).max(3)`,
      z.array(z.boolean()).max(3),
      "array of boolean, at most 3 items",
    ],
    [`z.iso.datetime()`, z.iso.datetime(), "string (date-time)"],
  ])("%s reads as %s", (_name, schema, words) => {
    expect(typeInWords(jsonSchema(schema))).toBe(words);
  });

  it("names a reference by its component", () => {
    expect(typeInWords({ $ref: "#/components/schemas/Order" })).toBe("Order");
  });
});

describe("the fields of an object schema", () => {
  const schema = jsonSchema(
    z.object({
      id: z.string().describe("The id."),
      lines: z.array(
        z.object({ sku: z.string(), deep: z.object({ deeper: z.object({ x: z.string() }) }) }),
      ),
      note: z.string().optional(),
      owner: z.object({ name: z.string() }).nullable(),
      tries: z.number().int().default(3),
    }),
  );

  it("lists nested fields after their parent, array items as [], and stops three levels down", () => {
    expect(fieldRows(schema).map((row) => row.path)).toEqual([
      "id",
      "lines",
      "lines[].sku",
      "lines[].deep",
      "lines[].deep.deeper",
      "note",
      "owner",
      "owner.name",
      "tries",
    ]);
  });

  it("says which are required, their types, and their descriptions and defaults", () => {
    const rows = Object.fromEntries(fieldRows(schema).map((row) => [row.path, row]));
    expect(rows.id).toEqual({ path: "id", type: "string", required: true, description: "The id." });
    expect(rows.note!.required).toBe(false);
    expect(rows.lines!.type).toBe("array of objects");
    expect(rows["lines[].deep.deeper"]!.type).toBe("object");
    expect(rows.owner!.type).toBe("object or null");
    expect(rows.tries!.description).toBe("Default: 3.");
  });
});

describe("the fields of an object of several kinds (a discriminated union)", () => {
  const schema = z.toJSONSchema(
    z.discriminatedUnion("kind", [
      z.object({
        object: z.literal("thing"),
        kind: z.literal("a").describe("An a."),
        id: z.string(),
        point: z.enum(["start", "a_done"]),
        made: z.object({ order: z.string() }),
      }),
      z.object({
        object: z.literal("thing"),
        kind: z.literal("b").describe("A b."),
        id: z.string(),
        point: z.enum(["start", "b_done"]),
        refund: z.object({ amount: z.number().int() }).nullable(),
      }),
    ]),
    { io: "output" },
  ) as JsonSchema;

  it("lists a field both kinds share once, the discriminator once with each value, and each kind's own marked with it", () => {
    expect(
      fieldRows(schema).map(({ path, type, variant }) => [path, type, variant ?? null]),
    ).toEqual([
      ["object", '"thing"', null],
      ["kind", '"a" or "b"', null],
      ["id", "string", null],
      ["point", '"start" or "a_done"', 'kind is "a"'],
      ["point", '"start" or "b_done"', 'kind is "b"'],
      ["made", "object", 'kind is "a"'],
      ["made.order", "string", 'kind is "a"'],
      ["refund", "object or null", 'kind is "b"'],
      ["refund.amount", "integer", 'kind is "b"'],
    ]);
    expect(fieldRows(schema).find((row) => row.path === "kind")!.description).toBe(
      '"a": An a. "b": A b.',
    );
    expect(typeInWords(schema)).toBe("object or object");
  });
});
