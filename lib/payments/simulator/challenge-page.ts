import type pg from "pg";
import { testCard } from "@/lib/payments/simulator/cards";
import type { ApiResponse } from "@/lib/payments/simulator/errors";
import {
  intentForChallenge,
  settleAuthentication,
  type Authentication,
} from "@/lib/payments/simulator/authentication";
import type { PaymentIntentRow } from "@/lib/payments/simulator/ledger";
import { money } from "@/lib/payments/simulator/money";

/**
 * The bank's 3-D Secure challenge, as the simulator plays it: the page an
 * intent's `next_action.redirect_to_url.url` sends the shopper to.
 *
 *   GET  /authenticate/:id?client_secret=…   the page: Complete or Fail
 *   POST /authenticate/:id                   the choice (a plain form, no script)
 *
 * The choice settles the intent (authentication.ts) and redirects (303) to
 * its `return_url` with Stripe's parameters: `payment_intent`,
 * `payment_intent_client_secret` and `redirect_status` (`succeeded` or
 * `failed`). The client secret is the page's only credential, as it is
 * Stripe's: without the intent's own, the page does not exist (404). The
 * page runs no script, may not be framed (a framed Complete button could be
 * clicked by trickery), and sends no Referer, which would carry the secret.
 */
export const CHALLENGE_PATH = "/authenticate/";

export function challengeUrl(
  publicUrl: string,
  paymentIntent: string,
  clientSecret: string,
): string {
  const url = new URL(`${CHALLENGE_PATH}${encodeURIComponent(paymentIntent)}`, publicUrl);
  url.searchParams.set("client_secret", clientSecret);
  return url.toString();
}

export async function challengePage(
  pool: pg.Pool,
  method: string,
  path: string,
  query: URLSearchParams,
  body: string,
): Promise<ApiResponse> {
  const id = decodedId(path.slice(CHALLENGE_PATH.length));
  if (id === undefined) return notFound();
  if (method === "GET") {
    const intent = await intentForChallenge(pool, id, query.get("client_secret") ?? "");
    return intent ? html(200, intent, pageFor(intent)) : notFound();
  }
  if (method !== "POST") return notFound();
  const form = new URLSearchParams(body);
  const choice = form.get("authentication");
  if (choice !== "complete" && choice !== "fail") {
    return plainPage(400, "Choose Complete or Fail", "The form was sent without a choice.");
  }
  const settled = await settleAuthentication(
    pool,
    id,
    form.get("client_secret") ?? "",
    choice satisfies Authentication,
  );
  if (!settled.found) return notFound();
  const intent = settled.intent;
  if (!intent.return_url) return html(200, intent, pageFor(intent));
  return {
    status: 303,
    body: "",
    headers: { ...PAGE_HEADERS, Location: returnLocation(intent) },
  };
}

/** The return_url with Stripe's parameters, replacing any of those names it already had. */
export function returnLocation(intent: PaymentIntentRow): string {
  const url = new URL(intent.return_url!);
  url.searchParams.set("payment_intent", intent.id);
  url.searchParams.set("payment_intent_client_secret", intent.client_secret);
  url.searchParams.set("redirect_status", intent.status === "succeeded" ? "succeeded" : "failed");
  return url.toString();
}

function decodedId(text: string): string | undefined {
  try {
    const id = decodeURIComponent(text);
    return /^pi_[A-Za-z0-9]+$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

const PAGE_HEADERS = {
  "Content-Type": "text/html; charset=utf-8",
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
  "X-Content-Type-Options": "nosniff",
};

function html(status: number, intent: PaymentIntentRow | undefined, content: string): ApiResponse {
  // The form's redirect must be allowed to reach the shop's origin.
  const returnOrigin = intent?.return_url ? ` ${new URL(intent.return_url).origin}` : "";
  return {
    status,
    body: content,
    headers: {
      ...PAGE_HEADERS,
      "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${returnOrigin}; frame-ancestors 'none'; base-uri 'none'`,
    },
  };
}

function notFound(): ApiResponse {
  return plainPage(
    404,
    "This authentication link is not valid",
    "It names no payment waiting for authentication, or its secret is not that payment's.",
  );
}

function plainPage(status: number, title: string, text: string): ApiResponse {
  return html(status, undefined, layout(title, `<h1>${escape(title)}</h1><p>${escape(text)}</p>`));
}

function pageFor(intent: PaymentIntentRow): string {
  const card = intent.payment_method ? testCard(intent.payment_method) : undefined;
  const amount = money(Number(intent.amount), intent.currency);
  const cardLine = card ? `${capitalise(card.brand)} •••• ${card.last4}` : "your card";
  if (intent.status !== "requires_action") {
    const succeeded = intent.status === "succeeded";
    const back = intent.return_url
      ? `<p><a class="button primary" href="${escape(returnLocation(intent))}">Return to the shop</a></p>`
      : "<p>You can close this page.</p>";
    return layout(
      succeeded ? "Payment authenticated" : "Authentication failed",
      `<h1>${succeeded ? "Payment authenticated" : "Authentication failed"}</h1>
       <p>${succeeded ? `${amount} was paid.` : `${amount} was not paid.`}</p>${back}`,
    );
  }
  return layout(
    "Authenticate this payment",
    `<p class="bank">Test bank · 3-D Secure</p>
     <h1>Authenticate this payment</h1>
     <dl>
       <div><dt>Amount</dt><dd>${escape(amount)}</dd></div>
       <div><dt>Card</dt><dd>${escape(cardLine)}</dd></div>
     </dl>
     <p class="note">The payment simulator stands in for the card's bank here. Choose what the bank answers.</p>
     <form method="post" action="${CHALLENGE_PATH}${escape(intent.id)}">
       <input type="hidden" name="client_secret" value="${escape(intent.client_secret)}">
       <button class="button primary" name="authentication" value="complete" autofocus>Complete authentication</button>
       <button class="button" name="authentication" value="fail">Fail authentication</button>
     </form>`,
  );
}

function layout(title: string, main: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)} · Test bank</title>
<style>
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: #f1f5f9;
         font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #0f172a; }
  main { width: min(26rem, calc(100vw - 2rem)); box-sizing: border-box; background: #fff; border-radius: 12px;
         padding: 1.75rem; box-shadow: 0 1px 3px rgb(15 23 42 / 0.12), 0 8px 24px rgb(15 23 42 / 0.08); }
  h1 { font-size: 1.3rem; margin: 0 0 1rem; }
  .bank { margin: 0 0 0.25rem; font-size: 0.8rem; font-weight: 600; letter-spacing: 0.06em;
          text-transform: uppercase; color: #475569; }
  dl { margin: 0 0 1rem; display: grid; gap: 0.4rem; }
  dl div { display: flex; justify-content: space-between; gap: 1rem; }
  dt { color: #475569; } dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
  .note { font-size: 0.9rem; color: #475569; }
  form { display: grid; gap: 0.6rem; margin-top: 1.25rem; }
  .button { display: block; text-align: center; text-decoration: none; font: inherit; font-weight: 600;
            padding: 0.7rem 1rem; border-radius: 8px; border: 1px solid #cbd5e1; background: #fff;
            color: #0f172a; cursor: pointer; }
  .button.primary { background: #1d4ed8; border-color: #1d4ed8; color: #fff; }
  .button:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
</style>
</head>
<body><main>${main}</main></body>
</html>
`;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
