import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { itOnServer } from "@/lib/testing/postgres-server-only";
import {
  ledgerFor,
  eventsOf,
  newSecretKey,
  postIntent,
  stripeFor,
  withTestSimulator,
} from "@/lib/testing/payment-simulator";

/**
 * 3-D Secure at the simulator: a card that asks for authentication leaves
 * its intent `requires_action` with the challenge page's address; the page
 * settles it once, charged or failed, and sends the shopper back to the
 * return_url with Stripe's parameters.
 */
const simulator = withTestSimulator();

const RETURN_URL = "https://shop.example/checkout/return?cart=c1";

async function authenticationRequired(returnUrl: string | null = RETURN_URL) {
  const secretKey = await newSecretKey(simulator);
  const stripe = stripeFor(simulator, secretKey);
  const key = randomUUID();
  const intent = await stripe.paymentIntents.create(
    {
      amount: 2500,
      currency: "eur",
      payment_method: "pm_card_authenticationRequired",
      confirm: true,
      automatic_payment_methods: { enabled: true, allow_redirects: "never" },
      ...(returnUrl !== null && { return_url: returnUrl }),
    },
    { idempotencyKey: key },
  );
  return { stripe, intent, key, secretKey };
}

/** The challenge page's form, submitted as the browser submits it, without following the redirect. */
function submitChallenge(
  intentId: string,
  fields: { client_secret: string; authentication?: string },
): Promise<Response> {
  return fetch(`${simulator.url}/authenticate/${intentId}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
}

describe("a card that requires authentication (pm_card_authenticationRequired)", () => {
  it("leaves the intent requires_action, with the challenge page as next_action, and charges nothing", async () => {
    const { intent, key } = await authenticationRequired();

    expect(intent.status).toBe("requires_action");
    expect(intent.latest_charge).toBeNull();
    expect(intent.amount_received).toBe(0);
    expect(intent.payment_method).toBe("pm_card_authenticationRequired");
    const redirect = intent.next_action?.redirect_to_url;
    expect(intent.next_action?.type).toBe("redirect_to_url");
    expect(redirect?.return_url).toBe(RETURN_URL);
    const page = new URL(redirect!.url!);
    expect(`${page.origin}`).toBe(simulator.url);
    expect(page.pathname).toBe(`/authenticate/${intent.id}`);
    expect(page.searchParams.get("client_secret")).toBe(intent.client_secret);

    const ledger = await ledgerFor(simulator, { idempotencyKey: key });
    expect(ledger.charges).toEqual([]);
    expect(await eventsOf(simulator, intent.id)).toEqual([]);
  });

  it("shows a page that names the amount and card, cannot be framed and leaks no Referer", async () => {
    const { intent } = await authenticationRequired();
    const response = await fetch(intent.next_action!.redirect_to_url!.url!);

    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).toContain("form-action 'self' https://shop.example");
    const html = await response.text();
    expect(html).toContain("€25.00");
    expect(html).toContain("Visa •••• 3184");
    expect(html).toMatch(/<button[^>]*value="complete"[^>]*autofocus>Complete authentication/);
    expect(html).toContain('value="fail">Fail authentication');
  });

  it("Complete charges it and sends the shopper back with redirect_status=succeeded", async () => {
    const { stripe, intent, key } = await authenticationRequired();

    const response = await submitChallenge(intent.id, {
      client_secret: intent.client_secret!,
      authentication: "complete",
    });

    expect(response.status).toBe(303);
    const back = new URL(response.headers.get("location")!);
    expect(`${back.origin}${back.pathname}`).toBe("https://shop.example/checkout/return");
    expect(Object.fromEntries(back.searchParams)).toEqual({
      cart: "c1",
      payment_intent: intent.id,
      payment_intent_client_secret: intent.client_secret,
      redirect_status: "succeeded",
    });
    const settled = await stripe.paymentIntents.retrieve(intent.id, { expand: ["latest_charge"] });
    expect(settled).toMatchObject({
      status: "succeeded",
      amount_received: 2500,
      next_action: null,
    });
    expect(settled.latest_charge).toMatchObject({ status: "succeeded", amount: 2500, paid: true });
    const ledger = await ledgerFor(simulator, { idempotencyKey: key });
    expect(ledger.charges.map((charge) => charge.status)).toEqual(["succeeded"]);
  });

  it("Fail leaves it unpaid, with Stripe's authentication failure, and redirect_status=failed", async () => {
    const { stripe, intent, key } = await authenticationRequired();

    const response = await submitChallenge(intent.id, {
      client_secret: intent.client_secret!,
      authentication: "fail",
    });

    expect(response.status).toBe(303);
    expect(new URL(response.headers.get("location")!).searchParams.get("redirect_status")).toBe(
      "failed",
    );
    const settled = await stripe.paymentIntents.retrieve(intent.id);
    expect(settled).toMatchObject({
      status: "requires_payment_method",
      payment_method: null,
      latest_charge: null,
      next_action: null,
      last_payment_error: {
        type: "invalid_request_error",
        code: "payment_intent_authentication_failure",
      },
    });
    expect((await ledgerFor(simulator, { idempotencyKey: key })).charges).toEqual([]);
  });

  it("a replay of the create answers what it first answered: requires_action, byte for byte", async () => {
    const secretKey = await newSecretKey(simulator);
    const key = randomUUID();
    const body = `amount=900&currency=usd&payment_method=pm_card_authenticationRequired&confirm=true&return_url=${encodeURIComponent(RETURN_URL)}`;
    const first = await postIntent(simulator, { secretKey, key, body });
    const intent = JSON.parse(first.text) as { id: string; client_secret: string };
    await submitChallenge(intent.id, {
      client_secret: intent.client_secret,
      authentication: "complete",
    });

    const replay = await postIntent(simulator, { secretKey, key, body });

    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(first.text);
    expect(JSON.parse(replay.text)).toMatchObject({ status: "requires_action" });
  });

  it("settles once: a second choice, or a reload, shows what the first decided", async () => {
    const { stripe, intent } = await authenticationRequired();
    const secret = intent.client_secret!;
    await submitChallenge(intent.id, { client_secret: secret, authentication: "complete" });

    const second = await submitChallenge(intent.id, {
      client_secret: secret,
      authentication: "fail",
    });

    expect(new URL(second.headers.get("location")!).searchParams.get("redirect_status")).toBe(
      "succeeded",
    );
    expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe("succeeded");
    const reload = await fetch(intent.next_action!.redirect_to_url!.url!);
    const html = await reload.text();
    expect(html).toContain("Payment authenticated");
    expect(html).toContain("Return to the shop");
    expect(html).not.toContain("Complete authentication");
  });

  it("without a return_url, the page itself says how it ended", async () => {
    const { intent } = await authenticationRequired(null);
    expect(intent.next_action?.redirect_to_url?.return_url).toBeNull();

    const response = await submitChallenge(intent.id, {
      client_secret: intent.client_secret!,
      authentication: "fail",
    });

    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("Authentication failed");
    expect(html).toContain("You can close this page.");
  });

  it("refuses another secret, an unknown intent and a form without a choice, changing nothing", async () => {
    const { stripe, intent } = await authenticationRequired();
    const forged = `${intent.id}_secret_${"x".repeat(25)}`;

    expect(
      (await fetch(`${simulator.url}/authenticate/${intent.id}?client_secret=${forged}`)).status,
    ).toBe(404);
    expect((await fetch(`${simulator.url}/authenticate/${intent.id}`)).status).toBe(404);
    expect(
      (await submitChallenge(intent.id, { client_secret: forged, authentication: "complete" }))
        .status,
    ).toBe(404);
    expect(
      (await submitChallenge("pi_unknown", { client_secret: forged, authentication: "complete" }))
        .status,
    ).toBe(404);
    expect((await fetch(`${simulator.url}/authenticate/%E0%A4`)).status).toBe(404);
    expect(
      (await submitChallenge(intent.id, { client_secret: intent.client_secret! })).status,
    ).toBe(400);
    expect((await stripe.paymentIntents.retrieve(intent.id)).status).toBe("requires_action");
  });

  it.each([
    ["a relative URL", "/checkout/return", "true"],
    ["a javascript: URL", "javascript:alert(1)", "true"],
    ["a return_url without confirm", RETURN_URL, "false"],
  ])("refuses %s (400, param return_url)", async (_name, returnUrl, confirm) => {
    const secretKey = await newSecretKey(simulator);
    const answer = await postIntent(simulator, {
      secretKey,
      body: `amount=900&currency=usd&payment_method=pm_card_authenticationRequired&confirm=${confirm}&return_url=${encodeURIComponent(returnUrl)}`,
    });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({
      error: { type: "invalid_request_error", param: "return_url" },
    });
  });

  // A race needs connections that really run at once: PGlite serialises everything.
  itOnServer(
    "concurrency",
    "settles once under 20 submissions at once, Complete and Fail mixed: one charge, one event",
    async () => {
      const { stripe, intent, key } = await authenticationRequired();
      const secret = intent.client_secret!;

      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, n) =>
          submitChallenge(intent.id, {
            client_secret: secret,
            authentication: n % 2 === 0 ? "complete" : "fail",
          }),
        ),
      );

      const settled = await stripe.paymentIntents.retrieve(intent.id);
      const expected = settled.status === "succeeded" ? "succeeded" : "failed";
      for (const answer of answers) {
        expect(answer.status).toBe(303);
        expect(new URL(answer.headers.get("location")!).searchParams.get("redirect_status")).toBe(
          expected,
        );
      }
      const charges = (await ledgerFor(simulator, { idempotencyKey: key })).charges;
      expect(charges).toHaveLength(settled.status === "succeeded" ? 1 : 0);
      expect((await eventsOf(simulator, intent.id)).map((event) => event.type)).toEqual([
        settled.status === "succeeded"
          ? "payment_intent.succeeded"
          : "payment_intent.payment_failed",
      ]);
    },
  );
});
