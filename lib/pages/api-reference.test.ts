import { describe, expect, it } from "vitest";
import { problemType } from "@/lib/http/problem-type";
import { openApiDocument } from "@/lib/openapi/document";
import { PATHS } from "@/lib/openapi/operations";
import { apiReferenceView, CHECKOUT_OPERATION_ID } from "@/lib/pages/api-reference";

const policy = { retentionSeconds: 24 * 3600, leaseSeconds: 30, maxWaitSeconds: 10 };
const document = openApiDocument(policy);
const view = apiReferenceView(document);
const operations = view.groups.flatMap((group) => group.operations);

type Paths = Record<string, Record<string, { responses: Record<string, unknown> }>>;

describe("the API reference page's view of the OpenAPI document", () => {
  it("lists every operation of the operation table once, and no 405, HEAD or OPTIONS entry", () => {
    const served = Object.entries(PATHS).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        id: operation.operationId,
        method: method.toUpperCase(),
        path,
        tag: operation.tag,
      })),
    );
    expect(
      operations.map(({ id, method, path, tag }) => ({ id, method, path, tag })).sort(byId),
    ).toEqual(served.sort(byId));
  });

  it("groups operations under the document's tags, in its order, leaving out empty ones", () => {
    const tags = (document.tags as { name: string }[]).map((tag) => tag.name);
    const shown = view.groups.map((group) => group.tag);
    expect(shown).toEqual(tags.filter((tag) => shown.includes(tag)));
    expect(shown).not.toContain("Not served");
    for (const group of view.groups) expect(group.operations.length).toBeGreaterThan(0);
  });

  it("shows every answer the document gives the checkout, with its problem URNs and headers", () => {
    const documented = (document.paths as Paths)["/api/orders"]!.post!.responses;
    expect(view.checkout.id).toBe(CHECKOUT_OPERATION_ID);
    expect(view.checkout.responses.map((row) => String(row.status))).toEqual(
      Object.keys(documented),
    );
    const answer = (status: number) =>
      view.checkout.responses.find((row) => row.status === status)!;
    expect(answer(201)).toMatchObject({
      body: "Order",
      headers: expect.arrayContaining([
        { name: "Location", required: true },
        { name: "Idempotent-Replayed", required: false },
      ]),
    });
    expect(answer(409).problems).toEqual([problemType("request-in-progress")]);
    expect(answer(409).headers).toContainEqual({ name: "Retry-After", required: true });
    expect(answer(400).problems).toEqual(
      expect.arrayContaining([
        problemType("idempotency-key-missing"),
        problemType("idempotency-key-repeated"),
        problemType("malformed-json"),
      ]),
    );
    expect(answer(400).body).toBe("problem");
  });

  it("names, in every checkout rule, only answers the document says the checkout gives", () => {
    expect(view.rules.length).toBeGreaterThan(0);
    for (const rule of view.rules) {
      expect(rule.answers.length, rule.title).toBeGreaterThan(0);
      for (const { status, problem } of rule.answers) {
        const row = view.checkout.responses.find((response) => response.status === status);
        expect(row, `${rule.title}: ${status}`).toBeDefined();
        if (problem) expect(row!.problems, rule.title).toContain(problemType(problem));
      }
    }
  });

  it("states this server's retention and lease, in the rules and the introduction alike", () => {
    const other = { retentionSeconds: 2 * 3600, leaseSeconds: 45, maxWaitSeconds: 10 };
    const otherView = apiReferenceView(openApiDocument(other));
    const rulesText = (rules: typeof view.rules) =>
      rules.map((rule) => `${rule.title} ${rule.text}`).join(" ");
    expect(rulesText(otherView.rules)).toContain("kept for 2 hours");
    expect(rulesText(otherView.rules)).toContain("lease of 45 s");
    expect(otherView.description).toContain("for 2 hours after its first request");
    expect(rulesText(view.rules)).toContain("kept for 24 hours");
    expect(rulesText(view.rules)).toContain("lease of 30 s");
  });

  it("shows the Idempotency-Key header as a required parameter of the checkout", () => {
    const key = view.checkout.parameters.find((parameter) => parameter.name === "Idempotency-Key");
    expect(key).toMatchObject({ in: "header", required: true });
    expect(key!.description).toContain("24 hours");
    expect(view.checkout.requestBody).toBe("CheckoutRequest");
  });

  it("lists the checkout's body fields as zod reads them: nested items, bounds, the default", () => {
    const checkoutRequest = view.schemas.find((schema) => schema.name === "CheckoutRequest")!;
    expect(checkoutRequest.fields.map(({ path, required }) => [path, required])).toEqual([
      ["cartId", true],
      ["items", true],
      ["items[].sku", true],
      ["items[].quantity", true],
      ["paymentMethod", false],
    ]);
    const field = (path: string) => checkoutRequest.fields.find((row) => row.path === path)!;
    expect(field("items[].quantity").type).toBe("integer, 1 to 99");
    expect(field("items").type).toBe("array of objects, 1 to 50 items");
    expect(field("paymentMethod").description).toContain('Default: "pm_card_visa"');
  });

  it("lists a field table, or the type in words, for every schema of the document", () => {
    const documented = Object.keys(
      (document.components as { schemas: Record<string, unknown> }).schemas,
    );
    expect(view.schemas.map((schema) => schema.name)).toEqual(documented);
    for (const schema of view.schemas)
      expect(schema.fields.length > 0 || schema.type !== "", schema.name).toBe(true);
    const order = view.schemas.find((schema) => schema.name === "Order")!;
    expect(order.fields.find((row) => row.path === "payment")!.type).toBe("object or null");
    expect(order.fields.map((row) => row.path)).toContain("payment.id");
  });
});

function byId(a: { id: string }, b: { id: string }): number {
  return a.id.localeCompare(b.id);
}
