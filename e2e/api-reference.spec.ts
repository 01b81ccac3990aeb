import { expect, test, type Page } from "@playwright/test";
import { duration } from "@/lib/openapi/duration";

/**
 * The API reference (/docs/api) as a reader reaches it: from the header's
 * API link. What it lists, and every example it shows, is checked against
 * the document the server publishes at /api/openapi.json, not against a
 * copy kept here.
 */

interface PublishedDocument {
  paths: Record<
    string,
    Record<string, { operationId: string; tags: string[]; responses: Record<string, unknown> }>
  >;
}

async function published(page: Page) {
  const answer = await page.request.get("/api/openapi.json");
  expect(answer.status()).toBe(200);
  const document = (await answer.json()) as PublishedDocument & Record<string, unknown>;
  const checkout = document.paths["/api/orders"]!.post!;
  const served = Object.values(document.paths).flatMap((item) =>
    Object.entries(item)
      .filter(
        ([method, operation]) =>
          !["head", "options"].includes(method) && !operation.tags.includes("Not served"),
      )
      .map(([, operation]) => operation.operationId),
  );
  const policy = (
    checkout as unknown as {
      "x-idempotency-key": { retentionSeconds: number; leaseSeconds: number };
    }
  )["x-idempotency-key"];
  return { served, checkoutStatuses: Object.keys(checkout.responses), policy };
}

/** The page's operations and the checkout's answers, as the page marks them. */
async function shown(page: Page) {
  return {
    operations: await page
      .getByTestId("api-operation")
      .evaluateAll((entries) => entries.map((entry) => entry.getAttribute("data-operation-id"))),
    checkoutStatuses: await page
      .locator('#createOrder [data-testid="response-row"]')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute("data-status"))),
  };
}

test("API reference: every operation and every checkout answer the published document has, and its key policy", async ({
  page,
}) => {
  const document = await published(page);
  await page.goto("/");
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }).click();
  await expect(page).toHaveURL(/\/docs\/api$/);
  await expect(page.getByRole("heading", { level: 1, name: "OncePay API" })).toBeVisible();
  await expect(
    page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "API" }),
  ).toHaveAttribute("aria-current", "page");

  const onPage = await shown(page);
  expect(onPage.operations.sort()).toEqual(document.served.sort());
  expect(onPage.checkoutStatuses).toEqual(document.checkoutStatuses);

  const rules = page.getByTestId("checkout-rules");
  await expect(rules).toContainText(
    `Keys are kept for ${duration(document.policy.retentionSeconds)}`,
  );
  await expect(rules).toContainText(`lease of ${duration(document.policy.leaseSeconds)}`);
  await expect(page.getByTestId("openapi-link")).toHaveAttribute("href", "/api/openapi.json");

  // A rule's answer takes the reader to that answer of the checkout.
  await rules.getByRole("link", { name: /409/ }).click();
  await expect(page).toHaveURL(/#createOrder-409$/);
  await expect(page.locator("#createOrder-409")).toBeInViewport();
  await expect(page.locator("#createOrder-409")).toContainText("Retry-After");
});

for (const { width, height, name } of [
  { width: 1280, height: 900, name: "laptop" },
  { width: 390, height: 844, name: "phone" },
]) {
  test(`API reference fits a ${width} px screen without sideways scrolling`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/docs/api");
    await expect(page.getByTestId("api-operation").first()).toBeVisible();
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBe(0);
    // The page is long: its top, the rules and the checkout's entry, each on its own.
    await page.screenshot({ path: testInfo.outputPath(`api-reference-top-${name}.png`) });
    await page
      .locator("#checkout-rules")
      .screenshot({ path: testInfo.outputPath(`api-reference-rules-${name}.png`) });
    await page
      .locator("#createOrder")
      .screenshot({ path: testInfo.outputPath(`api-reference-checkout-${name}.png`) });
  });
}

interface ExampleOperation {
  operationId: string;
  tags: string[];
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<
    string,
    {
      headers?: Record<string, { example?: unknown }>;
      content?: Record<string, { example?: unknown }>;
    }
  >;
}

/** The operations the page lists, as the published document has them, examples and all. */
async function listedOperations(page: Page) {
  const answer = await page.request.get("/api/openapi.json");
  const document = (await answer.json()) as {
    paths: Record<string, Record<string, ExampleOperation>>;
  };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(
        ([method, operation]) =>
          !["head", "options"].includes(method) && !operation.tags.includes("Not served"),
      )
      .map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
}

/** Every example message the page shows, read off the page: start line, headers, body. */
async function shownExamples(page: Page) {
  return page.getByTestId("api-operation").evaluateAll((entries) =>
    entries.map((entry) => {
      const message = (figure: Element) => ({
        status: figure.getAttribute("data-status"),
        startLine: figure.querySelector('[data-testid="example-start-line"]')?.textContent,
        headers: Object.fromEntries(
          [...figure.querySelectorAll('[data-testid="example-header"]')].map((header) => [
            header.getAttribute("data-name"),
            header.textContent!.replace(/^\n?[^:]+: /, ""),
          ]),
        ),
        body: figure.querySelector('[data-testid="example-body"]')?.textContent ?? null,
      });
      return {
        id: entry.getAttribute("data-operation-id")!,
        request: [...entry.querySelectorAll('[data-testid="example-request"]')].map(message),
        answers: [...entry.querySelectorAll('[data-testid="example-answer"]')].map(message),
      };
    }),
  );
}

test("API reference: each operation shows an example request and answer equal to the published document's", async ({
  page,
}) => {
  const operations = await listedOperations(page);
  await page.goto("/docs/api");
  const shown = new Map((await shownExamples(page)).map((entry) => [entry.id, entry]));
  expect([...shown.keys()].sort()).toEqual(
    operations.map(({ operation }) => operation.operationId).sort(),
  );

  for (const { path, method, operation } of operations) {
    const entry = shown.get(operation.operationId)!;
    const name = `${method} ${path}`;
    expect(entry.request, name).toHaveLength(1);
    const request = entry.request[0]!;
    expect(request.startLine, name).toMatch(new RegExp(`^${method} /api/\\S+ HTTP/1.1$`));
    for (const parameter of operation.parameters ?? []) {
      if (parameter.example === undefined) continue;
      const value = String(parameter.example);
      if (parameter.in === "header") expect(request.headers[parameter.name], name).toBe(value);
      else expect(request.startLine, name).toContain(encodeURIComponent(value));
    }
    const body = operation.requestBody?.content["application/json"]?.example;
    expect(request.body === null ? undefined : JSON.parse(request.body), name).toEqual(body);

    const exemplified = Object.entries(operation.responses).filter(([, response]) =>
      Object.values(response.content ?? {}).some((described) => described.example !== undefined),
    );
    expect(
      entry.answers.map((answer) => answer.status),
      name,
    ).toEqual(exemplified.map(([status]) => status));
    for (const [status, response] of exemplified) {
      const answer = entry.answers.find((shownAnswer) => shownAnswer.status === status)!;
      const [mediaType, described] = Object.entries(response.content!)[0]!;
      expect(answer.startLine, `${name} ${status}`).toMatch(new RegExp(`^HTTP/1.1 ${status}\\b`));
      expect(answer.headers["Content-Type"], `${name} ${status}`).toBe(mediaType);
      for (const [header, value] of Object.entries(response.headers ?? {}))
        if (value.example !== undefined)
          expect(answer.headers[header], `${name} ${status} ${header}`).toBe(String(value.example));
      const shownBody = mediaType.endsWith("json") ? JSON.parse(answer.body!) : answer.body;
      expect(shownBody, `${name} ${status}`).toEqual(described.example);
    }
  }
  // The checkout's example sends the Idempotency-Key, as every client of it must.
  expect(shown.get("createOrder")!.request[0]!.headers["Idempotency-Key"]).toBeTruthy();
});

for (const { width, height, contents } of [
  { width: 1280, height: 800, contents: "contents-side" },
  { width: 390, height: 844, contents: "contents-compact" },
]) {
  test(`API reference at ${width} px: each contents link takes the reader to its operation`, async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width, height });
    await page.goto("/docs/api");
    const nav = page.getByTestId(contents);
    if (contents === "contents-compact") {
      await expect(page.getByTestId("contents-side")).toBeHidden();
      await nav.locator("summary").click();
    } else {
      await expect(page.getByTestId("contents-compact")).toBeHidden();
    }
    const ids = await page
      .getByTestId("api-operation")
      .evaluateAll((entries) => entries.map((entry) => entry.id));
    const links = nav.getByRole("navigation", { name: "On this page" }).locator('a[href^="#"]');
    const targets = await links.evaluateAll((anchors) =>
      anchors.map((anchor) => anchor.getAttribute("href")!.slice(1)),
    );
    // Every operation is in the contents, each once.
    expect(targets.filter((target) => ids.includes(target)).sort()).toEqual([...ids].sort());

    /** The operation's top sits just under the viewport's top: the page's scroll padding and the entry's scroll margin, 48 px, apart from it. */
    const atTop = (id: string) =>
      page.locator(`#${id}`).evaluate((entry) => {
        const top = entry.getBoundingClientRect().top;
        return top >= 0 && top <= 64;
      });
    // Every link, with the reader's "reduce motion" on, so that each jump is
    // instant (globals.css) and the check is about where a link leads, not
    // how long a smooth scroll takes.
    await page.emulateMedia({ reducedMotion: "reduce" });
    for (const id of ids) {
      await links.and(page.locator(`[href="#${id}"]`)).click();
      await expect(page).toHaveURL(new RegExp(`#${id}$`));
      await expect.poll(() => atTop(id), { intervals: [50] }).toBe(true);
    }
    // And without it: the smooth scroll ends at the operation too.
    await page.emulateMedia({ reducedMotion: "no-preference" });
    for (const id of [ids[0]!, ids.at(-1)!]) {
      await links.and(page.locator(`[href="#${id}"]`)).click();
      await expect(page).toHaveURL(new RegExp(`#${id}$`));
      await expect.poll(() => atTop(id), { intervals: [50] }).toBe(true);
    }
    await page
      .locator("#createOrder")
      .evaluate((entry) => entry.scrollIntoView({ block: "start", behavior: "instant" }));
    await page.screenshot({ path: testInfo.outputPath(`api-reference-operation-${width}.png`) });
  });
}
